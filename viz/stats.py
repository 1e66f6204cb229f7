"""Head statistics in pure numpy (plus pandas for the summary table).

Conventions: patterns are ``[layer, head, query, key]`` with rows summing to 1 over the
unmasked keys; masks are boolean with ``True`` = masked / ignored. Entropies and
Jensen-Shannon divergences are in **nats** (natural log); ``log(2) ≈ 0.693`` nats is the
largest possible JS divergence.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

from viz._validate import as_array, check_mask
from viz.aggregates import Blocks, is_lazy, stack_shape, stream_layers
from viz.labels import label

LN2 = float(np.log(2.0))

#: Column meanings of :func:`head_stats` (units in brackets).
HEAD_STATS_COLUMNS: dict[str, str] = {
    "layer": "layer index (0-based)",
    "head": "head index (0-based)",
    "entropy": "mean entropy of the attention rows [nats]",
    "entropy_norm": "mean entropy / log(number of attendable keys) [0..1]; rows with one key skipped",
    "max_weight": "mean over rows of the largest weight [0..1]",
    "mean_distance": "mean over rows of sum_k w_k·|q−k| [positions]",
    "first_token": "mean weight on key position 0 [0..1]",
    "special_tokens": "mean total weight on special keys [0..1] (NaN if no special mask given)",
    "sinks": "mean total weight on attention sinks: special keys and punctuation [0..1] (NaN if not given)",
    "diagonal": "mean weight on key k = q (rows with q < n_keys) [0..1]",
    "previous_token": "mean weight on key k = q−1 (rows 1 ≤ q ≤ n_keys) [0..1]",
    "n_rows": "number of valid query rows averaged over",
}


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy ``-Σ p log p`` in nats along ``axis`` (``0·log 0 = 0``).

    ``p`` is used as given (not renormalised); NaN inputs give NaN. float32 input is computed in
    float32 with float64 sums (no float64 copy of the whole array: at 512 tokens x 72 heads that
    is 150 MB per temporary); other input in float64. Non-positive entries contribute 0.
    """
    p = np.asarray(p)
    if p.dtype != np.float32:
        p = p.astype(np.float64)
    logs = np.log(np.where(p > 0, p, 1), dtype=p.dtype)  # 0 where p <= 0 (NaN stays NaN below)
    logs *= p  # p log p; NaN where p is NaN
    return -logs.sum(axis=axis, dtype=np.float64)


def _normalise(p: np.ndarray, axis: int) -> np.ndarray:
    total = p.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, p / np.where(total > 0, total, 1.0), np.nan)


def js_divergence(p: np.ndarray, q: np.ndarray, axis: int = -1) -> np.ndarray:
    """Jensen-Shannon divergence between distributions along ``axis``, in nats.

    ``JS(p, q) = ½ KL(p‖m) + ½ KL(q‖m)`` with ``m = (p + q) / 2``. Both inputs are first
    renormalised to sum to 1 (all-zero inputs give NaN). The result is symmetric, 0 for
    identical inputs and at most ``log 2``.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape:
        p, q = np.broadcast_arrays(p, q)
    if np.any(p < 0) or np.any(q < 0):
        raise ValueError("js_divergence needs non-negative inputs")
    p = _normalise(p, axis)
    q = _normalise(q, axis)
    m = 0.5 * (p + q)
    js = 0.5 * (entropy(m, axis) * 2 - entropy(p, axis) - entropy(q, axis))
    return np.clip(js, 0.0, LN2)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) of two vectors (float64)."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a64 @ b64 / max(np.linalg.norm(a64) * np.linalg.norm(b64), 1e-300))


def cosine_similarity_matrix(x: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of the rows of ``x [n, d]`` -> ``[n, n]`` in ``[-1, 1]``.

    The diagonal is 1 for every non-zero row; rows that are all zero have no direction, so
    their row and column are NaN.
    """
    a = as_array(x, 2, "x", dims="[n, d]", dtype=np.float64)
    norms = np.linalg.norm(a, axis=1)
    ok = norms > 0
    unit = np.where(ok[:, None], a / np.where(ok, norms, 1.0)[:, None], 0.0)
    sim = np.clip(unit @ unit.T, -1.0, 1.0)
    sim[~ok, :] = np.nan
    sim[:, ~ok] = np.nan
    np.fill_diagonal(sim, np.where(ok, 1.0, np.nan))
    return sim


