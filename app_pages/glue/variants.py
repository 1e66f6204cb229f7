"""What the architecture-variants page needs besides the experiments of ``model/lab/variants.py``
(reached as ``lab.variants.<fn>``): the comparisons it offers, which of their models are missing, and
the key/value cache formula it sets beside the measured bytes."""

from __future__ import annotations

from model.lab.variants import KV_TOKENS, LAST_STEPS, kv_formula
from model.store.registry import available_models
from model.training.presets import VARIANT_AXES

__all__ = ["AXES", "KV_AXIS", "KV_TOKENS", "LAST_STEPS", "MODELS", "VARIANT_AXES", "axis_from_url",
           "kv_formula", "missing_models"]

#: The comparisons, in menu order: axis id -> the models compared (the base first).
AXES = tuple(VARIANT_AXES)
#: Every model the page shows, each once, in axis order.
MODELS = tuple(dict.fromkeys(name for names in VARIANT_AXES.values() for name in names))
#: The attention comparison's models: their key/value caches differ.
KV_AXIS = "attention"


def axis_from_url(value: str) -> str | None:
    return value if value in AXES else None


def missing_models() -> list[str]:
    """The page's models that are not shipped (yet), in :data:`MODELS` order."""
    have = set(available_models())
    return [name for name in MODELS if name not in have]
