"""All heads at once: every layer x head pattern as small multiples in ONE heatmap trace.

Painting 48 subplots takes seconds in a browser, so the patterns are tiled into one big
matrix with NaN gutters between tiles and drawn as a single ``Heatmap``. Rows of tiles are
layers, columns of tiles are heads. :func:`grid_cell_to_head` maps a clicked cell ``(x, y)``
back to ``(layer, head)`` so the app can open that head.

A tile is some 60-90 pixels wide on screen, so long inputs are max-pooled in square blocks
down to at most ``MAX_TILE_CELLS`` cells a side: the JSON then follows the screen, not the
sentence length squared (6 x 12 heads at 512 tokens: ~2.5 MB instead of ~208 MB).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.grid_layout import (
    META_KEY,
    GridLayout,
    grid_cell_to_head,
    grid_layout_from_figure,
    position_customdata,
    tile_heads,
)
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS, POOLS, block_ranges, block_size, pool_blocks, pool_mask, range_text

__all__ = [
    "MAX_TILE_CELLS",
    "META_KEY",
    "MIN_CELL_PX",
    "PLOT_MARGIN_PX",
    "POOL_KEY",
    "GridLayout",
    "all_heads_grid",
    "grid_block",
    "grid_cell_to_head",
    "grid_layout_from_figure",
    "layers_per_figure",
    "pool_tiles",
    "pooled_heads_grid",
    "tile_cells_for",
    "tile_heads",
]

POOL_KEY = "attention_grid_pool"  # "max", "mean" or "none" (unpooled)


#: Narrowest cell an all-heads tile is given by default: below ~1.5 pixels a cell is not seen, and
#: every cell sent costs the browser time (MiniLM at 512 tokens: 64-cell tiles took ~1.7x as long
#: to draw as 48-cell ones, bench/bench_grid_paint.py).
MIN_CELL_PX = 1.6
PLOT_MARGIN_PX = 180  # the figure's width minus the plot area's (margins and colour bar)


def tile_cells_for(width: int, n_heads: int) -> int:
    """Cells a tile side may have in a grid ``width`` pixels wide with ``n_heads`` tiles a row: as many
    as fit at :data:`MIN_CELL_PX` pixels each, between 16 and :data:`MAX_TILE_CELLS`."""
    tile_px = (width - PLOT_MARGIN_PX) / max(1, n_heads)
    return int(max(16, min(MAX_TILE_CELLS, tile_px / MIN_CELL_PX)))


#: Cells one all-heads figure draws at most (~2.9 MB of figure JSON: ~11 bytes a cell for the weight,
#: its hover indices and the mask layer).
MAX_FIGURE_CELLS = 260_000


def layers_per_figure(n_layers: int, n_heads: int, n_q: int, n_k: int, width: int, max_tiles: int) -> int:
    """How many layers one all-heads figure of ``width`` pixels shows: at most ``max_tiles`` tiles and
    :data:`MAX_FIGURE_CELLS` cells after pooling (a tile is pooled to what its width shows)."""
    block = block_size(n_q, n_k, tile_cells_for(width, n_heads))
    tile = math.ceil(n_q / block) * math.ceil(n_k / block)
    return max(1, min(n_layers, max_tiles // n_heads, MAX_FIGURE_CELLS // (n_heads * tile)))


def _check_grid_options(gutter: object, zmax: float, hover: str, pool: str) -> None:
    if isinstance(gutter, bool) or not isinstance(gutter, int) or gutter < 0:
        raise ValueError(f"gutter must be a non-negative integer, got {gutter!r}")
    if not zmax > 0:
        raise ValueError(f"zmax must be positive, got {zmax}")
    if hover not in ("full", "head", "none"):
        raise ValueError(f"hover must be 'full', 'head' or 'none', got {hover!r}")
    if pool not in POOLS:
        raise ValueError(f"pool must be 'max' or 'mean', got {pool!r}")


def grid_block(n_q: int, n_k: int, width: int, n_heads: int, max_tile_cells: int | None = None) -> int:
    """The block size :func:`all_heads_grid` pools ``n_q x n_k`` tiles in (1 = unpooled)."""
    return block_size(n_q, n_k, tile_cells_for(width, n_heads) if max_tile_cells is None else max_tile_cells)


def pool_tiles(
    p: np.ndarray, mask: np.ndarray | None, block: int, pool: str = "max", *, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(values, mask)`` of the cells drawn from ``[..., query, key]`` weights: masked weights are NaN
    (they take no part in a block), and with ``block > 1`` both are pooled in ``block x block``
    blocks. Rows pool independently in blocks of ``block`` rows, so a caller may pool a layer's rows
    a block at a time (a multiple of ``block`` rows each) and concatenate: the same cells.
    ``overwrite``: ``p`` is the caller's own (just computed): masked cells are set to NaN in it, not in a
    copy. ``mask`` may have fewer leading axes or length-1 ones (one mask for every head)."""
    if mask is not None:
        check_mask(mask, p.shape)
        mask = np.asarray(mask)
    if mask is None:
        values = p
    elif overwrite:
        values = p
        np.copyto(values, np.float32(np.nan), where=mask)
    else:
        values = np.where(mask, np.float32(np.nan), p)
    m = mask
    if block > 1:
        values = pool_blocks(values, block, pool)
        m = None if m is None else pool_mask(m, block)
    return values, None if m is None else np.broadcast_to(m, values.shape)


