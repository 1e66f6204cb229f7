"""Checkpoint averaging: the mean of the weights a run kept at its last few checkpoints.

A run trained with ``keep_checkpoints`` keeps each checkpoint's float32 weights as
``checkpoints/step-NNNNNN.safetensors`` (written and read as the training snapshots are, see
snapshots.py); averaging the last k of them often scores better than the last one alone, because it
smooths the noise of the final optimiser steps. Every file's header is checked against the run's
config before any tensor is read.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..network.transformer import Transformer
from ..store.bundle import Bundle
from ..store.problems import CheckpointError
from .snapshots import read_snapshot, snapshot_files, write_snapshot

KEPT_DIR = "checkpoints"


def keep_weights(run_dir: Path, step: int, model: Transformer) -> Path:
    """Write the model's float32 weights as run_dir/checkpoints/step-NNNNNN.safetensors."""
    return write_snapshot(Path(run_dir) / KEPT_DIR, step, model, torch.float32)


def kept_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """(step, file) of every kept checkpoint in a run folder, by step."""
    return list(snapshot_files(run_dir, KEPT_DIR).items())


def average_last(bundle: Bundle, run_dir: Path, last: int) -> tuple[Transformer, list[int]]:
    """A model (bundle's config) whose weights are the mean of the run's last ``last`` kept checkpoints;
    also returns the steps averaged."""
    if last < 1:
        raise ValueError(f"average needs at least one checkpoint (got {last})")
    kept = kept_checkpoints(run_dir)
    if len(kept) < last:
        raise CheckpointError(
            f"{Path(run_dir) / KEPT_DIR}: {len(kept)} kept checkpoint(s), {last} asked for "
            "(train with --keep-checkpoints)"
        )
    chosen = kept[-last:]
    total: dict[str, torch.Tensor] = {}
    for _, path in chosen:
        for k, v in read_snapshot(path, bundle.cfg).state_dict().items():
            total[k] = total.get(k, 0) + v.to(torch.float64)
    model = Transformer(bundle.cfg)
    model.load_state_dict({k: (v / len(chosen)).to(torch.float32) for k, v in total.items()})
    model.eval()
    return model, [s for s, _ in chosen]
