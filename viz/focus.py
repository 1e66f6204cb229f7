"""One token across the whole model: a layer x head grid for it, and BertViz-style arcs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index, check_tokens
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.numbers import cell_texts
from viz.tokens import token_labels

DIRECTIONS = ("from", "to")

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


def token_focus_values(
    patterns_4d: np.ndarray,
    token_index: int,
    direction: str = "from",
    other_index: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per ``(layer, head)`` value and partner position for one token.

    ``direction="from"``: the token is the *query*; without ``other_index`` the value is
    the largest weight in its row and the partner is the argmax key; with ``other_index``
    the value is the weight from the token to key ``other_index`` (partner = other_index).
    ``direction="to"``: the token is the *key*; without ``other_index`` the value is the
    largest weight any query puts on it and the partner is that query; with
    ``other_index`` it is the weight from query ``other_index`` to the token.
    Returns ``(values [layer, head] float32, partners [layer, head] int)``.
    """
    p = as_array(patterns_4d, 4, "patterns")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'from' or 'to', got {direction!r}")
    n_q, n_k = p.shape[2], p.shape[3]
    if direction == "from":
        idx = check_index(token_index, n_q, "token_index (a query position)")
        vectors = p[:, :, idx, :]  # [L, H, k]
        n_other, other_name = n_k, "other_index (a key position)"
    else:
        idx = check_index(token_index, n_k, "token_index (a key position)")
        vectors = p[:, :, :, idx]  # [L, H, q]
        n_other, other_name = n_q, "other_index (a query position)"
    vectors = np.nan_to_num(vectors, nan=0.0)
    if other_index is None:
        return vectors.max(axis=-1), vectors.argmax(axis=-1)
    other = check_index(other_index, n_other, other_name)
    return vectors[..., other].copy(), np.full(vectors.shape[:2], other, dtype=np.int64)


