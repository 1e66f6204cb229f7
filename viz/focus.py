"""One token across the whole model: a layer x head grid for it, and BertViz-style arcs
(:mod:`viz.arcs`, importable from here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index, check_tokens
from viz.arcs import ARC_ALL_LINKS_UP_TO, ARC_TOP_K, MAX_ARC_LINKS, arc_links, attention_arcs
from viz.clicks import CLICK_HOVER_DISTANCE_PX, click_target_trace
from viz.labels import label
from viz.numbers import cell_texts
from viz.tokens import token_labels

__all__ = [
    "ARC_ALL_LINKS_UP_TO",
    "ARC_TOP_K",
    "DIRECTIONS",
    "MAX_ARC_LINKS",
    "arc_links",
    "attention_arcs",
    "focus_grid_of_values",
    "token_focus_grid",
    "token_focus_values",
]

DIRECTIONS = ("from", "to")


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


class _FocusText(NamedTuple):
    """The words of a token-focus grid: the token (``me``), each head's partner, what each cell
    shows and the title the figure gets unless given one."""

    me: str
    partners: list[list[str]]
    cells: list[list[str]]
    title: str


def _focus_text(
    values: np.ndarray,
    partners: np.ndarray,
    token_index: int,
    direction: str,
    other_index: int | None,
    q_labels: list[str],
    k_labels: list[str],
    lang: str,
) -> _FocusText:
    """Cells name each head's partner token; with a fixed ``other_index`` they show the weight."""
    n_layers, n_heads = values.shape
    if direction == "from":
        me, partner_labels = q_labels[token_index], k_labels
    else:
        me, partner_labels = k_labels[token_index], q_labels
    if other_index is None:
        partner_text = [[partner_labels[partners[li, hi]] for hi in range(n_heads)] for li in range(n_layers)]
        auto = label(lang, "focus.title_from" if direction == "from" else "focus.title_to", token=me)
        return _FocusText(me, partner_text, partner_text, auto)
    partner_text = [[partner_labels[other_index]] * n_heads for _ in range(n_layers)]
    src, dst = (me, partner_labels[other_index]) if direction == "from" else (partner_labels[other_index], me)
    return _FocusText(me, partner_text, cell_texts(values), label(lang, "focus.title_pair", src=src, dst=dst))


def _focus_hover(values: np.ndarray, text: _FocusText, direction: str, lang: str) -> list[list[str]]:
    """One hover string per cell: the head, the link (the token in bold) and its weight."""
    # Tokens go into data arrays, never into the template, so '%{' in a token stays literal.
    weight_name = label(lang, "value.weight")
    n_layers, n_heads = values.shape
    return [
        [
            label(lang, "hover.layer_head", layer=li, head=hi)
            + "<br>"
            + (
                f"<b>{text.me}</b> → {text.partners[li][hi]}"
                if direction == "from"
                else f"{text.partners[li][hi]} → <b>{text.me}</b>"
            )
            + "<br>"
            + label(lang, "hover.value", name=weight_name, value=f"{values[li, hi]:.3f}")
            for hi in range(n_heads)
        ]
        for li in range(n_layers)
    ]


def _focus_heatmap(values: np.ndarray, text: _FocusText, hover: list[list[str]], lang: str) -> go.Heatmap:
    """One cell per head (x = head, y = layer), the weight as colour and the cell text drawn in it."""
    n_layers, n_heads = values.shape
    return go.Heatmap(
        z=values.astype(np.float32),
        x=np.arange(n_heads, dtype=np.int32),
        y=np.arange(n_layers, dtype=np.int32),
        text=text.cells,
        texttemplate="%{text}",
        textfont={"size": 13},
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        colorscale=theme.SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        xgap=2,
        ygap=2,
        colorbar=theme.colorbar(label(lang, "value.attention_weight")),
    )


def _lay_out_focus_grid(fig: go.Figure, title: str, n_layers: int, n_heads: int, lang: str) -> None:
    """Themed size for the cells, heads named along the top and layers top to bottom."""
    theme.apply_theme(fig, title, height=max(320, 70 * n_layers + 170), width=max(520, 95 * n_heads + 200))
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
    check_tokens(query_tokens, n_q, array_name="patterns", axis_name="query rows", token_name="query tokens")
    check_tokens(query_tokens if key_tokens is None else key_tokens, n_k, array_name="patterns",
                 axis_name="key columns", token_name="key tokens")
    values, partners = token_focus_values(p, token_index, direction, other_index)
    return focus_grid_of_values(values, partners, token_index, direction, query_tokens=query_tokens,
                                key_tokens=key_tokens, other_index=other_index, click_targets=click_targets,
                                title=title, lang=lang)


def focus_grid_of_values(
    values: np.ndarray,
    partners: np.ndarray,
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
    """:func:`token_focus_grid` of the ``(values, partners)`` [layer, head] that
    :func:`token_focus_values` gives: what a page draws from one row or column of every head,
    streamed a layer at a time."""
    values = as_array(values, 2, "values")
    n_layers, n_heads = values.shape
    partners = np.asarray(partners)
    if partners.shape != values.shape:
        raise ValueError(f"partners of shape {partners.shape} do not fit values of shape {values.shape}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'from' or 'to', got {direction!r}")
    q_tokens = check_tokens(query_tokens, len(query_tokens), array_name="patterns", axis_name="query rows",
                            token_name="query tokens")
    k_tokens = q_tokens if key_tokens is None else list(key_tokens)
    check_index(token_index, len(q_tokens) if direction == "from" else len(k_tokens), "token_index")
    q_labels, k_labels = token_labels(q_tokens), token_labels(k_tokens)
    text = _focus_text(values, partners, token_index, direction, other_index, q_labels, k_labels, lang)
    fig = go.Figure(_focus_heatmap(values, text, _focus_hover(values, text, direction, lang), lang))
    if click_targets:
        hh, ll = np.meshgrid(np.arange(n_heads), np.arange(n_layers))
        fig.add_trace(
            click_target_trace(hh.ravel(), ll.ravel(), np.stack([ll.ravel(), hh.ravel()], axis=1), lang=lang)
        )
        fig.update_layout(clickmode="event+select", hoverdistance=CLICK_HOVER_DISTANCE_PX)
    _lay_out_focus_grid(fig, theme.pick_title(title, text.title), n_layers, n_heads, lang)
    return fig
