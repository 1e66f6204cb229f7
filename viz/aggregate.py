"""Aggregates over heads and layers: mean over heads and attention rollout, with figures.

Neither is a head of the model; the figure titles say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz._validate import as_array, check_index, check_mask
from viz.heatmap import attention_heatmap
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS
from viz.wordpieces import Grouping, merge_pieces


def mean_over_heads(patterns: np.ndarray) -> np.ndarray:
    """``[layer, head, q, k]`` -> ``[layer, q, k]``: the plain average of the heads' patterns."""
    p = as_array(patterns, 4, "patterns")
    return p.mean(axis=1, dtype=np.float64).astype(np.float32)


def attention_rollout(patterns: np.ndarray, add_residual: bool = True) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020) for self-attention -> ``[q, k]`` float64.

    Per layer: average the heads, add the identity for the residual path when
    ``add_residual`` (``A + I``), renormalise rows to sum to 1; then multiply through the
    layers, ``R = Â_L ⋯ Â_2 Â_1``, so row ``i`` estimates how much token ``i`` at the top
    draws on input token ``j``. All-zero rows (e.g. a padded query without residual) stay
    zero. Requires square patterns (query = key tokens); it is an estimate of information
    flow, not a quantity the model computes.
    """
    p = as_array(patterns, 4, "patterns", dtype=np.float32)  # as recorded; no float64 copy of every head
    n_q, n_k = p.shape[2:]
    if n_q != n_k:
        raise ValueError(
            f"attention rollout needs self-attention (square patterns), got {n_q} queries x {n_k} keys"
        )
    if np.isnan(p).any():
        p = np.nan_to_num(p, nan=0.0)
    eye = np.eye(n_q)
    rollout = eye.copy()
    for layer in p.mean(axis=1, dtype=np.float64):  # [q, k] per layer, float64
        a = layer + eye if add_residual else layer
        total = a.sum(axis=-1, keepdims=True)
        a = np.where(total > 0, a / np.where(total > 0, total, 1.0), 0.0)
        rollout = a @ rollout
    return rollout


def mean_over_heads_figure(
    patterns: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    layer: int,
    *,
    mask_2d: np.ndarray | None = None,
    title: str = "",
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    max_cells: int | None = MAX_TILE_CELLS,
    pool: str = "max",
    lang: str = "en",
) -> go.Figure:
    """Heatmap of one layer's mean over heads (``mask_2d``: True = masked, drawn grey).

    The payload follows the screen: above ``max_cells`` cells a side (64 by default; None =
    never) blocks of positions are pooled, ``pool="max"`` by default, and the subtitle says
    "each cell = b × b positions, max" (see :func:`viz.attention_heatmap`). A window
    (``query_range``/``key_range``, stop excluded) of up to ``max_cells`` a side is drawn
    position by position. Inputs of up to ``max_cells`` tokens are never pooled."""
    mean = mean_over_heads(patterns)
    layer = check_index(layer, mean.shape[0], "layer")
    if mask_2d is not None:
        check_mask(mask_2d, mean.shape[1:], "mask_2d")
    return attention_heatmap(
        mean[layer],
        query_tokens,
        key_tokens,
        mask_2d=mask_2d,
        title=title or label(lang, "mean.title", layer=layer),
        value_name=label(lang, "value.mean_weight"),
        query_range=query_range,
        key_range=key_range,
        max_cells=max_cells,
        pool=pool,
        lang=lang,
    )


def attention_rollout_figure(
    patterns: np.ndarray,
    tokens: Sequence[str],
    *,
    add_residual: bool = True,
    title: str = "",
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    max_cells: int | None = MAX_TILE_CELLS,
    pool: str = "max",
    units: Grouping | None = None,
    renormalise: bool = False,
    lang: str = "en",
) -> go.Figure:
    """Heatmap of :func:`attention_rollout` over self-attention tokens (colour scaled to its max).

    Long inputs are pooled and windows drawn as in :func:`mean_over_heads_figure`; the colour
    scale is the max of what is shown, which max pooling keeps. With ``units`` (a
    :class:`viz.wordpieces.Grouping` of ``tokens``, e.g. word pieces into words) the rollout is
    computed over the tokens, as the model mixes them, and then merged like a pattern (to a unit =
    sum over its pieces, from a unit = mean; ``renormalise`` as in :func:`merge_pieces`); the
    figure's labels are the units'."""
    roll = attention_rollout(patterns, add_residual=add_residual)
    if units is not None:
        if units.n_positions != len(tokens):
            raise ValueError(f"units group {units.n_positions} positions but there are {len(tokens)} tokens")
        roll = merge_pieces(roll, units, renormalise=renormalise)
        tokens = list(units.labels)
    how = label(lang, "rollout.with_residual" if add_residual else "rollout.without_residual")
    return attention_heatmap(
        roll.astype(np.float32),
        tokens,
        tokens,
        title=title or label(lang, "rollout.title", how=how),
        zmax=None,
        value_name=label(lang, "value.rollout"),
        subtitle=label(lang, "rollout.subtitle"),
        query_range=query_range,
        key_range=key_range,
        max_cells=max_cells,
        pool=pool,
        lang=lang,
    )
