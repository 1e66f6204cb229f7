"""Positional-encoding lab: the encoding matrix, how similar positions are, and single dimensions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index
from viz.labels import label
from viz.stats import cosine_similarity_matrix

__all__ = ["cosine_similarity_matrix", "pe_cosine_similarity", "pe_dimension_curves", "pe_heatmap"]


def _pe(pe: np.ndarray) -> np.ndarray:
    return as_array(pe, 2, "pe", dims="[position, d_model]")


def pe_heatmap(pe: np.ndarray, *, title: str = "", lang: str = "en") -> go.Figure:
    """Heatmap of a positional-encoding matrix: rows are positions, columns embedding dimensions.

    Diverging colours centred on 0 (red = positive, blue = negative). Words drawn by the figure
    are in ``lang`` ("en" or "zh").
    """
    m = _pe(pe)
    n_pos, d = m.shape
    lim = float(np.nanmax(np.abs(m))) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=np.arange(d, dtype=np.int32),
            y=np.arange(n_pos, dtype=np.int32),
            colorscale=theme.DIVERGING_REVERSED,
            zmid=0.0,
            zmin=-lim,
            zmax=lim,
            hovertemplate=label(lang, "pe.position_dimension", position="%{y}", dimension="%{x}")
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "value.value"), value="%{z:.3f}")
            + "<extra></extra>",
            colorbar=theme.colorbar(label(lang, "value.value")),
        )
    )
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
    return fig


def pe_cosine_similarity(pe: np.ndarray, *, title: str = "", lang: str = "en") -> go.Figure:
    """Heatmap of the cosine similarity between every pair of position vectors ``[pos, pos]``.

    Bright diagonal = each position is most similar to itself; how fast similarity falls
    off away from the diagonal shows how well nearby positions can be told apart.
    """
    sim = cosine_similarity_matrix(_pe(pe)).astype(np.float32)
    n = sim.shape[0]
    fig = go.Figure(
        go.Heatmap(
            z=sim,
            x=np.arange(n, dtype=np.int32),
            y=np.arange(n, dtype=np.int32),
            colorscale=theme.DIVERGING_REVERSED,
            zmid=0.0,
            zmin=-1.0,
            zmax=1.0,
            hovertemplate=label(lang, "pe.positions", a="%{y}", b="%{x}")
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "value.cosine_similarity"), value="%{z:.3f}")
            + "<extra></extra>",
            colorbar=theme.colorbar(label(lang, "colorbar.cosine")),
        )
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
