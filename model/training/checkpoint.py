"""Checkpoints: a folder with weights (safetensors, never pickle), config, tokenizer, history, metrics.

    model.safetensors   weights (float32, or float16 for shipped models: halves the size)
    config.json         {"model": ModelConfig, "task": ..., "train": TrainConfig, "step": int, ...}
    tokenizer.json      the task's tokenizer
    history.json        training curve: one record per logged step
    metrics.json        evaluation results
    optimizer.pt + trainer.json   resumable runs only (read back with torch.load(weights_only=True))

Loading never trusts the folder: JSON files are size-capped and parsed without tracebacks, the
config's sizes are bounded, and the safetensors header's names and shapes are compared with the
config before the network is built, so a hostile folder cannot make us allocate gigabytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from ..data.tasks import task_from_dict
from ..network.config import ConfigError, ModelConfig
from ..network.transformer import Transformer
from ..protocols import Task, Tokenizer


class CheckpointError(RuntimeError):
    """A checkpoint folder that is missing, incomplete or corrupt; the message says which file and why."""


@dataclass
class Bundle:
    """A loaded model with everything needed to run it on text."""

    name: str
    # Satisfies protocols.HookedModel; kept concrete because saving, exporting and decoding also
    # use its nn.Module side (state_dict, decoder blocks, unembed).
    model: Transformer
    task: Task
    directory: Path
    info: dict = field(default_factory=dict)  # the rest of config.json (step, train config, ...)
    metrics: dict = field(default_factory=dict)
    history: list = field(default_factory=list)

    @property
    def cfg(self) -> ModelConfig:
        return self.model.cfg

    @property
    def tokenizer(self) -> Tokenizer:
        return self.task.tokenizer


#: Largest JSON file of a checkpoint we read (the shipped tokenizer.json is ~0.5 MB).
MAX_JSON_BYTES = 64 * 2**20


def read_json(path: Path, default=None, max_bytes: int = MAX_JSON_BYTES):
    """Parse a checkpoint's JSON file; any failure (missing, too big, not UTF-8, not JSON, nested
    too deeply for the parser) is a CheckpointError naming the file."""
    path = Path(path)
    if not path.exists():
        if default is not None:
            return default
        raise CheckpointError(f"{path} is missing")
    try:
        if path.stat().st_size > max_bytes:
            raise CheckpointError(f"{path} is larger than {max_bytes // 2**20} MiB; not reading it")
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CheckpointError(f"cannot read {path} ({e.strerror or e})") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from e
    except RecursionError as e:
        raise CheckpointError(f"{path} is nested too deeply to be a checkpoint file") from e


_read_json = read_json


def _write_json(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)


def state_dict_for_saving(model: Transformer, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    # Tied weights appear under two names; keep one so safetensors gets no shared storage.
    tied = model.cfg.tie_embeddings
    state = {k: v for k, v in model.state_dict().items() if not (tied and k == "unembed.weight")}
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


def expected_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Names and shapes of the tensors a checkpoint of ``cfg`` holds, without allocating them."""
    with torch.device("meta"):
        model = Transformer(cfg)
    return {k: tuple(v.shape) for k, v in state_dict_for_saving(model).items()}


def _check_header(weights: Path, cfg: ModelConfig) -> None:
    """Compare the safetensors header (names, shapes, dtypes) with the config, reading no tensor."""
    try:
        with safe_open(str(weights), framework="pt") as f:
            found = {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{weights} is not a readable safetensors file ({e})") from e
    expected = expected_shapes(cfg)
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    bad_shapes = [k for k in expected if k in found and found[k][0] != expected[k]]
    if missing or unexpected or bad_shapes:
        raise CheckpointError(
            f"{weights} does not match its config: missing {missing[:5]}, unexpected {unexpected[:5]}, "
            f"wrong shapes {bad_shapes[:5]}"
        )
    bad_dtypes = sorted(k for k, (_, dtype) in found.items() if dtype not in _FLOAT_DTYPES)
    if bad_dtypes:
        raise CheckpointError(f"{weights}: tensors {bad_dtypes[:5]} are not float32/float16/bfloat16")


_FLOAT_DTYPES = ("F32", "F16", "BF16")


def load_checkpoint(directory: Path, name: str | None = None) -> Bundle:
    """Load a checkpoint folder; every failure is a CheckpointError naming the file at fault."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"no checkpoint folder at {directory}")
    config = _read_json(directory / "config.json")
    if not isinstance(config, dict):
        raise CheckpointError(f"{directory / 'config.json'} must hold a JSON object")
    try:
        cfg = ModelConfig.from_dict(config["model"])
    except (KeyError, TypeError, AttributeError, ConfigError) as e:
        raise CheckpointError(f"{directory / 'config.json'} has no valid model config ({e})") from e
    tokenizer_file = directory / "tokenizer.json"
    if tokenizer_file.is_file() and tokenizer_file.stat().st_size > MAX_JSON_BYTES:
        raise CheckpointError(
            f"{tokenizer_file} is larger than {MAX_JSON_BYTES // 2**20} MiB; not reading it"
        )
    try:
        task = task_from_dict(config.get("task", {}), directory)
    except (ValueError, OSError, KeyError, TypeError, RecursionError) as e:
        raise CheckpointError(f"cannot rebuild the task/tokenizer of {directory}: {e}") from e
    if task.tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(
            f"{directory / 'tokenizer.json'} has {task.tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {cfg.vocab_size}"
        )
    weights = directory / "model.safetensors"
    if not weights.exists():
        raise CheckpointError(f"{weights} is missing")
    _check_header(weights, cfg)
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{weights} is not a readable safetensors file ({e})") from e
    model = Transformer(cfg)
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