def token_focus_grid(
    patterns_4d: np.ndarray,
    token_index: int,
    direction: str = "from",
    *,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    other_index: int | None = None,
    click_targets: bool = True,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Layer x head heatmap for one token (see :func:`token_focus_values` for the values).

    Each cell is one head; colour is the weight, the text in the cell names the partner
    token (the most-attended key for ``"from"``, the most-attending query for ``"to"``), or
    the weight itself when a fixed ``other_index`` is chosen. ``key_tokens`` defaults to
    ``query_tokens`` (self-attention). Cell ``(x=head, y=layer)``; with ``click_targets`` an
    invisible marker per cell (``customdata = [layer, head]``) makes cells selectable in
    ``st.plotly_chart(on_select=...)``, which cannot select heatmap cells. Words drawn by the
    figure are in ``lang`` ("en" or "zh"); tokens are drawn as given.
    """
    p = as_array(patterns_4d, 4, "patterns")
    n_layers, n_heads, n_q, n_k = p.shape
    q_tokens = check_tokens(
        query_tokens, n_q, array_name="patterns", axis_name="query rows", token_name="query tokens"
    )
    k_tokens = check_tokens(
        q_tokens if key_tokens is None else key_tokens,
        n_k,
        array_name="patterns",
        axis_name="key columns",
        token_name="key tokens",
    )
    values, partners = token_focus_values(p, token_index, direction, other_index)
    q_labels, k_labels = token_labels(q_tokens), token_labels(k_tokens)
    if direction == "from":
        me, partner_labels = q_labels[token_index], k_labels
    else:
        me, partner_labels = k_labels[token_index], q_labels

    if other_index is None:
        partner_text = [[partner_labels[partners[li, hi]] for hi in range(n_heads)] for li in range(n_layers)]
        cell_text = partner_text
        auto = label(lang, "focus.title_from" if direction == "from" else "focus.title_to", token=me)
    else:
        partner_text = [[partner_labels[other_index]] * n_heads for _ in range(n_layers)]
        cell_text = cell_texts(values)
        src, dst = (
            (me, partner_labels[other_index]) if direction == "from" else (partner_labels[other_index], me)
        )
        auto = label(lang, "focus.title_pair", src=src, dst=dst)
    # Tokens go into data arrays, never into the template, so '%{' in a token stays literal.
    weight_name = label(lang, "value.weight")
    hover_text = [
        [
            label(lang, "hover.layer_head", layer=li, head=hi)
            + "<br>"
            + (
                f"<b>{me}</b> → {partner_text[li][hi]}"
                if direction == "from"
                else f"{partner_text[li][hi]} → <b>{me}</b>"
            )
            + "<br>"
            + label(lang, "hover.value", name=weight_name, value=f"{values[li, hi]:.3f}")
            for hi in range(n_heads)
        ]
        for li in range(n_layers)
    ]

    fig = go.Figure(
        go.Heatmap(
            z=values.astype(np.float32),
            x=np.arange(n_heads, dtype=np.int32),
            y=np.arange(n_layers, dtype=np.int32),
            text=cell_text,
            texttemplate="%{text}",
            textfont={"size": 13},
            customdata=hover_text,
            hovertemplate="%{customdata}<extra></extra>",
            colorscale=theme.SEQUENTIAL,
            zmin=0.0,
            zmax=1.0,
            xgap=2,
            ygap=2,
            colorbar=theme.colorbar(label(lang, "value.attention_weight")),
        )
    )
    if click_targets:
        hh, ll = np.meshgrid(np.arange(n_heads), np.arange(n_layers))
        fig.add_trace(
            click_target_trace(hh.ravel(), ll.ravel(), np.stack([ll.ravel(), hh.ravel()], axis=1), lang=lang)
        )
        fig.update_layout(clickmode="event+select", hoverdistance=CLICK_HOVER_DISTANCE_PX)
    theme.apply_theme(
        fig,
        theme.pick_title(title, auto),
        height=max(320, 70 * n_layers + 170),
        width=max(520, 95 * n_heads + 200),
    )
    fig.update_layout(
        xaxis={
            **theme.token_axis([f"H{h}" for h in range(n_heads)], label(lang, "axis.head")),
            "side": "top",
        },
        yaxis={
            **theme.token_axis(
                [f"L{li}" for li in range(n_layers)], label(lang, "axis.layer"), reversed_=True
            )
        },
        margin={"t": 130},
    )
    return fig


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
    v = w[ii, jj]

    fig = go.Figure()
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
        fig.add_trace(
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

    left_colour = ["#222222" if token_index is None or i == token_index else "#b0b0b0" for i in range(n_q)]
    fig.add_trace(
        go.Scatter(
            x=np.zeros(n_q, dtype=np.float32),
            y=np.arange(n_q, dtype=np.int32),
            mode="text",
            text=q_labels,
            textposition="middle left",
            textfont={"size": theme.tick_font_size(n_q) + 2, "color": left_colour},
            hovertemplate=label(lang, "hover.query_token", token="%{text}") + "<extra></extra>",
            showlegend=False,
        )
    )
    if token_index is not None:
        right_text = [f"{k_labels[j]}  {w[token_index, j]:.2f}" for j in range(n_k)]
    else:
        right_text = list(k_labels)
    fig.add_trace(
        go.Scatter(
            x=np.ones(n_k, dtype=np.float32),
            y=np.arange(n_k, dtype=np.int32),
            mode="text",
            text=right_text,
            textposition="middle right",
            textfont={"size": theme.tick_font_size(n_k) + 2, "color": "#222222"},
            hovertemplate=label(lang, "hover.key_token", token="%{text}") + "<extra></extra>",
            showlegend=False,
        )
    )
    if token_index is None:
        auto = label(lang, "arcs.title_all")
    else:
        auto = label(lang, "arcs.title_token", token=q_labels[token_index])
    subtitle = None
    if len(ii) < candidates:
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
        subtitle = " · ".join([drawn, *rules])
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
