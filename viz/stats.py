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


def _normalised_entropy(ent: np.ndarray, km: np.ndarray | None, n_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's entropy over log(number of attendable keys), 0 where one key is left; and that
    number of keys ``[L, H, q]``."""
    n_keys = (~km).sum(axis=-1) if km is not None else np.full(ent.shape, n_k)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent_norm = np.where(n_keys > 1, ent / np.log(np.maximum(n_keys, 2)), 0.0)
    return ent_norm, n_keys


def _weight_at_offset(w: np.ndarray, back: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's weight on key k = q − ``back`` ``[L, H, q]`` (0 where that key does not exist) and
    the query rows where it exists ``[q]``."""
    n_q, n_k = w.shape[-2:]
    qi = np.arange(n_q)
    rows = (qi >= back) & (qi - back < n_k)
    vals = np.zeros(w.shape[:-1], dtype=np.float64)
    vals[..., rows] = w[..., qi[rows], qi[rows] - back]
    return vals, rows


def _weight_on(w: np.ndarray, keys: np.ndarray | None, valid: np.ndarray) -> np.ndarray:
    """Mean over valid rows of the total weight on ``keys`` (bool ``[key]``); NaN without keys."""
    if keys is None:
        return np.full(valid.shape[:-1], np.nan)
    return _row_mean(w @ keys.astype(np.float64), valid)


def head_stats(
    patterns: np.ndarray,
    *,
    key_mask: np.ndarray | None = None,
    query_mask: np.ndarray | None = None,
    special_tokens: np.ndarray | None = None,
    sink_tokens: np.ndarray | None = None,
    lang: str = "en",
) -> pd.DataFrame:
    """One row per head with summary statistics (see :data:`HEAD_STATS_COLUMNS`).

    ``patterns``: ``[layer, head, query, key]`` (3-D ``[head, query, key]`` = one layer).
    ``key_mask``: bool, True = masked key, shape ``[key]``, ``[query, key]`` or the full shape
    (e.g. ``~np.isfinite(scores)``); rows with every key masked are skipped and the number of
    attendable keys feeds ``entropy_norm``. ``query_mask``: bool ``[query]``, True = padded
    query row to skip. ``special_tokens``: bool ``[key]``, True for special tokens.
    ``sink_tokens``: bool ``[key]``, True for the usual attention sinks (see :func:`sink_keys`).
    Each statistic is the mean over valid query rows; entropies are in nats. The table's
    ``attrs["units"]`` repeats the column meanings, in ``lang`` ("en" or "zh"). The column names
    are the same in every language (the data's identifiers); show them with
    ``viz.column_labels("head_stats", lang)``.
    """
    # float32 (the model's own precision) with float64 sums: a float64 copy of 72 heads at 512
    # tokens would be 150 MB per temporary (results agree to ~1e-6; tests/test_long_inputs.py)
    p = as_array(
        patterns, (3, 4), "patterns", dims="[head, query, key] or [layer, head, query, key]", dtype=np.float32
    )
    if p.ndim == 3:
        p = p[None]
    n_layers, n_heads, n_q, n_k = p.shape
    km = None if key_mask is None else check_mask(key_mask, p.shape, "key_mask")
    qm = _bool_vector(query_mask, n_q, "query_mask")
    sp = _bool_vector(special_tokens, n_k, "special_tokens")
    sinks = _bool_vector(sink_tokens, n_k, "sink_tokens")

    valid = _valid_rows(p, km, qm)  # [L, H, q]
    w = np.nan_to_num(p, nan=0.0) if np.isnan(p).any() else p  # [L, H, q, k]
    distance = np.abs(np.arange(n_q)[:, None] - np.arange(n_k)[None, :]).astype(np.float64)  # [q, k]
    ent = entropy(w)
    ent_norm, n_keys = _normalised_entropy(ent, km, n_k)
    diag_vals, diag_rows = _weight_at_offset(w, 0)  # key k = q
    prev_vals, prev_rows = _weight_at_offset(w, 1)  # key k = q − 1
    table = {
        "layer": np.repeat(np.arange(n_layers), n_heads),
        "head": np.tile(np.arange(n_heads), n_layers),
        "entropy": _row_mean(ent, valid),
        "entropy_norm": _row_mean(ent_norm, valid & (n_keys > 1)),
        "max_weight": _row_mean(w.max(axis=-1), valid),
        "mean_distance": _row_mean(np.einsum("lhqk,qk->lhq", w, distance, dtype=np.float64), valid),
        "first_token": _row_mean(w[..., 0], valid),
        "special_tokens": _weight_on(w, sp, valid),
        "sinks": _weight_on(w, sinks, valid),
        "diagonal": _row_mean(diag_vals, valid & diag_rows),
        "previous_token": _row_mean(prev_vals, valid & prev_rows),
        "n_rows": valid.sum(axis=-1),
    }
    df = pd.DataFrame({k: np.asarray(v).reshape(-1) for k, v in table.items()})
    df.attrs["units"] = {col: label(lang, f"help.head_stats.{col}") for col in HEAD_STATS_COLUMNS}
    return df


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


def head_divergence(
    patterns: np.ndarray,
    *,
    query_mask: np.ndarray | None = None,
    max_rows: int | None = MAX_DIVERGENCE_ROWS,
) -> np.ndarray:
    """Pairwise Jensen-Shannon divergence between heads -> ``[n, n]`` in nats (0 = identical).

    ``patterns``: ``[n_heads_total, q, k]`` (or ``[layer, head, q, k]``, flattened layer-major).
    For each pair of heads the JS divergence of their attention rows is averaged over the
    query rows that are valid in both (non-zero, finite, not in ``query_mask``); with more than
    ``max_rows`` query rows, over evenly spaced ones (:func:`divergence_rows`; None = every row).

    ``JS(p, q) = H((p+q)/2) − (H(p) + H(q)) / 2``: the entropies of single rows are computed
    once, so only the mixture term is pairwise; it runs over the upper triangle in float32 with
    float64 sums (differences to a float64 computation ~1e-7 nats).
    """
    p, _ = flatten_heads(patterns, dtype=np.float32)
    n, n_q, _ = p.shape
    rows = divergence_rows(n_q, max_rows)
    p = p[:, rows].astype(np.float64)  # [n, r, k]: only the rows used, in float64
    valid = _valid_rows(p, None, None)  # [n, r]
    if query_mask is not None:
        valid &= ~_bool_vector(query_mask, n_q, "query_mask")[rows]
    w = np.nan_to_num(p, nan=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = w.sum(axis=-1, keepdims=True)
        w = np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)  # renormalised rows
    w32 = w.astype(np.float32)  # [n, r, k]
    neg_h = _plogp_sum(w32)  # [n, r]: −H of each head's rows
    out = np.zeros((n, n), dtype=np.float64)
    for i in range(n):
        mix = 0.5 * (w32[i][None] + w32[i:])  # [n−i, r, k]
        js = 0.5 * (neg_h[i][None] + neg_h[i:]) - _plogp_sum(mix)  # [n−i, r]
        js = np.clip(js, 0.0, LN2)
        both = valid[i][None] & valid[i:]
        out[i, i:] = _row_mean(js, both)
    out = np.triu(out) + np.triu(out, 1).T
    np.fill_diagonal(out, np.where(valid.any(axis=-1), 0.0, np.nan))
    return out


def head_similarity(
    patterns: np.ndarray,
    *,
    query_mask: np.ndarray | None = None,
    max_rows: int | None = MAX_DIVERGENCE_ROWS,
) -> np.ndarray:
    """Pairwise head similarity ``1 − JS / log 2`` in ``[0, 1]`` (1 = identical patterns).

    See :func:`head_divergence` for how rows are compared and averaged.
    """
    return 1.0 - head_divergence(patterns, query_mask=query_mask, max_rows=max_rows) / LN2
