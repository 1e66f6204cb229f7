"""Worked example: one query's attention computed by hand, step by step, from a head's q, k and v.

:func:`work_row` redoes what ``model/network/attention.py`` does for one query position of one head,
in numpy float64: the dot product with every key, the division by sqrt(d_head), T5's relative position
bias where the model adds one, the mask, the softmax in two steps and the weighted sum of the value
vectors. The other functions turn its
result into small tables and figures (words in ``lang``). No torch, no streamlit.

Shapes follow the model's hooks: ``q`` is ``[query_pos, head, d_head]``, ``k`` and ``v`` are
``[key_pos, kv_head, d_head]`` (``kv_head`` = ``head`` for multi-head attention; fewer for
grouped-query and multi-query attention, where each key/value head serves a group of query heads).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz import theme
from viz._validate import check_index
from viz.labels import label
from viz.tokens import escape_text, token_label, visible_whitespace

__all__ = [
    "ELLIPSIS",
    "NormedRow",
    "RotatedRow",
    "WorkedRow",
    "kv_head_of",
    "norm_by_hand",
    "position_labels",
    "products_figure",
    "rotate_by_hand",
    "shown_dimensions",
    "steps_table",
    "vector_table",
    "weighted_sum_table",
    "weights_figure",
    "work_row",
]

#: The column standing for the dimensions left out of an elided vector.
ELLIPSIS = "…"


def kv_head_of(head: int, n_heads: int, n_kv_heads: int) -> int:
    """The key/value head query head ``head`` reads: ``head // (n_heads // n_kv_heads)``.

    Multi-head attention (``n_kv_heads == n_heads``) gives ``head`` itself, multi-query attention
    (``n_kv_heads == 1``) always 0. This is the ``repeat_interleave`` of the model, read backwards.
    """
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads ({n_kv_heads}) must be >= 1 and divide n_heads ({n_heads})")
    check_index(head, n_heads, "head")
    return head // (n_heads // n_kv_heads)


@dataclass(frozen=True)
class WorkedRow:
    """Every intermediate number of one query's attention in one head (float64)."""

    head: int
    kv_head: int  # the key/value head this query head reads
    query: int
    key: int  # the key whose dot product is spelled out dimension by dimension
    q: np.ndarray  # [d_head], the query vector
    k: np.ndarray  # [key_pos, d_head], every key vector
    v: np.ndarray  # [key_pos, d_head], every value vector
    products: np.ndarray  # [d_head], q_i * k_i for the chosen key
    dots: np.ndarray  # [key_pos], q · k_j (the raw scores)
    scale: float  # sqrt(d_head), or the layer's own divisor (Gemma 3: sqrt(query_pre_attn_scalar))
    scaled: np.ndarray  # [key_pos], dots / scale
    mask: np.ndarray  # [key_pos] bool, True where the query may not look
    masked: np.ndarray  # [key_pos], scaled with -inf where masked
    max_score: float  # the largest unmasked score (subtracted before exp); nan if all masked
    exps: np.ndarray  # [key_pos], exp(score - max), 0 where masked
    total: float  # sum of exps
    weights: np.ndarray  # [key_pos], exps / total (the attention weights), 0 where masked
    weighted: np.ndarray  # [key_pos, d_head], weights[j] * v[j]
    z: np.ndarray  # [d_head], the weighted sum of the value vectors
    bias: np.ndarray | None = None  # [key_pos], T5's relative position bias added to ``scaled``; None: none

    @property
    def d_head(self) -> int:
        return int(self.q.shape[0])


