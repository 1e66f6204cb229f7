"""Positional-encoding lab: the encoding matrix, how similar positions are, and single dimensions;
the size of the encoding against the token embedding. The shift matrix and RoPE are in
:mod:`viz.relative_positions` (re-exported here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index
from viz.labels import label
from viz.positional_marks import PAST_MAX_FILL, PAST_MAX_LINE, past_max_shapes, signed_heatmap
from viz.relative_positions import (
    relative_bias_curves,
    rope_frequency_bars,
    rope_score_heatmap,
    shift_error_curve,
    shift_matrix_heatmap,
)
from viz.stats import cosine_similarity_matrix
from viz.tokens import token_labels

__all__ = [
    "PAST_MAX_FILL",
    "PAST_MAX_LINE",
    "DistanceProfile",
    "cosine_similarity_matrix",
    "embedding_norm_bars",
    "pe_cosine_similarity",
    "pe_dimension_curves",
    "pe_heatmap",
    "pe_similarity_by_distance",
    "relative_bias_curves",
    "rope_frequency_bars",
    "rope_score_heatmap",
    "shift_error_curve",
    "shift_matrix_heatmap",
    "similarity_by_distance",
]


def _pe(pe: np.ndarray) -> np.ndarray:
    return as_array(pe, 2, "pe", dims="[position, d_model]")


def pe_heatmap(
    pe: np.ndarray, *, title: str = "", lang: str = "en", max_len: int | None = None
) -> go.Figure:
    """Heatmap of a positional-encoding matrix: rows are positions, columns embedding dimensions.

    Diverging colours centred on 0 (red = positive, blue = negative). Words drawn by the figure
    are in ``lang`` ("en" or "zh"). ``max_len``: the model's longest input; rows from there on are
    shaded behind a dashed line (the model never reads those positions).
    """
    m = _pe(pe)
    n_pos, d = m.shape
    hover = (label(lang, "pe.position_dimension", position="%{y}", dimension="%{x}") + "<br>"
             + label(lang, "hover.value", name=label(lang, "value.value"), value="%{z:.3f}"))
    fig = signed_heatmap(m, hover, label(lang, "value.value"), float(np.nanmax(np.abs(m))) or 1.0)
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "pe.heatmap_title")),
        height=min(900, max(380, 6 * n_pos + 200)),
        width=900,
    )
    fig.update_layout(
        xaxis={
            "title": {"text": label(lang, "axis.embedding_dimension")},
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "title": {"text": label(lang, "axis.position")},
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
        },
    )
    shapes = past_max_shapes(max_len, n_pos, rows=True, cols=False)
    if shapes:
        fig.update_layout(shapes=shapes)
        fig.add_annotation(text=label(lang, "pe.past_max_len", max_len=max_len), xref="paper", x=1.0,
                           xanchor="right", yref="y", y=max_len - 0.5, yanchor="top", showarrow=False,
                           font={"size": 13, "color": "#ffffff"}, bgcolor=PAST_MAX_LINE)
    return fig


def pe_cosine_similarity(pe: np.ndarray, *, title: str = "", lang: str = "en") -> go.Figure:
    """Heatmap of the cosine similarity between every pair of position vectors ``[pos, pos]``.

    Bright diagonal = each position is most similar to itself; how fast similarity falls
    off away from the diagonal shows how well nearby positions can be told apart.
    """
    sim = cosine_similarity_matrix(_pe(pe)).astype(np.float32)
    fig = signed_heatmap(
        sim,
        label(lang, "pe.positions", a="%{y}", b="%{x}")
        + "<br>"
        + label(lang, "hover.value", name=label(lang, "value.cosine_similarity"), value="%{z:.3f}"),
        label(lang, "colorbar.cosine"),
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.cosine_title")), height=720, width=780)
    fig.update_layout(
        xaxis={
            "title": {"text": label(lang, "axis.position")},
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
        },
        yaxis={
            "title": {"text": label(lang, "axis.position")},
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
            "scaleanchor": "x",
            "constrain": "domain",
        },
    )
    return fig


def pe_dimension_curves(
    pe: np.ndarray,
    dims: Sequence[int],
    *,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Line plot of chosen embedding dimensions as a function of position (one line per dimension).

    For sinusoidal encodings low dimensions oscillate fast and high dimensions slowly. Words
    drawn by the figure are in ``lang``.
    """
    m = _pe(pe)
    n_pos, d = m.shape
    dims = list(dims)
    if not dims:
        raise ValueError("dims must name at least one dimension")
    dims = [check_index(i, d, "dimension") for i in dims]
    x = np.arange(n_pos, dtype=np.int32)
    fig = go.Figure()
    for i in dims:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=m[:, i],
                mode="lines",
                name=label(lang, "pe.dim", dim=i),
                line={"width": 3},
                hovertemplate=label(lang, "pe.dim", dim=i)
                + "<br>"
                + label(lang, "pe.position", position="%{x}")
                + "<br>"
                + label(lang, "hover.value", name=label(lang, "value.value"), value="%{y:.3f}")
                + "<extra></extra>",
            )
        )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "pe.curves_title")),
        height=480,
        width=900,
    )
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.position")}},
        yaxis={"title": {"text": label(lang, "value.value")}},
        legend={"title": {"text": label(lang, "axis.dimension")}},
    )
    return fig


# --------------------------------------------------------------------------- similarity against distance


