"""Geometry of the all-heads grid: where tile ``(layer, head)`` lies in the one tiled matrix.

:class:`GridLayout` maps between tiles, cells and positions (pooled or not); :func:`tile_heads` and
:func:`position_customdata` fill a ``[rows, cols]`` matrix tile by tile, with gutters between tiles.
The layout travels in ``fig.layout.meta[META_KEY]`` so a click can be mapped back to its head.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

META_KEY = "attention_grid"


@dataclass(frozen=True)
class GridLayout:
    """Geometry of a tiled grid: tile ``(layer, head)`` starts at row ``layer*(n_q+gutter)``
    and column ``head*(n_k+gutter)``; cell ``(x=column, y=row)`` as in plotly click events.

    ``n_q``/``n_k`` count the *cells* of a tile. A pooled tile's cell covers ``block`` x
    ``block`` positions of the ``n_q_positions`` x ``n_k_positions`` pattern (0 = unpooled,
    ``n * block``); with ``block=1`` cells are positions. A grid of a page of layers starts at
    model layer ``first_layer``: its tile rows are layers ``first_layer ...``, and every layer it
    names (hover, clicks, ticks) is the model's."""

    n_layers: int
    n_heads: int
    n_q: int
    n_k: int
    gutter: int
    block: int = 1
    n_q_positions: int = 0
    n_k_positions: int = 0
    first_layer: int = 0

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
        return self.first_layer + layer, head, q * self.block, k * self.block

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


def position_customdata(layout: GridLayout, channels: int = 4) -> np.ndarray:
    """``[rows, cols, channels]`` integers for hover text: (layer, head[, query_pos, key_pos]),
    or with 6 channels (layer, head, first query, last query, first key, last key) of a block."""
    biggest = max(layout.n_layers, layout.n_heads)
    if channels > 2:  # positions only travel when shown: they may need 2 bytes where heads need 1
        biggest = max(biggest, layout.n_q_positions, layout.n_k_positions)
    biggest = max(biggest, layout.first_layer + layout.n_layers)
    dtype = np.uint8 if biggest <= np.iinfo(np.uint8).max else np.uint16
    layer, head, q, k = np.meshgrid(
        np.arange(layout.first_layer, layout.first_layer + layout.n_layers),
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
