"""Shared look for every Attention Lens figure: fonts, colour scales and layout helpers.

Everything here is tuned to stay readable on a projector: large base font, a light
template, a sequential colour scale for attention weights and one mask colour that
cannot be confused with a small weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from viz.tokens import escape_text

#: Latin fonts first, then CJK fallbacks so Chinese labels render with a proper font in the browser
#: (plotly draws text client-side; nothing is needed on the server).
FONT_FAMILY = (
    "Inter, 'Segoe UI', 'Helvetica Neue', Arial, 'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', "
    "'PingFang SC', 'Hiragino Sans GB', 'Microsoft YaHei', sans-serif"
)
BASE_FONT_SIZE = 16
TITLE_FONT_SIZE = 20
#: Trace types viz draws (tests/test_viz_theme.py checks every figure keeps to these).
TRACE_TYPES = ("heatmap", "scatter", "bar", "treemap")
#: plotly's "plotly_white", cut to its layout and the trace types above. Assigning a template
#: validates all of it, and the whole of plotly_white (defaults for ~40 trace types) cost about
#: 14 ms per figure, the largest part of building the main page's heatmap; the figures look the same.
TEMPLATE = go.layout.Template(
    layout=pio.templates["plotly_white"].layout,
    data={kind: getattr(pio.templates["plotly_white"].data, kind) for kind in TRACE_TYPES},
)

#: Sequential scale for attention weights (0 = white-ish, 1 = dark blue).
SEQUENTIAL = "Blues"
#: Reversed diverging scale: red = positive, blue = negative.
DIVERGING_REVERSED = "RdBu_r"
#: Colour of masked (not attendable) cells; visibly different from the palest blue.
MASK_COLOR = "#9e9e9e"
#: Accent colour for single-series bar and line charts.
ACCENT = "#2171b5"
#: Colour for negative values in diverging bar charts.
NEGATIVE = "#cb181d"

#: Colour scale for a 0/1 mask overlay: 0 is fully transparent, 1 is the mask colour.
MASK_COLORSCALE: list[list[object]] = [
    [0.0, "rgba(0,0,0,0)"],
    [0.5, "rgba(0,0,0,0)"],
    [0.5, MASK_COLOR],
    [1.0, MASK_COLOR],
]


def tick_font_size(n_ticks: int) -> int:
    """Font size for token tick labels so that ``n_ticks`` labels still fit."""
    if n_ticks <= 16:
        return 16
    if n_ticks <= 32:
        return 13
    if n_ticks <= 64:
        return 11
    return 9


def theme_layout(
    title: str = "",
    *,
    subtitle: str | None = None,
    height: int | None = None,
    width: int | None = None,
) -> dict[str, object]:
    """The shared Attention Lens layout as a plain dict (see :func:`apply_theme`)."""
    text = title
    if subtitle:
        text = f"{title}<br><sup>{subtitle}</sup>" if title else f"<sup>{subtitle}</sup>"
    layout: dict[str, object] = {
        "template": TEMPLATE,
        "font": {"family": FONT_FAMILY, "size": BASE_FONT_SIZE, "color": "#222222"},
        "title": {"text": text, "x": 0.0, "xanchor": "left", "font": {"size": TITLE_FONT_SIZE}},
        "margin": {"l": 80, "r": 40, "t": 90 if subtitle else 70, "b": 70},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "hoverlabel": {"font": {"size": BASE_FONT_SIZE, "family": FONT_FAMILY}},
    }
    if height is not None:
        layout["height"] = height
    if width is not None:
        layout["width"] = width
    return layout


def apply_theme(
    fig: go.Figure,
    title: str = "",
    *,
    subtitle: str | None = None,
    height: int | None = None,
    width: int | None = None,
) -> go.Figure:
    """Apply the shared Attention Lens layout to ``fig`` in place and return it.

    ``title`` and ``subtitle`` are inserted as plotly rich text; callers must pass already
    escaped text when it contains user tokens (see :func:`viz.tokens.token_labels`).
    """
    fig.update_layout(theme_layout(title, subtitle=subtitle, height=height, width=width))
    return fig


def token_axis(labels: Sequence[str], title: str, *, reversed_: bool = False) -> dict[str, object]:
    """Axis settings that place tokens at integer positions ``0..n-1``.

    Using integer positions (``tickvals``) with the token text only as ``ticktext`` keeps
    duplicate tokens in separate rows/columns, which a categorical axis would merge.
    """
    n = len(labels)
    axis: dict[str, object] = {
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": np.arange(n, dtype=np.int32),
        "ticktext": list(labels),
        "tickfont": {"size": tick_font_size(n)},
        "range": [n - 0.5, -0.5] if reversed_ else [-0.5, n - 0.5],
        "showgrid": False,
        "zeroline": False,
    }
    return axis


def colorbar(title: str) -> dict[str, object]:
    """A colour bar with a readable title and tick size."""
    return {"title": {"text": title, "side": "right"}, "tickfont": {"size": 14}, "thickness": 18}


def cell_size_px(n: int) -> int:
    """Pixel size of one heatmap cell for an ``n``-token axis (large for few tokens)."""
    if n <= 10:
        return 48
    if n <= 20:
        return 32
    if n <= 40:
        return 20
    if n <= 80:
        return 11
    return 7


def pick_title(user_title: str, auto_title: str) -> str:
    """The caller's title, HTML-escaped (it may quote user tokens), or our rich-text default."""
    return escape_text(user_title) if user_title else auto_title
