"""Intervene and explain: head effect matrices (ablation, patching, agreement), per-step bars, and
attribution beside attention. Pure plotly and numpy; every word from ``viz.labels``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_tokens
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.numbers import cell_texts
from viz.tokens import escape_text, token_labels

__all__ = ["attention_change", "attribution_bars", "attribution_heatmap", "head_matrix", "heads_over_source",
           "normalise_abs", "step_bars", "step_pair_bars"]

#: Outline of heads marked on a head matrix (e.g. the heads ablated).
MARK_COLOR = "#cb181d"


def attention_change(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """[layer, head]: mean over query rows of the total variation distance ½ Σ_k |before − after|
    between two runs' attention patterns [layer, head, query, key] of the same tokens (0 = same rows,
    1 = disjoint)."""
    a = as_array(before, 4, "before", dtype=np.float64)
    b = as_array(after, 4, "after", dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"before {a.shape} and after {b.shape} must have the same shape (same tokens)")
    return 0.5 * np.abs(a - b).sum(-1).mean(-1)


def head_matrix(
    values: np.ndarray,
    *,
    title: str = "",
    value_name: str = "",
    marked: Sequence[tuple[int, int]] = (),
    signed: bool = False,
    zmax: float | None = None,
    lang: str = "en",
    columns: Sequence[str] | None = None,
    column_title: str | None = None,
) -> go.Figure:
    """A [layer, head] matrix with each cell's value printed; invisible click targets carry
    ``customdata = [layer, head]``. ``signed``: a diverging scale centred on 0 (else 0 = white).
    ``marked`` heads get a red frame. NaN cells stay blank. ``columns``/``column_title``: other
    columns than heads (e.g. a prompt's positions, labelled by their tokens)."""
    v = as_array(values, 2, "values", dims="[layer, head]", dtype=np.float64)
    n_layers, n_heads = v.shape
    finite = v[np.isfinite(v)]
    top = zmax if zmax is not None else (float(np.abs(finite).max()) if finite.size else 1.0) or 1.0
    text = cell_texts(v)
    name = escape_text(value_name) if value_name else label(lang, "value.value")
    heat = go.Heatmap(
        z=v.astype(np.float32),
        x=np.arange(n_heads, dtype=np.int32),
        y=np.arange(n_layers, dtype=np.int32),
        zmin=-top if signed else 0.0,
        zmax=top,
        colorscale=theme.DIVERGING_REVERSED if signed else theme.SEQUENTIAL,
        text=text,
        texttemplate="%{text}",
        colorbar=theme.colorbar(name),
        hovertemplate=label(lang, "hover.layer_head", layer="%{y}", head="%{x}")
        + "<br>" + label(lang, "hover.value", name=name, value="%{z:.4f}") + "<extra></extra>",
        name="values",
    )
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    clicks = click_target_trace(heads.ravel(), layers.ravel(), np.stack([layers.ravel(), heads.ravel()], 1),
                                lang=lang)
    layout = theme.theme_layout(theme.pick_title(title, ""), height=140 + 56 * n_layers,
                                width=160 + 64 * n_heads)
    layout.update(
        xaxis={"title": {"text": column_title or label(lang, "axis.head")}, "tickmode": "array",
               "tickvals": list(range(n_heads)), "range": [-0.5, n_heads - 0.5], "showgrid": False,
               "zeroline": False, **({"ticktext": [escape_text(c) for c in columns]} if columns else {})},
        yaxis={"title": {"text": label(lang, "axis.layer")}, "tickmode": "array",
               "tickvals": list(range(n_layers)), "range": [n_layers - 0.5, -0.5], "showgrid": False,
               "zeroline": False},
        hoverdistance=CLICK_HOVER_DISTANCE_PX,
        clickmode="event+select",
        shapes=[{"type": "rect", "x0": h - 0.5, "x1": h + 0.5, "y0": la - 0.5, "y1": la + 0.5,
                 "line": {"color": MARK_COLOR, "width": 3}} for la, h in marked
                if 0 <= la < n_layers and 0 <= h < n_heads],
    )
    return go.Figure([heat, clicks], layout)


def _step_labels(tokens: Sequence[str]) -> list[str]:
    tokens = check_tokens(tokens, len(tokens), array_name="steps", axis_name="steps", token_name="tokens")
    return [f"{i}: {t}" for i, t in enumerate(token_labels(tokens, unique=False))]


def step_bars(tokens: Sequence[str], values: np.ndarray, *, title: str = "", value_name: str = "",
              lang: str = "en") -> go.Figure:
    """One bar per decoding step (x: "step: token"), e.g. the KL divergence at each step."""
    v = as_array(values, 1, "values", dims="[step]", dtype=np.float64)
    if len(tokens) != len(v):
        raise ValueError(f"values has {len(v)} steps but {len(tokens)} tokens were given")
    name = escape_text(value_name) if value_name else label(lang, "value.value")
    bar = go.Bar(x=_step_labels(tokens), y=v, marker={"color": theme.ACCENT}, name=name,
                 hovertemplate="%{x}<br>" + label(lang, "hover.value", name=name, value="%{y:.4f}")
                 + "<extra></extra>")
    layout = theme.theme_layout(escape_text(title), height=360, width=max(420, 90 + 60 * len(v)))
    layout.update(xaxis={"title": {"text": label(lang, "interventions.axis_step")}, "type": "category"},
                  yaxis={"title": {"text": name}}, showlegend=False)
    return go.Figure([bar], layout)


def step_pair_bars(tokens: Sequence[str], before: np.ndarray, after: np.ndarray, *, names: tuple[str, str],
                   title: str = "", value_name: str = "", lang: str = "en") -> go.Figure:
    """Two bars per step (e.g. the probability of a token intact and after an intervention); the traces'
    ``meta`` are "before" and "after"."""
    b = as_array(before, 1, "before", dims="[step]", dtype=np.float64)
    a = as_array(after, 1, "after", dims="[step]", dtype=np.float64)
    if len(b) != len(a) or len(tokens) != len(b):
        raise ValueError(f"before ({len(b)}), after ({len(a)}) and tokens ({len(tokens)}) must have one "
                         "entry per step")
    x = _step_labels(tokens)
    name = escape_text(value_name) if value_name else label(lang, "value.value")
    traces = []
    pairs = ((b, names[0], "before", "#9ecae1"), (a, names[1], "after", theme.ACCENT))
    for values, series, meta, color in pairs:
        traces.append(go.Bar(x=x, y=values, name=escape_text(series), meta=meta, marker={"color": color},
                             hovertemplate="%{x}<br>" + escape_text(series) + ": %{y:.4f}<extra></extra>"))
    layout = theme.theme_layout(escape_text(title), height=380, width=max(460, 120 + 70 * len(b)))
    layout.update(barmode="group", xaxis={"title": {"text": label(lang, "interventions.axis_step")},
                                          "type": "category"},
                  yaxis={"title": {"text": name}}, legend={"orientation": "h", "y": -0.3})
    return go.Figure(traces, layout)


def attribution_heatmap(values: np.ndarray, output_tokens: Sequence[str], source_tokens: Sequence[str], *,
                        title: str = "", value_name: str = "", lang: str = "en") -> go.Figure:
    """[step, source] attributions: rows are the output tokens (steps), columns the source tokens;
    a diverging scale centred on 0 (red: raises the token's log-probability, blue: lowers it)."""
    v = as_array(values, 2, "values", dims="[step, source]", dtype=np.float64)
    rows = check_tokens(output_tokens, v.shape[0], array_name="values", axis_name="steps",
                        token_name="output tokens")
    cols = check_tokens(source_tokens, v.shape[1], array_name="values", axis_name="source positions",
                        token_name="source tokens")
    y = [f"{i}: {t}" for i, t in enumerate(token_labels(rows, unique=False))]
    x = token_labels(cols)
    top = float(np.abs(v).max()) or 1.0
    name = escape_text(value_name) if value_name else label(lang, "value.value")
    heat = go.Heatmap(z=v.astype(np.float32), x=x, y=y, zmin=-top, zmax=top,
                      colorscale=theme.DIVERGING_REVERSED, colorbar=theme.colorbar(name), name="attribution",
                      hovertemplate=label(lang, "interventions.hover_step_source", step="%{y}", source="%{x}")
                      + "<br>" + label(lang, "hover.value", name=name, value="%{z:.4f}") + "<extra></extra>")
    cell = theme.cell_size_px(max(v.shape))
    layout = theme.theme_layout(escape_text(title), height=max(320, cell * v.shape[0] + 200),
                                width=max(460, cell * v.shape[1] + 260))
    layout.update(xaxis={"title": {"text": label(lang, "axis.source_token_key")}, "type": "category",
                         "tickangle": -45},
                  yaxis={"title": {"text": label(lang, "interventions.axis_output_step")}, "type": "category",
                         "autorange": "reversed"})
    return go.Figure([heat], layout)


def normalise_abs(values: np.ndarray) -> np.ndarray:
    """|values| scaled to sum to 1 (all zeros stay zeros): puts attributions and attention on one scale."""
    v = np.abs(as_array(values, 1, "values", dtype=np.float64))
    total = v.sum()
    return v / total if total > 0 else v


def attribution_bars(source_tokens: Sequence[str], series: Mapping[str, np.ndarray], *, title: str = "",
                     lang: str = "en") -> go.Figure:
    """Grouped bars over the source tokens, one group per series (name -> [source]), each normalised
    with :func:`normalise_abs` so shapes can be compared; the trace ``meta`` is the series' name."""
    if not series:
        raise ValueError("give at least one series")
    n = len(next(iter(series.values())))
    toks = check_tokens(source_tokens, n, array_name="series", axis_name="source positions",
                        token_name="source tokens")
    x = token_labels(toks)
    palette = ("#cb181d", "#fc9272", "#2171b5", "#6baed6", "#31a354", "#756bb1")
    traces = []
    for i, (name, values) in enumerate(series.items()):
        if len(values) != n:
            raise ValueError(f"series {name!r} has {len(values)} values, expected {n}")
        shown = escape_text(name)
        traces.append(go.Bar(x=x, y=normalise_abs(np.asarray(values)), name=shown, meta=name,
                             marker={"color": palette[i % len(palette)]},
                             hovertemplate="%{x}<br>" + shown + ": %{y:.3f}<extra></extra>"))
    layout = theme.theme_layout(escape_text(title), height=420, width=max(520, 140 + 28 * n * len(series)))
    layout.update(barmode="group", xaxis={"title": {"text": label(lang, "axis.source_token_key")},
                                          "type": "category"},
                  yaxis={"title": {"text": label(lang, "interventions.axis_share")}},
                  legend={"orientation": "h", "y": -0.3})
    return go.Figure(traces, layout)


def heads_over_source(values: np.ndarray, row_labels: Sequence[str], source_tokens: Sequence[str], *,
                      title: str = "", lang: str = "en") -> go.Figure:
    """[row, source] attention weights of one decoding step, one row per head (labels given, e.g.
    "L0 H1"), on a fixed 0-1 scale."""
    v = as_array(values, 2, "values", dims="[head, source]", dtype=np.float64)
    if len(row_labels) != v.shape[0]:
        raise ValueError(f"values has {v.shape[0]} rows but {len(row_labels)} row labels were given")
    cols = check_tokens(source_tokens, v.shape[1], array_name="values", axis_name="source positions",
                        token_name="source tokens")
    name = label(lang, "value.attention_weight")
    heat = go.Heatmap(z=v.astype(np.float32), x=token_labels(cols), y=[escape_text(r) for r in row_labels],
                      zmin=0.0, zmax=1.0, colorscale=theme.SEQUENTIAL, colorbar=theme.colorbar(name),
                      name="attention",
                      hovertemplate="%{y} · " + label(lang, "hover.source_token", token="%{x}") + "<br>"
                      + label(lang, "hover.value", name=name, value="%{z:.3f}") + "<extra></extra>")
    cell = theme.cell_size_px(v.shape[1])
    layout = theme.theme_layout(escape_text(title), height=max(320, 24 * v.shape[0] + 200),
                                width=max(460, cell * v.shape[1] + 260))
    layout.update(xaxis={"title": {"text": label(lang, "axis.source_token_key")}, "type": "category",
                         "tickangle": -45},
                  yaxis={"title": {"text": label(lang, "axis.layer_head")}, "type": "category",
                         "autorange": "reversed"})
    return go.Figure([heat], layout)
