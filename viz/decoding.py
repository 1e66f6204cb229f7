"""Decoding views: cross-attention at one decoder step and the next-token distribution."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_tokens
from viz.labels import label
from viz.tokens import token_labels


def cross_attention_step(
    cross_pattern_heads: np.ndarray,
    source_tokens: Sequence[str],
    *,
    step_token: str | None = None,
    step: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Cross-attention of the decoder at one step over the source tokens.

    Accepts ``[key]`` (one distribution, drawn as bars), ``[head, key]`` (heatmap, one row
    per head) or ``[layer, head, key]`` (heatmap, one row per layer·head, ``L0 H0`` first).
    ``step_token`` (the target token being produced/attending) and ``step`` only label the
    title. Words drawn by the figure are in ``lang`` ("en" or "zh").
    """
    w = as_array(
        cross_pattern_heads, (1, 2, 3), "cross_pattern_heads", dims="[key], [head, key] or [layer, head, key]"
    )
    n_k = w.shape[-1]
    src = check_tokens(
        source_tokens,
        n_k,
        array_name="cross_pattern_heads",
        axis_name="source (key) positions",
        token_name="source tokens",
    )
    labels = token_labels(src)
    where = ""
    produced = None if step_token is None else token_labels([step_token], unique=False)[0]
    if step is not None and produced is not None:
        where = label(lang, "cross.where_both", step=int(step), token=produced)
    elif step is not None:
        where = label(lang, "cross.where_step", step=int(step))
    elif produced is not None:
        where = label(lang, "cross.where_token", token=produced)
    weight = label(lang, "hover.value", name=label(lang, "value.weight"), value="{value}")
    attention_weight = label(lang, "value.attention_weight")

    if w.ndim == 1:
        fig = go.Figure(
            go.Bar(
                x=np.arange(n_k, dtype=np.int32),
                y=w,
                marker_color=theme.ACCENT,
                customdata=labels,
                hovertemplate=label(lang, "hover.source_token", token="%{customdata}")
                + "<br>"
                + weight.format(value="%{y:.3f}")
                + "<extra></extra>",
            )
        )
        theme.apply_theme(
            fig,
            theme.pick_title(title, label(lang, "cross.title_1d", where=where)),
            height=420,
            width=max(520, 40 * n_k + 200),
        )
        fig.update_layout(
            xaxis={**theme.token_axis(labels, label(lang, "axis.source_token_key")), "tickangle": -45},
            yaxis={"title": {"text": attention_weight}, "range": [0, max(1.0, float(np.nanmax(w)))]},
        )
        return fig

    rows = w.reshape(-1, n_k)
    if w.ndim == 2:
        row_labels = [f"H{h}" for h in range(w.shape[0])]
    else:
        row_labels = [f"L{li} H{h}" for li in range(w.shape[0]) for h in range(w.shape[1])]
    hover = [
        [
            f"{row_labels[r]}<br>"
            + label(lang, "hover.source_token", token=f"<b>{labels[j]}</b>")
            + "<br>"
            + weight.format(value=f"{rows[r, j]:.3f}")
            for j in range(n_k)
        ]
        for r in range(rows.shape[0])
    ]
    fig = go.Figure(
        go.Heatmap(
            z=rows,
            x=np.arange(n_k, dtype=np.int32),
            y=np.arange(rows.shape[0], dtype=np.int32),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            colorscale=theme.SEQUENTIAL,
            zmin=0.0,
            zmax=1.0,
            colorbar=theme.colorbar(attention_weight),
        )
    )
    cell = theme.cell_size_px(max(n_k, rows.shape[0]))
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "cross.title_heads", where=where)),
        height=max(320, cell * rows.shape[0] + 220),
        width=max(520, cell * n_k + 260),
    )
    fig.update_layout(
        xaxis={**theme.token_axis(labels, label(lang, "axis.source_token_key")), "tickangle": -45},
        yaxis={
            **theme.token_axis(
                row_labels, label(lang, "axis.head" if w.ndim == 2 else "axis.layer_head"), reversed_=True
            )
        },
    )
    return fig


def topk_bar(
    tokens: Sequence[str],
    probs: np.ndarray,
    *,
    k: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Horizontal bars of next-token probabilities, most likely at the top.

    ``tokens`` and ``probs`` are parallel (e.g. the model's top-k); with ``k`` only the
    ``k`` most likely are kept. Each bar is labelled with its probability in percent. Words
    drawn by the figure are in ``lang``.
    """
    p = as_array(probs, 1, "probs", dims="[candidate]")
    toks = check_tokens(tokens, p.shape[0], array_name="probs", axis_name="entries", token_name="tokens")
    if np.any(p < 0) or not np.all(np.isfinite(p)):
        raise ValueError("probs must be finite and non-negative")
    order = np.argsort(-p, kind="stable")
    if k is not None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        order = order[:k]
    p_sorted = p[order]
    labels = token_labels([toks[i] for i in order])
    n = len(order)
    fig = go.Figure(
        go.Bar(
            x=p_sorted,
            y=np.arange(n, dtype=np.int32),
            orientation="h",
            marker_color=theme.ACCENT,
            text=[f"{v:.1%}" for v in p_sorted],
            textposition="outside",
            customdata=labels,
            hovertemplate="%{customdata}<br>p = %{x:.4f}<extra></extra>",
        )
    )
    top = float(p_sorted.max()) if n else 1.0
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "topk.title", n=n)),
        height=max(300, 42 * n + 150),
        width=620,
    )
    fig.update_layout(
        xaxis={
            "title": {"text": label(lang, "axis.probability")},
            "range": [0, min(1.0, top * 1.25) if top > 0 else 1.0],
            "tickformat": ".0%",
        },
        yaxis={**theme.token_axis(labels, label(lang, "axis.candidate_token"), reversed_=True)},
        showlegend=False,
    )
    fig.update_traces(cliponaxis=False)
    return fig
