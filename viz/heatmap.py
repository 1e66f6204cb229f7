"""Single-head attention heatmap: which key tokens each query token attends to.

Which cells are drawn (window, gaps, pooled blocks) is :mod:`viz.heatmap_cells`; the traces and
their shared hover template are :mod:`viz.heatmap_traces`. This module puts them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_tokens
from viz.heatmap_cells import _unique as _unique  # masks.py and pitfalls.py import it from here
from viz.heatmap_cells import (
    check_range,
    colour_top,
    hidden_cells,
    scores_and_mask,
    shown_cells,
    weights_with_gaps,
)
from viz.heatmap_traces import heatmap_traces
from viz.heatmap_traces import hover_template as hover_template  # importable from here as before
from viz.labels import label
from viz.pooling import POOLS
from viz.tokens import escape_text

#: Shown cells up to which the pre-softmax score travels with each cell for hover (float32, 4
#: bytes + base64). Weight and score for all 512 x 512 cells would be ~3.2 MB of JSON; above
#: this the hover shows the weight only and a window brings the scores back.
MAX_SCORE_CELLS = 200_000


def dimmed_ticks(labels: Sequence[str], dimmed: Sequence[bool] | None) -> list[str]:
    """Tick texts of already-escaped ``labels``, greyed where ``dimmed``: the span is the only markup
    added, so no token text becomes HTML."""
    if dimmed is None:
        return list(labels)
    return [f'<span style="color:{theme.DIMMED_TICK}">{lab}</span>' if dim else lab
            for lab, dim in zip(labels, dimmed, strict=True)]


def category_axis(labels: Sequence[str], title: str, *, reversed_: bool = False,
                  dimmed: Sequence[bool] | None = None) -> dict[str, object]:
    """Axis settings for heatmaps whose ``x``/``y`` are the (distinct) token labels.

    A category axis keeps cell ``i`` at index ``i`` (so ranges read as before) while hover can
    name the token with ``%{x}``/``%{y}``; every label is a tick, as on the integer axes of
    :func:`viz.theme.token_axis`. Labels where ``dimmed`` is True are drawn grey."""
    n = len(labels)
    return {
        "type": "category",
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": list(labels),
        "ticktext": dimmed_ticks(labels, dimmed),
        "tickfont": {"size": theme.tick_font_size(n)},
        "range": [n - 0.5, -0.5] if reversed_ else [-0.5, n - 0.5],
        "showgrid": False,
        "zeroline": False,
    }


@dataclass
class HeatmapParts:
    """Validated pieces of a token x token heatmap (see :func:`heatmap_parts`)."""

    traces: list[go.Heatmap]
    query_labels: list[str]
    key_labels: list[str]
    has_mask: bool
    hidden: int = 0  # cells hidden by threshold / keep_share inside the window
    window: tuple[tuple[int, int], tuple[int, int]] | None = None  # ((q0, q1), (k0, k1)), stop excluded
    shape: tuple[int, int] | None = None  # (n_q, n_k) of the whole pattern
    scores_dropped: bool = False  # scores given but left out of hover (window above max_score_cells)
    block: int = 1  # positions per cell side (1 = every position is a cell)


def heatmap_parts(
    pattern_2d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    scores_2d: np.ndarray | None = None,
    mask_2d: np.ndarray | None = None,
    zmax: float | None = 1.0,
    value_name: str | None = None,
    coloraxis: str | None = None,
    name: str = "pattern",
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    threshold: float | None = None,
    keep_share: float | None = None,
    max_score_cells: int = MAX_SCORE_CELLS,
    max_cells: int | None = None,
    pool: str = "max",
    lang: str = "en",
) -> HeatmapParts:
    """Validate inputs and build the traces of a token x token heatmap.

    Returns the optional grey mask overlay (a 0/1 uint8 heatmap, transparent where 0) and
    the weight heatmap (float32, NaN where masked or hidden), plus the escaped axis labels
    (of the window only). ``value_name`` (plain text, escaped here) defaults to "attention
    weight" in ``lang``. ``query_range``/``key_range`` (``(start, stop)``, stop excluded) cut a
    window out of the pattern; ``threshold``/``keep_share``: see :func:`hidden_cells` (chosen on
    whole rows, before the window is cut). The traces' ``x``/``y`` are the key/query labels
    on category axes, so one hover template serves every cell.

    ``max_cells`` (None: never): when the window has more than that many cells a side, square
    blocks of positions are pooled into one cell (``pool`` "max" or "mean" of the shown
    weights, see :func:`viz.pooling.pool_blocks`; a block is masked only when all of it is);
    the labels become position ranges ("8–15"), scores leave the hover and ``block`` says how
    many positions a cell side covers. Windows within ``max_cells`` are drawn cell for cell.
    """
    if pool not in POOLS:
        raise ValueError(f"pool must be 'max' or 'mean', got {pool!r}")
    if value_name is None:
        value_name = label(lang, "value.attention_weight")
    p = as_array(pattern_2d, 2, name)
    n_q, n_k = p.shape
    q_tokens = check_tokens(
        query_tokens, n_q, array_name=name, axis_name="query rows", token_name="query tokens"
    )
    k_tokens = check_tokens(
        key_tokens, n_k, array_name=name, axis_name="key columns", token_name="key tokens"
    )
    scores, mask = scores_and_mask(p, scores_2d, mask_2d, name)
    hidden = hidden_cells(p, mask, threshold=threshold, keep_share=keep_share)
    window = (check_range(query_range, n_q, "query_range"), check_range(key_range, n_k, "key_range"))
    (q0, q1), (k0, k1) = window
    z = weights_with_gaps(p, mask, hidden)
    zmax_used = colour_top(z[q0:q1, k0:k1], zmax)
    cells = shown_cells(z, mask, q_tokens, k_tokens, window, max_cells, pool)
    scores_dropped = scores is not None and (cells.block > 1 or (q1 - q0) * (k1 - k0) > max_score_cells)
    if scores is not None:
        scores = None if scores_dropped else scores[q0:q1, k0:k1]
    if cells.block > 1:
        value_name = label(lang, f"value.in_block_{pool}", name=value_name)
    n_hidden = int(hidden[q0:q1, k0:k1].sum())
    traces = heatmap_traces(
        cells, scores, value_name, any_hidden=n_hidden > 0, zmax=zmax_used, coloraxis=coloraxis, lang=lang
    )
    return HeatmapParts(
        traces=traces,
        query_labels=cells.query_labels,
        key_labels=cells.key_labels,
        has_mask=cells.has_mask,
        hidden=n_hidden,
        window=window,
        shape=(n_q, n_k),
        scores_dropped=scores_dropped,
        block=cells.block,
    )


def _heatmap_notes(
    parts: HeatmapParts,
    subtitle: str | None,
    threshold: float | None,
    keep_share: float | None,
    pool: str,
    lang: str,
) -> str | None:
    """The subtitle: the caller's own (escaped), then what the figure leaves out or pools."""
    notes = [escape_text(subtitle)] if subtitle else []
    if parts.has_mask:
        notes.append(label(lang, "note.grey_masked_cannot_attend"))
    (q0, q1), (k0, k1) = parts.window
    if (q1 - q0, k1 - k0) != parts.shape:
        notes.append(
            label(
                lang,
                "note.window",
                q0=q0,
                q1=q1 - 1,
                n_q=parts.shape[0],
                k0=k0,
                k1=k1 - 1,
                n_k=parts.shape[1],
            )
        )
    if threshold is not None:
        notes.append(label(lang, "note.hidden_below", threshold=f"{threshold:g}"))
    elif keep_share is not None:
        notes.append(label(lang, "note.hidden_share", share=f"{keep_share:.0%}"))
    if parts.block > 1:
        notes.append(label(lang, f"heatmap.pooled_{pool}", block=parts.block))
    elif parts.scores_dropped:
        notes.append(label(lang, "note.scores_in_window", cells=f"{MAX_SCORE_CELLS:,}"))
    return " · ".join(notes) if notes else None


