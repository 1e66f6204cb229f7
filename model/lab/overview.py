"""The model page's numbers: what the model's files say about its training, and the full archive of
one input (every hook, as ``python -m model inspect --out`` writes it)."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis import analyze, export_zip
from ..decoding import Strategy
from ..store.bundle import Bundle
from . import entry


@dataclass(frozen=True)
class TrainingRecord:
    metrics: object  # metrics.json: evaluation figures ({} when there are none)
    info: object  # the config's "info": how it was trained
    history: list  # history.json: one row per logged optimiser step


@entry
def training_record(bundle: Bundle) -> TrainingRecord:
    return TrainingRecord(bundle.metrics or {}, bundle.info, bundle.history or [])


@entry
def archive(bundle: Bundle, text: str, direction: str | None, strategy: Strategy | None = None,
            max_new: int | None = None) -> bytes:
    """activations.npz (every hook) + meta.json of one input, zipped: built when it is asked for, decoded
    as the page's analysis was (``strategy``, ``max_new``: the sidebar's)."""
    return export_zip(bundle, analyze(bundle, text, direction, strategy=strategy, max_new=max_new), text)
