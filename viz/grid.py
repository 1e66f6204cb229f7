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

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS, POOLS, block_ranges, block_size, pool_blocks, pool_mask, range_text

META_KEY = "attention_grid"
POOL_KEY = "attention_grid_pool"  # "max", "mean" or "none" (unpooled)


@dataclass(frozen=True)
class GridLayout:
    """Geometry of a tiled grid: tile ``(layer, head)`` starts at row ``layer*(n_q+gutter)``
    and column ``head*(n_k+gutter)``; cell ``(x=column, y=row)`` as in plotly click events.

    ``n_q``/``n_k`` count the *cells* of a tile. A pooled tile's cell covers ``block`` x
    ``block`` positions of the ``n_q_positions`` x ``n_k_positions`` pattern (0 = unpooled,
    ``n * block``); with ``block=1`` cells are positions."""

    n_layers: int
    n_heads: int
    n_q: int
    n_k: int
    gutter: int
    block: int = 1
    n_q_positions: int = 0
    n_k_positions: int = 0

    def __post_init__(self) -> None:
        # frozen: the defaults depend on other fields, so they are filled in here
        if self.n_q_positions == 0:
            object.__setattr__(self, "n_q_positions", self.n_q * self.block)
        if self.n_k_positions == 0:
            object.__setattr__(self, "n_k_positions", self.n_k * self.block)

    def query_range(self, q_cell: int) -> tuple[int, int]:
        """First and last (inclusive) query position covered by tile row ``q_cell``."""
        first = q_cell * self.block
        return first, min(first + self.block, self.n_q_positions) - 1

    def key_range(self, k_cell: int) -> tuple[int, int]:
        """First and last (inclusive) key position covered by tile column ``k_cell``."""
        first = k_cell * self.block
        return first, min(first + self.block, self.n_k_positions) - 1

    @property
    def n_rows(self) -> int:
        """Rows of the tiled matrix (layers x query positions plus gutters)."""
        return self.n_layers * self.n_q + (self.n_layers - 1) * self.gutter

    @property
    def n_cols(self) -> int:
        """Columns of the tiled matrix (heads x key positions plus gutters)."""
        return self.n_heads * self.n_k + (self.n_heads - 1) * self.gutter

    def origin(self, layer: int, head: int) -> tuple[int, int]:
        """``(row, column)`` of the top-left cell of tile ``(layer, head)``."""
        return layer * (self.n_q + self.gutter), head * (self.n_k + self.gutter)

    def cell_to_position(self, x: float, y: float) -> tuple[int, int, int, int] | None:
        """``(layer, head, query_pos, key_pos)`` of cell ``(x, y)``, or None for gutters/outside.

        In a pooled grid the positions are the first of the cell's block (see
        :meth:`query_range` / :meth:`key_range` for the whole block)."""
        col, row = int(round(float(x))), int(round(float(y)))
        if row < 0 or col < 0:
            return None
        layer, q = divmod(row, self.n_q + self.gutter)
        head, k = divmod(col, self.n_k + self.gutter)
        if q >= self.n_q or k >= self.n_k or layer >= self.n_layers or head >= self.n_heads:
            return None
        return layer, head, q * self.block, k * self.block

    def cell_to_head(self, x: float, y: float) -> tuple[int, int] | None:
        """``(layer, head)`` of cell ``(x, y)``, or None for gutters/outside the grid."""
        pos = self.cell_to_position(x, y)
        return None if pos is None else (pos[0], pos[1])


def grid_cell_to_head(
    x: float,
    y: float,
    n_q: int,
    n_k: int,
    gutter: int,
    n_layers: int | None = None,
    n_heads: int | None = None,
) -> tuple[int, int] | None:
    """Map a clicked grid cell (``x`` = column, ``y`` = row) to ``(layer, head)``.

    Returns None when the click is in a gutter, negative, or (when ``n_layers``/``n_heads``
    are given) below/right of the last tile.
    """
    layout = GridLayout(
        n_layers=n_layers if n_layers is not None else 2**31,
        n_heads=n_heads if n_heads is not None else 2**31,
        n_q=n_q,
        n_k=n_k,
        gutter=gutter,
    )
    return layout.cell_to_head(x, y)


