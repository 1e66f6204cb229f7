"""Comparing the attention of two sentences: side-by-side heatmaps, one token's row in
both, and a ranking of heads by how much their attention changes. How their tokens are matched
is :mod:`viz.token_alignment` (its functions are importable from here too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz._validate import as_array
from viz.heatmap import HeatmapParts, category_axis, heatmap_parts
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS
from viz.stats import js_divergence
from viz.token_alignment import align_tokens, find_query, pick_shared_token, query_key_tokens, shared_tokens
from viz.tokens import escape_text, token_label, token_labels

__all__ = [
    "ChangePairs",
    "RowDiff",
    "align_tokens",
    "change_pairs",
    "compare_heatmaps",
    "head_change",
    "head_change_table",
    "pick_shared_token",
    "rank_heads_by_change",
    "row_diff_figure",
    "shared_token_row_diff",
    "shared_tokens",
]


def _side_parts(
    pattern: np.ndarray,
    tokens: Sequence[str],
    key_tokens: Sequence[str] | None,
    mask: np.ndarray | None,
    name: str,
    *,
    max_cells: int | None,
    pool: str,
    lang: str,
) -> HeatmapParts:
    """One sentence's heatmap, coloured on the figure's shared colour axis."""
    return heatmap_parts(
        pattern,
        tokens,
        tokens if key_tokens is None else key_tokens,
        mask_2d=mask,
        coloraxis="coloraxis",
        name=name,
        max_cells=max_cells,
        pool=pool,
        lang=lang,
    )


def _add_side_by_side(fig: go.Figure, parts: list[HeatmapParts], lang: str) -> None:
    """Each sentence's traces and token axes in its own column of the subplot grid."""
    for col, part in enumerate(parts, start=1):
        for tr in part.traces:
            fig.add_trace(tr, row=1, col=col)
        fig.update_xaxes(
            category_axis(part.key_labels, label(lang, "axis.key")), tickangle=-45, row=1, col=col
        )
        fig.update_yaxes(
            category_axis(part.query_labels, label(lang, "axis.query"), reversed_=True), row=1, col=col
        )


def _compare_notes(names: tuple[str, str], parts: list[HeatmapParts], pool: str, lang: str) -> str | None:
    """The subtitle: grey is masked (when any side has a mask), and which sentence is pooled how."""
    notes = [label(lang, "note.grey_masked")] if any(p.has_mask for p in parts) else []
    for name, part in zip(names, parts, strict=True):
        if part.block > 1:
            pooled = label(lang, f"heatmap.pooled_{pool}", block=part.block)
            notes.append(label(lang, "compare.pooled_side", name=escape_text(name), pooled=pooled))
    return " · ".join(notes) if notes else None


def compare_heatmaps(
    pattern_a: np.ndarray,
    tokens_a: Sequence[str],
    pattern_b: np.ndarray,
    tokens_b: Sequence[str],
    *,
    key_tokens_a: Sequence[str] | None = None,
    key_tokens_b: Sequence[str] | None = None,
    mask_a: np.ndarray | None = None,
    mask_b: np.ndarray | None = None,
    names: tuple[str, str] | None = None,
    zmax: float = 1.0,
    title: str = "",
    max_cells: int | None = MAX_TILE_CELLS,
    pool: str = "max",
    lang: str = "en",
) -> go.Figure:
    """Two ``[query, key]`` patterns side by side on one shared colour scale.

    ``tokens_a``/``tokens_b`` label the queries (and the keys unless ``key_tokens_*`` are
    given, e.g. for cross-attention). Masks (True = masked) are drawn grey. ``names`` (the two
    subplot titles) default to "Sentence A" and "Sentence B"; words drawn by the figure are in
    ``lang`` ("en" or "zh").

    Each panel follows the screen, not the sentence length squared: a sentence of more than
    ``max_cells`` tokens (64 by default; None = never) is pooled in square blocks of positions
    (``pool="max"`` by default, the block's strongest link; "mean" its average), labelled by
    position ranges, and the subtitle says "each cell = b × b positions" per pooled sentence.
    Sentences of up to ``max_cells`` tokens are drawn position by position.
    """
    if names is None:
        names = (label(lang, "compare.sentence_a"), label(lang, "compare.sentence_b"))
    parts = [
        _side_parts(pattern, tokens, keys, mask, name, max_cells=max_cells, pool=pool, lang=lang)
        for pattern, tokens, keys, mask, name in (
            (pattern_a, tokens_a, key_tokens_a, mask_a, "pattern_a"),
            (pattern_b, tokens_b, key_tokens_b, mask_b, "pattern_b"),
        )
    ]
    if not zmax > 0:
        raise ValueError(f"zmax must be positive, got {zmax}")
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=[escape_text(n) for n in names], horizontal_spacing=0.12
    )
    _add_side_by_side(fig, parts, lang)
    n = max(max(len(p.query_labels), len(p.key_labels)) for p in parts)
    cell = theme.cell_size_px(n)
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "compare.title")),
        subtitle=_compare_notes(names, parts, pool, lang),
        height=max(420, cell * n + 260),
        width=max(900, 2 * cell * n + 360),
    )
    fig.update_layout(
        coloraxis={
            "colorscale": theme.SEQUENTIAL,
            "cmin": 0.0,
            "cmax": float(zmax),
            "colorbar": theme.colorbar(label(lang, "value.attention_weight")),
        },
        margin={"b": 130},
    )
    return fig


