"""The loaded model, and what every model format shares: its size-checked readers
(its errors are in ``problems.py``).

A :class:`Bundle` is what every source hands out, whatever format the model was stored in: our own
``Transformer`` (every hook, the trace and the interventions work on it), the task that turns text
into ids, and what the model's folder says about itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from safetensors import SafetensorError, safe_open

from ..core.protocols import Task, Tokenizer
from ..network.config import ModelConfig
from ..network.transformer import Transformer
from .problems import CheckpointError


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

    def __post_init__(self) -> None:
        # An embedding padded past its tokenizer (Qwen2.5, Pythia): decoding must never pick those ids.
        # The logits are the decoder's vocabulary: the target tokenizer names them.
        vocab = getattr(getattr(self.task, "target_tokenizer", None), "vocab_size", None)
        cfg = getattr(self.model, "cfg", None)
        if isinstance(vocab, int) and cfg is not None and 0 < vocab < cfg.output_vocab_size:
            self.model.named_vocab = vocab

    @property
    def cfg(self) -> ModelConfig:
        return self.model.cfg

    @property
    def tokenizer(self) -> Tokenizer:
        return self.task.tokenizer

    @property
    def target_tokenizer(self) -> Tokenizer:
        """The tokenizer of the decoder's ids (see protocols.Task.target_tokenizer)."""
        return self.task.target_tokenizer


#: Largest JSON file of a model folder we read (the shipped tokenizer.json is ~0.5 MB).
MAX_JSON_BYTES = 64 * 2**20
#: safetensors dtypes a model's weights may have.
FLOAT_DTYPES = ("F32", "F16", "BF16")


def read_json(path: Path, default=None, max_bytes: int = MAX_JSON_BYTES):
    """Parse a model folder's JSON file; any failure (missing, too big, not UTF-8, not JSON, nested
    too deeply for the parser, an integer longer than Python converts) is a CheckpointError naming
    the file."""
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
    except UnicodeDecodeError as e:
        raise CheckpointError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except ValueError as e:  # JSONDecodeError, and an integer past int's string-conversion limit
        raise CheckpointError(f"{path} is not valid JSON ({str(e).split(';')[0]})") from e
    except RecursionError as e:
        raise CheckpointError(f"{path} is nested too deeply to be a checkpoint file") from e


def safetensors_header(weights: Path, error: type[CheckpointError] = CheckpointError,
                       ) -> dict[str, tuple[tuple[int, ...], str]]:
    """Name -> (shape, dtype) of every tensor in a safetensors file, read from its header alone
    (nothing allocated); an unreadable file is ``error`` naming it."""
    try:
        with safe_open(str(weights), framework="pt") as f:
            return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise error(f"{weights} is not a readable safetensors file ({e})") from e
