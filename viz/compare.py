"""Comparing the attention of two sentences: side-by-side heatmaps, one token's row in
both, and a ranking of heads by how much their attention changes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz._validate import as_array, check_tokens
from viz.heatmap import category_axis, heatmap_parts
from viz.labels import label
from viz.pooling import MAX_TILE_CELLS
from viz.stats import js_divergence
from viz.tokens import escape_text, token_label, token_labels


def align_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of positions whose tokens are equal, matched as a multiset in order.

    The n-th occurrence of a token in A is paired with its n-th occurrence in B; tokens
    without a partner are left out. Pairs are in A's order.
    """
    positions_b: dict[str, list[int]] = defaultdict(list)
    for j, t in enumerate(tokens_b):
        positions_b[t].append(j)
    seen: dict[str, int] = defaultdict(int)
    pairs: list[tuple[int, int]] = []
    for i, t in enumerate(tokens_a):
        n = seen[t]
        seen[t] += 1
        if n < len(positions_b[t]):
            pairs.append((i, positions_b[t][n]))
    return pairs


def shared_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[str]:
    """Tokens present in both sequences, in A's order, each once."""
    out: list[str] = []
    for i, _ in align_tokens(tokens_a, tokens_b):
        if tokens_a[i] not in out:
            out.append(tokens_a[i])
    return out


def pick_shared_token(shared: Sequence[str], word: str, special: Collection[str] = ()) -> str:
    """The shared token that best stands for ``word`` (e.g. a preset's 苹果 or "bank").

    In order: the token itself; a token equal to the word once the "▁" word marker and case are
    ignored; a token containing the word; the first piece of a word the tokenizer split
    (苹果 -> 苹 果); else the first shared token that is not special. Raises ValueError if
    nothing is shared.
    """
    if not shared:
        raise ValueError("the two sentences share no token")
    word = (word or "").strip()
    if word:
        if word in shared:
            return word
        for t in shared:
            if t.replace("▁", "").strip().lower() == word.lower():
                return t
        for t in shared:
            if word.lower() in t.lower():
                return t
        for t in shared:
            piece = t.replace("▁", "").strip()
            if piece and piece in word and t not in special:
                return t
    content = [t for t in shared if t not in special]
    return content[0] if content else shared[0]


def _find(tokens: Sequence[str], token: str, occurrence: int, which: str) -> int:
    hits = [i for i, t in enumerate(tokens) if t == token]
    if not hits:
        raise ValueError(f"token {token!r} does not occur in the {which} query tokens")
    if not 0 <= occurrence < len(hits):
        raise ValueError(
            f"token {token!r} occurs {len(hits)} time(s) in {which}; occurrence={occurrence} is out of range"
        )
    return hits[occurrence]


def _query_key_tokens(
    arr: np.ndarray, tokens: Sequence[str], key_tokens: Sequence[str] | None, array_name: str, side: str
) -> tuple[list[str], list[str]]:
    """Checked (query tokens, key tokens) of one sentence's pattern; its last two axes are query, key.

    Key tokens default to the query tokens (self-attention)."""
    queries = check_tokens(
        tokens,
        arr.shape[-2],
        array_name=array_name,
        axis_name="query rows",
        token_name=f"tokens_{side.lower()}",
    )
    keys = check_tokens(
        queries if key_tokens is None else key_tokens,
        arr.shape[-1],
        array_name=array_name,
        axis_name="key columns",
        token_name=f"key tokens of {side}",
    )
    return queries, keys


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
        heatmap_parts(
            pattern_a,
            tokens_a,
            tokens_a if key_tokens_a is None else key_tokens_a,
            mask_2d=mask_a,
            coloraxis="coloraxis",
            name="pattern_a",
            max_cells=max_cells,
            pool=pool,
            lang=lang,
        ),
        heatmap_parts(
            pattern_b,
            tokens_b,
            tokens_b if key_tokens_b is None else key_tokens_b,
            mask_2d=mask_b,
            coloraxis="coloraxis",
            name="pattern_b",
            max_cells=max_cells,
            pool=pool,
            lang=lang,
        ),
    ]
    if not zmax > 0:
        raise ValueError(f"zmax must be positive, got {zmax}")
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=[escape_text(n) for n in names], horizontal_spacing=0.12
    )
    for col, part in enumerate(parts, start=1):
        for tr in part.traces:
            fig.add_trace(tr, row=1, col=col)
        fig.update_xaxes(
            category_axis(part.key_labels, label(lang, "axis.key")), tickangle=-45, row=1, col=col
        )
        fig.update_yaxes(
            category_axis(part.query_labels, label(lang, "axis.query"), reversed_=True), row=1, col=col
        )
    n = max(max(len(p.query_labels), len(p.key_labels)) for p in parts)
    cell = theme.cell_size_px(n)
    notes = [label(lang, "note.grey_masked")] if any(p.has_mask for p in parts) else []
    for name, part in zip(names, parts, strict=True):
        if part.block > 1:
            pooled = label(lang, f"heatmap.pooled_{pool}", block=part.block)
            notes.append(label(lang, "compare.pooled_side", name=escape_text(name), pooled=pooled))
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "compare.title")),
        subtitle=" · ".join(notes) if notes else None,
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
    qa, ka = _query_key_tokens(a, tokens_a, key_tokens_a, "pattern_a", "A")
    qb, kb = _query_key_tokens(b, tokens_b, key_tokens_b, "pattern_b", "B")
    ia = _find(qa, token, occurrence, "A")
    ib = _find(qb, token, occurrence, "B")
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
    qa, ka = _query_key_tokens(a, tokens_a, key_tokens_a, "patterns_a", "A")
    qb, kb = _query_key_tokens(b, tokens_b, key_tokens_b, "patterns_b", "B")
    key_pairs = align_tokens(ka, kb)
    if not key_pairs:
        raise ValueError("the two sentences share no key tokens, so their attention cannot be compared")
    if token is not None:
        query_pairs = [(_find(qa, token, occurrence, "A"), _find(qb, token, occurrence, "B"))]
    else:
        query_pairs = align_tokens(qa, qb)
        if not query_pairs:
            raise ValueError("the two sentences share no query tokens")
    kia = np.array([i for i, _ in key_pairs])
    kib = np.array([j for _, j in key_pairs])
    qia = np.array([i for i, _ in query_pairs])
    qib = np.array([j for _, j in query_pairs])
    rows_a = np.nan_to_num(a[:, :, qia][..., kia].astype(np.float64), nan=0.0)  # [L, H, nq, nk]
    rows_b = np.nan_to_num(b[:, :, qib][..., kib].astype(np.float64), nan=0.0)
    usable = (rows_a.sum(-1) > 0) & (rows_b.sum(-1) > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        js = np.nan_to_num(js_divergence(rows_a, rows_b, axis=-1), nan=0.0)
    n = usable.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(n > 0, np.where(usable, js, 0.0).sum(-1) / np.maximum(n, 1), np.nan)
    n_layers, n_heads = a.shape[:2]
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
