"""The representation projector drawn: one layer's word vectors on their first two principal components
(coloured by sense label or by sentence), and the between-sense / within-sense distance ratio through the
layers. Pure plotly and numpy; every word from ``viz.labels``; sentences, labels and tokens HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz._validate import as_array
from viz.labels import label
from viz.lens import row_labels
from viz.tokens import escape_text, token_label

__all__ = ["SENSE_COLORS", "SENTENCE_SCALE", "projection_scatter", "ratio_figure", "row_labels"]

#: One colour per sense label, in the order the labels first appear (cycled past ten).
SENSE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                "#bcbd22", "#7f7f7f")
#: Colour of points without a label.
UNLABELLED_COLOR = "#9e9e9e"
#: Each sentence its own colour: its number on a continuous scale.
SENTENCE_SCALE = "Turbo"
SYMBOLS = ("circle", "diamond", "square", "triangle-up", "cross", "x", "star", "pentagon", "hexagon",
           "triangle-down")
#: Characters of a sentence shown in the hover (the page's table holds it whole).
HOVER_CHARS = 80


def _short(text: str, n: int = HOVER_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def projection_scatter(
    coords: np.ndarray,
    labels: Sequence[str],
    sentences: Sequence[str],
    pieces: Sequence[Sequence[str]],
    *,
    explained: Sequence[float] = (0.0, 0.0),
    color_by: str = "sense",
    numbers: Sequence[int] | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Points ``coords`` [sentence, 2] (one layer's PCA). ``labels``: each sentence's sense ("" = none);
    ``color_by`` "sense": one trace per sense, in the legend; "sentence": one colour per sentence
    (``numbers``, 1-based by default, written on each point), the sense as the marker's shape. The hover
    shows the sentence, its sense and the word's tokens averaged."""
    xy = as_array(coords, 2, "coords", dims="[sentence, 2]", dtype=np.float64)
    n = xy.shape[0]
    if xy.shape[1] != 2:
        raise ValueError(f"coords must be [sentence, 2], got shape {xy.shape}")
    if not len(labels) == len(sentences) == len(pieces) == n:
        raise ValueError(f"labels, sentences and pieces must each hold {n} entries")
    if color_by not in ("sense", "sentence"):
        raise ValueError(f"color_by must be 'sense' or 'sentence', not {color_by!r}")
    nums = list(range(1, n + 1)) if numbers is None else [int(k) for k in numbers]
    senses = list(dict.fromkeys(str(s) for s in labels))
    no_label = label(lang, "projector.fig.no_label")
    shown_sense = {s: escape_text(s) if s else no_label for s in senses}
    custom = np.array([[str(nums[i]), shown_sense[str(labels[i])], escape_text(_short(sentences[i])),
                        " · ".join(token_label(p) for p in pieces[i])] for i in range(n)], dtype=object)
    hover = (label(lang, "projector.fig.hover", number="%{customdata[0]}", sense="%{customdata[1]}",
                   sentence="%{customdata[2]}", pieces="%{customdata[3]}")
             + "<br>" + label(lang, "projector.fig.hover_xy", x="%{x:.3g}", y="%{y:.3g}") + "<extra></extra>")
    fig = go.Figure()
    if color_by == "sense":
        for k, sense in enumerate(senses):
            idx = [i for i in range(n) if str(labels[i]) == sense]
            color = SENSE_COLORS[k % len(SENSE_COLORS)] if sense else UNLABELLED_COLOR
            fig.add_trace(go.Scatter(
                x=xy[idx, 0].astype(np.float32), y=xy[idx, 1].astype(np.float32), mode="markers",
                name=shown_sense[sense], customdata=custom[idx], hovertemplate=hover,
                marker={"size": 13, "color": color, "line": {"width": 1, "color": "white"}}))
    else:
        symbol = {s: SYMBOLS[k % len(SYMBOLS)] for k, s in enumerate(senses)}
        fig.add_trace(go.Scatter(
            x=xy[:, 0].astype(np.float32), y=xy[:, 1].astype(np.float32), mode="markers+text",
            name=label(lang, "projector.fig.sentences"), showlegend=False, customdata=custom,
            hovertemplate=hover, text=[str(k) for k in nums], textposition="top center",
            textfont={"size": 11},
            marker={"size": 13, "color": np.asarray(nums, np.float32), "colorscale": SENTENCE_SCALE,
                    "symbol": [symbol[str(s)] for s in labels], "line": {"width": 1, "color": "white"},
                    "colorbar": theme.colorbar(label(lang, "projector.fig.sentence_number"))}))
    share = [f"{100 * float(e):.0f}%" for e in explained]
    layout = theme.theme_layout(theme.pick_title(title, ""), height=560)
    axis = [{"title": {"text": label(lang, "projector.fig.axis_pc", k=k + 1, share=share[k])},
             "zeroline": True} for k in range(2)]
    layout.update(
        xaxis=axis[0],
        yaxis=axis[1],
        legend={"title": {"text": label(lang, "projector.fig.legend")}},
    )
    fig.update_layout(layout)
    return fig


