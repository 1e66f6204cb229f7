"""What the training scrubber's page needs besides the experiments of ``model/lab/training.py``
(reached as ``lab.training.<fn>``): the model it scrubs through, and the step and loss a link or the
slider asks for (the head it may show: :mod:`app_support.reverse_models`)."""

from __future__ import annotations

from collections.abc import Mapping

from model.training.presets import SNAPSHOT_MODEL

__all__ = ["MODEL", "loss_at", "nearest_step"]

#: The model the page scrubs through (the reverse recipe retrained with snapshots).
MODEL = SNAPSHOT_MODEL


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