def grid_layout_from_figure(fig: go.Figure) -> GridLayout:
    """Recover the :class:`GridLayout` stored in ``fig.layout.meta`` by :func:`all_heads_grid`."""
    meta = fig.layout.meta
    if not isinstance(meta, dict) or META_KEY not in meta:
        raise ValueError("figure was not made by all_heads_grid (no grid geometry in layout.meta)")
    return GridLayout(**{k: int(v) for k, v in meta[META_KEY].items()})


def tile_heads(values_4d: np.ndarray, gutter: int = 2, fill: float = np.nan) -> np.ndarray:
    """Tile ``[layer, head, q, k]`` into one ``[rows, cols]`` matrix with ``fill`` gutters."""
    if values_4d.ndim != 4:
        raise ValueError(f"expected a 4-D [layer, head, query, key] array, got shape {values_4d.shape}")
    if gutter < 0:
        raise ValueError(f"gutter must be >= 0, got {gutter}")
    n_layers, n_heads, n_q, n_k = values_4d.shape
    layout = GridLayout(n_layers, n_heads, n_q, n_k, gutter)
    out = np.full((layout.n_rows, layout.n_cols), fill, dtype=values_4d.dtype)
    for layer in range(n_layers):
        for head in range(n_heads):
            r, c = layout.origin(layer, head)
            out[r : r + n_q, c : c + n_k] = values_4d[layer, head]
    return out


