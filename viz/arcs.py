"""BertViz-style arcs: query tokens in a left column, key tokens in a right one, a line per link.

The lines drawn are bounded whatever the input length (:func:`arc_links`); they are grouped into
a few weight bins, one line trace per bin, to keep the figure light.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index, check_tokens
from viz.labels import label
from viz.tokens import token_labels

#: Key tokens up to which every link >= ``min_weight`` of an arcs figure is drawn; above, at
#: most :data:`ARC_TOP_K` links per query (the strongest).
ARC_ALL_LINKS_UP_TO = 64
ARC_TOP_K = 8
#: Hard cap on drawn links (the strongest overall). 64 x 64: an input of up to
#: ``ARC_ALL_LINKS_UP_TO`` tokens never reaches it, 512 queries x 8 links just fit.
MAX_ARC_LINKS = 4096


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def arc_links(
    pattern_2d: np.ndarray,
    token_index: int | None = None,
    *,
    min_weight: float = 0.01,
    top_k: int | None = None,
    max_links: int = MAX_ARC_LINKS,
) -> tuple[np.ndarray, int]:
    """Which links :func:`attention_arcs` draws: ``(kept [query, key] bool, candidates)``.

    Candidates are the links of every query (or of ``token_index`` only) with weight >=
    ``min_weight`` (NaN counts as 0). Of those, per query the ``top_k`` strongest are kept
    (ties: lower key position first); ``top_k=None`` means all up to
    :data:`ARC_ALL_LINKS_UP_TO` key tokens and :data:`ARC_TOP_K` above. If more than
    ``max_links`` remain, the ``max_links`` strongest overall are kept (ties: reading order).
    """
    p = as_array(pattern_2d, 2, "pattern")
    n_q, n_k = p.shape
    if not np.isfinite(min_weight):
        raise ValueError(f"min_weight must be a finite number, got {min_weight!r}")
    max_links = _positive_int(max_links, "max_links")
    if top_k is None:
        k = ARC_TOP_K if n_k > ARC_ALL_LINKS_UP_TO else n_k
    else:
        k = _positive_int(top_k, "top_k")
    w = np.nan_to_num(p, nan=0.0)
    kept = np.zeros(w.shape, bool)
    rows = slice(None) if token_index is None else slice(token_index, token_index + 1)
    kept[rows] = w[rows] >= min_weight
    candidates = int(kept.sum())
    if k < n_k:
        order = np.argsort(-w, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(n_k), w.shape), axis=1)
        kept &= rank < k
    if kept.sum() > max_links:
        ii, jj = np.nonzero(kept)
        strongest = np.lexsort((jj, ii, -w[ii, jj]))[:max_links]
        kept = np.zeros(w.shape, bool)
        kept[ii[strongest], jj[strongest]] = True
    return kept, candidates


def _arc_line_traces(ii: np.ndarray, jj: np.ndarray, v: np.ndarray, n_bins: int) -> list[go.Scatter]:
    """The links ``ii[n] -> jj[n]`` of weight ``v[n]``, one line trace per non-empty weight bin
    (``n_bins`` equal bins of [0, 1]), wider and more opaque for stronger bins."""
    traces = []
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        # the last bin also takes weights at or above its upper edge
        in_bin = (v >= lo) if b == n_bins - 1 else ((v >= lo) & (v < hi))
        n_links = int(in_bin.sum())
        if not n_links:
            continue
        xs: list[float | None] = [0.0, 1.0, None] * n_links
        pairs = zip(ii[in_bin].tolist(), jj[in_bin].tolist(), strict=True)
        ys: list[float | None] = [c for i, j in pairs for c in (float(i), float(j), None)]
        strength = (b + 1) / n_bins
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": theme.ACCENT, "width": 1 + 7 * strength},
                opacity=0.15 + 0.85 * strength,
                hoverinfo="skip",
                showlegend=False,
            )
        )
    return traces


def _token_column_trace(
    x: float, texts: list[str], side: str, colour: str | list[str], hover: str
) -> go.Scatter:
    """A column of token texts at ``x`` (0 = queries, 1 = keys), written away from the links."""
    n = len(texts)
    return go.Scatter(
        x=np.full(n, x, dtype=np.float32),
        y=np.arange(n, dtype=np.int32),
        mode="text",
        text=texts,
        textposition=f"middle {side}",
        textfont={"size": theme.tick_font_size(n) + 2, "color": colour},
        hovertemplate=hover + "<extra></extra>",
        showlegend=False,
    )


def _arcs_subtitle(
    ii: np.ndarray,
    candidates: int,
    *,
    top_k: int | None,
    n_q: int,
    n_k: int,
    max_links: int,
    min_weight: float,
    lang: str,
) -> str | None:
    """When weaker links were dropped: how many of how many lines are drawn, and by which rule."""
    if len(ii) >= candidates:
        return None
    k = top_k if top_k is not None else (ARC_TOP_K if n_k > ARC_ALL_LINKS_UP_TO else None)
    per_row = np.bincount(ii, minlength=n_q)
    rules = []
    if k is not None and k < n_k and per_row.max(initial=0) >= k:
        rules.append(label(lang, "arcs.rule_top_k", k=k))
    if len(ii) == max_links:
        rules.append(label(lang, "arcs.rule_cap", cap=f"{max_links:,}"))
    drawn = label(
        lang, "arcs.drawn", shown=f"{len(ii):,}", total=f"{candidates:,}", min_weight=f"{min_weight:g}"
    )
    return " · ".join([drawn, *rules])


def attention_arcs(
    pattern_2d: np.ndarray,
    tokens: Sequence[str],
    token_index: int | None = None,
    *,
    key_tokens: Sequence[str] | None = None,
    min_weight: float = 0.01,
    n_bins: int = 8,
    top_k: int | None = None,
    max_links: int = MAX_ARC_LINKS,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """BertViz-like view: query tokens in a left column, key tokens in a right column,
    and a line from query ``i`` to key ``j`` whose width and opacity grow with the weight.

    With ``token_index`` only that query's lines are drawn (others greyed out); otherwise
    all lines with weight >= ``min_weight``. Lines are grouped into ``n_bins`` weight bins,
    one trace per bin, to keep the figure light. Words drawn by the figure are in ``lang``.

    The number of lines is bounded whatever the input length (see :func:`arc_links`): up to
    64 key tokens every line >= ``min_weight`` is drawn; above, only the ``top_k`` strongest
    per query (default 8); and never more than ``max_links`` (default 4096, the strongest
    overall). What is dropped is the weaker links: when any are, the subtitle says how many
    of how many lines were drawn and by which rule.
    """
    p = as_array(pattern_2d, 2, "pattern")
    n_q, n_k = p.shape
    q_tokens = check_tokens(tokens, n_q, array_name="pattern", axis_name="query rows", token_name="tokens")
    k_tokens = check_tokens(
        q_tokens if key_tokens is None else key_tokens,
        n_k,
        array_name="pattern",
        axis_name="key columns",
        token_name="key tokens",
    )
    if token_index is not None:
        token_index = check_index(token_index, n_q, "token_index")
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    q_labels, k_labels = token_labels(q_tokens), token_labels(k_tokens)
    w = np.nan_to_num(p, nan=0.0)
    kept, candidates = arc_links(p, token_index, min_weight=min_weight, top_k=top_k, max_links=max_links)
    ii, jj = np.nonzero(kept)  # row-major: queries top to bottom, keys in order within a query

    fig = go.Figure()
    for trace in _arc_line_traces(ii, jj, w[ii, jj], n_bins):
        fig.add_trace(trace)
    left_colour = ["#222222" if token_index is None or i == token_index else "#b0b0b0" for i in range(n_q)]
    query_hover = label(lang, "hover.query_token", token="%{text}")
    fig.add_trace(_token_column_trace(0.0, q_labels, "left", left_colour, query_hover))
    if token_index is not None:
        right_text = [f"{k_labels[j]}  {w[token_index, j]:.2f}" for j in range(n_k)]
    else:
        right_text = list(k_labels)
    key_hover = label(lang, "hover.key_token", token="%{text}")
    fig.add_trace(_token_column_trace(1.0, right_text, "right", "#222222", key_hover))
    if token_index is None:
        auto = label(lang, "arcs.title_all")
    else:
        auto = label(lang, "arcs.title_token", token=q_labels[token_index])
    subtitle = _arcs_subtitle(
        ii, candidates, top_k=top_k, n_q=n_q, n_k=n_k, max_links=max_links, min_weight=min_weight, lang=lang
    )
    n = max(n_q, n_k)
    theme.apply_theme(
        fig, theme.pick_title(title, auto), subtitle=subtitle, height=max(360, 26 * n + 160), width=640
    )
    fig.update_layout(
        xaxis={"visible": False, "range": [-0.9, 1.9], "fixedrange": True},
        yaxis={"visible": False, "range": [n - 0.5, -0.5], "fixedrange": True},
        hovermode="closest",
    )
    return fig