def _grid_subtitle(layout: GridLayout, pool: str, mask_drawn: bool, lang: str) -> str:
    subtitle = label(lang, "grid.subtitle", n_layers=layout.n_layers, n_heads=layout.n_heads)
    if layout.block > 1:
        subtitle += " · " + label(lang, f"grid.pooled_{pool}", block=layout.block)
    if mask_drawn:
        subtitle += " · " + label(lang, "note.grey_masked")
    return subtitle


def _mask_trace(mask: np.ndarray, gutter: int) -> go.Heatmap:
    """The grey overlay of masked cells: a light 0/1 uint8 heatmap beneath the weights."""
    return go.Heatmap(
        z=tile_heads(mask.astype(np.uint8), gutter, fill=0),
        colorscale=theme.MASK_COLORSCALE,
        zmin=0,
        zmax=1,
        showscale=False,
        hoverinfo="skip",
        name="masked",
    )


def _set_cell_hover(main: go.Heatmap, layout: GridLayout, hover: str, pool: str, lang: str) -> None:
    """Per-cell hover of the weight trace: the integers it names travel as ``customdata``, the
    words once in the template (``hover`` "full" adds positions or, pooled, block ranges)."""
    where = label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
    value_name = label(lang, "value.weight" if layout.block == 1 else f"value.block_{pool}")
    weight = label(lang, "hover.value", name=value_name, value="%{z:.3f}")
    if hover == "full" and layout.block > 1:
        main.customdata = position_customdata(layout, 6)
        positions = label(
            lang,
            "hover.query_key_ranges",
            q0="%{customdata[2]}",
            q1="%{customdata[3]}",
            k0="%{customdata[4]}",
            k1="%{customdata[5]}",
        )
        main.hovertemplate = f"{where}<br>{positions}<br>{weight}<extra></extra>"
    elif hover == "full":
        main.customdata = position_customdata(layout, 4)
        positions = label(lang, "hover.query_key_pos", query="%{customdata[2]}", key="%{customdata[3]}")
        main.hovertemplate = f"{where}<br>{positions}<br>{weight}<extra></extra>"
    elif hover == "head":
        main.customdata = position_customdata(layout, 2)
        main.hovertemplate = f"{where}<br>{weight}<extra></extra>"
    else:
        main.hoverinfo = "skip"


def _weight_trace(
    values: np.ndarray, layout: GridLayout, zmax: float, hover: str, pool: str, lang: str
) -> go.Heatmap:
    """The trace named ``"attention"``: every tile's weights in one heatmap, NaN gutters."""
    main = go.Heatmap(
        z=tile_heads(values, layout.gutter),
        colorscale=theme.SEQUENTIAL,
        zmin=0.0,
        zmax=float(zmax),
        hoverongaps=False,
        colorbar=theme.colorbar(label(lang, "value.attention_weight")),
        name="attention",
    )
    _set_cell_hover(main, layout, hover, pool, lang)
    return main