def work_row(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    head: int,
    query: int,
    key: int = 0,
    *,
    causal: bool = False,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    window: int = 0,
    bias: np.ndarray | None = None,
) -> WorkedRow:
    """One query's attention in head ``head``, by hand in float64.

    ``q`` [query_pos, head, d_head], ``k``/``v`` [key_pos, kv_head, d_head] (rotated q and k for
    RoPE models: the scores are made from those). ``causal``: the query at position ``query`` may
    not look at later keys (decoder self-attention). ``mask``: extra [key_pos] bool, True = masked.
    ``scale``: what the scores are divided by (None: sqrt(d_head)). ``window`` (> 0, with ``causal``):
    a sliding window, the query sees its last ``window`` keys, itself included. ``bias`` [key_pos]:
    a relative position bias (T5) added to the scaled scores before the mask.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ValueError("q must be [query_pos, head, d_head] and k, v [key_pos, kv_head, d_head]")
    n_q, n_heads, d = q.shape
    n_k, n_kv, _ = k.shape
    if k.shape[2] != d or v.shape != k.shape:
        raise ValueError(f"q {q.shape}, k {k.shape} and v {v.shape} do not fit together")
    check_index(query, n_q, "query")
    check_index(key, n_k, "key")
    g = kv_head_of(head, n_heads, n_kv)
    qv, ks, vs = q[query, head], k[:, g], v[:, g]
    products = qv * ks[key]
    dots = ks @ qv
    scale = math.sqrt(d) if scale is None else float(scale)
    scaled = dots / scale
    if bias is not None:
        bias = np.asarray(bias, dtype=np.float64)
        if bias.shape != (n_k,):
            raise ValueError(f"bias must be [key_pos={n_k}], got {list(bias.shape)}")
    biased = scaled if bias is None else scaled + bias
    hidden = np.zeros(n_k, dtype=bool)
    if causal:
        hidden |= np.arange(n_k) > query
        if window > 0:
            hidden |= np.arange(n_k) <= query - window
    if mask is not None:
        hidden |= np.asarray(mask, dtype=bool)
    masked = np.where(hidden, -np.inf, biased)
    if hidden.all():  # nothing to look at: every weight is 0, as in the model's masked softmax
        top, exps = float("nan"), np.zeros(n_k)
    else:
        top = float(masked[~hidden].max())
        exps = np.where(hidden, 0.0, np.exp(np.where(hidden, 0.0, masked - top)))
    total = float(exps.sum())
    weights = exps / total if total > 0 else np.zeros(n_k)
    weighted = weights[:, None] * vs
    return WorkedRow(head, g, query, key, qv, ks, vs, products, dots, scale, scaled, hidden, masked, top,
                     exps, total, weights, weighted, weighted.sum(axis=0), bias)


# --------------------------------------------------------------------------- before the scores


@dataclass(frozen=True)
class NormedRow:
    """A QK-norm by hand (float64): the vector, what is subtracted and divided, the result."""

    x: np.ndarray  # what the norm reads: one head's d_head, or a position's whole projection (OLMo 2)
    centre: float  # the mean subtracted (LayerNorm); 0 for RMSNorm
    spread: float  # sqrt(mean(x²) + eps) (RMSNorm), or sqrt(var(x) + eps) (LayerNorm)
    normed: np.ndarray  # (x - centre) / spread * weight (+ bias)


def norm_by_hand(x: np.ndarray, weight: np.ndarray, eps: float, *, kind: str = "rmsnorm",
                 bias: np.ndarray | None = None) -> NormedRow:
    """QK-norm of one vector by hand: RMSNorm ``x / sqrt(mean(x²) + eps) * weight`` (Qwen3, Gemma 3 whose
    weight already holds 1 + w, OLMo 2) or LayerNorm ``(x - mean) / sqrt(var + eps) * weight + bias``."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    w = np.asarray(weight, dtype=np.float64).reshape(-1)
    if w.shape != x.shape:
        raise ValueError(f"the norm's weight has {w.shape[0]} values for a vector of {x.shape[0]}")
    if kind == "rmsnorm":
        centre, spread = 0.0, math.sqrt(float(np.mean(x * x)) + eps)
    elif kind == "layernorm":
        centre = float(x.mean())
        spread = math.sqrt(float(np.mean((x - centre) ** 2)) + eps)
    else:
        raise ValueError(f"kind must be 'rmsnorm' or 'layernorm', got {kind!r}")
    normed = (x - centre) / spread * w
    if bias is not None:
        normed = normed + np.asarray(bias, dtype=np.float64).reshape(-1)
    return NormedRow(x, centre, spread, normed)


@dataclass(frozen=True)
class RotatedRow:
    """RoPE of one head's vector at one position by hand (float64)."""

    x: np.ndarray  # [d_head], before the rotation
    position: int
    rotary_dims: int  # the first rotary_dims dims turn, in (even, odd) pairs; the rest pass unchanged
    angles: np.ndarray  # [rotary_dims / 2], radians: position / factor * base^(-2i / rotary_dims)
    rotated: np.ndarray  # [d_head]