def ratio_figure(
    ratio: np.ndarray,
    between: np.ndarray,
    within: np.ndarray,
    *,
    chosen: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """The sense ratio [row] through the layers (top; a dashed line at 1 = no separation, the chosen row
    marked) and the two mean cosine distances it divides (bottom). NaN rows are gaps."""
    r = as_array(ratio, 1, "ratio", dims="[row]", dtype=np.float64)
    b = as_array(between, 1, "between", dims="[row]", dtype=np.float64)
    w = as_array(within, 1, "within", dims="[row]", dtype=np.float64)
    n_rows = r.shape[0]
    if b.shape != r.shape or w.shape != r.shape:
        raise ValueError(f"ratio, between and within must all be [{n_rows}]")
    x = np.arange(n_rows, dtype=np.int32)
    rows = row_labels(n_rows, lang)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    ratio_name = label(lang, "projector.fig.series_ratio")
    fig.add_trace(go.Scatter(
        x=x, y=r.astype(np.float32), mode="lines+markers", name=ratio_name, customdata=rows,
        line={"color": theme.ACCENT},
        hovertemplate=label(lang, "projector.fig.hover_row", row="%{customdata}")
        + "<br>" + label(lang, "hover.value", name=ratio_name, value="%{y:.3f}") + "<extra></extra>"),
        row=1, col=1)
    if chosen is not None and 0 <= chosen < n_rows and np.isfinite(r[chosen]):
        fig.add_trace(go.Scatter(
            x=[int(chosen)], y=[float(r[chosen])], mode="markers", name=label(lang, "projector.fig.chosen"),
            marker={"size": 16, "color": theme.NEGATIVE, "symbol": "circle-open", "line": {"width": 3}},
            hoverinfo="skip"), row=1, col=1)
    for values, key, color in ((b, "projector.fig.series_between", theme.NEGATIVE),
                               (w, "projector.fig.series_within", "#238b45")):
        name = label(lang, key)
        fig.add_trace(go.Scatter(
            x=x, y=values.astype(np.float32), mode="lines+markers", name=name, customdata=rows,
            line={"color": color},
            hovertemplate=label(lang, "projector.fig.hover_row", row="%{customdata}")
            + "<br>" + label(lang, "hover.value", name=name, value="%{y:.4f}") + "<extra></extra>"),
            row=2, col=1)
    fig.add_hline(y=1.0, line={"color": "#444444", "width": 1, "dash": "dash"}, row=1, col=1)
    layout = theme.theme_layout(theme.pick_title(title, ""), height=560)
    fig.update_layout(layout, legend={"orientation": "h", "y": -0.18})
    fig.update_yaxes(title_text=label(lang, "projector.fig.axis_ratio"), row=1, col=1)
    fig.update_yaxes(title_text=label(lang, "projector.fig.axis_distance"), rangemode="tozero", row=2, col=1)
    fig.update_xaxes(tickmode="array", tickvals=x.tolist(), ticktext=rows, row=2, col=1)
    fig.update_xaxes(title_text=label(lang, "projector.fig.axis_layer"), row=2, col=1)
    return fig
