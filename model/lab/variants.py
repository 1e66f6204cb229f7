"""The architecture variants, side by side: each one's stored training log and test exact match, its
cross-attention on a word, and the key/value cache it really holds per generated token.

Every figure is read from the shipped model (metrics.json, history.json) or measured on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..network.config import ModelConfig
from ..network.transformer import Transformer
from ..run.analysis import Analysis, analyze, attention_only
from ..store.bundle import Bundle
from ..training.train import step_series
from . import entry
from .pitfalls import test_exact_match
from .training import KIND, reverse_alignment

#: Tokens decoded when measuring the key/value cache.
KV_TOKENS = 8
#: Steps at the end of a run whose training loss is averaged for the table (one step is noisy).
LAST_STEPS = 50


def kv_cache_bytes(model: Transformer, n_tokens: int = 8) -> float:
    """Bytes the decoder's self-attention key/value cache really holds per generated token.

    Runs incremental decoding (one token per step, as ``greedy_decode`` does) for ``n_tokens`` steps on a
    one-word source, then adds up the ``nbytes`` of every cached key and value tensor and divides by the
    positions held. The weights' dtype sets the element size (float32 in the app).
    """
    cfg = model.cfg
    n_tokens = max(1, min(int(n_tokens), cfg.max_len))
    src = torch.full((1, 3), min(3, cfg.vocab_size - 1), dtype=torch.long)  # [batch=1, src_pos=3]
    with model.lock, torch.no_grad():
        model.eval()
        memory, src_pad = model.encode(src)
        caches: list[dict] = [{} for _ in model.decoder.blocks]
        for position in range(n_tokens):
            step_in = torch.full((1, 1), min(4, cfg.output_vocab_size - 1), dtype=torch.long)  # [batch, 1]
            model.decoder(step_in, memory, None, src_pad, caches, position)
    total = sum(cache[k].nbytes for cache in caches for k in ("k", "v") if k in cache)
    return total / n_tokens


def kv_formula(cfg: ModelConfig, bytes_per_value: int = 4) -> int:
    """2 (key and value) x decoder layers x key/value heads x d_head x bytes per value."""
    return 2 * cfg.n_dec_layers * cfg.kv_heads * cfg.d_head * bytes_per_value


@dataclass
class VariantRow:
    """One model of the comparison, as the page shows it."""

    name: str
    exact_match: float | None  # test exact match from metrics.json
    final_loss: float | None  # mean training loss of the last LAST_STEPS steps
    valid_loss: float | None  # validation loss at the last evaluation of the run
    series: dict[str, list]  # step_series(history)
    parameters: int
    kv_heads: int
    kv_bytes: float  # measured self-attention key/value cache per generated token (float32)


@entry
def variant_row(bundle: Bundle) -> VariantRow:
    series = step_series(bundle.history)
    tail = [v for v in series["loss"][-LAST_STEPS:] if v is not None]
    valid = [r["valid_loss"] for r in bundle.history if isinstance(r.get("valid_loss"), int | float)]
    return VariantRow(bundle.name, test_exact_match(bundle.metrics), float(np.mean(tail)) if tail else None,
                      float(valid[-1]) if valid else None, series,
                      sum(p.numel() for p in bundle.model.parameters()), bundle.cfg.kv_heads,
                      kv_cache_bytes(bundle.model, KV_TOKENS))


@dataclass
class VariantView:
    """A word through one variant: cross-attention teacher-forced on the right answer, and its own output."""

    name: str
    answer: str
    analysis: Analysis
    output: str
    alignment: np.ndarray  # [layer, head] mean weight on the right source letter


@entry
def variant_view(bundle: Bundle, word: str) -> VariantView:
    answer = bundle.task.target_text(word)
    analysis = analyze(bundle, word, target=answer, keep=attention_only)
    return VariantView(bundle.name, answer, analysis, analyze(bundle, word, keep=attention_only).output_text,
                       reverse_alignment(analysis.attention(KIND), len(word)))
