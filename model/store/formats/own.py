"""This project's own checkpoint folder: weights (safetensors, never pickle), config, tokenizer,
history, metrics.

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

from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch.overrides import TorchFunctionMode

from ...core.files import atomic_write, atomic_write_json
from ...data.tasks import task_from_dict
from ...network.config import ConfigError, ModelConfig
from ...network.transformer import Transformer
from ..budget import check_budget, within_budget
from ..bundle import FLOAT_DTYPES, MAX_JSON_BYTES, Bundle, read_json, safetensors_header
from ..problems import CheckpointError

WEIGHTS = "model.safetensors"


def state_dict_for_saving(model: Transformer, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    # Tied weights appear under two names; keep one so safetensors gets no shared storage.
    tied = model.cfg.tie_embeddings
    state = {k: v for k, v in model.state_dict().items() if not (tied and k == "unembed.weight")}
    return {k: v.detach().to(dtype).contiguous() for k, v in state.items()}


def save_weights(path: Path, model: Transformer, dtype: torch.dtype = torch.float32) -> Path:
    """The model's weights as one safetensors file (``dtype``), written atomically."""
    state = state_dict_for_saving(model, dtype)
    return atomic_write(path, lambda tmp: save_file(state, str(tmp)))


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
    save_weights(directory / WEIGHTS, model, dtype)
    config = {"model": model.cfg.to_dict(), "task": task.to_dict(), **(info or {})}
    atomic_write_json(directory / "config.json", config)
    task.save_tokenizer(directory)
    if history is not None:
        atomic_write_json(directory / "history.json", history)
    if metrics is not None:
        atomic_write_json(directory / "metrics.json", metrics)


class _NoRandomStart(TorchFunctionMode):
    """Inside: ``torch.nn.init``'s functions leave their tensor as it is. On the meta device there is nothing
    to fill, and torch's meta path for ``normal_`` imports its compiler (torch._dynamo, sympy: ~800 modules,
    ~1 s of the first load in every process, and 130,000 objects the garbage collector then walked at every
    new analysis)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs["tensor"]  # every init function's first argument
        return func(*args, **(kwargs or {}))


def unfilled_model(cfg: ModelConfig) -> Transformer:
    """Our network for ``cfg`` on the meta device: every tensor's name and shape, none allocated or filled."""
    with torch.device("meta"), _NoRandomStart():
        return Transformer(cfg)


