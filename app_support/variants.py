"""What the architecture-variants page needs from torch: each variant's stored training log and test exact
match, its cross-attention on a word, and the key/value cache it really holds per generated token.

Every figure is read from the shipped model (metrics.json, history.json) or measured on it; the page draws
the plain data classes below (cached per model and word).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from app_support import gateway as G
from app_support.pitfalls import test_exact_match
from app_support.training_scrub import KIND, reverse_alignment
from model.analysis import Analysis, analyze, attention_only
from model.network.config import ModelConfig
from model.network.transformer import Transformer
from model.store.bundle import Bundle
from model.training.presets import VARIANT_AXES

__all__ = ["AXES", "KV_AXIS", "KV_TOKENS", "LAST_STEPS", "MODELS", "VARIANT_AXES", "get_row", "get_view",
           "kv_cache_bytes", "kv_formula", "variant_row", "variant_view"]
from model.training.train import step_series

#: The comparisons, in menu order: axis id -> the models compared (the base first).
AXES = tuple(VARIANT_AXES)
#: Every model the page shows, each once, in axis order.
MODELS = tuple(dict.fromkeys(name for names in VARIANT_AXES.values() for name in names))
#: The attention comparison's models: their key/value caches differ.
KV_AXIS = "attention"
#: Tokens decoded when measuring the key/value cache.
KV_TOKENS = 8
#: Steps at the end of a run whose training loss is averaged for the table (one step is noisy).
LAST_STEPS = 50


def axis_from_url(value: str) -> str | None:
    return value if value in AXES else None


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
            step_in = torch.full((1, 1), min(4, cfg.vocab_size - 1), dtype=torch.long)  # [batch, 1]
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


def variant_row(bundle: Bundle, name: str) -> VariantRow:
    series = step_series(bundle.history)
    tail = [v for v in series["loss"][-LAST_STEPS:] if v is not None]
    valid = [r["valid_loss"] for r in bundle.history if isinstance(r.get("valid_loss"), int | float)]
    return VariantRow(name, test_exact_match(bundle.metrics), float(np.mean(tail)) if tail else None,
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


def variant_view(bundle: Bundle, name: str, word: str) -> VariantView:
    answer = bundle.task.target_text(word)
    analysis = analyze(bundle, word, target=answer, keep=attention_only)
    return VariantView(name, answer, analysis, analyze(bundle, word, keep=attention_only).output_text,
                       reverse_alignment(analysis.attention(KIND), len(word)))


# --------------------------------------------------------------------------- cached for the app


@st.cache_data(max_entries=32, show_spinner=False)
def _row(name: str, stamp: int) -> VariantRow:
    return variant_row(G.get_bundle(name), name)


def get_row(name: str) -> VariantRow:
    return _row(name, G.stamp(name))


@st.cache_data(max_entries=64, show_spinner=False)
def _view(name: str, stamp: int, word: str) -> VariantView:
    return variant_view(G.get_bundle(name), name, word)


def get_view(name: str, word: str) -> VariantView:
    return _view(name, G.stamp(name), word)
