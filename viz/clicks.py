"""Invisible click targets for heatmaps.

Plotly cannot *select* heatmap cells, so ``st.plotly_chart(on_select=...)`` returns no
points for a heatmap (streamlit/streamlit#8760). Figures that should be clickable add one
invisible scatter marker per clickable block (e.g. per head tile); clicking or box-selecting
it returns a point whose ``customdata`` is ``[layer, head]`` and whose ``x``/``y`` lie in
that block. Plotly only fires click events for points that take part in hover, so the markers
carry a short "click to open" hover label; figures keep ``hoverdistance`` small so the markers
only win hover right over themselves and the heatmap keeps its own hover elsewhere.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz.labels import label

CLICK_TRACE_NAME = "click targets"
CLICK_HOVER_DISTANCE_PX = 2  # layout.hoverdistance for figures with click targets


def click_target_trace(
    x: np.ndarray, y: np.ndarray, customdata: np.ndarray, *, size: int = 28, lang: str = "en"
) -> go.Scatter:
    """Invisible square markers at ``(x, y)`` carrying ``customdata`` (e.g. ``[layer, head]``).

    The trace's name stays :data:`CLICK_TRACE_NAME` in every language (pages find it by name);
    its hover label is in ``lang``."""
    where = label(lang, "hover.layer_head", layer="%{customdata[0]}", head="%{customdata[1]}")
    hidden = {"marker": {"opacity": 0.0}}
    return go.Scatter(
        x=np.asarray(x, dtype=np.float32),
        y=np.asarray(y, dtype=np.float32),
        customdata=np.asarray(customdata, dtype=np.int32),
        mode="markers",
        marker={"size": size, "symbol": "square", "opacity": 0.0, "color": "black"},
        selected=hidden,
        unselected=hidden,
        hovertemplate=f"{where}<br><b>{label(lang, 'hover.click_to_open')}</b><extra></extra>",
        showlegend=False,
        name=CLICK_TRACE_NAME,
    )
