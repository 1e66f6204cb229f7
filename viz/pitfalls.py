"""Pitfall lab: what a fault does to attention, as grouped bars. Pure plotly and numpy; every word from
``viz.labels``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz._validate import as_array, check_tokens
from viz.heatmap import _unique
from viz.labels import label
from viz.tokens import token_labels

__all__ = ["encoder_cosine_bars", "entropy_bars", "training_curves"]

BROKEN_COLOR = "#cb181d"


def _grouped(x: list[str], intact: np.ndarray, broken: np.ndarray, names: tuple[str, str], value_name: str,
             title: str, x_title: str, y_range: list[float] | None, lang: str) -> go.Figure:
    traces = []
    for meta, values, colour, name in (("intact", intact, theme.ACCENT, names[0]),
                                       ("broken", broken, BROKEN_COLOR, names[1])):
        traces.append(go.Bar(
            x=x, y=values, name=name, marker={"color": colour}, meta=meta,
            hovertemplate=f"{name}<br>%{{x}}<br>"
            + label(lang, "hover.value", name=value_name, value="%{y:.4f}") + "<extra></extra>",
        ))
    fig = go.Figure(traces)
    theme.apply_theme(fig, title, height=420, width=max(480, 60 * len(x) + 220))
    yaxis: dict[str, object] = {"title": {"text": value_name}}
    if y_range is not None:
        yaxis["range"] = y_range
    xaxis = {"title": {"text": x_title}, "type": "category", "tickangle": -45}
    fig.update_layout(barmode="group", xaxis=xaxis, yaxis=yaxis, legend={"orientation": "h", "y": -0.35})
    return fig


def entropy_bars(with_scaling: np.ndarray, without_scaling: np.ndarray, *, title: str = "",
                 lang: str = "en") -> go.Figure:
    """Per head ``[head]``: mean attention entropy (nats) with the 1/√d_head scaling (trace meta "intact")
    and without it (meta "broken"), side by side."""
    a = as_array(with_scaling, 1, "with_scaling", dims="[head]")
    b = as_array(without_scaling, 1, "without_scaling", dims="[head]")
    if a.shape != b.shape:
        raise ValueError(f"with_scaling has {a.shape[0]} heads but without_scaling has {b.shape[0]}")
    x = [label(lang, "pitfalls.head", head=i) for i in range(a.shape[0])]
    names = (label(lang, "pitfalls.with_scaling"), label(lang, "pitfalls.without_scaling"))
    return _grouped(x, a, b, names, label(lang, "pitfalls.entropy"),
                    theme.pick_title(title, label(lang, "pitfalls.entropy_title")),
                    label(lang, "pitfalls.axis_head"), None, lang)


def encoder_cosine_bars(tokens: Sequence[str], with_pe: np.ndarray, without_pe: np.ndarray, *,
                        title: str = "", lang: str = "en") -> go.Figure:
    """Per source token ``[position]``: cosine similarity between its encoder output in the original
    sentence and in the shuffled one, with the positional encoding (meta "intact") and without (meta
    "broken")."""
    a = as_array(with_pe, 1, "with_pe", dims="[position]")
    b = as_array(without_pe, 1, "without_pe", dims="[position]")
    if a.shape != b.shape:
        raise ValueError(f"with_pe has {a.shape[0]} positions but without_pe has {b.shape[0]}")
    tokens = check_tokens(tokens, a.shape[0], array_name="cosines", axis_name="positions",
                          token_name="tokens")
    x = _unique([f"{i}: {t}" for i, t in enumerate(token_labels(tokens))])
    names = (label(lang, "pitfalls.with_pe"), label(lang, "pitfalls.without_pe"))
    low = float(min(0.0, np.nanmin(a), np.nanmin(b)))
    return _grouped(x, a, b, names, label(lang, "pitfalls.cosine"),
                    theme.pick_title(title, label(lang, "pitfalls.cosine_title")),
                    label(lang, "pitfalls.axis_token"), [low - 0.02, 1.02], lang)


def _series(values: Sequence, name: str) -> list[float | None]:
    out = []
    for v in values:
        if v is None:
            out.append(None)
        else:
            f = float(v)
            out.append(f if np.isfinite(f) else None)
    if not out:
        raise ValueError(f"{name} is empty")
    return out


def training_curves(correct: Mapping[str, Sequence], broken: Mapping[str, Sequence], *,
                    names: tuple[str, str] = ("", ""), title: str = "", lang: str = "en") -> go.Figure:
    """Two models' per-step training curves on the same axes: loss (left) and global gradient norm before
    clipping (right, log scale). Each series is ``{"step": [...], "loss": [...], "grad_norm": [...]}``
    (``model.training.train.step_series``; None = not finite, drawn as a gap). Traces in order: loss of
    ``correct`` (meta "intact"), loss of ``broken`` (meta "broken"), then the same for the gradient norm."""
    names = (names[0] or label(lang, "pitfalls.trained.correct"),
             names[1] or label(lang, "pitfalls.trained.broken"))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(label(lang, "pitfalls.trained.loss"),
                                        label(lang, "pitfalls.trained.grad_norm")))
    for col, key in ((1, "loss"), (2, "grad_norm")):
        value_name = label(lang, f"pitfalls.trained.{key}")
        for meta, series, colour, name in (("intact", correct, theme.ACCENT, names[0]),
                                           ("broken", broken, BROKEN_COLOR, names[1])):
            steps = [int(s) for s in series["step"]]
            values = _series(series[key], f"{meta} {key}")
            if len(values) != len(steps):
                raise ValueError(f"{meta}: {len(steps)} steps but {len(values)} {key} values")
            fig.add_trace(go.Scatter(
                x=steps, y=values, mode="lines", name=name, meta=meta, line={"color": colour, "width": 1.5},
                legendgroup=meta, showlegend=col == 1, connectgaps=False,
                hovertemplate=f"{name}<br>" + label(lang, "pitfalls.trained.hover_step", step="%{x}") + "<br>"
                + label(lang, "hover.value", name=value_name, value="%{y:.4g}") + "<extra></extra>",
            ), row=1, col=col)
        fig.update_xaxes(title_text=label(lang, "pitfalls.trained.axis_step"), row=1, col=col)
        fig.update_yaxes(title_text=value_name, type="log" if key == "grad_norm" else "linear",
                         row=1, col=col)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pitfalls.trained.curves_title")), height=420,
                      width=900)
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return fig
