"""Aggregates over heads and layers: mean over heads and attention rollout, with figures.

Neither is a head of the model; the figure titles say so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import plotly.graph_objects as go

from viz._validate import as_array, check_index, check_mask
from viz.heatmap import attention_heatmap
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS
from viz.wordpieces import Grouping, merge_pieces

#: Bytes of float32 weights one block of query rows holds while statistics stream over a layer.
STREAM_BLOCK_BYTES = 8 * 2**20

#: Which row blocks to read of a layer: ``blocks(layer)`` -> row slices covering every query row.
Blocks = Callable[[int], Iterable[slice]]


def is_lazy(x: object) -> bool:
    """True for a stack that computes what is indexed (the model's AttentionStack): nothing is held."""
    return not isinstance(x, np.ndarray) and hasattr(x, "shape") and hasattr(x, "__getitem__")


def stack_shape(patterns: object, name: str = "patterns") -> tuple[int, int, int, int]:
    """``[layer, head, query, key]`` shape of an array or lazy stack (a lazy one is not computed)."""
    shape = tuple(patterns.shape) if is_lazy(patterns) else as_array(patterns, 4, name).shape
    if len(shape) != 4 or any(s == 0 for s in shape):
        raise ValueError(f"{name} must be 4-D [layer, head, query, key] and not empty, got shape {shape}")
    return shape


def row_blocks(n_rows: int, row_bytes: int, max_bytes: int = STREAM_BLOCK_BYTES) -> list[slice]:
    """Consecutive blocks of ``n_rows`` rows of ``row_bytes`` each, within ``max_bytes`` a block."""
    step = max(1, max_bytes // max(1, row_bytes))
    return [slice(s, min(s + step, n_rows)) for s in range(0, n_rows, step)]


def stream_layers(patterns: object, blocks: Blocks | None = None) -> Iterator[tuple[int, slice, np.ndarray]]:
    """``(layer, rows, [head, rows, key] float32)`` of an array or lazy stack, one block at a time,
    so that no step holds more than one block of one layer (``blocks``: which rows; default
    :data:`STREAM_BLOCK_BYTES` of weights a block)."""
    n_layers, n_heads, n_q, n_k = stack_shape(patterns)
    for layer in range(n_layers):
        for rows in (blocks(layer) if blocks else row_blocks(n_q, 4 * n_heads * n_k)):
            yield layer, rows, np.asarray(patterns[layer, :, rows], dtype=np.float32)


def _layer_mean64(patterns: object, layer: int, blocks: Blocks | None) -> np.ndarray:
    """``[query, key]`` float64: the mean over the heads of ``layer``, a block of query rows at a time
    (NaN weights count as 0)."""
    n_layers, n_heads, n_q, n_k = stack_shape(patterns)
    out = np.empty((n_q, n_k))
    for rows in (blocks(layer) if blocks else row_blocks(n_q, 4 * n_heads * n_k)):
        block = np.asarray(patterns[layer, :, rows], dtype=np.float32)  # [head, rows, key]
        out[rows] = block.mean(axis=0, dtype=np.float64)
        if not np.isfinite(out[rows]).all():  # rare (NaN weights): the copy costs more than the mean
            out[rows] = np.nan_to_num(block, nan=0.0).mean(axis=0, dtype=np.float64)
    return out


def mean_over_heads(patterns: np.ndarray, layer: int | None = None, *,
                    blocks: Blocks | None = None) -> np.ndarray:
    """``[layer, head, q, k]`` -> ``[layer, q, k]``: the plain average of the heads' patterns; with
    ``layer``, that layer's ``[q, k]`` only, computed a block of query rows at a time (an array or a
    lazy stack)."""
    if layer is not None:
        n_layers, n_heads, n_q, n_k = stack_shape(patterns)
        layer = check_index(layer, n_layers, "layer")
        mean = np.empty((n_q, n_k), dtype=np.float32)
        for rows in (blocks(layer) if blocks else row_blocks(n_q, 4 * n_heads * n_k)):
            mean[rows] = np.asarray(patterns[layer, :, rows], dtype=np.float32).mean(axis=0, dtype=np.float64)
        return mean
    if is_lazy(patterns):
        n_layers = stack_shape(patterns)[0]
        return np.stack([mean_over_heads(patterns, i, blocks=blocks) for i in range(n_layers)])
    p = as_array(patterns, 4, "patterns")
    return p.mean(axis=1, dtype=np.float64).astype(np.float32)


def attention_rollout(patterns: np.ndarray, add_residual: bool = True, *,
                      blocks: Blocks | None = None) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020) for self-attention -> ``[q, k]`` float64.

    Per layer: average the heads, add the identity for the residual path when
    ``add_residual`` (``A + I``), renormalise rows to sum to 1; then multiply through the
    layers, ``R = Â_L ⋯ Â_2 Â_1``, so row ``i`` estimates how much token ``i`` at the top
    draws on input token ``j``. All-zero rows (e.g. a padded query without residual) stay
    zero. Requires square patterns (query = key tokens); it is an estimate of information
    flow, not a quantity the model computes. ``patterns`` (an array or a lazy stack) is read one
    layer's block of query rows at a time: what is held is one layer's head mean and the product.
    """
    n_layers, _, n_q, n_k = stack_shape(patterns)
    if n_q != n_k:
        raise ValueError(
            f"attention rollout needs self-attention (square patterns), got {n_q} queries x {n_k} keys"
        )
    eye = np.eye(n_q)
    rollout = eye.copy()
    for layer in range(n_layers):
        a = _layer_mean64(patterns, layer, blocks)  # [q, k] float64
        if add_residual:
            a += eye
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
    """Heatmap of one layer's mean over heads (``mask_2d``: True = masked, drawn grey); only that
    layer is averaged (:func:`mean_over_heads` with ``layer``), and drawn by :func:`layer_mean_figure`."""
    mean = mean_over_heads(patterns, layer)
    return layer_mean_figure(mean, query_tokens, key_tokens, layer, mask_2d=mask_2d, title=title,
                             query_range=query_range, key_range=key_range, max_cells=max_cells, pool=pool,
                             lang=lang)


def layer_mean_figure(
    mean: np.ndarray,
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
    """Heatmap of layer ``layer``'s mean over heads ``mean [q, k]``, already computed.

    The payload follows the screen: above ``max_cells`` cells a side (64 by default; None =
    never) blocks of positions are pooled, ``pool="max"`` by default, and the subtitle says
    "each cell = b × b positions, max" (see :func:`viz.attention_heatmap`). A window
    (``query_range``/``key_range``, stop excluded) of up to ``max_cells`` a side is drawn
    position by position. Inputs of up to ``max_cells`` tokens are never pooled."""
    mean = as_array(mean, 2, "mean", dims="[query, key]")
    if isinstance(layer, bool) or not isinstance(layer, int | np.integer) or layer < 0:
        raise ValueError(f"layer must be a non-negative integer, got {layer!r}")
    if mask_2d is not None:
        check_mask(mask_2d, mean.shape, "mask_2d")
    return attention_heatmap(
        mean,
        query_tokens,
        key_tokens,
        mask_2d=mask_2d,
        title=title or label(lang, "mean.title", layer=int(layer)),
        value_name=label(lang, "value.mean_weight"),
        query_range=query_range,
        key_range=key_range,
        max_cells=max_cells,
        pool=pool,
        lang=lang,
    )


def merged_rollout(patterns: np.ndarray, tokens: Sequence[str], *, add_residual: bool = True,
                   units: Grouping | None = None, renormalise: bool = False,
                   blocks: Blocks | None = None) -> tuple[np.ndarray, list[str]]:
    """(:func:`attention_rollout` as float32 ``[q, k]``, its labels): over the tokens, as the model
    mixes them, then merged into ``units`` if given (a :class:`viz.wordpieces.Grouping` of ``tokens``:
    to a unit = sum over its pieces, from a unit = mean; ``renormalise`` as in :func:`merge_pieces`)."""
    if units is not None and units.n_positions != len(tokens):
        raise ValueError(f"units group {units.n_positions} positions but there are {len(tokens)} tokens")
    roll = attention_rollout(patterns, add_residual=add_residual, blocks=blocks)
    if units is None:
        return roll.astype(np.float32), list(tokens)
    return merge_pieces(roll, units, renormalise=renormalise), list(units.labels)


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
    """Heatmap of :func:`attention_rollout` over self-attention tokens (colour scaled to its max);
    with ``units``, merged as in :func:`merged_rollout`; drawn by :func:`rollout_figure`."""
    roll, labels = merged_rollout(patterns, tokens, add_residual=add_residual, units=units,
                                  renormalise=renormalise)
    return rollout_figure(roll, labels, add_residual=add_residual, title=title, query_range=query_range,
                          key_range=key_range, max_cells=max_cells, pool=pool, lang=lang)


def rollout_figure(
    roll: np.ndarray,
    tokens: Sequence[str],
    *,
    add_residual: bool = True,
    title: str = "",
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    max_cells: int | None = MAX_TILE_CELLS,
    pool: str = "max",
    lang: str = "en",
) -> go.Figure:
    """Heatmap of a computed rollout ``roll [q, k]`` (``add_residual``: how it was computed, for the
    title). Long inputs are pooled and windows drawn as in :func:`layer_mean_figure`; the colour
    scale is the max of what is shown, which max pooling keeps."""
    how = label(lang, "rollout.with_residual" if add_residual else "rollout.without_residual")
    return attention_heatmap(
        as_array(roll, 2, "roll", dims="[query, key]"),
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
