"""Head atlas figures: one statistic of every head as a layer x head map (each cell naming the head's
roles), and a head x head matrix put in a given order (the clustering's). Pure numpy and plotly; every
word from ``viz.labels``; role names come in already worded (they are interface text of the page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.tokens import escape_text

__all__ = ["atlas_head_map", "ordered_matrix"]


def ordered_matrix(matrix: np.ndarray, labels: Sequence[str],
                   order: Sequence[int]) -> tuple[np.ndarray, list[str]]:
    """``matrix[order][:, order]`` and the labels in that order; ``order`` must be a permutation."""
    m = as_array(matrix, 2, "matrix", dims="[head, head]", dtype=np.float64)
    n = m.shape[0]
    if m.shape != (n, n):
        raise ValueError(f"matrix must be square, got shape {m.shape}")
    if len(labels) != n:
        raise ValueError(f"matrix has {n} rows but {len(labels)} labels were given")
    idx = np.asarray(list(order), dtype=np.int64)
    if idx.shape != (n,) or sorted(idx.tolist()) != list(range(n)):
        raise ValueError(f"order must list each of the {n} rows once, got {list(order)}")
    return m[np.ix_(idx, idx)], [labels[i] for i in idx]


def atlas_head_map(
    values: np.ndarray,
    roles: Sequence[Sequence[str]],
    *,
    value_name: str,
    title: str = "",
    zmax: float | None = None,
    lang: str = "en",
) -> go.Figure:
    """``values [layer, head]`` as a heatmap, each cell printing the head's roles (``roles[layer][head]``,
    "" for none). Plotly cannot select heatmap cells, so an invisible click target sits on each cell
    (``viz.clicks``, ``customdata = [layer, head]``): a click selects the head. NaN cells stay empty.

    ``value_name`` names the statistic (colour bar and hover); it and the role names are escaped.
    """
    v = as_array(values, 2, "values", dims="[layer, head]", dtype=np.float64)
    n_layers, n_heads = v.shape
    if len(roles) != n_layers or any(len(r) != n_heads for r in roles):
        raise ValueError(f"roles must be {n_layers} rows of {n_heads} texts, one per head")
    name = escape_text(value_name)
    text = [[escape_text(str(r)) for r in row] for row in roles]
    finite = v[np.isfinite(v)]
    top = zmax if zmax is not None else (float(finite.max()) if finite.size else 1.0)
    layer_idx, head_idx = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    fig = go.Figure(
        go.Heatmap(
            z=v,
            x=np.arange(n_heads, dtype=np.int32),
            y=np.arange(n_layers, dtype=np.int32),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 12},
            customdata=np.stack([layer_idx, head_idx], axis=-1).astype(np.int32),
            hovertemplate=label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
            + "<br>" + label(lang, "hover.value", name=name, value="%{z:.3f}")
            + "<br>" + label(lang, "atlas.hover_roles", roles="%{text}") + "<extra></extra>",
            colorscale=theme.SEQUENTIAL,
            zmin=0.0,
            zmax=max(top, 1e-9),
            colorbar=theme.colorbar(name),
        )
    )
    cells = np.stack([layer_idx.ravel(), head_idx.ravel()], axis=1)  # [cell, 2] = (layer, head)
    fig.add_trace(click_target_trace(head_idx.ravel(), layer_idx.ravel(), cells, size=30, lang=lang))
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "atlas.map_title", stat=name)),
        height=max(260, 90 * n_layers + 170),
        width=max(520, 110 * n_heads + 220),
    )
    fig.update_layout(
        hoverdistance=CLICK_HOVER_DISTANCE_PX,
        xaxis={**theme.token_axis([str(h) for h in range(n_heads)], label(lang, "axis.head"))},
        yaxis={**theme.token_axis([str(li) for li in range(n_layers)], label(lang, "axis.layer"),
                                  reversed_=True)},
    )
    return fig
