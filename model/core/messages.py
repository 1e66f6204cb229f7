"""What model/ tells the user, as codes with parameters; the words live in one table per language.

model/ decides *what* to say (a `Message`: code, parameters, severity); the CLI, exports and the
app decide *how* (`render` with a table). Parameters stay data (numbers stay numbers), so another
table can word and format them its own way. `ENGLISH` is the reference table: every code has a
template there, and `str(message)` is its English text.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[str, ...] = ("info", "warning", "error")

#: code -> str.format template with named placeholders (one per parameter of that code).
ENGLISH: dict[str, str] = {
    # notes about an input that did run
    "input_truncated": (
        "The input is {tokens} tokens long; the model reads at most {max_len} "
        "(end token included), so it was truncated to its first {kept} tokens."
    ),
    "unknown_characters": "{count} character(s) unknown to this model's tokenizer, shown as <unk>: {shown}",
    "input_lowercased": "This model only knows lowercase letters; the input was lowercased.",
    "input_script_converted": (
        "Traditional characters were converted to Simplified, the script the model was trained on."
    ),
    "target_script_converted": "Traditional characters in the target were converted to Simplified.",
    "target_unknown_characters": (
        "The target has characters this model does not know, shown as <unk>: {shown}"
    ),
    "target_cut": "The target was cut to the model's maximum of {max_len} tokens.",
    "output_max_length": "The output reached the maximum length ({max_len} tokens) without an end token.",
    "output_max_new": "The output stopped after {max_new} new tokens, the most this run writes.",
    "two_passes": (
        "Under this edit the keys and values cached while decoding are not those of a pass over the whole "
        "text, so the model decoded first and then read prompt and output again (two passes, not one)."
    ),
    # longrope (Phi-3): which RoPE factors the analysis's numbers come from
    "rope_factors_short": (
        "RoPE factors: short (this input has {n} positions, at most {switch}: below longrope's switch)."
    ),
    "rope_factors_long": (
        "RoPE factors: long (this input has {n} positions, past {switch}): every position, the first ones "
        "included, is rotated with longrope's long factors."
    ),
    "rope_factors_switched": (
        "RoPE factors: long (prompt and output have {n} positions, past {switch}). The output's first tokens "
        "were chosen with the short factors, while the sequence was shorter; once it passed {switch} "
        "positions the whole sequence was computed again with the long ones, as transformers does, and every "
        "probability and attention shown comes from that pass, those of earlier tokens included."
    ),
    "budget_clamped": (
        "One analysis may hold {budget_mib} MiB on this server, so this model reads at most {max_len} "
        "tokens here: its config allows {config_max_len}, whose analysis would hold {full_mib:,} MiB."
    ),
    # input that cannot run (InputError)
    "empty_input": "The input text is empty. Type a sentence to see the model's attention.",
    "invalid_utf8": "The input is not valid UTF-8 text (it holds undecodable bytes).",
    "unknown_direction": "Unknown direction {direction!r}; use one of {choices}.",
    "empty_target": "The target text is empty.",
    # encoder-only (pretrained BERT-style) models
    "input_truncated_pieces": (
        "The input is {tokens} word pieces long; the model reads at most {max_len} tokens (its start and "
        "end tokens included), so it was truncated to its first {kept} pieces."
    ),
    "beyond_trained_length": (
        "The input is {tokens} tokens long; the model reads up to {max_len}, but it was trained on "
        "inputs of at most {trained} tokens, so what it does beyond that is less tested."
    ),
    "unknown_words": "{count} word(s) unknown to this model's vocabulary, shown as [UNK]: {shown}",
    "input_uncased": "This model is uncased: it reads the input lower-cased, accents removed.",
    "no_decoder": "This model is encoder-only: it has no decoder, so it produces no output text.",
    "input_prefixed": (
        "e5 was trained to read a text after the prefix \"{prefix}\", so it reads your text after it: "
        "the first {tokens} tokens after the start token are the prefix, not your text."
    ),
}


@dataclass(frozen=True)
class Message:
    """One thing to tell the user. Hashable and picklable (the app caches analyses holding these)."""

    code: str
    # Given as a mapping; kept as sorted (name, value) pairs so the message stays hashable.
    params: tuple[tuple[str, object], ...] = field(default=())
    severity: Severity = "warning"

    def __post_init__(self) -> None:
        if isinstance(self.params, Mapping):
            object.__setattr__(self, "params", tuple(sorted(self.params.items())))
        else:
            object.__setattr__(self, "params", tuple(sorted(tuple(p) for p in self.params)))
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")

    @property
    def kwargs(self) -> dict[str, object]:
        """The parameters as a dict, ready for ``template.format(**message.kwargs)``."""
        return dict(self.params)

    def __str__(self) -> str:
        return render(self)


def render(message: Message, table: Mapping[str, str] = ENGLISH) -> str:
    """The message's text in `table`'s language; KeyError for a code the table lacks."""
    try:
        template = table[message.code]
    except KeyError:
        raise KeyError(f"no text for message code {message.code!r}") from None
    return template.format(**message.kwargs)


def placeholders(template: str) -> set[str]:
    """Names a template's placeholders use (what the params of its code must be)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
