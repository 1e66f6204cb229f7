"""Training scrubber and architecture variants: curves over training steps, one model's run with the
chosen step marked, several models side by side. Pure plotly and numpy; every word from ``viz.labels``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz.labels import label

__all__ = ["alignment_timeline", "kv_cache_bars", "scrub_timeline", "variant_bars", "variant_loss_curves"]

CURRENT_COLOR = "#cb181d"
#: One colour per model in side-by-side figures (the first is the base model's).
MODEL_COLORS = (theme.ACCENT, "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e")


def _values(values: Sequence, name: str) -> list[float | None]:
    """Floats with None (and non-finite numbers) as gaps; ValueError when empty."""
    out: list[float | None] = []
    for v in values:
        f = None if v is None else float(v)
        out.append(f if f is not None and np.isfinite(f) else None)
    if not out:
        raise ValueError(f"{name} is empty")
    return out


def _steps(steps: Sequence, n: int, name: str) -> list[int]:
    out = [int(s) for s in steps]
    if len(out) != n:
        raise ValueError(f"{name}: {len(out)} steps but {n} values")
    return out


def scrub_timeline(loss_steps: Sequence[int], loss: Sequence, snapshot_steps: Sequence[int],
                   exact_match: Sequence, current: int, *, title: str = "", lang: str = "en") -> go.Figure:
    """A training run with one step marked. Top: the training loss of every optimiser step (meta "loss")
    and a marker at ``current`` on it (meta "current_loss", absent when ``current`` has no loss, e.g. step
    0). Bottom: test exact match of each snapshot (meta "exact_match"; None = not measured) and a marker
    at ``current`` (meta "current_exact_match"). Both panels share the step axis; a vertical line marks
    ``current`` on each."""
    loss_values = _values(loss, "loss")
    steps = _steps(loss_steps, len(loss_values), "loss")
    em = _values(exact_match, "exact_match")
    snaps = _steps(snapshot_steps, len(em), "exact_match")
    if current not in snaps:
        raise ValueError(f"current step {current} is not a snapshot step {snaps}")
    step_word = label(lang, "scrub.axis_step")
    loss_name, em_name = label(lang, "scrub.loss"), label(lang, "scrub.exact_match")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, row_heights=[0.6, 0.4],
                        subplot_titles=(loss_name, em_name))

    def hover(name: str) -> str:
        return (label(lang, "scrub.hover_step", step="%{x}") + "<br>"
                + label(lang, "hover.value", name=name, value="%{y:.4g}") + "<extra></extra>")

    fig.add_trace(go.Scatter(x=steps, y=loss_values, mode="lines", name=loss_name, meta="loss",
                             line={"color": theme.ACCENT, "width": 1.2}, connectgaps=False,
                             hovertemplate=hover(loss_name), showlegend=False), row=1, col=1)
    if current in steps and loss_values[steps.index(current)] is not None:
        fig.add_trace(go.Scatter(x=[current], y=[loss_values[steps.index(current)]], mode="markers",
                                 name=label(lang, "scrub.current"), meta="current_loss",
                                 marker={"color": CURRENT_COLOR, "size": 11}, hovertemplate=hover(loss_name),
                                 showlegend=False), row=1, col=1)
    fig.add_trace(go.Scatter(x=snaps, y=em, mode="lines+markers", name=em_name, meta="exact_match",
                             line={"color": theme.ACCENT}, marker={"size": 7}, hovertemplate=hover(em_name),
                             showlegend=False), row=2, col=1)
    i = snaps.index(current)
    if em[i] is not None:
        fig.add_trace(go.Scatter(x=[current], y=[em[i]], mode="markers", name=label(lang, "scrub.current"),
                                 meta="current_exact_match", marker={"color": CURRENT_COLOR, "size": 12},
                                 hovertemplate=hover(em_name), showlegend=False), row=2, col=1)
    for row in (1, 2):
        fig.add_vline(x=current, line={"color": CURRENT_COLOR, "width": 1.5, "dash": "dot"}, row=row, col=1)
    fig.update_yaxes(title_text=loss_name, row=1, col=1)
    fig.update_yaxes(title_text=em_name, range=[-0.03, 1.03], row=2, col=1)
    fig.update_xaxes(title_text=step_word, row=2, col=1)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "scrub.timeline_title", step=current)),
                      height=520, width=820)
    return fig


def alignment_timeline(steps: Sequence[int], alignment: np.ndarray, current: int, chosen: tuple[int, int], *,
                       chance: float | None = None, title: str = "", lang: str = "en") -> go.Figure:
    """``alignment [step, layer, head]``: for each head a line over the training steps (meta "layer,head"),
    the chosen head drawn thick, a vertical line at ``current``, and a dotted horizontal line at
    ``chance`` when given (meta "chance": what uniform attention would score)."""
    a = np.asarray(alignment, dtype=np.float64)
    if a.ndim != 3:
        raise ValueError(f"alignment must be [step, layer, head], got shape {a.shape}")
    xs = _steps(steps, a.shape[0], "alignment")
    if not (0 <= chosen[0] < a.shape[1] and 0 <= chosen[1] < a.shape[2]):
        raise ValueError(f"chosen head {chosen} is outside {a.shape[1]} layers x {a.shape[2]} heads")
    value_name = label(lang, "scrub.alignment")
    fig = go.Figure()
    for layer in range(a.shape[1]):
        for head in range(a.shape[2]):
            mine = (layer, head) == tuple(chosen)
            name = label(lang, "hover.layer_head", layer=layer, head=head)
            fig.add_trace(go.Scatter(
                x=xs, y=a[:, layer, head].tolist(), mode="lines+markers", name=name, meta=f"{layer},{head}",
                line={"width": 3.5 if mine else 1.2, "color": CURRENT_COLOR if mine else None},
                opacity=1.0 if mine else 0.55,
                hovertemplate=f"{name}<br>" + label(lang, "scrub.hover_step", step="%{x}") + "<br>"
                + label(lang, "hover.value", name=value_name, value="%{y:.3f}") + "<extra></extra>"))
    if chance is not None:
        fig.add_trace(go.Scatter(x=[xs[0], xs[-1]], y=[chance, chance], mode="lines", meta="chance",
                                 name=label(lang, "scrub.chance"), line={"color": "#888", "dash": "dot"},
                                 hovertemplate=label(lang, "hover.value", name=label(lang, "scrub.chance"),
                                                     value="%{y:.3f}") + "<extra></extra>"))
    fig.add_vline(x=current, line={"color": CURRENT_COLOR, "width": 1.5, "dash": "dot"})
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "scrub.alignment_title")), height=420,
                      width=820)
    fig.update_layout(xaxis={"title": {"text": label(lang, "scrub.axis_step")}},
                      yaxis={"title": {"text": value_name}, "range": [0, 1.02]})
    return fig


def variant_loss_curves(series: Mapping[str, Mapping[str, Sequence]], *, title: str = "",
                        lang: str = "en") -> go.Figure:
    """Several models' training loss of every optimiser step on one axis, one line each in the order given
    (meta = the model's key in ``series``, name = that key). Each value is ``{"step": [...], "loss":
    [...]}`` (``model.training.train.step_series``; None = not finite, drawn as a gap)."""
    if not series:
        raise ValueError("no models to draw")
    loss_name = label(lang, "scrub.loss")
    fig = go.Figure()
    for i, (name, s) in enumerate(series.items()):
        values = _values(s["loss"], f"{name} loss")
        steps = _steps(s["step"], len(values), f"{name} loss")
        fig.add_trace(go.Scatter(
            x=steps, y=values, mode="lines", name=name, meta=name, connectgaps=False,
            line={"color": MODEL_COLORS[i % len(MODEL_COLORS)], "width": 2.2 if i == 0 else 1.4},
            hovertemplate=f"{name}<br>" + label(lang, "scrub.hover_step", step="%{x}") + "<br>"
            + label(lang, "hover.value", name=loss_name, value="%{y:.4g}") + "<extra></extra>"))
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "variants.curves_title")), height=440,
                      width=820)
    fig.update_layout(xaxis={"title": {"text": label(lang, "scrub.axis_step")}},
                      yaxis={"title": {"text": loss_name}}, legend={"orientation": "h", "y": -0.25})
    return fig


def variant_bars(names: Sequence[str], values: Sequence, *, value_name: str, title: str = "",
                 fmt: str = ".3f", y_range: list[float] | None = None, lang: str = "en") -> go.Figure:
    """One bar per model (x = ``names`` in order, one colour each as in :func:`variant_loss_curves`), its
    value printed on it; None = not measured (no bar)."""
    ys = [None if v is None else float(v) for v in values]
    if len(ys) != len(names) or not ys:
        raise ValueError(f"{len(names)} names but {len(ys)} values")
    colours = [MODEL_COLORS[i % len(MODEL_COLORS)] for i in range(len(ys))]
    fig = go.Figure(go.Bar(
        x=list(names), y=ys, marker={"color": colours}, meta="values",
        text=[("" if v is None else format(v, fmt)) for v in ys], textposition="outside",
        hovertemplate="%{x}<br>" + label(lang, "hover.value", name=value_name, value=f"%{{y:{fmt}}}")
        + "<extra></extra>"))
    theme.apply_theme(fig, title, height=380, width=max(420, 150 * len(ys) + 160))
    yaxis: dict[str, object] = {"title": {"text": value_name}}
    if y_range is not None:
        yaxis["range"] = y_range
    fig.update_layout(xaxis={"type": "category"}, yaxis=yaxis)
    return fig


def kv_cache_bars(names: Sequence[str], bytes_per_token: Sequence[float], *, title: str = "",
                  lang: str = "en") -> go.Figure:
    """Key/value cache bytes per generated token, one bar per model (see :func:`variant_bars`)."""
    return variant_bars(names, bytes_per_token, value_name=label(lang, "variants.kv_bytes"), fmt=",.0f",
                        title=theme.pick_title(title, label(lang, "variants.kv_title")), lang=lang)
