"""What every task hands the model: the prepared input (:class:`Prepared`), the error for input that
cannot be run (:class:`InputError`), and the one check of user text. Its own module so that every
task module (tasks.py, lm_task.py) can use them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.messages import Message


class InputError(ValueError):
    """User input that cannot be run (e.g. empty text); `.message` says why, for the user.

    str() is the English text; the app words `.message` in the interface language.
    """

    def __init__(self, message: Message):
        if not isinstance(message, Message):
            raise TypeError("InputError takes a Message (a code with parameters), so it can be translated")
        self.message = message
        super().__init__(str(message))


@dataclass
class Prepared:
    text: str  # the text as the model reads it (after normalisation)
    source_ids: list[int]  # ends with eos
    source_tokens: list[str]
    prefix: list[int]  # what the decoder starts from
    direction: str | None  # "zh->en" / "en->zh" for translation, None otherwise
    notes: list[Message] = field(default_factory=list)  # things the user must be told
    truncated_from: int | None = None  # token count before truncation, if truncated
    # Source tokens right after the start token that are a fixed text the model reads before the
    # user's (e5's "query: "): the pages can hide them with the special tokens.
    source_prefix: int = 0
    # Where those tokens start: 1, after the start token (e5); 0 for a source without one (T5's task
    # prefix, "translate English to German: ").
    source_prefix_start: int = 1


def check_text(text: str) -> str:
    """The text without surrounding whitespace; InputError if it is empty or not valid UTF-8."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(Message("empty_input", {}, "error"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: bytes that were not valid UTF-8
        raise InputError(Message("invalid_utf8", {}, "error")) from None
    return text.strip()
