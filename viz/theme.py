"""Shared look for every Attention Lens figure: fonts, colour scales and layout helpers.

Everything here is tuned to stay readable on a projector: large base font, a light
template, a sequential colour scale for attention weights and one mask colour that
cannot be confused with a small weight.
"""

from __future__ import annotations

import re
import unicodedata
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
#: Trace types viz draws (tests/viz/test_theme.py checks every figure keeps to these).
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
#: Tick labels of tokens the model reads but the user did not write (e5's "query: " prefix).
DIMMED_TICK = "#9e9e9e"
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
        _fit_title_in(layout)
    return layout


#: A line break this module inserted to wrap a title (plotly reads ``<br >`` as ``<br>``): told
#: apart from the caller's own breaks, so a title can be wrapped again for another width or font.
#: It is only ever added (after a space or a wide character), so removing it gives the title back.
SOFT_BREAK = "<br >"
#: Average advance of a Latin character and of a wide (CJK) one, in units of the font size.
_NARROW_EM, _WIDE_EM = 0.56, 1.0
#: Pixels a title keeps free of the figure's edges.
_TITLE_PADDING_PX = 24
_RICH_TEXT_PART = re.compile(r"<[^>]*>|&#?\w+;|.", re.S)


def plain_title(text: str) -> str:
    """A title as it was before :func:`wrap_title` broke it into lines."""
    return text.replace(SOFT_BREAK, "")


def _char_em(ch: str) -> float:
    return _WIDE_EM if unicodedata.east_asian_width(ch) in ("W", "F") else _NARROW_EM


def wrap_title(text: str, width_px: float, font_px: float) -> str:
    """``text`` (plotly rich text) with line breaks inserted so no line is wider than ``width_px`` at
    ``font_px``: breaks go at spaces, or after a wide (CJK) character, never inside a tag or an entity;
    a word longer than a line stays whole. The caller's own ``<br>`` and what follows them (a
    subtitle in ``<sup>``) are kept; breaks inserted by an earlier wrap are undone first."""
    text = plain_title(text)
    room = max(width_px - _TITLE_PADDING_PX, 4 * font_px) / font_px  # in ems
    lines = re.split(r"(<br\s*/?>)", text, flags=re.I)
    out = []
    for i, line in enumerate(lines):
        out.append(line if i % 2 else _wrap_line(line, room, 0.7 if "<sup>" in line else 1.0))
    return "".join(out)


def _wrap_line(line: str, room_em: float, scale: float) -> str:
    parts = _RICH_TEXT_PART.findall(line)
    pieces: list[str] = []  # the line as it is built
    width = 0.0  # ems on the current line
    last_break = None  # index in pieces of the last place a break may go, and the width after it
    for part in parts:
        if part.startswith("<") and len(part) > 1:
            pieces.append(part)
            continue
        ch = "x" if part.startswith("&") and len(part) > 1 else part
        advance = _char_em(ch) * scale
        if part == " ":
            pieces.append(part)
            width += advance
            last_break = (len(pieces) - 1, width)
            continue
        if width + advance > room_em and last_break is not None:
            at, upto = last_break
            pieces.insert(at + 1, SOFT_BREAK)  # after the space or wide character: removing it undoes it
            width -= upto
            last_break = None
        pieces.append(part)
        width += advance
        if _char_em(ch) == _WIDE_EM:
            last_break = (len(pieces) - 1, width)
    return "".join(pieces)


def _fitted(text: str, width: float, font: float) -> tuple[str, int]:
    """``text`` wrapped to ``width`` at ``font`` px, and the pixels the top margin must grow by for
    the lines that wrapping added."""
    wrapped = wrap_title(text, width, font)
    extra_lines = wrapped.count(SOFT_BREAK) - text.count(SOFT_BREAK)
    return wrapped, int(round(extra_lines * font * 1.25))


def _fit_title_in(layout: dict) -> None:
    title = layout.get("title")
    if not isinstance(title, dict) or not title.get("text") or not layout.get("width"):
        return
    font = (title.get("font") or {}).get("size") or TITLE_FONT_SIZE
    title["text"], grow = _fitted(title["text"], float(layout["width"]), float(font))
    margin = layout.get("margin")
    if grow and isinstance(margin, dict) and "t" in margin:
        margin["t"] = margin["t"] + grow


def fit_title(fig: go.Figure) -> go.Figure:
    """Wrap ``fig``'s title to its width and title font as they are now (after a page or the
    projector mode changed them); a figure without a fixed width keeps its title. In place."""
    width, text = fig.layout.width, fig.layout.title.text
    if not width or not text:
        return fig
    font = fig.layout.title.font.size or TITLE_FONT_SIZE
    wrapped, grow = _fitted(text, float(width), float(font))
    if wrapped != text:
        fig.layout.title.text = wrapped
        if grow and fig.layout.margin.t is not None:
            fig.layout.margin.t = max(0, fig.layout.margin.t + grow)
    return fig


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