def rotate_by_hand(x: np.ndarray, position: int, rotary_dims: int, base: float = 10000.0,
                   factor: float = 1.0, pairs: Sequence[float] = (), scale: float = 1.0) -> RotatedRow:
    """Turn pair i = (2i, 2i + 1) of the first ``rotary_dims`` dims of ``x`` by ``position / factor ×
    base^(-2i / rotary_dims)``; dims from ``rotary_dims`` on are left as they are (partial rotary:
    Pythia turns a quarter of each head, Phi-3 its config's share). The pairs are this app's (even, odd)
    order: a Hugging Face checkpoint's rotate-half pairs (i, i + r/2) were interleaved when it was read.
    ``pairs`` (longrope, Phi-3): pair i's angle also divided by its own factor; ``scale``: the turned
    pairs also multiplied by it (longrope's attention factor)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    r = int(rotary_dims)
    if not 2 <= r <= x.shape[0] or r % 2:
        raise ValueError(f"rotary_dims must be even and between 2 and {x.shape[0]}, got {r}")
    angles = position / factor * float(base) ** (-np.arange(0, r, 2, dtype=np.float64) / r)
    if len(pairs):
        if len(pairs) != r // 2:
            raise ValueError(f"pairs must hold one factor per turned pair ({r // 2}), got {len(pairs)}")
        angles = angles / np.asarray(pairs, dtype=np.float64)
    cos, sin = np.cos(angles) * scale, np.sin(angles) * scale
    even, odd = x[0:r:2], x[1:r:2]
    out = x.copy()
    out[0:r:2] = even * cos - odd * sin
    out[1:r:2] = even * sin + odd * cos
    return RotatedRow(x, int(position), r, angles, out)


# --------------------------------------------------------------------------- tables


def position_labels(tokens: Sequence[str]) -> list[str]:
    """``"3: token"`` for each position (whitespace made visible; tables show text literally)."""
    return [f"{i}: {visible_whitespace(t)}" for i, t in enumerate(tokens)]


def shown_dimensions(d: int, edge: int = 4) -> list[int | None]:
    """The dimensions a table shows: all of them, or the first and last ``edge`` with None between."""
    if d <= 2 * edge + 1:
        return list(range(d))
    return [*range(edge), None, *range(d - edge, d)]


def _vector_frame(vectors: np.ndarray, index: Sequence[str], edge: int | None) -> pd.DataFrame:
    d = vectors.shape[1]
    dims = list(range(d)) if edge is None else shown_dimensions(d, edge)
    columns = {}
    for i in dims:
        if i is None:
            columns[ELLIPSIS] = [ELLIPSIS] * len(index)
        else:
            columns[str(i)] = vectors[:, i]
    return pd.DataFrame(columns, index=list(index))


def vector_table(vectors: np.ndarray, row_labels: Sequence[str], *, edge: int | None = 4) -> pd.DataFrame:
    """One vector per row (``[row, d_head]``); columns are dimension numbers.

    ``edge``: show only the first and last ``edge`` dimensions with a ``…`` column between
    (None: every dimension). Values are float64; the ``…`` column holds the text ``…``.
    """
    m = np.asarray(vectors, dtype=np.float64)
    if m.ndim == 1:
        m = m[None]
    if m.ndim != 2 or len(row_labels) != m.shape[0]:
        raise ValueError(f"vectors must be [row, d_head] with one label per row, got {m.shape} "
                         f"and {len(row_labels)} labels")
    return _vector_frame(m, row_labels, edge)


STEP_COLUMNS = ("dot", "scaled", "masked", "exp", "weight")


def steps_table(row: WorkedRow, key_tokens: Sequence[str], *, lang: str = "en") -> pd.DataFrame:
    """One row per key: q·k, ÷ sqrt(d_head), + the position bias (T5 only), after the mask (-inf),
    exp(score − max), weight.

    Column names in ``lang``; the stable names are in ``attrs["columns"]`` (``STEP_COLUMNS``).
    """
    if len(key_tokens) != row.dots.shape[0]:
        raise ValueError(f"{row.dots.shape[0]} keys but {len(key_tokens)} key tokens were given")
    values = [row.dots, row.scaled, row.masked, row.exps, row.weights]
    columns = list(STEP_COLUMNS)
    own = not math.isclose(row.scale, math.sqrt(row.d_head), rel_tol=1e-12)
    names = [label(lang, f"worked.col.{c}", d=row.d_head) for c in STEP_COLUMNS]
    if own:  # the layer's own divisor, not sqrt(d_head)
        names[1] = label(lang, "worked.col.scaled_by", s=f"{row.scale:.4g}")
    if row.bias is not None:  # T5: the relative position bias, then the mask on score + bias
        values.insert(2, row.bias)
        columns.insert(2, "bias")
        names.insert(2, label(lang, "worked.col.bias"))
        names[3] = label(lang, "worked.col.masked_biased")
    frame = pd.DataFrame(dict(zip(names, values, strict=True)), index=position_labels(key_tokens))
    frame.attrs["columns"] = dict(zip(columns, names, strict=True))
    return frame


def weighted_sum_table(row: WorkedRow, key_tokens: Sequence[str], *, edge: int | None = 4,
                       lang: str = "en") -> pd.DataFrame:
    """The weighted sum: a row ``w_j × v_j`` per key (with its weight first), then the sum z."""
    if len(key_tokens) != row.v.shape[0]:
        raise ValueError(f"{row.v.shape[0]} keys but {len(key_tokens)} key tokens were given")
    index = [*position_labels(key_tokens), label(lang, "worked.row.z")]
    frame = _vector_frame(np.vstack([row.weighted, row.z[None]]), index, edge)
    frame.insert(0, label(lang, "worked.col.weight"), [*row.weights, row.weights.sum()])
    return frame


# --------------------------------------------------------------------------- figures


def products_figure(row: WorkedRow, query_token: str, key_token: str, *, lang: str = "en") -> go.Figure:
    """Bar chart of q_i · k_i over the dimensions i for the chosen key; their sum is the dot product."""
    d = row.d_head
    colors = [theme.ACCENT if p >= 0 else theme.NEGATIVE for p in row.products]
    fig = go.Figure(
        go.Bar(
            x=np.arange(d, dtype=np.int32),
            y=row.products,
            marker={"color": colors},
            customdata=np.stack([row.q, row.k[row.key]], axis=1),
            hovertemplate=label(lang, "worked.hover_product", dim="%{x}", q="%{customdata[0]:.4f}",
                                k="%{customdata[1]:.4f}", product="%{y:.4f}") + "<extra></extra>",
            showlegend=False,
        )
    )
    title = label(lang, "worked.products_title", query=token_label(query_token), key=token_label(key_token))
    subtitle = label(lang, "worked.products_sum", total=f"{row.dots[row.key]:.4f}")
    theme.apply_theme(fig, title, subtitle=subtitle, height=380)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.dimension")}, "showgrid": False, "zeroline": False},
        yaxis={"title": {"text": label(lang, "worked.axis_product")}, "zeroline": True},
        bargap=0.15,
    )
    return fig


def weights_figure(row: WorkedRow, key_tokens: Sequence[str], *, lang: str = "en") -> go.Figure:
    """The attention weights of the query over every key (masked keys: an empty slot, said in hover)."""
    n = row.weights.shape[0]
    if len(key_tokens) != n:
        raise ValueError(f"{n} keys but {len(key_tokens)} key tokens were given")
    names = [escape_text(label(lang, "worked.masked")) if m else "" for m in row.mask]
    fig = go.Figure(
        go.Bar(
            x=np.arange(n, dtype=np.int32),
            y=row.weights,
            marker={"color": [theme.MASK_COLOR if m else theme.ACCENT for m in row.mask]},
            text=[f"{w:.3f}" if not m else "−∞" for w, m in zip(row.weights, row.mask, strict=True)],
            textposition="outside",
            customdata=names,
            hovertemplate=label(lang, "hover.value", name=label(lang, "value.attention_weight"),
                                value="%{y:.4f}") + " %{customdata}<extra></extra>",
            showlegend=False,
        )
    )
    theme.apply_theme(fig, label(lang, "worked.weights_title"), height=360)
    fig.update_layout(
        xaxis=theme.token_axis([token_label(t) for t in key_tokens], label(lang, "axis.key")),
        yaxis={"title": {"text": label(lang, "value.attention_weight")}, "range": [0, 1.15]},
    )
    return fig
