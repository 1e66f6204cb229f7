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
from viz.pooling import MAX_TILE_CELLS
from viz.tokens import token_labels

__all__ = ["MAX_BARS", "bar_window", "word_attention_bars"]

#: Bars of the keys that are neither the word's own tokens nor hidden.
OTHER_COLOR = "#9ecae1"
#: Most bars one figure draws: a laptop screen's width of readable token labels. Longer rows are
#: drawn a window of positions at a time (the page pages them).
MAX_BARS = MAX_TILE_CELLS


def bar_window(n: int, page: int, per_page: int = MAX_BARS) -> tuple[int, int]:
    """``(start, stop)`` of page ``page`` of ``n`` positions, ``per_page`` at a time (clamped to the
    last page; the whole row when it fits)."""
    if n <= per_page:
        return 0, n
    page = min(max(page, 0), (n - 1) // per_page)
    return page * per_page, min(n, (page + 1) * per_page)


def word_attention_bars(
    weights: np.ndarray,
    tokens: Sequence[str],
    word_positions: Sequence[int] = (),
    hidden: np.ndarray | None = None,
    *,
    title: str = "",
    axis_title: str | None = None,
    key_range: tuple[int, int] | None = None,
    lang: str = "en",
) -> go.Figure:
    """Bars of ``weights`` [key_pos] over ``tokens``: one trace per group ("word": the word's own
    tokens, "other", "hidden": keys the mask hides, drawn at their weight, which is 0).

    ``key_range`` (``(start, stop)``, stop excluded; None: every key) draws only those keys, at their
    own positions, and the subtitle says which of how many: a long row is sent a window at a time.
    """
    w = as_array(weights, 1, "weights", dims="[key_pos]").astype(np.float64)
    names = token_labels(check_tokens(tokens, w.shape[0], array_name="weights", axis_name="keys",
                                      token_name="key tokens"))
    hide = np.zeros(w.shape, bool) if hidden is None else check_mask(hidden, w.shape, "hidden")
    own = np.zeros(w.shape, bool)
    own[list(word_positions)] = True
    x = np.arange(w.shape[0])
    start, stop = (0, w.shape[0]) if key_range is None else key_range
    if not 0 <= start < stop <= w.shape[0]:
        raise ValueError(f"key_range must lie inside 0..{w.shape[0]} with start < stop, got {key_range}")
    shown = (x >= start) & (x < stop)
    traces = []
    for group, chosen, colour in (("word", shown & own & ~hide, theme.ACCENT),
                                  ("other", shown & ~own & ~hide, OTHER_COLOR),
                                  ("hidden", shown & hide, theme.MASK_COLOR)):
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
    windowed = stop - start < w.shape[0]
    subtitle = (label(lang, "families.bar_window", first=start, last=stop - 1, n=w.shape[0])
                if windowed else None)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "families.bar_title")), subtitle=subtitle,
                      height=360, width=max(360, 34 * (stop - start) + 160))
    axis = theme.token_axis(names[start:stop], axis_title or label(lang, "axis.key_token"))
    axis |= {"tickvals": np.arange(start, stop, dtype=np.int32), "range": [start - 0.5, stop - 0.5]}
    fig.update_layout(
        barmode="overlay",
        xaxis=axis | {"tickangle": -45},
        yaxis={"title": {"text": label(lang, "families.axis_weight")}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.45},
    )
    return fig
