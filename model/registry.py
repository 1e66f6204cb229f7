"""The models the app and the command line offer: folders under assets/models/."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .checkpoint import Bundle, CheckpointError, load_checkpoint

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(os.environ.get("ATTENTION_LENS_MODELS", REPO_ROOT / "assets" / "models"))
DEFAULT_MODEL = "default"
# Order in menus: the translation model first, then the didactic ones.
PREFERRED_ORDER = ["default", "reverse", "copy", "sort"]


class UnknownModelError(LookupError):
    """A model name with no folder under assets/models/; the message lists what exists."""


def available_models() -> list[str]:
    if not MODELS_DIR.is_dir():
        return []
    names = [p.name for p in MODELS_DIR.iterdir() if (p / "config.json").exists()]
    return sorted(names, key=lambda n: (PREFERRED_ORDER.index(n) if n in PREFERRED_ORDER else 99, n))


def model_dir(name: str) -> Path:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise UnknownModelError(f"{name!r} is not a model name")
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
    try:
        config = json.loads((model_dir(name) / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CheckpointError(f"cannot read the config of model {name!r}: {e}") from e
    return config.get("example", "")