def flatten_heads(patterns: np.ndarray, dtype: type = np.float32) -> tuple[np.ndarray, list[str]]:
    """``[layer, head, q, k]`` -> ``([layer*head, q, k], ["L0H0", "L0H1", ...])``; 3-D passes through."""
    p = as_array(
        patterns, (3, 4), "patterns", dims="[head, query, key] or [layer, head, query, key]", dtype=dtype
    )
    if p.ndim == 3:
        return p, [f"H{h}" for h in range(p.shape[0])]
    n_layers, n_heads = p.shape[:2]
    return p.reshape(n_layers * n_heads, *p.shape[2:]), [
        f"L{li}H{h}" for li in range(n_layers) for h in range(n_heads)
    ]


def head_labels(n_layers: int, n_heads: int) -> list[str]:
    """``["L0H0", "L0H1", ...]``: the names of ``n_layers x n_heads`` heads, layer-major."""
    return [f"L{li}H{h}" for li in range(n_layers) for h in range(n_heads)]


def _as_stack(patterns: object) -> object:
    """A lazy stack as given; an array as float32 ``[layer, head, query, key]`` (3-D: one layer)."""
    if is_lazy(patterns):
        return patterns
    p = as_array(patterns, (3, 4), "patterns", dims="[head, query, key] or [layer, head, query, key]")
    return p[None] if p.ndim == 3 else p


def _valid_rows(p: np.ndarray, key_mask: np.ndarray | None, query_mask: np.ndarray | None) -> np.ndarray:
    """``[..., q]`` True where a row is a real attention distribution to average over."""
    total = p.sum(axis=-1)
    valid = np.isfinite(total) & (total > 0)
    if key_mask is not None:
        valid &= (~key_mask).any(axis=-1)
    if query_mask is not None:
        valid &= ~query_mask
    return valid


