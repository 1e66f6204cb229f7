"""Head detector figures: one role's score of every head as a layer x head map, the heads at or above
the role's threshold marked, and a table of the best heads. Pure numpy and plotly; every word from
``viz.labels``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.tokens import escape_text

__all__ = ["ABOVE_MARK", "above_threshold", "detector_map", "top_heads"]

ABOVE_MARK = "●"  # printed in the cells of heads at or above the threshold


def above_threshold(values: np.ndarray, threshold: float) -> np.ndarray:
    """[layer, head] bool: the heads whose score is at or above ``threshold`` (NaN: never)."""
    v = as_array(values, 2, "values", dims="[layer, head]", dtype=np.float64)
    return np.isfinite(v) & (v >= threshold)


def top_heads(values: np.ndarray, n: int = 5) -> list[tuple[int, int, float]]:
    """The ``n`` highest-scoring heads as (layer, head, score), best first; NaN heads left out."""
    v = as_array(values, 2, "values", dims="[layer, head]", dtype=np.float64)
    order = np.argsort(-np.where(np.isfinite(v), v, -np.inf), axis=None, kind="stable")
    picked = [int(k) for k in order if np.isfinite(v.flat[int(k)])][:n]
    return [(k // v.shape[1], k % v.shape[1], float(v.flat[k])) for k in picked]


def detector_map(values: np.ndarray, threshold: float, *, value_name: str, title: str = "",
                 signed: bool = False, lang: str = "en") -> go.Figure:
    """``values [layer, head]`` as a heatmap; heads at or above ``threshold`` carry :data:`ABOVE_MARK`.
    ``signed``: a score that may be negative (a logit effect) gets a diverging scale centred on 0.
    An invisible click target on each cell (``customdata = [layer, head]``) lets a click pick the head."""
    v = as_array(values, 2, "values", dims="[layer, head]", dtype=np.float64)
    n_layers, n_heads = v.shape
    name = escape_text(value_name)
    marks = np.where(above_threshold(v, threshold), ABOVE_MARK, "")
    finite = v[np.isfinite(v)]
    if signed:
        top = float(np.abs(finite).max()) if finite.size else 1.0
        zmin, zmax, scale = -max(top, 1e-9), max(top, 1e-9), theme.DIVERGING_REVERSED
    else:
        zmin, zmax, scale = 0.0, 1.0, theme.SEQUENTIAL
    layer_idx, head_idx = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    fig = go.Figure(go.Heatmap(
        z=v, x=np.arange(n_heads, dtype=np.int32), y=np.arange(n_layers, dtype=np.int32),
        text=marks, texttemplate="%{text}", textfont={"size": 12},
        customdata=np.stack([layer_idx, head_idx], axis=-1).astype(np.int32),
        hovertemplate=label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
        + "<br>" + label(lang, "hover.value", name=name, value="%{z:.3f}") + "<extra></extra>",
        colorscale=scale, zmin=zmin, zmax=zmax, colorbar=theme.colorbar(name)))
    cells = np.stack([layer_idx.ravel(), head_idx.ravel()], axis=1)  # [cell, 2] = (layer, head)
    fig.add_trace(click_target_trace(head_idx.ravel(), layer_idx.ravel(), cells, size=22, lang=lang))
    auto = label(lang, "detectors.map_title", stat=name, threshold=f"{threshold:g}", mark=ABOVE_MARK)
    theme.apply_theme(fig, theme.pick_title(title, auto), height=max(300, 26 * n_layers + 200),
                      width=max(520, 60 * n_heads + 240))
    fig.update_layout(
        hoverdistance=CLICK_HOVER_DISTANCE_PX,
        xaxis=theme.token_axis([str(h) for h in range(n_heads)], label(lang, "axis.head")),
        yaxis=theme.token_axis([str(i) for i in range(n_layers)], label(lang, "axis.layer"), reversed_=True),
    )
    return fig
