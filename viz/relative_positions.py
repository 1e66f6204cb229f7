"""Relative positions: the matrix M_k that shifts a sinusoidal encoding by k positions
(PE(pos + k) = M_k · PE(pos)) and how far that holds, RoPE's rotations: the angle per step of
each dimension pair and the score of a fixed q and k rotated to every pair of positions, and T5's
relative position bias: what each head adds to a score against the distance key − query."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array
from viz.labels import label
from viz.positional_marks import past_max_shapes, signed_heatmap

# --------------------------------------------------------------------------- T5's relative position bias


def relative_bias_curves(distance: np.ndarray, bias: np.ndarray, *, stack: str = "encoder",
                         buckets: np.ndarray | None = None, title: str = "", lang: str = "en") -> go.Figure:
    """One line per head: the bias it adds to a score (``bias`` [head, n]) against the distance key − query
    (``distance`` [n]); steps where neighbouring distances share a bucket. ``stack``: "encoder" or
    "decoder"."""
    d = as_array(distance, 1, "distance", dims="[n]", dtype=np.float64)
    b = as_array(bias, 2, "bias", dims="[head, n]", dtype=np.float64)
    if b.shape[1] != d.shape[0]:
        raise ValueError(f"bias has {b.shape[1]} distances, distance {d.shape[0]}")
    bucket = None if buckets is None else as_array(buckets, 1, "buckets", dims="[n]", dtype=np.float64)
    fig = go.Figure()
    for h in range(b.shape[0]):
        name = label(lang, "pe.rel_head", head=h)
        fig.add_trace(go.Scatter(
            x=d, y=b[h], mode="lines", name=name, line={"width": 2, "shape": "hv"},
            customdata=bucket if bucket is not None else np.zeros_like(d),
            hovertemplate=name + "<br>" + label(lang, "pe.rel_distance_hover", distance="%{x}")
            + (" · " + label(lang, "pe.rel_bucket", bucket="%{customdata}") if bucket is not None else "")
            + "<br>" + label(lang, "hover.value", name=label(lang, "pe.rel_bias"), value="%{y:.3f}")
            + "<extra></extra>"))
    fig.add_vline(x=0, line={"color": theme.DIMMED_TICK, "dash": "dot"})
    title = theme.pick_title(title, label(lang, f"pe.rel_title_{stack}"))
    theme.apply_theme(fig, title, height=420, width=680)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "pe.rel_distance")}},
        yaxis={"title": {"text": label(lang, "pe.rel_bias")}},
        legend={"title": {"text": label(lang, "axis.head")}},
    )
    return fig


# --------------------------------------------------------------------------- shifting a sinusoidal encoding


def shift_matrix_heatmap(m: np.ndarray, k: int, *, title: str = "", lang: str = "en") -> go.Figure:
    """Heatmap of the matrix M_k with PE(pos + k) = M_k · PE(pos) (2×2 rotations on the diagonal)."""
    mat = as_array(m, 2, "M_k", dims="[d, d]", dtype=np.float64)
    fig = signed_heatmap(
        mat.astype(np.float32),
        label(lang, "pe.row_column", row="%{y}", column="%{x}")
        + "<br>"
        + label(lang, "hover.value", name=label(lang, "value.value"), value="%{z:.4f}"),
        label(lang, "value.value"),
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.shift_matrix_title", k=int(k))),
                      height=620, width=680)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.dimension_of_pos")}, "showgrid": False, "zeroline": False,
               "constrain": "domain"},
        yaxis={"title": {"text": label(lang, "axis.dimension_of_shifted")}, "autorange": "reversed",
               "showgrid": False, "zeroline": False, "scaleanchor": "x", "constrain": "domain"},
    )
    return fig


def shift_error_curve(errors: np.ndarray, k: int, *, title: str = "", lang: str = "en") -> go.Figure:
    """Largest absolute error of ``M_k · PE(pos)`` against ``PE(pos + k)``, for every position ``pos``."""
    err = as_array(errors, 1, "errors", dims="[position]", dtype=np.float64)
    x = np.arange(err.shape[0], dtype=np.int32)
    fig = go.Figure(
        go.Scatter(
            x=x,
            y=err,
            mode="lines+markers",
            name=label(lang, "pe.max_abs_error"),
            line={"width": 2, "color": theme.ACCENT},
            hovertemplate=label(lang, "pe.position", position="%{x}")
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "pe.max_abs_error"), value="%{y:.2e}")
            + "<extra></extra>",
        )
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.shift_error_title", k=int(k))),
                      height=420, width=680)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.position")}},
        yaxis={"title": {"text": label(lang, "pe.max_abs_error")}, "exponentformat": "e",
               "rangemode": "tozero"},
    )
    return fig


# --------------------------------------------------------------------------- RoPE


def rope_frequency_bars(freqs: np.ndarray, *, title: str = "", lang: str = "en") -> go.Figure:
    """Rotation angle per position step (radians) of every dimension pair of a RoPE head (log scale)."""
    f = as_array(freqs, 1, "freqs", dims="[pair]", dtype=np.float64)
    pairs = np.arange(f.shape[0], dtype=np.int32)
    wavelength = (2 * np.pi / f).astype(np.float32)
    fig = go.Figure(
        go.Bar(
            x=pairs,
            y=f,
            marker={"color": theme.ACCENT},
            customdata=wavelength,
            name=label(lang, "pe.angle_per_step"),
            hovertemplate=label(lang, "pe.pair", pair="%{x}")
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "pe.angle_per_step"), value="%{y:.4g}")
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "pe.wavelength"), value="%{customdata:.1f}")
            + "<extra></extra>",
        )
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.rope_freq_title")), height=420, width=680)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.pair")}},
        yaxis={"title": {"text": label(lang, "pe.angle_per_step")}, "type": "log"},
    )
    return fig


def rope_score_heatmap(
    scores: np.ndarray, *, title: str = "", lang: str = "en", max_len: int | None = None
) -> go.Figure:
    """``q · k`` for one fixed q rotated to position m (rows) and one fixed k rotated to n (columns).

    Equal colours along every diagonal: the score depends on m − n only. ``max_len``: rows and
    columns past the model's longest input are shaded behind dashed lines.
    """
    s = as_array(scores, 2, "scores", dims="[m, n]")
    n = s.shape[0]
    hover = (label(lang, "pe.rope_mn", m="%{y}", n="%{x}") + "<br>"
             + label(lang, "hover.value", name=label(lang, "pe.score"), value="%{z:.4f}"))
    fig = signed_heatmap(s, hover, label(lang, "pe.score"), float(np.nanmax(np.abs(s))) or 1.0)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.rope_score_title")), height=620, width=680)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.key_position")}, "showgrid": False, "zeroline": False,
               "constrain": "domain"},
        yaxis={"title": {"text": label(lang, "axis.query_position")}, "autorange": "reversed",
               "showgrid": False, "zeroline": False, "scaleanchor": "x", "constrain": "domain"},
    )
    shapes = past_max_shapes(max_len, n, rows=True, cols=True)
    if shapes:
        fig.update_layout(shapes=shapes)
    return fig