def expected_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Names and shapes of the tensors a checkpoint of ``cfg`` holds, without allocating them."""
    model = unfilled_model(cfg)
    return {k: tuple(v.shape) for k, v in state_dict_for_saving(model).items()}


def all_finite(t: torch.Tensor) -> bool:
    """No NaN or infinity in ``t``: its smallest and largest values (NaN spreads to both) in one pass, an
    order of magnitude faster than isfinite(t).all(), which writes a mask of the whole tensor first (a
    Qwen3-0.6B-shaped folder: 14 s of its load under load, 20x less with this)."""
    if not t.numel():
        return True
    low, high = torch.aminmax(t)
    return bool(torch.isfinite(low)) and bool(torch.isfinite(high))


def model_from_state(cfg: ModelConfig, state: dict[str, torch.Tensor], strict: bool = True) -> Transformer:
    """Our network holding the tensors of ``state`` (checked already, each owning its memory: not a view of
    a file's mapping), built without its random start:
    on the meta device, then given the tensors themselves (no copy). A random start of every weight, thrown
    away at once, was most of the load of a large folder. Tied embeddings stay one tensor; the computed
    tables (sinusoidal positions), which no file holds, are computed."""
    from ...network.positional import SinusoidalPositions, sinusoidal_table

    model = unfilled_model(cfg)
    model.load_state_dict(state, strict=strict, assign=True)
    if cfg.tie_embeddings and model.unembed is not None:
        model.unembed.weight = model.target_table.weight
    for module in model.modules():
        if isinstance(module, SinusoidalPositions):
            module.register_buffer("table", sinusoidal_table(cfg.max_len, cfg.d_model, cfg.sinusoid_layout),
                                   persistent=False)
    left = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    assert not left, f"tensors without a value: {left[:5]}"
    return model.eval()


def check_header(weights: Path, cfg: ModelConfig) -> None:
    """Compare the safetensors header (names, shapes, dtypes) with the config, reading no tensor."""
    found = safetensors_header(weights)
    expected = expected_shapes(cfg)
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    bad_shapes = [k for k in expected if k in found and found[k][0] != expected[k]]
    if missing or unexpected or bad_shapes:
        raise CheckpointError(
            f"{weights} does not match its config: missing {missing[:5]}, unexpected {unexpected[:5]}, "
            f"wrong shapes {bad_shapes[:5]}"
        )
    bad_dtypes = sorted(k for k, (_, dtype) in found.items() if dtype not in FLOAT_DTYPES)
    if bad_dtypes:
        raise CheckpointError(f"{weights}: tensors {bad_dtypes[:5]} are not float32/float16/bfloat16")


def _config_dict(directory: Path) -> dict:
    config = read_json(directory / "config.json")
    if not isinstance(config, dict):
        raise CheckpointError(f"{directory / 'config.json'} must hold a JSON object")
    return config


def _model_config(directory: Path, config: dict) -> ModelConfig:
    try:
        return ModelConfig.from_dict(config["model"])
    except (KeyError, TypeError, AttributeError, ConfigError) as e:
        raise CheckpointError(f"{directory / 'config.json'} has no valid model config ({e})") from e


def load_checkpoint(directory: Path, name: str | None = None, tokenizer_file: Path | None = None) -> Bundle:
    """Load a checkpoint folder; every failure is a CheckpointError naming the file at fault.
    ``tokenizer_file`` stands for the folder's own tokenizer.json: a shipped model that shares another
    shipped model's (:meth:`model.store.sources.shipped.FolderSource.tokenizer_file`)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"no checkpoint folder at {directory}")
    config = _config_dict(directory)
    cfg = _model_config(directory, config)
    limit = check_budget(cfg, directory / "config.json")
    if tokenizer_file is None:
        tokenizer_file = directory / "tokenizer.json"
        shared = config.get("tokenizer_from")
        if not tokenizer_file.exists() and isinstance(shared, str):
            raise CheckpointError(f"{directory} has no tokenizer.json of its own: it shares "
                                  f"{shared[:40]!r}'s, which only the shipped models' folder provides "
                                  "(open it by its name)")
    if tokenizer_file.is_file() and tokenizer_file.stat().st_size > MAX_JSON_BYTES:
        raise CheckpointError(
            f"{tokenizer_file} is larger than {MAX_JSON_BYTES // 2**20} MiB; not reading it"
        )
    try:
        task = task_from_dict(config.get("task", {}), directory, tokenizer_file)
    except (ValueError, OSError, KeyError, TypeError, RecursionError) as e:
        raise CheckpointError(f"cannot rebuild the task/tokenizer of {directory}: {e}") from e
    if task.tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(
            f"{tokenizer_file} has {task.tokenizer.vocab_size} tokens but the model's "
            f"vocab_size is {cfg.vocab_size}"
        )
    weights = directory / WEIGHTS
    if not weights.exists():
        raise CheckpointError(f"{weights} is missing")
    check_header(weights, cfg)
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
    return within_budget(Bundle(
        name=name or directory.name,
        model=model,
        task=task,
        directory=directory,
        info=info,
        metrics=read_json(directory / "metrics.json", default={}),
        history=read_json(directory / "history.json", default=[]),
    ), limit)


class OwnFormat:
    """This project's checkpoint folder (config.json with a "model" section)."""

    name = "own"
    what = ("Attention Lens checkpoint", "Attention Lens 检查点")
    task = ""
    example = ""

    def claims(self, config: dict) -> bool:
        return isinstance(config.get("model"), dict)

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        return _model_config(folder, _config_dict(folder))

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        check_header(folder / WEIGHTS, self.read_config(folder))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_checkpoint(folder, name=name)


OWN = OwnFormat()