@dataclass
class RowDiff:
    """One token's attention row in sentence A and in sentence B.

    ``diff`` is ``row_b − row_a`` over the key tokens present in both (``shared_keys``,
    matched by :func:`align_tokens`), at positions ``shared_index_a`` / ``shared_index_b``.
    """

    token: str
    query_index_a: int
    query_index_b: int
    keys_a: list[str]
    keys_b: list[str]
    row_a: np.ndarray
    row_b: np.ndarray
    shared_keys: list[str]
    shared_index_a: np.ndarray
    shared_index_b: np.ndarray
    diff: np.ndarray


def shared_token_row_diff(
    pattern_a_2d: np.ndarray,
    tokens_a: Sequence[str],
    pattern_b_2d: np.ndarray,
    tokens_b: Sequence[str],
    token: str,
    *,
    key_tokens_a: Sequence[str] | None = None,
    key_tokens_b: Sequence[str] | None = None,
    occurrence: int = 0,
) -> RowDiff:
    """The attention row of ``token`` (its ``occurrence``-th appearance as a query) in A and
    in B, and ``B − A`` over the keys present in both sentences. See :class:`RowDiff`."""
    a = as_array(pattern_a_2d, 2, "pattern_a")
    b = as_array(pattern_b_2d, 2, "pattern_b")
    qa, ka = query_key_tokens(a, tokens_a, key_tokens_a, "pattern_a", "A")
    qb, kb = query_key_tokens(b, tokens_b, key_tokens_b, "pattern_b", "B")
    ia = find_query(qa, token, occurrence, "A")
    ib = find_query(qb, token, occurrence, "B")
    pairs = align_tokens(ka, kb)
    idx_a = np.array([i for i, _ in pairs], dtype=np.int64)
    idx_b = np.array([j for _, j in pairs], dtype=np.int64)
    row_a = a[ia].copy()
    row_b = b[ib].copy()
    return RowDiff(
        token=token,
        query_index_a=ia,
        query_index_b=ib,
        keys_a=ka,
        keys_b=kb,
        row_a=row_a,
        row_b=row_b,
        shared_keys=[ka[i] for i in idx_a],
        shared_index_a=idx_a,
        shared_index_b=idx_b,
        diff=(row_b[idx_b] - row_a[idx_a]).astype(np.float32),
    )


