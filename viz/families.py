"""Three families, one sentence: one word's attention row as bars over the tokens it may read, the
word's own tokens in the accent colour and the keys its mask hides in grey. Pure plotly and numpy;
every word from ``viz.labels``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.labels import label
from viz.tokens import token_labels

__all__ = ["word_attention_bars"]

#: Bars of the keys that are neither the word's own tokens nor hidden.
OTHER_COLOR = "#9ecae1"


def word_attention_bars(
    weights: np.ndarray,
    tokens: Sequence[str],
    word_positions: Sequence[int] = (),
    hidden: np.ndarray | None = None,
    *,
    title: str = "",
    axis_title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Bars of ``weights`` [key_pos] over ``tokens``: one trace per group ("word": the word's own
    tokens, "other", "hidden": keys the mask hides, drawn at their weight, which is 0)."""
    w = as_array(weights, 1, "weights", dims="[key_pos]").astype(np.float64)
    names = token_labels(check_tokens(tokens, w.shape[0], array_name="weights", axis_name="keys",
                                      token_name="key tokens"))
    hide = np.zeros(w.shape, bool) if hidden is None else check_mask(hidden, w.shape, "hidden")
    own = np.zeros(w.shape, bool)
    own[list(word_positions)] = True
    x = np.arange(w.shape[0])
    traces = []
    for group, chosen, colour in (("word", own & ~hide, theme.ACCENT), ("other", ~own & ~hide, OTHER_COLOR),
                                  ("hidden", hide, theme.MASK_COLOR)):
        if not chosen.any():
            continue
        legend = label(lang, f"families.bar_{group}")
        traces.append(go.Bar(
            x=x[chosen], y=w[chosen], name=legend, meta=group, marker={"color": colour},
            customdata=[names[i] for i in x[chosen]],
            hovertemplate=f"{legend}<br>%{{customdata}}<br>"
            + label(lang, "hover.value", name=label(lang, "families.axis_weight"), value="%{y:.3f}")
            + "<extra></extra>",
        ))
    fig = go.Figure(traces)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "families.bar_title")), height=360,
                      width=max(360, 34 * len(names) + 160))
    fig.update_layout(
        barmode="overlay",
        xaxis=theme.token_axis(names, axis_title or label(lang, "axis.key_token")) | {"tickangle": -45},
        yaxis={"title": {"text": label(lang, "families.axis_weight")}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.45},
    )
    return fig
