"""Weight snapshots taken during training, so a page can show a model as it was at step s.

A run with snapshots keeps them in its folder as ``snapshots/step-000060.safetensors`` (float16 weights,
the same tensor names as ``model.safetensors``). Shipping copies every snapshot except the last step's,
which is the shipped model itself. Loading checks the header against the model's config before any
tensor is read, as checkpoint loading does.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from ..network.config import ModelConfig
from ..network.transformer import Transformer
from ..store.bundle import Bundle
from ..store.formats.own import check_header as _check_header
from ..store.formats.own import save_weights
from ..store.problems import CheckpointError

SNAPSHOT_DIR = "snapshots"
_NAME_RE = re.compile(r"step-(\d{6})\.safetensors")


def snapshot_steps(max_steps: int, n: int) -> list[int]:
    """``n`` evenly spaced intervals over a run: the n + 1 steps 0, max_steps/n, ..., max_steps (rounded,
    duplicates dropped when max_steps < n)."""
    if max_steps < 1 or n < 1:
        raise ValueError(f"snapshot_steps needs max_steps >= 1 and n >= 1 (got {max_steps}, {n})")
    return sorted({round(i * max_steps / n) for i in range(n + 1)})


def snapshot_name(step: int) -> str:
    return f"step-{step:06d}.safetensors"


class SnapshotSaver:
    """A training ``on_step`` callback: at each of ``steps`` it writes the weights (``dtype``) into
    ``out_dir/snapshots/``. A resumed run rewrites the snapshot of the step it resumes at, with the
    same weights."""

    def __init__(self, out_dir: Path, steps: list[int], dtype: torch.dtype = torch.float16):
        self.folder = Path(out_dir) / SNAPSHOT_DIR
        self.steps = frozenset(steps)
        self.dtype = dtype

    def __call__(self, step: int, model: Transformer) -> None:
        if step in self.steps:
            write_snapshot(self.folder, step, model, self.dtype)


def write_snapshot(folder: Path, step: int, model: Transformer, dtype: torch.dtype = torch.float16) -> Path:
    """Write the model's weights (``dtype``) atomically as ``folder/step-NNNNNN.safetensors``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return save_weights(folder / snapshot_name(step), model, dtype)


def snapshot_files(directory: Path, subfolder: str = SNAPSHOT_DIR) -> dict[int, Path]:
    """step -> file of every snapshot in a model or run folder (in its ``subfolder``), in step order
    ({} when none)."""
    folder = Path(directory) / subfolder
    if not folder.is_dir():
        return {}
    found = {}
    for p in folder.iterdir():
        m = _NAME_RE.fullmatch(p.name)
        if m and p.is_file() and not p.is_symlink():
            found[int(m.group(1))] = p
    return dict(sorted(found.items()))


def available_steps(bundle: Bundle) -> list[int]:
    """Every step the bundle can be shown at: its snapshots and its own (final) step."""
    steps = set(snapshot_files(bundle.directory))
    final = bundle.info.get("step")
    if isinstance(final, int) and not isinstance(final, bool):
        steps.add(final)
    return sorted(steps)


def read_snapshot(path: Path, cfg: ModelConfig) -> Transformer:
    """A new Transformer of ``cfg`` with the weights of one snapshot file (float32, eval mode)."""
    path = Path(path)
    _check_header(path, cfg)
    try:
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{path} is not a readable safetensors file ({e})") from e
    for k, v in state.items():
        if not torch.isfinite(v).all():
            raise CheckpointError(f"{path}: tensor {k} holds NaN or infinite values")
    model = Transformer(cfg)
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()}, strict=False)
    model.eval()
    return model


def load_snapshot(bundle: Bundle, step: int) -> Transformer:
    """A new Transformer with the bundle's config and the weights of ``step`` (float32, eval mode).

    The bundle's own step gives its weights (the shipped model is the last snapshot); any other step
    must have a snapshot file. CheckpointError names the file at fault, or the steps there are.
    """
    files = snapshot_files(bundle.directory)
    if step in files:
        return read_snapshot(files[step], bundle.cfg)
    if step != bundle.info.get("step"):
        raise CheckpointError(
            f"{bundle.name} has no snapshot at step {step}; steps available: {available_steps(bundle)}"
        )
    model = Transformer(bundle.cfg)
    model.load_state_dict(bundle.model.state_dict())
    model.eval()
    return model


def copy_snapshots(run_dir: Path, dest: Path, final_step: int | None) -> list[int]:
    """Copy a run's snapshots into a model folder being shipped, all but ``final_step`` (the shipped
    weights are that one); returns the steps copied."""
    copied = []
    for step, path in snapshot_files(run_dir).items():
        if step == final_step:
            continue
        target = Path(dest) / SNAPSHOT_DIR
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / path.name)
        copied.append(step)
    return copied


def snapshot_bundle(bundle: Bundle, step: int) -> Bundle:
    """The bundle as it was at ``step``: same task, folder and history, the snapshot's weights."""
    return Bundle(name=f"{bundle.name}@{step}", model=load_snapshot(bundle, step), task=bundle.task,
                  directory=bundle.directory, info={**bundle.info, "step": step}, metrics=bundle.metrics,
                  history=bundle.history)


def evaluate_snapshots(cfg: ModelConfig, task, files: dict[int, Path], n: int | None = None) -> list[dict]:
    """Test-split figures of every snapshot file (as stored: float16): [{"step", "exact_match", "chrf",
    "n"}, ...] in step order."""
    from .evaluate import evaluate_model

    rows = []
    for step, path in files.items():
        results = evaluate_model(read_snapshot(path, cfg), task, "test", n=n)
        first = next(iter(results.values()))
        rows.append({"step": step, **{k: first[k] for k in ("exact_match", "chrf", "n") if k in first}})
    return rows