def _window_dims(parts: HeatmapParts, dimmed: Sequence[bool] | None, axis: int) -> list[bool] | None:
    """``dimmed`` (one flag per position of ``axis``) for the drawn window's labels; None when cells
    are pooled blocks (a block's range label is no one token)."""
    if dimmed is None or parts.block > 1:
        return None
    flags = [bool(d) for d in dimmed]
    if len(flags) != parts.shape[axis]:
        raise ValueError(f"dimmed has {len(flags)} entries but the pattern {parts.shape[axis]} on that axis")
    start, stop = parts.window[axis]
    return flags[start:stop]


Dims = tuple[Sequence[bool] | None, Sequence[bool] | None]  # (queries, keys): one flag per position


def _heatmap_layout(parts: HeatmapParts, title: str, subtitle: str | None, lang: str,
                    dimmed: Dims = (None, None)) -> dict[str, object]:
    """Themed layout sized to the cells, keys along the bottom, queries top to bottom; the tick
    labels ``dimmed`` ((queries, keys), one flag per position) are grey."""
    n_q, n_k = len(parts.query_labels), len(parts.key_labels)
    cell = theme.cell_size_px(max(n_q, n_k))
    layout = theme.theme_layout(
        theme.pick_title(title, label(lang, "heatmap.title")),
        subtitle=subtitle,
        height=max(380, cell * n_q + 230),
        width=max(480, cell * n_k + 260),
    )
    layout.update(
        xaxis={
            **category_axis(parts.key_labels, label(lang, "axis.key_attended"),
                            dimmed=_window_dims(parts, dimmed[1], 1)),
            "tickangle": -45,
            "constrain": "domain",
        },
        yaxis={
            **category_axis(parts.query_labels, label(lang, "axis.query_attending"), reversed_=True,
                            dimmed=_window_dims(parts, dimmed[0], 0)),
            "scaleanchor": "x",
            "constrain": "domain",
        },
    )
    layout["margin"] = {**layout["margin"], "b": 130}
    return layout