def _position_customdata(layout: GridLayout, channels: int = 4) -> np.ndarray:
    """``[rows, cols, channels]`` integers for hover text: (layer, head[, query_pos, key_pos]),
    or with 6 channels (layer, head, first query, last query, first key, last key) of a block."""
    biggest = max(layout.n_layers, layout.n_heads)
    if channels > 2:  # positions only travel when shown: they may need 2 bytes where heads need 1
        biggest = max(biggest, layout.n_q_positions, layout.n_k_positions)
    dtype = np.uint8 if biggest <= np.iinfo(np.uint8).max else np.uint16
    layer, head, q, k = np.meshgrid(
        np.arange(layout.n_layers),
        np.arange(layout.n_heads),
        np.arange(layout.n_q),
        np.arange(layout.n_k),
        indexing="ij",
    )
    if channels == 6:
        q0, k0 = q * layout.block, k * layout.block
        q1 = np.minimum(q0 + layout.block, layout.n_q_positions) - 1
        k1 = np.minimum(k0 + layout.block, layout.n_k_positions) - 1
        stacked = np.stack([layer, head, q0, q1, k0, k1], axis=-1).astype(dtype)
    else:
        stacked = np.stack([layer, head, q, k], axis=-1).astype(dtype)[..., :channels]  # [L, H, q, k, c]
    out = np.zeros((layout.n_rows, layout.n_cols, channels), dtype=dtype)
    for li in range(layout.n_layers):
        for hi in range(layout.n_heads):
            r, c = layout.origin(li, hi)
            out[r : r + layout.n_q, c : c + layout.n_k] = stacked[li, hi]
    return out


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
    """
    p = as_array(patterns_4d, 4, "patterns")
    n_layers, n_heads, n_q, n_k = p.shape
    check_tokens(query_tokens, n_q, array_name="patterns", axis_name="query rows", token_name="query tokens")
    check_tokens(key_tokens, n_k, array_name="patterns", axis_name="key columns", token_name="key tokens")
    if isinstance(gutter, bool) or not isinstance(gutter, int) or gutter < 0:
        raise ValueError(f"gutter must be a non-negative integer, got {gutter!r}")
    if not zmax > 0:
        raise ValueError(f"zmax must be positive, got {zmax}")
    if hover not in ("full", "head", "none"):
        raise ValueError(f"hover must be 'full', 'head' or 'none', got {hover!r}")
    if pool not in POOLS:
        raise ValueError(f"pool must be 'max' or 'mean', got {pool!r}")
    if max_tile_cells is None:
        max_tile_cells = tile_cells_for(width, n_heads)
    block = block_size(n_q, n_k, max_tile_cells)
    m = None if mask is None else check_mask(mask, p.shape)
    values = p if m is None else np.where(m, np.float32(np.nan), p)
    if block > 1:
        values = pool_blocks(values, block, pool)
        m = None if m is None else pool_mask(m, block)
    cells_q, cells_k = values.shape[2:]
    layout = GridLayout(n_layers, n_heads, cells_q, cells_k, gutter, block, n_q, n_k)

    fig = go.Figure()
    subtitle = label(lang, "grid.subtitle", n_layers=n_layers, n_heads=n_heads)
    if block > 1:
        subtitle += " · " + label(lang, f"grid.pooled_{pool}", block=block)
    if m is not None and m.any():
        fig.add_trace(
            go.Heatmap(
                z=tile_heads(m.astype(np.uint8), gutter, fill=0),
                colorscale=theme.MASK_COLORSCALE,
                zmin=0,
                zmax=1,
                showscale=False,
                hoverinfo="skip",
                name="masked",
            )
        )
        subtitle += " · " + label(lang, "note.grey_masked")
    z = tile_heads(values, gutter)
    main = go.Heatmap(
        z=z,
        colorscale=theme.SEQUENTIAL,
        zmin=0.0,
        zmax=float(zmax),
        hoverongaps=False,
        colorbar=theme.colorbar(label(lang, "value.attention_weight")),
        name="attention",
    )
    where = label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
    value_name = label(lang, "value.weight" if block == 1 else f"value.block_{pool}")
    weight = label(lang, "hover.value", name=value_name, value="%{z:.3f}")
    if hover == "full" and block > 1:
        main.customdata = _position_customdata(layout, 6)
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
        main.customdata = _position_customdata(layout, 4)
        positions = label(lang, "hover.query_key_pos", query="%{customdata[2]}", key="%{customdata[3]}")
        main.hovertemplate = f"{where}<br>{positions}<br>{weight}<extra></extra>"
    elif hover == "head":
        main.customdata = _position_customdata(layout, 2)
        main.hovertemplate = f"{where}<br>{weight}<extra></extra>"
    else:
        main.hoverinfo = "skip"
    fig.add_trace(main)
    if click_targets:
        centres = [(layout.origin(li, hi), li, hi) for li in range(n_layers) for hi in range(n_heads)]
        fig.add_trace(
            click_target_trace(
                x=np.array([c + (cells_k - 1) // 2 for (_, c), _, _ in centres]),
                y=np.array([r + (cells_q - 1) // 2 for (r, _), _, _ in centres]),
                customdata=np.array([[li, hi] for _, li, hi in centres]),
                lang=lang,
            )
        )

    layer_centres = [layout.origin(li, 0)[0] + (cells_q - 1) / 2 for li in range(n_layers)]
    head_centres = np.array(
        [layout.origin(0, hi)[1] + (cells_k - 1) / 2 for hi in range(n_heads)], dtype=np.float32
    )
    layer_ticks = [f"L{li}" for li in range(n_layers)]
    if block > 1:
        # Pooled tiles name the positions of their first and last block: on the left for
        # query rows (next to the layer name), under the grid for key columns.
        q_blocks, k_blocks = block_ranges(n_q, block), block_ranges(n_k, block)
        for li in range(n_layers):
            r = layout.origin(li, 0)[0]
            layer_centres += [r, r + cells_q - 1]
            layer_ticks += [range_text(*q_blocks[0]), range_text(*q_blocks[-1])]
        annotations = []
        for hi in range(n_heads):
            c = layout.origin(0, hi)[1]
            for cell, anchor in ((0, "left"), (cells_k - 1, "right")):
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
        fig.update_layout(annotations=annotations)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "grid.title")), subtitle=subtitle)
    plot_w = width - PLOT_MARGIN_PX
    height = int(plot_w * layout.n_rows / layout.n_cols) + 200
    fig.update_layout(
        width=width,
        height=max(300, height),
        margin={"t": 140, "l": 70, "r": 100, "b": 30 if block == 1 else 50},
        meta={META_KEY: asdict(layout), POOL_KEY: pool if block > 1 else "none"},
        clickmode="event+select",
        hoverdistance=CLICK_HOVER_DISTANCE_PX if click_targets else 20,
        xaxis={
            "tickmode": "array",
            "tickvals": head_centres,
            "ticktext": [f"H{h}" for h in range(n_heads)],
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
    return fig