def _tile_click_targets(layout: GridLayout, lang: str) -> go.Scatter:
    """One invisible marker at the centre of each tile (``customdata = [layer, head]``)."""
    centres = [
        (layout.origin(li, hi), li, hi) for li in range(layout.n_layers) for hi in range(layout.n_heads)
    ]
    return click_target_trace(
        x=np.array([c + (layout.n_k - 1) // 2 for (_, c), _, _ in centres]),
        y=np.array([r + (layout.n_q - 1) // 2 for (r, _), _, _ in centres]),
        customdata=np.array([[layout.first_layer + li, hi] for _, li, hi in centres]),
        lang=lang,
    )


def _layer_ticks(layout: GridLayout) -> tuple[list[float], list[str]]:
    """Left ticks: ``L<layer>`` at each tile row's centre; pooled tiles also name the positions
    of their first and last query block (next to the layer name)."""
    centres = [layout.origin(li, 0)[0] + (layout.n_q - 1) / 2 for li in range(layout.n_layers)]
    ticks = [f"L{layout.first_layer + li}" for li in range(layout.n_layers)]
    if layout.block > 1:
        q_blocks = block_ranges(layout.n_q_positions, layout.block)
        for li in range(layout.n_layers):
            r = layout.origin(li, 0)[0]
            centres += [r, r + layout.n_q - 1]
            ticks += [range_text(*q_blocks[0]), range_text(*q_blocks[-1])]
    return centres, ticks


def _key_range_annotations(layout: GridLayout) -> list[dict[str, object]]:
    """Under each pooled tile: the positions of its first and last key block."""
    k_blocks = block_ranges(layout.n_k_positions, layout.block)
    annotations = []
    for hi in range(layout.n_heads):
        c = layout.origin(0, hi)[1]
        for cell, anchor in ((0, "left"), (layout.n_k - 1, "right")):
            annotations.append(
                {
                    "x": c + cell + (-0.5 if anchor == "left" else 0.5),
                    "y": 0,
                    "xref": "x",
                    "yref": "paper",
                    "xanchor": anchor,
                    "yanchor": "top",
                    "showarrow": False,
                    "text": range_text(*k_blocks[cell]),
                    "font": {"size": 9, "color": "#555555"},
                }
            )
    return annotations


def _lay_out_grid(
    fig: go.Figure, layout: GridLayout, *, width: int, pool: str, click_targets: bool, lang: str
) -> None:
    """Size (square cells in the plot area), margins, click behaviour, the stored geometry and the
    head / layer axes of the grid."""
    head_centres = np.array(
        [layout.origin(0, hi)[1] + (layout.n_k - 1) / 2 for hi in range(layout.n_heads)], dtype=np.float32
    )
    layer_centres, layer_ticks = _layer_ticks(layout)
    plot_w = width - PLOT_MARGIN_PX
    height = int(plot_w * layout.n_rows / layout.n_cols) + 200
    fig.update_layout(
        width=width,
        height=max(300, height),
        margin={"t": 140, "l": 70, "r": 100, "b": 30 if layout.block == 1 else 50},
        meta={META_KEY: asdict(layout), POOL_KEY: pool if layout.block > 1 else "none"},
        clickmode="event+select",
        hoverdistance=CLICK_HOVER_DISTANCE_PX if click_targets else 20,
        xaxis={
            "tickmode": "array",
            "tickvals": head_centres,
            "ticktext": [f"H{h}" for h in range(layout.n_heads)],
            "side": "top",
            "range": [-0.5, layout.n_cols - 0.5],
            "showgrid": False,
            "zeroline": False,
            "title": {"text": label(lang, "axis.head")},
            "constrain": "domain",
        },
        yaxis={
            "tickmode": "array",
            "tickvals": np.array(layer_centres, dtype=np.float32),
            "ticktext": layer_ticks,
            "range": [layout.n_rows - 0.5, -0.5],
            "showgrid": False,
            "zeroline": False,
            "title": {"text": label(lang, "axis.layer")},
            "scaleanchor": "x",
            "constrain": "domain",
        },
    )


def all_heads_grid(
    patterns_4d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    mask: np.ndarray | None = None,
    gutter: int = 2,
    zmax: float = 1.0,
    title: str = "",
    hover: str = "head",
    click_targets: bool = True,
    width: int = 1000,
    max_tile_cells: int | None = None,
    pool: str = "max",
    first_layer: int = 0,
    lang: str = "en",
) -> go.Figure:
    """Every head of every layer as small multiples in a single heatmap trace.

    Tile ``(layer, head)`` shows that head's ``[query, key]`` pattern (query rows top to
    bottom); tile rows are layers (``L0`` at the top), tile columns are heads (``H0`` at the
    left); indices are 0-based like the arrays. Gutters are NaN. ``mask`` (True = masked,
    broadcastable to ``[layer, head, q, k]``, e.g. ``~np.isfinite(scores)``) is drawn in grey
    by a light uint8 overlay. Hover (``hover="head"``, default) shows layer, head and weight;
    ``hover="full"`` adds the query/key positions (+4 bytes per cell: ~0.61 MB instead of
    ~0.47 MB of JSON for 6 x 8 heads at 32 tokens); ``hover="none"`` turns it off (~0.32 MB).
    Token text is not put per cell, to keep the payload small. The grid
    geometry is stored in ``fig.layout.meta["attention_grid"]``; map clicks back with
    :func:`grid_cell_to_head` or :func:`grid_layout_from_figure`.

    Plotly cannot select heatmap cells, so with ``click_targets`` an invisible marker sits at
    the centre of every tile (last trace, ``customdata = [layer, head]``): clicking or
    box-selecting a tile in ``st.plotly_chart(on_select="rerun")`` returns that point, and
    its ``x``/``y`` also map back through :func:`grid_cell_to_head`. The weight heatmap is
    the trace named ``"attention"``. Words drawn by the figure are in ``lang`` ("en" or "zh").

    Long inputs are pooled: when a tile would have more than ``max_tile_cells`` cells a side
    (default: what the tile's width shows at :data:`MIN_CELL_PX` pixels a cell, at most
    ``MAX_TILE_CELLS``: 50 for 12 heads in a 1,150-pixel figure, 64 for 8 heads from 1,000 pixels),
    square blocks of ``b = ceil(max(n_q, n_k) / max_tile_cells)`` positions become one cell
    (the last block of an axis may be shorter). ``pool="max"`` (default) shows each block's
    largest weight, so a sharp head's single peak stays visible; ``pool="mean"`` shows the
    block's average (what a blurred thumbnail would show). Masked positions take no part; a
    block is masked (grey) only when all of it is. The subtitle says "each cell = b × b
    positions" and which pooling; the left ticks and the labels under the grid name the
    position range of each tile's first and last block; hover names the block (``"full"``:
    its query and key ranges). What is dropped is the detail inside a block: open the head
    (click its tile) for full resolution. Inputs of up to ``max_tile_cells`` tokens are drawn
    unpooled, exactly as given. ``GridLayout.block`` is the block size (1 = unpooled).

    ``patterns_4d`` may be a page of a model's layers, starting at layer ``first_layer`` (a model
    of hundreds of heads is shown a page at a time): every layer named is then the model's.
    """
    p = as_array(patterns_4d, 4, "patterns")
    n_layers, n_heads, n_q, n_k = p.shape
    check_tokens(query_tokens, n_q, array_name="patterns", axis_name="query rows", token_name="query tokens")
    check_tokens(key_tokens, n_k, array_name="patterns", axis_name="key columns", token_name="key tokens")
    _check_grid_options(gutter, zmax, hover, pool)
    block = grid_block(n_q, n_k, width, n_heads, max_tile_cells)
    values, m = pool_tiles(p, mask, block, pool)
    return pooled_heads_grid(values, m, block, query_tokens, key_tokens, gutter=gutter, zmax=zmax,
                             title=title, hover=hover, click_targets=click_targets, width=width, pool=pool,
                             first_layer=first_layer, lang=lang)


def pooled_heads_grid(
    values: np.ndarray,
    mask: np.ndarray | None,
    block: int,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    gutter: int = 2,
    zmax: float = 1.0,
    title: str = "",
    hover: str = "head",
    click_targets: bool = True,
    width: int = 1000,
    pool: str = "max",
    first_layer: int = 0,
    lang: str = "en",
) -> go.Figure:
    """:func:`all_heads_grid` of tiles already pooled by :func:`pool_tiles` (``values`` [layer, head,
    query_cell, key_cell], masked cells NaN; ``mask`` the pooled mask or None) in ``block x block``
    blocks of the ``len(query_tokens) x len(key_tokens)`` patterns: what a page draws from tiles it
    pooled while streaming a long input's heads one layer at a time."""
    v = as_array(values, 4, "values")
    n_layers, n_heads, cells_q, cells_k = v.shape
    n_q, n_k = len(query_tokens), len(key_tokens)
    if (cells_q, cells_k) != (math.ceil(n_q / block), math.ceil(n_k / block)):
        raise ValueError(f"tiles of {cells_q} x {cells_k} cells are not {n_q} x {n_k} positions pooled by "
                         f"{block}")
    _check_grid_options(gutter, zmax, hover, pool)
    m = None if mask is None else check_mask(mask, v.shape)
    layout = GridLayout(n_layers, n_heads, cells_q, cells_k, gutter, block, n_q, n_k, first_layer)
    mask_drawn = m is not None and bool(m.any())

    fig = go.Figure()
    if mask_drawn:
        fig.add_trace(_mask_trace(m, gutter))
    fig.add_trace(_weight_trace(v, layout, zmax, hover, pool, lang))
    if click_targets:
        fig.add_trace(_tile_click_targets(layout, lang))
    if block > 1:
        fig.update_layout(annotations=_key_range_annotations(layout))
    subtitle = _grid_subtitle(layout, pool, mask_drawn, lang)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "grid.title")), subtitle=subtitle)
    _lay_out_grid(fig, layout, width=width, pool=pool, click_targets=click_targets, lang=lang)
    return fig
