"""Checkpoints: a folder with weights (safetensors, never pickle), config, tokenizer, history, metrics.

    model.safetensors   weights (float32, or float16 for shipped models: halves the size)
    config.json         {"model": ModelConfig, "task": ..., "train": TrainConfig, "step": int, ...}
    tokenizer.json      the task's tokenizer
    history.json        training curve: one record per logged step
    metrics.json        evaluation results
    optimizer.safetensors + trainer.json   (resumable runs only)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from .config import ConfigError, ModelConfig
from .tasks import task_from_dict
from .transformer import Transformer


class CheckpointError(RuntimeError):
    """A checkpoint folder that is missing, incomplete or corrupt; the message says which file and why."""


@dataclass
class Bundle:
    """A loaded model with everything needed to run it on text."""

    name: str
    model: Transformer
    task: object
    directory: Path
    info: dict = field(default_factory=dict)  # the rest of config.json (step, train config, ...)
    metrics: dict = field(default_factory=dict)
    history: list = field(default_factory=list)

    @property
    def cfg(self) -> ModelConfig:
        return self.model.cfg

    @property
    def tokenizer(self):
        return self.task.tokenizer


def _read_json(path: Path, default=None):
    if not path.exists():
        if default is not None:
            return default
        raise CheckpointError(f"{path} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from e


def _write_json(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def state_dict_for_saving(model: Transformer, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    # Tied weights appear under two names; keep one so safetensors gets no shared storage.
    state = {k: v for k, v in model.state_dict().items() if not (model.cfg.tie_embeddings and k == "unembed.weight")}
    return {k: v.detach().to(dtype).contiguous() for k, v in state.items()}


def save_checkpoint(
    directory: Path,
    model: Transformer,
    task,
    info: dict | None = None,
    history: list | None = None,
    metrics: dict | None = None,
    dtype: torch.dtype = torch.float32,
) -> None:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / "model.safetensors.tmp"
    save_file(state_dict_for_saving(model, dtype), str(tmp))
    tmp.replace(directory / "model.safetensors")
    config = {"model": model.cfg.to_dict(), "task": task.to_dict(), **(info or {})}
    _write_json(directory / "config.json", config)
    task.save_tokenizer(directory)
    if history is not None:
        _write_json(directory / "history.json", history)
    if metrics is not None:
        _write_json(directory / "metrics.json", metrics)


def load_checkpoint(directory: Path, name: str | None = None) -> Bundle:
    """Load a checkpoint folder; every failure is a CheckpointError naming the file at fault."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"no checkpoint folder at {directory}")
    config = _read_json(directory / "config.json")
    try:
        cfg = ModelConfig.from_dict(config["model"])
    except (KeyError, TypeError, ConfigError) as e:
        raise CheckpointError(f"{directory / 'config.json'} has no valid model config ({e})") from e
    if not isinstance(config, dict):
        raise CheckpointError(f"{directory / 'config.json'} must hold a JSON object")
    try:
        task = task_from_dict(config.get("task", {}), directory)
    except (ValueError, OSError, KeyError, TypeError) as e:
        raise CheckpointError(f"cannot rebuild the task/tokenizer of {directory}: {e}") from e
    if task.tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(
            f"{directory / 'tokenizer.json'} has {task.tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {cfg.vocab_size}"
        )
    weights = directory / "model.safetensors"
    if not weights.exists():
        raise CheckpointError(f"{weights} is missing")
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{weights} is not a readable safetensors file ({e})") from e
    model = Transformer(cfg)
    expected = state_dict_for_saving(model)
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    bad_shapes = [k for k in expected if k in state and state[k].shape != expected[k].shape]
    if missing or unexpected or bad_shapes:
        raise CheckpointError(
            f"{weights} does not match its config: missing {missing[:5]}, unexpected {unexpected[:5]}, "
            f"wrong shapes {bad_shapes[:5]}"
        )
    for k, v in state.items():
        if not torch.isfinite(v).all():
            raise CheckpointError(f"{weights}: tensor {k} holds NaN or infinite values")
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()}, strict=False)
    model.eval()
    info = {k: v for k, v in config.items() if k not in ("model", "task")}
    return Bundle(
        name=name or directory.name,
        model=model,
        task=task,
        directory=directory,
        info=info,
        metrics=_read_json(directory / "metrics.json", default={}),
        history=_read_json(directory / "history.json", default=[]),
    )
