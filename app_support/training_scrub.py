"""What the training scrubber's page needs besides the experiments of ``model/lab/training.py``
(reached as ``lab.training.<fn>``): the model it scrubs through, the head it may show, and the
step and loss a link or the slider asks for."""

from __future__ import annotations

from collections.abc import Mapping

from model.lab.training import KIND
from model.network.config import ModelConfig
from model.training.presets import SNAPSHOT_MODEL

__all__ = ["KIND", "MODEL", "clamp_head", "loss_at", "nearest_step"]

#: The model the page scrubs through (the reverse recipe retrained with snapshots).
MODEL = SNAPSHOT_MODEL


def clamp_head(cfg: ModelConfig, layer: int, head: int) -> tuple[int, int]:
    """The sidebar's layer and head, clamped to what this model's decoder has."""
    return max(0, min(int(layer), cfg.n_dec_layers - 1)), max(0, min(int(head), cfg.n_heads - 1))


def loss_at(series: Mapping[str, list], step: int) -> float | None:
    """The training loss of optimiser step ``step`` (None before the first step, or not finite)."""
    try:
        i = list(series["step"]).index(step)
    except ValueError:
        return None
    value = series["loss"][i]
    return None if value is None else float(value)


def nearest_step(steps: list[int], wanted: int | None) -> int | None:
    """The available step closest to ``wanted`` (a link may carry any number); None if no steps."""
    if not steps or wanted is None:
        return None
    return min(steps, key=lambda s: (abs(s - wanted), s))
