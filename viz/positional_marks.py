"""What the positional-encoding figures draw alike: the shade over positions a model never reads
(past its ``max_len``) and the square heatmap of a signed matrix in ``[-1, 1]``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import theme

#: Shading of positions a model never reads (past its max_len).
PAST_MAX_FILL = "rgba(60, 60, 60, 0.28)"
PAST_MAX_LINE = "#222222"


def past_max_shapes(max_len: int | None, n_pos: int, *, rows: bool, cols: bool) -> list[dict]:
    """A line at ``max_len - 0.5`` and a shade over the positions at or beyond ``max_len``."""
    if max_len is None or max_len >= n_pos:
        return []
    edge, end = max_len - 0.5, n_pos - 0.5
    line = {"color": PAST_MAX_LINE, "width": 2, "dash": "dash"}
    shapes: list[dict] = []
    if rows:
        shapes += [
            {"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": edge, "y1": end,
             "fillcolor": PAST_MAX_FILL, "line": {"width": 0}, "layer": "above"},
            {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": edge, "y1": edge,
             "line": line, "layer": "above"},
        ]
    if cols:
        shapes += [
            {"type": "rect", "yref": "paper", "y0": 0, "y1": 1, "xref": "x", "x0": edge, "x1": end,
             "fillcolor": PAST_MAX_FILL, "line": {"width": 0}, "layer": "above"},
            {"type": "line", "yref": "paper", "y0": 0, "y1": 1, "xref": "x", "x0": edge, "x1": edge,
             "line": line, "layer": "above"},
        ]
    return shapes


def signed_heatmap(z: np.ndarray, hover: str, colorbar_title: str, limit: float = 1.0) -> go.Figure:
    """A matrix of values in [-limit, limit] on the diverging scale, centred on 0."""
    return go.Figure(
        go.Heatmap(
            z=z,
            x=np.arange(z.shape[1], dtype=np.int32),
            y=np.arange(z.shape[0], dtype=np.int32),
            colorscale=theme.DIVERGING_REVERSED,
            zmid=0.0,
            zmin=-limit,
            zmax=limit,
            hovertemplate=hover + "<extra></extra>",
            colorbar=theme.colorbar(colorbar_title),
        )
    )