def _row_mean(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mean of ``values [..., q]`` over the last axis where ``valid``; NaN when none."""
    v = np.where(valid, values, 0.0)
    n = valid.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, v.sum(axis=-1) / np.maximum(n, 1), np.nan)


def _bool_vector(values: np.ndarray | None, n: int, name: str) -> np.ndarray | None:
    """``values`` as a bool ``[n]`` array (None stays None); ValueError for another dtype or shape."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.dtype != bool or arr.shape != (n,):
        raise ValueError(f"{name} must be a bool array of shape ({n},), got {arr.dtype} {arr.shape}")
    return arr


def _mask_source(key_mask: object, shape: tuple[int, ...]) -> object:
    """A key mask to slice ``[layer, :, rows]``: a lazy stack as given, an array broadcast (a view)."""
    if key_mask is None or not is_lazy(key_mask):
        return None if key_mask is None else check_mask(key_mask, shape, "key_mask")
    if tuple(key_mask.shape) != tuple(shape):
        raise ValueError(f"key_mask of shape {tuple(key_mask.shape)} does not fit the patterns {shape}")
    return key_mask


#: Per-row values :class:`HeadStatsStream` keeps ``[layer, head, query]`` until the means are taken.
_PER_ROW = ("entropy", "entropy_norm", "max_weight", "mean_distance", "first_token", "special_tokens",
            "sinks", "diagonal", "previous_token")


class HeadStatsStream:
    """:func:`head_stats` fed a block of query rows at a time (:meth:`add`), read once every row was
    added (:meth:`table`); it keeps a few numbers per head and row, never a block."""

    def __init__(self, shape: tuple[int, int, int, int], *, key_mask: object = None,
                 query_mask: np.ndarray | None = None, special_tokens: np.ndarray | None = None,
                 sink_tokens: np.ndarray | None = None):
        self.shape = n_layers, n_heads, n_q, n_k = tuple(shape)
        self.key_mask = _mask_source(key_mask, self.shape)
        self.query_mask = _bool_vector(query_mask, n_q, "query_mask")
        self.special = _bool_vector(special_tokens, n_k, "special_tokens")
        self.sinks = _bool_vector(sink_tokens, n_k, "sink_tokens")
        self.values = {name: np.zeros((n_layers, n_heads, n_q)) for name in _PER_ROW}
        self.valid = np.zeros((n_layers, n_heads, n_q), dtype=bool)
        self.many_keys = np.zeros((n_layers, n_heads, n_q), dtype=bool)  # more than one attendable key
        self.seen = np.zeros((n_layers, n_q), dtype=bool)

    def add(self, layer: int, rows: slice, block: np.ndarray) -> None:
        """Take the statistics of ``block`` = ``[head, rows, key]`` of ``layer`` (``rows``: a slice)."""
        p = np.asarray(block, dtype=np.float32)
        n_k = self.shape[3]
        km = None if self.key_mask is None else np.asarray(self.key_mask[layer, :, rows], dtype=bool)
        qm = None if self.query_mask is None else self.query_mask[rows]
        q = np.arange(rows.start, rows.stop)  # absolute query positions of the block
        out = {name: v[layer, :, rows] for name, v in self.values.items()}  # views: [head, rows]
        total = p.sum(axis=-1)  # [head, rows]: NaN where a row holds NaN
        n_keys = n_k - np.count_nonzero(km, axis=-1) if km is not None else np.full(total.shape, n_k)
        valid = np.isfinite(total) & (total > 0) & (n_keys > 0)
        self.valid[layer, :, rows] = valid if qm is None else valid & ~qm
        w = p if np.isfinite(total).all() else np.nan_to_num(p, nan=0.0)  # [head, rows, key]
        distance = np.abs(q[:, None] - np.arange(n_k)[None, :]).astype(np.float64)  # [rows, key]
        logs = np.log(np.maximum(w, np.finfo(np.float32).tiny))  # 0 · log(tiny) = 0 where w = 0
        out["entropy"][:] = ent = -np.multiply(logs, w, out=logs).sum(axis=-1, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["entropy_norm"][:] = np.where(n_keys > 1, ent / np.log(np.maximum(n_keys, 2)), 0.0)
        self.many_keys[layer, :, rows] = n_keys > 1
        out["max_weight"][:] = w.max(axis=-1)
        out["mean_distance"][:] = np.einsum("hqk,qk->hq", w, distance, dtype=np.float64)
        out["first_token"][:] = w[..., 0]
        for name, keys in (("special_tokens", self.special), ("sinks", self.sinks)):
            if keys is not None:
                out[name][:] = w[..., np.flatnonzero(keys)].sum(axis=-1, dtype=np.float64)
        for name, back in (("diagonal", 0), ("previous_token", 1)):  # key k = q, k = q - 1
            there = (q >= back) & (q - back < n_k)
            out[name][:, there] = w[:, np.flatnonzero(there), q[there] - back]
        self.seen[layer, rows] = True

    def table(self, lang: str = "en") -> pd.DataFrame:
        """The statistics table (see :func:`head_stats`); ValueError if some rows were never added."""
        if not self.seen.all():
            raise ValueError(f"{int((~self.seen).sum())} query rows of some layers were never added")
        n_layers, n_heads, n_q, n_k = self.shape
        q = np.arange(n_q)
        v, valid = self.values, self.valid
        table = {
            "layer": np.repeat(np.arange(n_layers), n_heads),
            "head": np.tile(np.arange(n_heads), n_layers),
            "entropy_norm": _row_mean(v["entropy_norm"], valid & self.many_keys),
            "diagonal": _row_mean(v["diagonal"], valid & (q < n_k)),
            "previous_token": _row_mean(v["previous_token"], valid & (q >= 1) & (q - 1 < n_k)),
            "n_rows": valid.sum(axis=-1),
        }
        for name in ("entropy", "max_weight", "mean_distance", "first_token"):
            table[name] = _row_mean(v[name], valid)
        for name, keys in (("special_tokens", self.special), ("sinks", self.sinks)):
            table[name] = np.full((n_layers, n_heads), np.nan) if keys is None else _row_mean(v[name], valid)
        df = pd.DataFrame({k: np.asarray(table[k]).reshape(-1) for k in HEAD_STATS_COLUMNS})
        df.attrs["units"] = {col: label(lang, f"help.head_stats.{col}") for col in HEAD_STATS_COLUMNS}
        return df


def head_stats(
    patterns: np.ndarray,
    *,
    key_mask: np.ndarray | None = None,
    query_mask: np.ndarray | None = None,
    special_tokens: np.ndarray | None = None,
    sink_tokens: np.ndarray | None = None,
    lang: str = "en",
    blocks: Blocks | None = None,
) -> pd.DataFrame:
    """One row per head with summary statistics (see :data:`HEAD_STATS_COLUMNS`).

    ``patterns``: ``[layer, head, query, key]`` (3-D = one layer), an array or a lazy stack, read a
    block of query rows of one layer at a time (:func:`viz.aggregates.stream_layers`, ``blocks``).
    ``key_mask``: bool, True = masked key, ``[key]``, ``[query, key]`` or the full shape (or a lazy
    mask stack); rows with every key masked are skipped and the number of attendable keys feeds
    ``entropy_norm``. ``query_mask``: bool ``[query]``, True = padded query row to skip.
    ``special_tokens`` / ``sink_tokens``: bool ``[key]`` (see :func:`sink_keys`). Each statistic is
    the mean over valid query rows, in float32 (the model's precision) with float64 sums; entropies
    in nats. ``attrs["units"]`` holds the column meanings in ``lang``; the column names are the
    data's identifiers in every language (shown with ``viz.column_labels("head_stats", lang)``).
    """
    patterns = _as_stack(patterns)
    stream = HeadStatsStream(stack_shape(patterns), key_mask=key_mask, query_mask=query_mask,
                             special_tokens=special_tokens, sink_tokens=sink_tokens)
    for layer, rows, block in stream_layers(patterns, blocks):
        stream.add(layer, rows, block)
    return stream.table(lang)


def sink_keys(tokens: list[str], special: np.ndarray) -> np.ndarray:
    """bool ``[key]``: the keys heads often park weight on ("attention sinks"): special tokens
    (``special``, e.g. [CLS]/[SEP] from the tokenizer's ids) and tokens made only of punctuation."""
    sp = np.asarray(special, dtype=bool)
    if sp.shape != (len(tokens),):
        raise ValueError(f"special must have one entry per token ({len(tokens)}), got shape {sp.shape}")
    punct = np.array([bool(t) and all(unicodedata.category(c).startswith("P") for c in t) for t in tokens],
                     dtype=bool)
    return sp | punct


#: Query rows compared by :func:`head_divergence` at most; longer inputs use evenly spaced rows.
MAX_DIVERGENCE_ROWS = 64


def divergence_rows(n_q: int, max_rows: int | None = MAX_DIVERGENCE_ROWS) -> np.ndarray:
    """Query rows :func:`head_divergence` averages over: all of them, or ``max_rows`` evenly spaced.

    The pairwise cost grows as heads² × rows × keys; past ``max_rows`` rows an evenly spaced
    subset estimates the mean over rows (each row's divergence itself stays exact, over every key).
    """
    if max_rows is None or n_q <= max_rows:
        return np.arange(n_q)
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer or None, got {max_rows!r}")
    return np.unique(np.round(np.linspace(0, n_q - 1, max_rows)).astype(int))


def _plogp_sum(p: np.ndarray) -> np.ndarray:
    """``Σ_k p log p`` over the last axis (``0 log 0 = 0``), summed in float64."""
    safe = np.where(p > 0, p, 1)
    return np.einsum("...k,...k->...", p, np.log(safe), dtype=np.float64)


class RowSample:
    """The query rows :func:`head_divergence` compares (:func:`divergence_rows`), every head's, taken
    from blocks of rows as they stream by (:meth:`add`): ``[heads, sampled rows, key]`` float32."""

    def __init__(self, shape: tuple[int, int, int, int], max_rows: int | None = MAX_DIVERGENCE_ROWS):
        n_layers, self.n_heads, n_q, n_k = shape
        self.n_queries = n_q
        self.rows = divergence_rows(n_q, max_rows)
        self.data = np.zeros((n_layers * self.n_heads, len(self.rows), n_k), dtype=np.float32)
        self.seen = np.zeros((n_layers, len(self.rows)), dtype=bool)

    def add(self, layer: int, rows: slice, block: np.ndarray) -> None:
        """Keep the sampled rows that ``block`` = ``[head, rows, key]`` of ``layer`` holds."""
        pick = (self.rows >= rows.start) & (self.rows < rows.stop)
        heads = slice(layer * self.n_heads, (layer + 1) * self.n_heads)
        self.data[heads, pick] = np.asarray(block, dtype=np.float32)[:, self.rows[pick] - rows.start]
        self.seen[layer, pick] = True

    def divergence(self, query_mask: np.ndarray | None = None) -> np.ndarray:
        """Pairwise JS divergence ``[n, n]`` in nats over the sampled rows (see :func:`head_divergence`)."""
        if not self.seen.all():
            raise ValueError("some sampled rows were never added")
        valid = _valid_rows(self.data, None, None)  # [n, r]
        if query_mask is not None:
            valid &= ~_bool_vector(query_mask, self.n_queries, "query_mask")[self.rows]
        w = self.data
        for i in range(len(w)):  # renormalised in float64 a head at a time (no float64 copy of all)
            h = np.nan_to_num(w[i].astype(np.float64), nan=0.0)
            total = h.sum(axis=-1, keepdims=True)
            w[i] = np.where(total > 0, h / np.where(total > 0, total, 1.0), 0.0)
        return _pairwise_js(w, valid)


def _pairwise_js(w: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """JS divergence of every pair of heads ``[n, n]`` averaged over the rows valid in both, from rows
    ``w [n, r, k]`` float32 that sum to 1 (or are 0).

    ``JS = ½ Σ (p log p + q log q) − Σ m log m`` with ``m = s / 2``, ``s = p + q``: the single rows'
    terms once per head, the mixture's per pair as ``½ Σ s log s − ½ log 2 Σ s``, over the keys any
    head weights in that row (the others add exact zeros: half the keys of a causal row), in float32
    with pairwise float32 sums (within ~1e-6 nats of a float64 computation)."""
    n, n_rows, _ = w.shape
    neg_h = _plogp_sum(w)  # [n, r]: −H of each head's rows
    totals = w.sum(axis=-1, dtype=np.float64)  # [n, r]: 1, or 0 for a row that is not a distribution
    upper = np.triu(np.ones((n, n), dtype=bool))
    js_sum, n_both = np.zeros((n, n)), np.zeros((n, n))
    tiny = np.finfo(np.float32).tiny  # where s = 0, tiny · log(tiny) = -1e-36: far below float32 rounding
    for r in range(n_rows):
        cols = np.flatnonzero(w[:, r].any(axis=0))
        if not len(cols):
            continue
        rows = np.ascontiguousarray(w[:, r][:, cols])  # [n, keys used]
        s_buf, log_buf = np.empty_like(rows), np.empty_like(rows)
        s_log_s = np.zeros((n, n))
        for i in range(n):
            s = np.add(rows[i:], rows[i] + tiny, out=s_buf[: n - i])  # s + tiny: log never sees 0
            logs = np.log(s, out=log_buf[: n - i])
            s_log_s[i, i:] = np.multiply(s, logs, out=logs).sum(axis=-1)
        m_log_m = 0.5 * s_log_s - 0.5 * LN2 * (totals[:, r, None] + totals[None, :, r])
        js = np.clip(0.5 * (neg_h[:, r, None] + neg_h[None, :, r]) - m_log_m, 0.0, LN2)
        both = valid[:, r, None] & valid[None, :, r] & upper
        js_sum += np.where(both, js, 0.0)
        n_both += both
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(n_both > 0, js_sum / np.maximum(n_both, 1), np.nan)
    out = np.triu(out) + np.triu(out, 1).T
    np.fill_diagonal(out, np.where(valid.any(axis=-1), 0.0, np.nan))
    return out


def head_divergence(patterns: np.ndarray, *, query_mask: np.ndarray | None = None,
                    max_rows: int | None = MAX_DIVERGENCE_ROWS, blocks: Blocks | None = None) -> np.ndarray:
    """Pairwise Jensen-Shannon divergence between heads -> ``[n, n]`` in nats (0 = identical).

    ``patterns``: ``[n_heads_total, q, k]`` or ``[layer, head, q, k]`` (flattened layer-major), an
    array or a lazy stack read a block of rows at a time. For each pair of heads the JS divergence of
    their attention rows is averaged over the query rows valid in both (non-zero, finite, not in
    ``query_mask``); with more than ``max_rows`` query rows, over the same evenly spaced ones for
    every head (:func:`divergence_rows`; None = every row), each compared over every key.
    """
    patterns = _as_stack(patterns)
    sample = RowSample(stack_shape(patterns), max_rows)
    for layer, rows, block in stream_layers(patterns, blocks):
        sample.add(layer, rows, block)
    return sample.divergence(query_mask)


def head_similarity(patterns: np.ndarray, *, query_mask: np.ndarray | None = None,
                    max_rows: int | None = MAX_DIVERGENCE_ROWS, blocks: Blocks | None = None) -> np.ndarray:
    """Pairwise head similarity ``1 − JS / log 2`` in ``[0, 1]`` (1 = identical patterns); rows compared
    and averaged as in :func:`head_divergence`."""
    return 1.0 - head_divergence(patterns, query_mask=query_mask, max_rows=max_rows, blocks=blocks) / LN2
