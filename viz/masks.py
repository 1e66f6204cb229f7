"""Masks: boolean query x key matrices, what the softmax makes of masked cells, and the decoder's
attention with and without its causal mask. Pure plotly and numpy; every word from ``viz.labels``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.heatmap import _unique, category_axis
from viz.labels import label
from viz.numbers import cell_texts
from viz.pooling import MAX_TILE_CELLS, block_ranges, block_size, pool_blocks, pool_mask, range_text
from viz.tokens import escape_text, token_labels

__all__ = ["future_weight", "mask_matrix", "pattern_with_future", "pattern_with_row_sums",
           "row_sums", "token_probability_bars"]

#: Up to this many cells a side every cell prints its number.
CELL_TEXT_MAX = 16
#: Open (attendable) cells of a mask matrix: white, so the grey of masked cells stands out.
OPEN_COLOR = "#ffffff"
#: Outline of the future (keys after the query) when the causal mask is off.
FUTURE_COLOR = "#cb181d"
FUTURE_FILL = "rgba(203,24,29,0.07)"


def _labels(tokens: Sequence[str], n: int, what: str) -> list[str]:
    tokens = check_tokens(tokens, n, array_name="matrix", axis_name=f"{what}s", token_name=f"{what} tokens")
    return _unique(token_labels(tokens))


def _block(n_q: int, n_k: int, max_cells: int | None) -> int:
    """Positions per cell side: 1 up to ``max_cells`` a side (None: never pooled)."""
    return 1 if max_cells is None else block_size(n_q, n_k, max_cells)


def _block_labels(n: int, block: int) -> list[str]:
    """Position ranges ("8–15") of the blocks along an axis of ``n`` positions."""
    return [range_text(a, b) for a, b in block_ranges(n, block)]


def _layout(title: str, subtitle: str | None, q_labels: list[str], k_labels: list[str], lang: str,
            *, right_margin: int = 60, query_title: str | None = None,
            key_title: str | None = None) -> dict[str, object]:
    n_q, n_k = len(q_labels), len(k_labels)
    cell = theme.cell_size_px(max(n_q, n_k))
    layout = theme.theme_layout(title, subtitle=subtitle, height=max(380, cell * n_q + 230),
                                width=max(460, cell * n_k + 200 + right_margin))
    layout.update(
        xaxis={**category_axis(k_labels, key_title or label(lang, "axis.key_attended")), "tickangle": -45,
               "constrain": "domain"},
        yaxis={**category_axis(q_labels, query_title or label(lang, "axis.query_attending"), reversed_=True),
               "scaleanchor": "x", "constrain": "domain"},
    )
    layout["margin"] = {**layout["margin"], "b": 130, "r": right_margin}
    return layout


def _pooled_mask_trace(m: np.ndarray, block: int, q_labels: list[str], k_labels: list[str],
                       lang: str) -> go.Heatmap:
    """Blocks of ``block`` positions a side, each drawn by the share of it that is masked."""
    share = pool_blocks(m.astype(np.float32), block, "mean")  # [query_block, key_block] in [0, 1]
    return go.Heatmap(
        z=share,
        x=k_labels,
        y=q_labels,
        colorscale=[[0.0, OPEN_COLOR], [1.0, theme.MASK_COLOR]],
        zmin=0,
        zmax=1,
        showscale=False,
        xgap=1,
        ygap=1,
        hovertemplate=label(lang, "hover.query_key_blocks", query="%{y}", key="%{x}") + "<br>"
        + label(lang, "masks.cell_share_masked", share="%{z:.0%}") + "<extra></extra>",
        name="mask",
    )


def _cell_mask_trace(m: np.ndarray, q_labels: list[str], k_labels: list[str], lang: str) -> go.Heatmap:
    """One cell per query and key: grey and "−∞" (printed up to 16 a side) where masked, white where open."""
    hover_cell = np.where(m, label(lang, "masks.cell_masked"), label(lang, "masks.cell_open"))
    small = max(m.shape) <= CELL_TEXT_MAX
    return go.Heatmap(
        z=m.astype(np.uint8),
        x=k_labels,
        y=q_labels,
        colorscale=[[0.0, OPEN_COLOR], [0.5, OPEN_COLOR], [0.5, theme.MASK_COLOR], [1.0, theme.MASK_COLOR]],
        zmin=0,
        zmax=1,
        showscale=False,
        xgap=1,
        ygap=1,
        text=np.where(m, "−∞", "") if small else None,
        texttemplate="%{text}" if small else None,
        customdata=hover_cell,
        hovertemplate=label(lang, "hover.query_key", query="%{y}", key="%{x}")
        + "<br>%{customdata}<extra></extra>",
        name="mask",
    )


def mask_matrix(
    mask_2d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    subtitle: str | None = None,
    query_title: str | None = None,
    key_title: str | None = None,
    max_cells: int | None = MAX_TILE_CELLS,
    width: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """A boolean mask ``[query, key]`` as a matrix: True (grey, "−∞" in the cell) = masked, the query
    may not look at that key; False (white) = open. The trace's ``z`` is the mask as 0/1 (uint8).

    Above ``max_cells`` positions a side (64 by default; None = never) square blocks of positions
    are pooled: ``z`` is then the share of each block that is masked (float32,
    ``pool_blocks(mask, b, "mean")``), drawn from white (open) to grey (all masked), the labels are
    position ranges and the subtitle says so.

    ``title``/``subtitle`` are escaped (they may quote tokens); ``query_title``/``key_title`` replace
    the axis titles (plain text, escaped). ``width`` (px): the figure drawn that wide, its height
    following the square cells, for a narrow column (masks side by side at one scale, no blank band).
    """
    m = np.asarray(mask_2d)
    if m.ndim != 2 or not m.size:
        raise ValueError(f"mask must be a non-empty 2-D [query, key] array, got shape {m.shape}")
    m = check_mask(m, m.shape, "mask")
    n_q, n_k = m.shape
    q_labels, k_labels = _labels(query_tokens, n_q, "query"), _labels(key_tokens, n_k, "key")
    block = _block(n_q, n_k, max_cells)
    notes = [escape_text(subtitle)] if subtitle else []
    if block > 1:
        q_labels, k_labels = _block_labels(n_q, block), _block_labels(n_k, block)
        trace = _pooled_mask_trace(m, block, q_labels, k_labels, lang)
        notes.append(label(lang, "masks.pooled_mask", block=block))
    else:
        trace = _cell_mask_trace(m, q_labels, k_labels, lang)
        notes.append(label(lang, "masks.legend"))
    layout = _layout(theme.pick_title(title, label(lang, "masks.mask_title")), " · ".join(notes),
                     q_labels, k_labels, lang,
                     query_title=escape_text(query_title) if query_title else None,
                     key_title=escape_text(key_title) if key_title else None)
    layout["plot_bgcolor"] = "#dddddd"  # the gaps between cells: a light grid
    fig = go.Figure([trace], layout)
    if width is not None:  # the title wrapped to the width first: its lines take from the height
        fig.update_layout(width=width)
        theme.fit_title(fig)
        margin = fig.layout.margin
        cell = max(1.0, (width - margin.l - margin.r) / len(k_labels))
        fig.update_layout(height=int(round(cell * len(q_labels) + margin.t + margin.b)))
    return fig


def row_sums(pattern_2d: np.ndarray) -> np.ndarray:
    """Sum of each row ``[query]`` (float64): 1 for every row of a softmax over keys."""
    return as_array(pattern_2d, 2, "pattern").astype(np.float64).sum(axis=1)


def future_weight(pattern_2d: np.ndarray) -> np.ndarray:
    """Weight each query row puts on later keys (key > query) ``[query]``, float64."""
    p = as_array(pattern_2d, 2, "pattern").astype(np.float64)
    return np.triu(p, 1).sum(axis=1)


def _weight_trace(p: np.ndarray, q_labels: list[str], k_labels: list[str], hover_head: str, weight: str,
                  small: bool, lang: str) -> go.Heatmap:
    """The weights (trace "pattern"), their numbers printed in the cells when ``small``."""
    return go.Heatmap(
        z=p,  # float32, exactly the recorded weights (0 where masked), or their block maxima
        x=k_labels,
        y=q_labels,
        colorscale=theme.SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        showscale=False,
        text=cell_texts(p) if small else None,
        texttemplate="%{text}" if small else None,
        hovertemplate=label(lang, hover_head, query="%{y}", key="%{x}") + "<br>"
        + label(lang, "hover.value", name=weight, value="%{z:.6f}") + "<extra></extra>",
        name="pattern",
    )


def _masked_overlay(p: np.ndarray, m: np.ndarray, q_labels: list[str], k_labels: list[str], hover_head: str,
                    small: bool, lang: str) -> go.Heatmap:
    """Grey on top of the masked cells only (gaps elsewhere): the cell prints the recorded weight."""
    return go.Heatmap(
        z=np.where(m, 1.0, np.nan).astype(np.float32),
        x=k_labels,
        y=q_labels,
        colorscale=[[0.0, theme.MASK_COLOR], [1.0, theme.MASK_COLOR]],
        zmin=0,
        zmax=1,
        showscale=False,
        hoverongaps=False,
        text=cell_texts(p, blank=~m) if small else None,
        texttemplate="%{text}" if small else None,
        customdata=p,
        hovertemplate=label(lang, hover_head, query="%{y}", key="%{x}") + "<br>"
        + label(lang, "masks.hover_masked_weight", value="%{customdata}") + "<extra></extra>",
        name="masked",
    )


def _row_note_annotations(q_labels: list[str], row_notes: list[str]) -> list[dict]:
    """Each row's note just right of the matrix, on the row's own line."""
    return [
        {"text": note, "xref": "paper", "x": 1.0, "xanchor": "left", "xshift": 8, "yref": "y", "y": q,
         "showarrow": False, "font": {"size": 13, "family": "monospace"}}
        for q, note in zip(q_labels, row_notes, strict=True)
    ]


def _future_outline(n_q: int, n_k: int) -> dict:
    """A red staircase around the cells with key > query (category axes: cell i spans i ± 0.5)."""
    points = [(0.5, -0.5)]
    for i in range(min(n_q, n_k) - 1):
        points += [(i + 0.5, i + 0.5), (i + 1.5, i + 0.5)]
    points += [(n_k - 0.5, min(n_q, n_k) - 1.5), (n_k - 0.5, -0.5)]
    path = "M " + " L ".join(f"{x},{y}" for x, y in points) + " Z"
    return {"type": "path", "path": path, "xref": "x", "yref": "y",
            "line": {"color": FUTURE_COLOR, "width": 3}, "fillcolor": FUTURE_FILL}


def _weights_figure(
    pattern_2d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    mask_2d: np.ndarray | None,
    row_notes: list[str],
    title: str,
    notes: list[str],
    lang: str,
    outline_future: bool = False,
    block: int = 1,
) -> go.Figure:
    """The weights ``[query, key]`` with masked cells grey on top, ``row_notes`` at the rows' right
    ends and, with ``outline_future``, the future framed; pooled in blocks of ``block`` a side."""
    p = as_array(pattern_2d, 2, "pattern")
    n_q, n_k = p.shape
    q_labels, k_labels = _labels(query_tokens, n_q, "query"), _labels(key_tokens, n_k, "key")
    m = None if mask_2d is None else check_mask(mask_2d, p.shape, "mask")
    hover_head = "hover.query_key"
    weight = escape_text(label(lang, "value.attention_weight"))
    if block > 1:
        # blocks of positions: the largest recorded weight of each block, a block grey only when all
        # of it is masked (the row notes were computed on every row by the caller)
        p = pool_blocks(p, block, "max")  # [query_block, key_block]
        m = None if m is None else pool_mask(m, block)
        q_labels, k_labels = _block_labels(n_q, block), _block_labels(n_k, block)
        hover_head = "hover.query_key_blocks"
        weight = escape_text(label(lang, "value.in_block_max", name=label(lang, "value.attention_weight")))
        notes = [*notes, label(lang, "heatmap.pooled_max", block=block)]
    small = max(n_q, n_k) <= CELL_TEXT_MAX
    traces = [_weight_trace(p, q_labels, k_labels, hover_head, weight, small, lang)]
    if m is not None and m.any():
        traces.append(_masked_overlay(p, m, q_labels, k_labels, hover_head, small, lang))
        notes = [*notes, label(lang, "note.grey_masked_cannot_attend")]
    layout = _layout(title, " · ".join(notes) if notes else None, q_labels, k_labels, lang, right_margin=170)
    layout["annotations"] = _row_note_annotations(q_labels, row_notes)
    if outline_future and n_q > 1 and n_k > 1:
        layout["shapes"] = [_future_outline(n_q, n_k)]
    return go.Figure(traces, layout)


def pattern_with_row_sums(
    pattern_2d: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    mask_2d: np.ndarray | None = None,
    *,
    title: str = "",
    subtitle: str | None = None,
    max_cells: int | None = MAX_TILE_CELLS,
    lang: str = "en",
) -> go.Figure:
    """One head's recorded pattern ``[query, key]`` with every row's sum printed at its right end.

    The weight trace (named "pattern", the first trace) holds the pattern exactly as given (float32,
    so a masked cell is its recorded value, 0); masked cells (``mask_2d`` True) are drawn grey on
    top and print that value. Each row's annotation reads "Σ = 1.000000" (sum in float64).

    Above ``max_cells`` positions a side (64 by default; None = never) square blocks are pooled:
    the "pattern" trace holds ``pool_blocks(pattern, b, "max")``, the grey overlay marks blocks
    masked throughout (``pool_mask``), and each block row prints the smallest and largest sum of
    its rows ("Σ = 1.000000 … 1.000000"), still computed on every row. The subtitle says so.
    """
    sums = row_sums(pattern_2d)
    n_q, n_k = np.shape(pattern_2d)
    block = _block(n_q, n_k, max_cells)
    if block > 1:
        row_notes = [label(lang, "masks.row_sum_range", low=f"{sums[a:b + 1].min():.6f}",
                           high=f"{sums[a:b + 1].max():.6f}") for a, b in block_ranges(n_q, block)]
    else:
        row_notes = [label(lang, "masks.row_sum", value=f"{s:.6f}") for s in sums]
    notes = [escape_text(subtitle)] if subtitle else []
    return _weights_figure(pattern_2d, query_tokens, key_tokens, mask_2d, row_notes,
                           theme.pick_title(title, label(lang, "masks.padded_pattern_title")), notes, lang,
                           block=block)


def pattern_with_future(
    pattern_2d: np.ndarray,
    tokens: Sequence[str],
    mask_2d: np.ndarray | None = None,
    *,
    title: str = "",
    subtitle: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Decoder self-attention ``[query, key]`` (same tokens on both axes) with the future framed in red
    and each row's weight on the future (keys after the query) printed at its right end.

    ``mask_2d`` (the intact pass's mask) greys out masked cells as :func:`pattern_with_row_sums` does.
    """
    future = future_weight(pattern_2d)
    notes = [escape_text(subtitle)] if subtitle else []
    notes.append(label(lang, "masks.note_future"))
    return _weights_figure(pattern_2d, tokens, tokens, mask_2d,
                           [label(lang, "masks.row_future", value=f"{w:.3f}") for w in future],
                           theme.pick_title(title, label(lang, "masks.future_title")), notes, lang,
                           outline_future=True)


