"""The models the app and the command line offer: folders under assets/models/."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .training.checkpoint import Bundle, CheckpointError, load_checkpoint, read_json

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(os.environ.get("ATTENTION_LENS_MODELS", REPO_ROOT / "assets" / "models"))
DEFAULT_MODEL = "default"
# Order in menus: the translation model first, then the didactic ones.
PREFERRED_ORDER = ["default", "reverse", "copy", "sort"]


#: A model name is a plain folder name: letters, digits, "_", "-" and "." (not first), at most 64.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class UnknownModelError(LookupError):
    """A model name with no folder under assets/models/; the message lists what exists."""


def is_model_name(name: object) -> bool:
    """True for a plain name that can only ever mean a folder directly inside the models folder."""
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None and ".." not in name


def check_model_name(name: object) -> str:
    """``name`` if it is a plain model name; else UnknownModelError saying what a name may hold."""
    if not is_model_name(name):
        raise UnknownModelError(
            f"{name!r} is not a model name: use letters, digits, '_', '-' or '.' (not first, no '..'), "
            "at most 64 characters, no path separators"
        )
    return name


def available_models() -> list[str]:
    if not MODELS_DIR.is_dir():
        return []
    names = [p.name for p in MODELS_DIR.iterdir() if is_model_name(p.name) and (p / "config.json").exists()]
    return sorted(names, key=lambda n: (PREFERRED_ORDER.index(n) if n in PREFERRED_ORDER else 99, n))


def model_dir(name: str) -> Path:
    check_model_name(name)
    path = MODELS_DIR / name
    if not (path / "config.json").exists():
        have = ", ".join(available_models()) or "none"
        if name == DEFAULT_MODEL:
            raise UnknownModelError(
                "The default Chinese<->English model is not in assets/models/default yet. "
                "Train it with `python -m model train --preset default --ship` "
                f"or pick another model (available: {have})."
            )
        raise UnknownModelError(f"No model named {name!r}. Available models: {have}.")
    return path


def load_model(name: str) -> Bundle:
    return load_checkpoint(model_dir(name), name=name)


def example_input(name: str) -> str:
    """An input worth trying on this model, read from its config without loading the weights."""
    config = read_json(model_dir(name) / "config.json")
    if not isinstance(config, dict):
        raise CheckpointError(f"{model_dir(name) / 'config.json'} must hold a JSON object")
    example = config.get("example", "")
    return example if isinstance(example, str) else ""