def row_diff_figure(
    rd: RowDiff,
    *,
    names: tuple[str, str] = ("A", "B"),
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Three bar charts: the token's row in A, in B, and ``B − A`` over the shared keys.

    Words drawn by the figure are in ``lang`` ("en" or "zh"); ``names`` are drawn as given."""
    na, nb = (escape_text(n) for n in names)
    tok = token_label(rd.token)
    fig = make_subplots(
        rows=3,
        cols=1,
        vertical_spacing=0.16,
        subplot_titles=[
            label(lang, "rowdiff.attends_to", name=na, token=tok),
            label(lang, "rowdiff.attends_to", name=nb, token=tok),
            label(lang, "rowdiff.change", a=na, b=nb),
        ],
    )
    weight_name = label(lang, "value.weight")
    key_hover = label(lang, "hover.key_token", token="%{customdata}")
    for row, (weights, keys) in enumerate(((rd.row_a, rd.keys_a), (rd.row_b, rd.keys_b)), start=1):
        labels = token_labels(keys)
        fig.add_trace(
            go.Bar(
                x=np.arange(len(keys), dtype=np.int32),
                y=weights,
                marker_color=theme.ACCENT,
                customdata=labels,
                hovertemplate=key_hover
                + "<br>"
                + label(lang, "hover.value", name=weight_name, value="%{y:.3f}")
                + "<extra></extra>",
                showlegend=False,
            ),
            row=row,
            col=1,
        )
        fig.update_xaxes(theme.token_axis(labels, ""), tickangle=-45, row=row, col=1)
        fig.update_yaxes(title_text=weight_name, range=[0, 1], row=row, col=1)
    shared = token_labels(rd.shared_keys)
    fig.add_trace(
        go.Bar(
            x=np.arange(len(shared), dtype=np.int32),
            y=rd.diff,
            marker_color=np.where(rd.diff >= 0, theme.ACCENT, theme.NEGATIVE).tolist(),
            customdata=shared,
            hovertemplate=key_hover
            + "<br>"
            + label(lang, "hover.value", name=label(lang, "value.change"), value="%{y:+.3f}")
            + "<extra></extra>",
            showlegend=False,
        ),
        row=3,
        col=1,
    )
    fig.update_xaxes(theme.token_axis(shared, label(lang, "axis.key_token")), tickangle=-45, row=3, col=1)
    lim = max(0.05, float(np.abs(rd.diff).max()) * 1.1) if rd.diff.size else 1.0
    fig.update_yaxes(
        title_text=label(lang, "axis.delta_weight"),
        range=[-lim, lim],
        zeroline=True,
        zerolinecolor="#555",
        row=3,
        col=1,
    )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "rowdiff.title", token=tok)),
        height=860,
        width=max(640, 34 * max(len(rd.keys_a), len(rd.keys_b)) + 240),
    )
    return fig


def rank_heads_by_change(
    patterns_a: np.ndarray,
    tokens_a: Sequence[str],
    patterns_b: np.ndarray,
    tokens_b: Sequence[str],
    token: str | None = None,
    *,
    key_tokens_a: Sequence[str] | None = None,
    key_tokens_b: Sequence[str] | None = None,
    occurrence: int = 0,
    lang: str = "en",
) -> pd.DataFrame:
    """Rank heads by how much their attention changes between sentence A and sentence B.

    Definition: key tokens present in both sentences are paired (:func:`align_tokens`). For a
    query token present in both, take its attention row in A and in B, keep only the paired
    keys, renormalise each to sum to 1 and compute the Jensen-Shannon divergence (nats,
    0 = same distribution over the shared keys, at most log 2 ≈ 0.693). With ``token`` the
    score is that for ``token`` (its ``occurrence``-th appearance); without it, the mean over
    all query tokens present in both. Rows with no weight on the shared keys are skipped.

    Returns columns ``rank`` (1 = most changed), ``layer``, ``head``, ``js_divergence``,
    ``n_queries`` (rows averaged), sorted by decreasing divergence (NaN last). The column names
    are the same in every language (the data's identifiers); show them with
    ``viz.column_labels("rank_heads_by_change", lang)``.
    """
    a = as_array(patterns_a, 4, "patterns_a")
    b = as_array(patterns_b, 4, "patterns_b")
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"patterns_a has {a.shape[:2]} (layer, head) but patterns_b has {b.shape[:2]}")
    qa, ka = query_key_tokens(a, tokens_a, key_tokens_a, "patterns_a", "A")
    qb, kb = query_key_tokens(b, tokens_b, key_tokens_b, "patterns_b", "B")
    pairs = change_pairs(qa, ka, qb, kb, token, occurrence)
    score, n = head_change(a[:, :, pairs.query_a], b[:, :, pairs.query_b], pairs)
    return head_change_table(score, n)


@dataclass(frozen=True)
class ChangePairs:
    """Which rows and columns of A and of B :func:`rank_heads_by_change` compares (paired positions)."""

    query_a: np.ndarray
    query_b: np.ndarray
    key_a: np.ndarray
    key_b: np.ndarray


def change_pairs(
    qa: Sequence[str], ka: Sequence[str], qb: Sequence[str], kb: Sequence[str], token: str | None = None,
    occurrence: int = 0,
) -> ChangePairs:
    """The query rows (``token``'s, or every shared query) and the shared key columns of A and B."""
    key_pairs = align_tokens(ka, kb)
    if not key_pairs:
        raise ValueError("the two sentences share no key tokens, so their attention cannot be compared")
    if token is not None:
        query_pairs = [(find_query(qa, token, occurrence, "A"), find_query(qb, token, occurrence, "B"))]
    else:
        query_pairs = align_tokens(qa, qb)
        if not query_pairs:
            raise ValueError("the two sentences share no query tokens")
    return ChangePairs(*(np.array(ix, dtype=np.int64) for ix in (
        [i for i, _ in query_pairs], [j for _, j in query_pairs],
        [i for i, _ in key_pairs], [j for _, j in key_pairs])))


def head_change(rows_a: np.ndarray, rows_b: np.ndarray, pairs: ChangePairs) -> tuple[np.ndarray, np.ndarray]:
    """(mean Jensen-Shannon divergence, rows averaged) per head of the paired query rows
    ``[..., head, query_pair, key]`` of A and B: one layer's heads, or all of them."""
    rows_a = np.nan_to_num(rows_a[..., pairs.key_a].astype(np.float64), nan=0.0)  # [..., H, nq, nk]
    rows_b = np.nan_to_num(rows_b[..., pairs.key_b].astype(np.float64), nan=0.0)
    usable = (rows_a.sum(-1) > 0) & (rows_b.sum(-1) > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        js = np.nan_to_num(js_divergence(rows_a, rows_b, axis=-1), nan=0.0)
    n = usable.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(n > 0, np.where(usable, js, 0.0).sum(-1) / np.maximum(n, 1), np.nan)
    return score, n


def head_change_table(score: np.ndarray, n: np.ndarray) -> pd.DataFrame:
    """The ranking of :func:`rank_heads_by_change` from its [layer, head] scores and row counts."""
    n_layers, n_heads = score.shape
    df = pd.DataFrame(
        {
            "layer": np.repeat(np.arange(n_layers), n_heads),
            "head": np.tile(np.arange(n_heads), n_layers),
            "js_divergence": score.reshape(-1),
            "n_queries": n.reshape(-1),
        }
    )
    df = df.sort_values("js_divergence", ascending=False, na_position="last", kind="stable").reset_index(
        drop=True
    )
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    return df