def attention_heatmap(
    pattern_2d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    scores_2d: np.ndarray | None = None,
    mask_2d: np.ndarray | None = None,
    title: str = "",
    zmax: float | None = 1.0,
    *,
    value_name: str | None = None,
    subtitle: str | None = None,
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    threshold: float | None = None,
    keep_share: float | None = None,
    max_cells: int | None = None,
    pool: str = "max",
    lang: str = "en",
    dimmed_queries: Sequence[bool] | None = None,
    dimmed_keys: Sequence[bool] | None = None,
) -> go.Figure:
    """Heatmap of one head's attention pattern ``[query, key]``.

    Rows are query tokens (first token at the top), columns are key tokens. Colour is the
    attention weight on a fixed ``[0, zmax]`` scale (``zmax=None``: scale to this head's
    maximum). Masked cells (from ``mask_2d``, True = masked, or ``-inf`` entries of
    ``scores_2d``) are drawn in grey by a separate 0/1 overlay trace and are NaN (gaps) in
    the weight trace, so they cannot be mistaken for small weights. Hover shows query token,
    key token, weight and the pre-softmax score (or "masked").

    The weight trace is always the last trace of the figure. ``title`` and ``subtitle`` are
    HTML-escaped (they may quote user tokens). ``value_name`` (colour bar and hover) defaults to
    "attention weight"; every word the figure draws itself is in ``lang`` ("en" or "zh").

    Payload: one float32 weight (and one float32 score) per cell and ONE hover template; the
    query/key labels travel once, as the category ``y``/``x`` of the traces.

    Detail on long inputs, all optional: ``query_range``/``key_range`` (``(start, stop)``, stop
    excluded) draw only that window of the pattern (labels keep their positions' subscripts);
    ``threshold`` hides every weight below it; ``keep_share`` (e.g. 0.9) keeps, per query row,
    only the strongest links that together hold that share of the row's weight (see
    :func:`hidden_cells`). Hidden cells are drawn empty (white, no colour) and their hover
    says "not shown"; masked cells stay grey. The subtitle says what is windowed or hidden.
    Above :data:`MAX_SCORE_CELLS` shown cells the pre-softmax score is left out of hover (the
    subtitle says so; a smaller window brings it back): weights and tokens are always sent.

    ``max_cells`` (default None: every position drawn) pools windows with more than that many
    cells a side into blocks (``pool`` "max" or "mean"; see :func:`heatmap_parts`); the
    subtitle then says "each cell = b × b positions" and which pooling. Figures that are not
    one head (mean over heads, rollout, comparisons) use it to bound their payload.

    ``dimmed_queries``/``dimmed_keys`` (one bool per row / column) grey those tick labels: tokens
    the model reads that the user did not write (e5's prefix). Pooled blocks are never greyed.
    """
    parts = heatmap_parts(
        pattern_2d,
        query_tokens,
        key_tokens,
        scores_2d=scores_2d,
        mask_2d=mask_2d,
        zmax=zmax,
        value_name=value_name,
        query_range=query_range,
        key_range=key_range,
        threshold=threshold,
        keep_share=keep_share,
        max_cells=max_cells,
        pool=pool,
        lang=lang,
    )
    subtitle = _heatmap_notes(parts, subtitle, threshold, keep_share, pool, lang)
    layout = _heatmap_layout(parts, title, subtitle, lang, (dimmed_queries, dimmed_keys))
    # The main page's figure, built on every new sentence: one construction, no per-property
    # validation (plotly's own templates are built the same way). Its traces and layout are
    # checked by the viz tests instead; validating cost ~10 ms of a ~30 ms build.
    fig = go.Figure(parts.traces, layout, _validate=False)
    return fig
