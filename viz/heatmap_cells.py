"""Which cells of a ``[query, key]`` pattern a token x token heatmap draws, and what they are called.

A cell is drawn as a weight, as a gap (NaN: masked, or hidden by a threshold / share) or, on long
inputs, as one block of pooled positions. These helpers pick the window, the gaps and the blocks
and name the rows and columns (distinct token labels, or position ranges of blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from viz._validate import as_array, check_mask
from viz.pooling import block_ranges, block_size, pool_blocks, pool_mask, range_text
from viz.tokens import token_labels

#: ``((q0, q1), (k0, k1))``: the rows and columns of the pattern a heatmap shows, stop excluded.
Window = tuple[tuple[int, int], tuple[int, int]]


def _unique(labels: list[str]) -> list[str]:
    """Category labels must be distinct (a category axis merges equal ones): a label that
    still repeats (a token that looks like another's subscripted label) gets its position."""
    seen: set[str] = set()
    out = []
    for i, lab in enumerate(labels):
        while lab in seen:
            lab = f"{lab}#{i}"
        seen.add(lab)
        out.append(lab)
    return out


def check_range(span: tuple[int, int] | None, n: int, name: str) -> tuple[int, int]:
    """``span`` as a checked ``(start, stop)`` of an axis of ``n`` positions; None: all of it."""
    if span is None:
        return 0, n
    try:
        start, stop = (int(v) for v in span)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a (start, stop) pair of integers, got {span!r}") from exc
    if not 0 <= start < stop <= n:
        raise ValueError(f"{name}={span!r} must satisfy 0 <= start < stop <= {n}")
    return start, stop


def scores_and_mask(
    p: np.ndarray, scores_2d: np.ndarray | None, mask_2d: np.ndarray | None, name: str
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Checked pre-softmax scores and the mask they imply (``-inf`` = masked), joined with
    ``mask_2d`` (True = masked); None where neither is given."""
    scores: np.ndarray | None = None
    mask: np.ndarray | None = None
    if scores_2d is not None:
        scores = as_array(scores_2d, 2, "scores")
        if scores.shape != p.shape:
            raise ValueError(f"scores has shape {scores.shape} but {name} has shape {p.shape}")
        mask = ~np.isfinite(scores)
    if mask_2d is not None:
        given = check_mask(mask_2d, p.shape, "mask")
        mask = given if mask is None else (mask | given)
    return scores, mask


def hidden_cells(
    pattern_2d: np.ndarray,
    mask_2d: np.ndarray | None = None,
    *,
    threshold: float | None = None,
    keep_share: float | None = None,
) -> np.ndarray:
    """Boolean ``[query, key]``: the cells a heatmap hides (True = hidden, drawn empty).

    ``threshold``: every weight below it is hidden. ``keep_share`` (0 < share <= 1): per row,
    the strongest links are kept, largest first (ties: lower key position first), until
    together they hold at least ``keep_share`` of the row's weight; the rest of the row is
    hidden. Masked cells take no part (they stay masked, not hidden). Neither given: nothing.
    """
    p = np.nan_to_num(np.asarray(pattern_2d, dtype=np.float64), nan=0.0)
    masked = np.zeros(p.shape, bool) if mask_2d is None else np.asarray(mask_2d, bool)
    if threshold is not None and keep_share is not None:
        raise ValueError("give threshold or keep_share, not both")
    if threshold is not None:
        if not np.isfinite(threshold) or threshold < 0:
            raise ValueError(f"threshold must be a weight >= 0, got {threshold!r}")
        return (p < threshold) & ~masked
    if keep_share is None:
        return np.zeros(p.shape, bool)
    if not 0 < keep_share <= 1:
        raise ValueError(f"keep_share must be in (0, 1], got {keep_share!r}")
    w = np.where(masked, 0.0, p)
    order = np.argsort(-w, axis=1, kind="stable")
    ranked = np.take_along_axis(w, order, axis=1)
    before = np.cumsum(ranked, axis=1) - ranked  # weight of the stronger links before this one
    need = keep_share * w.sum(axis=1, keepdims=True)
    # keep a link while the stronger ones do not yet reach the share (1e-9: float sums)
    keep_ranked = (before < need - 1e-9 * np.maximum(need, 1)) & (ranked > 0)
    keep = np.zeros(p.shape, bool)
    np.put_along_axis(keep, order, keep_ranked, axis=1)
    return ~keep & ~masked


def weights_with_gaps(p: np.ndarray, mask: np.ndarray | None, hidden: np.ndarray) -> np.ndarray:
    """A copy of the weights with masked and hidden cells NaN, so they are drawn as gaps."""
    z = p.copy()
    if mask is not None:
        z[mask] = np.nan
    z[hidden] = np.nan
    return z


def colour_top(shown: np.ndarray, zmax: float | None) -> float:
    """Top of the colour scale: ``zmax``, or (None) the largest weight shown (1 if none is > 0)."""
    if zmax is None:
        finite = shown[np.isfinite(shown)]
        top = float(finite.max()) if finite.size else 1.0
        return top if top > 0 else 1.0
    if not zmax > 0:
        raise ValueError(f"zmax must be positive or None, got {zmax}")
    return float(zmax)


@dataclass
class ShownCells:
    """The cells a heatmap draws: the window's weights (NaN gaps), its mask, the row (query) and
    column (key) labels, and ``block`` positions per cell side (1 = one position a cell)."""

    z: np.ndarray
    mask: np.ndarray | None
    query_labels: list[str]
    key_labels: list[str]
    block: int

    @property
    def has_mask(self) -> bool:
        """Whether any shown cell (or block) is masked, i.e. drawn grey."""
        return self.mask is not None and bool(self.mask.any())


def shown_cells(
    z: np.ndarray,
    mask: np.ndarray | None,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    window: Window,
    max_cells: int | None,
    pool: str,
) -> ShownCells:
    """Cut ``window`` out of the weights and mask; above ``max_cells`` cells a side pool it in
    square blocks labelled by position ranges ("8–15"), else label each cell by its token."""
    (q0, q1), (k0, k1) = window
    z = z[q0:q1, k0:k1]
    if mask is not None:
        mask = mask[q0:q1, k0:k1]
    block = 1 if max_cells is None else block_size(q1 - q0, k1 - k0, max_cells)
    if block > 1:
        z = pool_blocks(z, block, pool)
        mask = None if mask is None else pool_mask(mask, block)
        q_labels = [range_text(q0 + a, q0 + b) for a, b in block_ranges(q1 - q0, block)]
        k_labels = [range_text(k0 + a, k0 + b) for a, b in block_ranges(k1 - k0, block)]
    else:
        # labels are made distinct over the whole sentence, so a window keeps the subscripts
        q_labels = _unique(token_labels(query_tokens))[q0:q1]
        k_labels = _unique(token_labels(key_tokens))[k0:k1]
    return ShownCells(z, mask, q_labels, k_labels, block)
