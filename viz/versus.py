"""Model vs model: how far each head of model A moved in model B (a layer x head map whose cells name
the nearest head of B), and one head of each model side by side. Pure numpy and plotly; every word from
``viz.labels``; model names come in as text and are escaped."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.heatmap import attention_heatmap
from viz.labels import label
from viz.tokens import escape_text

__all__ = ["head_label", "moved_map", "versus_heads"]


def head_label(layer: int, head: int) -> str:
    """How a head is named in the cells and the menus: L1H2."""
    return f"L{int(layer)}H{int(head)}"


def moved_map(distance: np.ndarray, nearest: np.ndarray, *, measure: str, model_b: str, title: str = "",
              lang: str = "en") -> go.Figure:
    """``distance [layer, head]`` of A's heads (0: the same pattern in B, 1: no overlap) on a fixed
    [0, 1] scale, each cell naming B's nearest head (``nearest [layer, head, 2]``). ``measure`` is
    "same" (to B's head at the same place) or "nearest". An invisible click target on each cell
    (``customdata = [layer, head]``) selects that head of A."""
    d = as_array(distance, 2, "distance", dims="[layer, head]", dtype=np.float64)
    near = np.asarray(nearest, dtype=np.int64)
    n_layers, n_heads = d.shape
    if near.shape != (n_layers, n_heads, 2):
        raise ValueError(f"nearest must be [layer, head, 2] = {(n_layers, n_heads, 2)}, got {near.shape}")
    if measure not in ("same", "nearest"):
        raise ValueError(f"measure must be 'same' or 'nearest', got {measure!r}")
    name = escape_text(model_b)
    value_name = label(lang, f"versus.value.{measure}")
    text = [[head_label(*near[i, h]) for h in range(n_heads)] for i in range(n_layers)]
    layer_idx, head_idx = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    fig = go.Figure(go.Heatmap(
        z=d, x=np.arange(n_heads, dtype=np.int32), y=np.arange(n_layers, dtype=np.int32), text=text,
        texttemplate="%{text}", textfont={"size": 12},
        customdata=np.stack([layer_idx, head_idx], axis=-1).astype(np.int32),
        hovertemplate=label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
        + "<br>" + label(lang, "hover.value", name=value_name, value="%{z:.3f}")
        + "<br>" + label(lang, "versus.hover_nearest", model=name, head="%{text}") + "<extra></extra>",
        colorscale=theme.SEQUENTIAL, zmin=0.0, zmax=1.0, colorbar=theme.colorbar(value_name),
    ))
    cells = np.stack([layer_idx.ravel(), head_idx.ravel()], axis=1)
    fig.add_trace(click_target_trace(head_idx.ravel(), layer_idx.ravel(), cells, size=30, lang=lang))
    theme.apply_theme(fig, theme.pick_title(title, label(lang, f"versus.map_title.{measure}", model=name)),
                      height=max(260, 90 * n_layers + 170), width=max(480, 100 * n_heads + 220))
    fig.update_layout(
        hoverdistance=CLICK_HOVER_DISTANCE_PX,
        xaxis=theme.token_axis([str(h) for h in range(n_heads)], label(lang, "axis.head")),
        yaxis=theme.token_axis([str(i) for i in range(n_layers)], label(lang, "axis.layer"), reversed_=True),
    )
    return fig


def versus_heads(pattern_a: np.ndarray, pattern_b: np.ndarray, query_tokens: Sequence[str],
                 key_tokens: Sequence[str], *, names: tuple[str, str], heads: tuple[tuple[int, int], ...],
                 distance: float, lang: str = "en") -> tuple[go.Figure, go.Figure]:
    """One head of A and one of B over the same tokens, on one [0, 1] colour scale (two heatmaps)."""
    a = as_array(pattern_a, 2, "pattern_a", dims="[query, key]")
    b = as_array(pattern_b, 2, "pattern_b", dims="[query, key]")
    if a.shape != b.shape:
        raise ValueError(f"the two heads must cover the same tokens, got {a.shape} and {b.shape}")
    if len(names) != 2 or len(heads) != 2:
        raise ValueError("names and heads must give model A's and model B's")
    subtitle = label(lang, "versus.pair_subtitle", value=f"{float(distance):.3f}")
    figs = []
    for pattern, name, (layer, head) in zip((a, b), names, heads, strict=True):
        # names are escaped by attention_heatmap, which escapes its title
        title = label(lang, "versus.head_title", model=name, head=head_label(layer, head))
        figs.append(attention_heatmap(pattern, query_tokens, key_tokens, title=title, subtitle=subtitle,
                                      zmax=1.0, lang=lang))
    return figs[0], figs[1]