@dataclass(frozen=True)
class DistanceProfile:
    """Cosine similarity of position vectors grouped by their distance ``|i - j|`` (float64)."""

    distance: np.ndarray  # [n_pos] 0, 1, ..., n_pos - 1
    mean: np.ndarray  # [n_pos] mean over the n_pos - d pairs at that distance
    low: np.ndarray  # [n_pos] smallest similarity at that distance
    high: np.ndarray  # [n_pos] largest
    sd: np.ndarray  # [n_pos] standard deviation (0 at the largest distance: one pair)

    @property
    def rises(self) -> np.ndarray:
        """Distances d >= 1 where the mean is higher than at d - 1 (by more than 1e-6)."""
        return self.distance[1:][np.diff(self.mean) > 1e-6]

    @property
    def monotone(self) -> bool:
        """The mean never rises with distance (to 1e-6)."""
        return self.rises.size == 0

    @property
    def spread(self) -> float:
        """Widest min–max band over all distances."""
        return float(np.max(self.high - self.low))


def similarity_by_distance(pe: np.ndarray) -> DistanceProfile:
    """Cosine similarity of every pair of positions, summarised per distance ``|i - j|``."""
    m = as_array(pe, 2, "pe", dims="[position, d_model]", dtype=np.float64)
    sim = cosine_similarity_matrix(m).astype(np.float64)
    n = sim.shape[0]
    diagonals = [np.diagonal(sim, offset=k) for k in range(n)]
    return DistanceProfile(
        distance=np.arange(n, dtype=np.int32),
        mean=np.array([np.nanmean(d) for d in diagonals]),
        low=np.array([np.nanmin(d) for d in diagonals]),
        high=np.array([np.nanmax(d) for d in diagonals]),
        sd=np.array([np.nanstd(d) for d in diagonals]),
    )


def pe_similarity_by_distance(
    pe: np.ndarray, *, title: str = "", lang: str = "en", max_len: int | None = None
) -> go.Figure:
    """Mean cosine similarity of two positions against their distance, with the min–max band.

    The band covers every pair ``(i, i + d)`` at distance ``d``; a narrow band means the similarity
    depends on the distance only. ``max_len``: a dashed line where distances stop being possible
    inside one input of the model.
    """
    prof = similarity_by_distance(pe)
    x = prof.distance
    band = label(lang, "pe.band_min_max")
    fig = go.Figure(
        [
            go.Scatter(x=x, y=prof.high, mode="lines", line={"width": 0}, showlegend=False,
                       hoverinfo="skip", name=band),
            go.Scatter(x=x, y=prof.low, mode="lines", line={"width": 0}, fill="tonexty",
                       fillcolor="rgba(33, 113, 181, 0.22)", name=band, hoverinfo="skip"),
            go.Scatter(
                x=x,
                y=prof.mean,
                mode="lines+markers",
                name=label(lang, "pe.mean_similarity"),
                line={"width": 3, "color": theme.ACCENT},
                customdata=np.stack([prof.low, prof.high], axis=1).astype(np.float32),
                hovertemplate=label(lang, "pe.distance", distance="%{x}")
                + "<br>"
                + label(lang, "hover.value", name=label(lang, "pe.mean_similarity"), value="%{y:.4f}")
                + "<br>"
                + label(lang, "pe.hover_band", low="%{customdata[0]:.4f}", high="%{customdata[1]:.4f}")
                + "<extra></extra>",
            ),
        ]
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.distance_title")), height=460, width=900)
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.distance")}},
        yaxis={"title": {"text": label(lang, "value.cosine_similarity")}},
    )
    if max_len is not None and max_len - 1 < x[-1]:
        fig.add_vline(x=max_len - 1, line={"color": PAST_MAX_LINE, "width": 2, "dash": "dash"})
    return fig


# --------------------------------------------------------------------------- magnitudes on a sentence


def embedding_norm_bars(
    tokens: Sequence[str],
    embed_norm: np.ndarray,
    pos_norm: np.ndarray | None,
    *,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Grouped bars per source token: norm of the scaled token embedding and of the positional encoding."""
    labels = token_labels(list(tokens))
    e = as_array(embed_norm, 1, "embed_norm", dims="[position]")
    if e.shape[0] != len(labels):
        raise ValueError(f"embed_norm has {e.shape[0]} positions for {len(labels)} tokens")
    x = np.arange(len(labels), dtype=np.int32)
    series = [(e, "pe.norm_embed", theme.ACCENT)]
    if pos_norm is not None:
        p = as_array(pos_norm, 1, "pos_norm", dims="[position]")
        if p.shape != e.shape:
            raise ValueError(f"pos_norm has {p.shape[0]} positions, embed_norm {e.shape[0]}")
        series.append((p, "pe.norm_pos", theme.NEGATIVE))
    fig = go.Figure(
        [
            go.Bar(
                x=x,
                y=values,
                name=label(lang, key),
                marker={"color": colour},
                customdata=labels,
                hovertemplate="%{customdata} · "
                + label(lang, "pe.position", position="%{x}")
                + "<br>"
                + label(lang, "hover.value", name=label(lang, key), value="%{y:.3f}")
                + "<extra></extra>",
            )
            for values, key, colour in series
        ]
    )
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "pe.norms_title")), height=440, width=900)
    fig.update_layout(
        barmode="group",
        xaxis=theme.token_axis(labels, label(lang, "axis.source_token")),
        yaxis={"title": {"text": label(lang, "axis.norm")}, "rangemode": "tozero"},
    )
    return fig
