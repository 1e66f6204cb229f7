"""Figures for head statistics: a head-by-head scatter/bar chart and a head-similarity heatmap."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array
from viz.labels import TEXT, label
from viz.stats import HEAD_STATS_COLUMNS, LN2
from viz.tokens import escape_text


def _stat_name(column: str, lang: str) -> str:
    """Short name of a statistic for hover and titles (the column name itself in English)."""
    key = f"stat.{column}"
    return label(lang, key) if key in TEXT["en"] else escape_text(column)


def _axis_title(column: str, lang: str) -> str:
    """Axis title of a statistic, with its unit or meaning."""
    key = f"stat_axis.{column}"
    return label(lang, key) if key in TEXT["en"] else escape_text(column)


def _check_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"head stats table is missing column(s) {missing}; got {list(df.columns)}")


def head_stats_scatter(
    df: pd.DataFrame, x: str = "entropy", y: str = "mean_distance", *, title: str = "", lang: str = "en"
) -> go.Figure:
    """Scatter of two head statistics (default: entropy vs mean distance), one dot per head.

    Dots are coloured by layer and labelled ``L{layer}H{head}`` in hover; ``customdata``
    holds ``[layer, head]`` so a click can open that head. Words drawn by the figure are in
    ``lang`` ("en" or "zh"); ``x`` and ``y`` stay column names of ``df``.
    """
    _check_columns(df, ["layer", "head", x, y])
    layers = df["layer"].to_numpy()
    heads = df["head"].to_numpy()
    fig = go.Figure(
        go.Scatter(
            x=df[x].to_numpy(dtype=np.float32),
            y=df[y].to_numpy(dtype=np.float32),
            mode="markers",
            marker={
                "size": 14,
                "color": layers.astype(np.float32),
                "colorscale": "Viridis",
                "line": {"width": 1, "color": "white"},
                "colorbar": theme.colorbar(label(lang, "axis.layer")),
                "showscale": True,
            },
            customdata=np.stack([layers, heads], axis=1).astype(np.int32),
            hovertemplate=label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
            + "<br>"
            + label(lang, "hover.value", name=_stat_name(x, lang), value="%{x:.3f}")
            + "<br>"
            + label(lang, "hover.value", name=_stat_name(y, lang), value="%{y:.3f}")
            + "<extra></extra>",
        )
    )
    theme.apply_theme(
        fig,
        theme.pick_title(
            title, label(lang, "stats.scatter_title", x=_stat_name(x, lang), y=_stat_name(y, lang))
        ),
        height=520,
        width=760,
    )
    fig.update_layout(
        xaxis={"title": {"text": _axis_title(x, lang)}},
        yaxis={"title": {"text": _axis_title(y, lang)}},
    )
    return fig


def head_stats_bar(
    df: pd.DataFrame,
    column: str = "entropy",
    *,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Bar chart of one statistic for every head, grouped by layer (``L0H0`` … left to right).

    Words drawn by the figure are in ``lang`` ("en" or "zh")."""
    _check_columns(df, ["layer", "head", column])
    if column not in HEAD_STATS_COLUMNS:
        raise ValueError(f"unknown statistic {column!r}; choose one of {list(HEAD_STATS_COLUMNS)[2:]}")
    labels = [f"L{li}H{h}" for li, h in zip(df["layer"], df["head"], strict=True)]
    n = len(labels)
    fig = go.Figure(
        go.Bar(
            x=np.arange(n, dtype=np.int32),
            y=df[column].to_numpy(dtype=np.float32),
            marker={"color": df["layer"].to_numpy(dtype=np.float32), "colorscale": "Viridis"},
            customdata=labels,
            hovertemplate="%{customdata}<br>%{y:.3f}<extra></extra>",
        )
    )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "stats.bar_title", stat=_axis_title(column, lang))),
        height=460,
        width=max(600, 18 * n + 200),
    )
    fig.update_layout(
        xaxis={**theme.token_axis(labels, label(lang, "axis.layer_head")), "tickangle": -90},
        yaxis={"title": {"text": _axis_title(column, lang)}},
    )
    return fig


def head_similarity_heatmap(
    matrix: np.ndarray,
    labels: Sequence[str],
    *,
    kind: str = "similarity",
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Heatmap of a head x head matrix from :func:`viz.stats.head_similarity` (``kind="similarity"``,
    1 = same pattern) or :func:`viz.stats.head_divergence` (``kind="divergence"``, JS in nats).

    Words drawn by the figure are in ``lang`` ("en" or "zh"); ``labels`` are drawn as given."""
    m = as_array(matrix, 2, "matrix", dims="[head, head]")
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix must be square, got shape {m.shape}")
    if len(labels) != m.shape[0]:
        raise ValueError(f"matrix has {m.shape[0]} rows but {len(labels)} labels were given")
    if kind == "similarity":
        zmax, cbar, auto = 1.0, label(lang, "colorbar.similarity"), label(lang, "similarity.title")
        scale = theme.SEQUENTIAL
    elif kind == "divergence":
        zmax, cbar, auto = LN2, label(lang, "colorbar.js_nats"), label(lang, "divergence.title")
        scale = theme.SEQUENTIAL + "_r"
    else:
        raise ValueError(f"kind must be 'similarity' or 'divergence', got {kind!r}")
    lab = [escape_text(str(s)) for s in labels]
    n = len(lab)
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=np.arange(n, dtype=np.int32),
            y=np.arange(n, dtype=np.int32),
            customdata=[
                [label(lang, "hover.versus", a=lab[i], b=lab[j]) for j in range(n)] for i in range(n)
            ],
            hovertemplate="%{customdata}<br>%{z:.3f}<extra></extra>",
            colorscale=scale,
            zmin=0.0,
            zmax=zmax,
            colorbar=theme.colorbar(cbar),
        )
    )
    cell = theme.cell_size_px(n)
    theme.apply_theme(
        fig, theme.pick_title(title, auto), height=max(420, cell * n + 220), width=max(520, cell * n + 280)
    )
    fig.update_layout(
        xaxis={**theme.token_axis(lab, label(lang, "axis.head")), "tickangle": -90, "constrain": "domain"},
        yaxis={
            **theme.token_axis(lab, label(lang, "axis.head"), reversed_=True),
            "scaleanchor": "x",
            "constrain": "domain",
        },
    )
    return fig
