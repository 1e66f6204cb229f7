"""Checkpoint averaging: the mean of the weights a run kept at its last few checkpoints.

A run trained with ``keep_checkpoints`` keeps each checkpoint's float32 weights as
``checkpoints/step-NNNNNN.safetensors``; averaging the last k of them often scores better than the last
one alone, because it smooths the noise of the final optimiser steps. Loading checks every file's header
against the run's config before any tensor is read.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ..network.transformer import Transformer
from .checkpoint import Bundle, CheckpointError, _check_header, state_dict_for_saving

KEPT_DIR = "checkpoints"
_NAME_RE = re.compile(r"step-(\d{6})\.safetensors")


def keep_weights(run_dir: Path, step: int, model: Transformer) -> Path:
    """Write the model's float32 weights as run_dir/checkpoints/step-NNNNNN.safetensors."""
    folder = Path(run_dir) / KEPT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"step-{step:06d}.safetensors"
    tmp = path.with_suffix(".tmp")
    save_file(state_dict_for_saving(model), str(tmp))
    tmp.replace(path)
    return path


def kept_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """(step, file) of every kept checkpoint in a run folder, by step."""
    folder = Path(run_dir) / KEPT_DIR
    if not folder.is_dir():
        return []
    found = []
    for f in folder.iterdir():
        m = _NAME_RE.fullmatch(f.name)
        if m and f.is_file() and not f.is_symlink():
            found.append((int(m.group(1)), f))
    return sorted(found)


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
    model = Transformer(bundle.cfg)
    target = state_dict_for_saving(model)
    total = {k: torch.zeros_like(v, dtype=torch.float64) for k, v in target.items()}
    for _, path in chosen:
        _check_header(path, bundle.cfg)
        try:
            weights = load_file(str(path))
        except SafetensorError as e:
            raise CheckpointError(f"{path.name}: unreadable safetensors file ({e})") from None
        for k in total:
            total[k] += weights[k].to(torch.float64)
    averaged = {k: (v / len(chosen)).to(torch.float32) for k, v in total.items()}
    # strict=False as in checkpoint loading: a tied output layer shares the (averaged) embedding.
    model.load_state_dict(averaged, strict=False)
    model.eval()
    return model, [s for s, _ in chosen]

