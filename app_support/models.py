"""What the app says about a model before it runs it: the picker's list, labels, descriptions,
examples, and how much text the boxes take (from each model's config, without loading weights
where the config suffices)."""

from __future__ import annotations

from app_support import gateway as G
from model.store.problems import CheckpointError
from model.store.registry import DEFAULT_MODEL, ModelInfo, UnknownModelError, model_info, model_infos

__all__ = [
    "CHARS_PER_TOKEN", "DEFAULT_MODEL", "MAX_INPUT_CHARS", "MIN_INPUT_CHARS", "input_char_limit",
    "list_models", "model_description", "model_example", "model_label", "reads_letters",
]

#: Characters allowed per token of a model's limit: a safety bound on the text boxes, far above
#: real text (English runs ~4-5 characters per WordPiece token), so the model's own token limit
#: is what cuts an input, with its note.
CHARS_PER_TOKEN = 16
#: The smallest character limit any model gets (models that read few tokens still take a paragraph).
MIN_INPUT_CHARS = 1000
#: Longest text any box accepts, whatever the model (512 tokens x 16 = 8,192 for MiniLM).
MAX_INPUT_CHARS = 16_384


def list_models() -> list[str]:
    """Models the picker offers, in menu order (not cached: new models appear at once).

    Listed models first; a model whose config cannot be read is still offered, last, so choosing
    it shows what is wrong with it instead of it silently missing.
    """
    broken: list[tuple[str, str]] = []
    names = [i.name for i in model_infos(broken) if i.listed]
    return names + sorted(name for name, _ in broken)


def hidden_models() -> list[str]:
    """Models kept out of the picker (the pitfall and variant models): their own pages show them, and a
    link that names one opens it like any other (model vs model compares two of them)."""
    return [i.name for i in model_infos() if not i.listed]


def input_char_limit(name: str) -> int:
    """Characters the text boxes take for model ``name``: CHARS_PER_TOKEN per token the model reads,
    at least MIN_INPUT_CHARS and at most MAX_INPUT_CHARS (MIN_INPUT_CHARS if it cannot be loaded)."""
    try:
        max_len = int(G.config(name).max_len)
    except (CheckpointError, UnknownModelError, OSError):
        return MIN_INPUT_CHARS
    return min(MAX_INPUT_CHARS, max(MIN_INPUT_CHARS, CHARS_PER_TOKEN * max_len))


def _info(name: str) -> ModelInfo | None:
    try:
        return model_info(name)
    except (CheckpointError, UnknownModelError):
        return None


def model_description(name: str, lang: str = "en") -> str:
    """One line saying what a model does (from its config.json, without loading weights)."""
    info = _info(name)
    return info.text("description", lang) if info else ""


#: Tasks whose models read lowercase letters only (the didactic tasks and the induction model).
LETTER_TASKS = ("reverse", "copy", "sort", "induction")


def reads_letters(name: str) -> bool:
    """Whether the model reads only letters (a sentence in a text box means nothing to it)."""
    info = _info(name)
    return bool(info) and info.task in LETTER_TASKS


def model_example(name: str) -> str:
    """The example input stored with a model ("" if none)."""
    info = _info(name)
    return info.example if info else ""


def model_label(name: str, lang: str = "en") -> str:
    """Short menu label (the sidebar shows the full description under the menu)."""
    info = _info(name)
    return info.text("label", lang) if info else name