def token_probability_bars(
    tokens: Sequence[str],
    p_with: np.ndarray,
    p_without: np.ndarray,
    *,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Grouped bars per position: the probability of the model's own next token (``tokens``, one per
    position) with the causal mask (trace "with") and without it (trace "without")."""
    a = as_array(p_with, 1, "p_with", dims="[position]")
    b = as_array(p_without, 1, "p_without", dims="[position]")
    if a.shape != b.shape:
        raise ValueError(f"p_with has {a.shape[0]} positions but p_without has {b.shape[0]}")
    labels = _labels(tokens, a.shape[0], "position")
    x = [f"{i}: {lab}" for i, lab in enumerate(labels)]
    traces = []
    for name, values, colour, key in (("with", a, theme.ACCENT, "masks.bar_with"),
                                      ("without", b, FUTURE_COLOR, "masks.bar_without")):
        legend = label(lang, key)
        traces.append(go.Bar(
            x=x, y=values, name=legend, marker={"color": colour}, meta=name,
            hovertemplate=f"{legend}<br>%{{x}}<br>"
            + label(lang, "hover.value", name=label(lang, "axis.probability"), value="%{y:.3f}")
            + "<extra></extra>",
        ))
    fig = go.Figure(traces)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "masks.bar_title")), height=440,
                      width=max(520, 70 * len(x) + 200))
    fig.update_layout(
        barmode="group",
        xaxis={"title": {"text": label(lang, "masks.axis_next_token")}, "type": "category", "tickangle": -45},
        yaxis={"title": {"text": label(lang, "axis.probability")}, "range": [0, 1.02]},
        legend={"orientation": "h", "y": -0.35},
    )
    return fig
