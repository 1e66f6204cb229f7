"""Norm-based attention and the information-flow graph, drawn (numpy -> plotly).

:func:`norm_disagreement`: for one head, the keys whose share differs most between the attention weights
and weight × ‖value‖ (model/lab/flow.py computes both).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz.labels import label
from viz.tokens import token_labels

#: Keys the disagreement figure lists at most.
DISAGREE_TOP = 12


def disagreement(pattern: np.ndarray, weighted: np.ndarray, top: int = DISAGREE_TOP) -> np.ndarray:
    """Indices of the keys whose mean share over the query rows differs most between ``pattern`` and
    ``weighted`` ([query, key] each, rows summing to 1 or 0), largest difference first."""
    gap = np.abs(np.asarray(weighted).mean(0) - np.asarray(pattern).mean(0))
    return np.argsort(-gap, kind="stable")[: min(top, gap.size)]


def norm_disagreement(pattern: np.ndarray, weighted: np.ndarray, key_tokens: Sequence[str], *,
                      title: str = "", lang: str = "en", top: int = DISAGREE_TOP) -> go.Figure:
    """Grouped horizontal bars: for the keys where they disagree most, the mean share by weight and by
    weight × ‖value‖ (``pattern``, ``weighted`` [query, key], masked cells 0)."""
    pattern, weighted = np.asarray(pattern, dtype=np.float32), np.asarray(weighted, dtype=np.float32)
    if pattern.shape != weighted.shape or pattern.ndim != 2 or pattern.shape[1] != len(key_tokens):
        raise ValueError(f"pattern {pattern.shape} and weighted {weighted.shape} must be [query, key] with "
                         f"{len(key_tokens)} keys")
    keys = disagreement(pattern, weighted, top)
    names = token_labels(list(key_tokens))
    y = [f"#{int(j)} {names[int(j)]}" for j in keys][::-1]
    fig = go.Figure()
    for values, key, colour in ((pattern, "flow.by_weight", "#9aa5b1"), (weighted, "flow.by_norm", "#d9480f")):
        share = values.mean(0)[keys][::-1]
        fig.add_trace(go.Bar(x=share, y=y, orientation="h", name=label(lang, key), marker_color=colour,
                             hovertemplate="%{y}: %{x:.3f}<extra>" + label(lang, key) + "</extra>"))
    fig.update_layout(barmode="group", xaxis={"title": {"text": label(lang, "flow.mean_share")}, "range": [0, 1]},
                      legend={"orientation": "h", "y": -0.2})
    return theme.apply_theme(fig, title, height=max(300, 40 * len(keys) + 140))
