"""Single-head attention heatmap: which key tokens each query token attends to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.labels import label
from viz.pooling import POOLS, block_ranges, block_size, pool_blocks, pool_mask, range_text
from viz.tokens import escape_text, token_labels

#: Shown cells up to which the pre-softmax score travels with each cell for hover (float32, 4
#: bytes + base64). Weight and score for all 512 x 512 cells would be ~3.2 MB of JSON; above
#: this the hover shows the weight only and a window brings the scores back.
MAX_SCORE_CELLS = 200_000


def hover_template(
    value_name: str, *, has_scores: bool, blocks: bool = False, lang: str = "en"
) -> tuple[str, str]:
    """``(hovertemplate, fallback)`` shared by every cell of a token x token heatmap.

    One template instead of one string per cell keeps the JSON linear in the number of cells
    (4 bytes of weight and 4 of score each): query and key labels come from the trace's
    category ``y``/``x``, the weight from ``z`` and the pre-softmax score from ``customdata``.
    Masked (and hidden) cells are gaps, whose ``z`` is undefined in the browser, so plotly shows
    ``fallback`` ("masked") in place of the weight. ``value_name`` is already escaped. With
    ``blocks`` the labels are position ranges of pooled cells and the head line says so.
    """
    head = label(lang, "hover.query_key_blocks" if blocks else "hover.query_key", query="%{y}", key="%{x}")
    text = head + "<br>" + label(lang, "hover.value", name=value_name, value="%{z:.3f}")
    if has_scores:
        text += "<br>" + label(lang, "hover.score", value="%{customdata:.3f}")
    return text + "<extra></extra>", label(lang, "hover.masked")


def _unique(labels: list[str]) -> list[str]:
    """Category labels must be distinct (a category axis merges equal ones): a label that
    still repeats (a token that looks like another's subscripted label) gets its position."""
    seen: set[str] = set()
    out = []
    for i, lab in enumerate(labels):
        while lab in seen:
            lab = f"{lab}#{i}"
        seen.add(lab)
        out.append(lab)
    return out


def _check_range(span: tuple[int, int] | None, n: int, name: str) -> tuple[int, int]:
    if span is None:
        return 0, n
    try:
        start, stop = (int(v) for v in span)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a (start, stop) pair of integers, got {span!r}") from exc
    if not 0 <= start < stop <= n:
        raise ValueError(f"{name}={span!r} must satisfy 0 <= start < stop <= {n}")
    return start, stop


def hidden_cells(
    pattern_2d: np.ndarray,
    mask_2d: np.ndarray | None = None,
    *,
    threshold: float | None = None,
    keep_share: float | None = None,
) -> np.ndarray:
    """Boolean ``[query, key]``: the cells a heatmap hides (True = hidden, drawn empty).

    ``threshold``: every weight below it is hidden. ``keep_share`` (0 < share <= 1): per row,
    the strongest links are kept, largest first (ties: lower key position first), until
    together they hold at least ``keep_share`` of the row's weight; the rest of the row is
    hidden. Masked cells take no part (they stay masked, not hidden). Neither given: nothing.
    """
    p = np.nan_to_num(np.asarray(pattern_2d, dtype=np.float64), nan=0.0)
    masked = np.zeros(p.shape, bool) if mask_2d is None else np.asarray(mask_2d, bool)
    if threshold is not None and keep_share is not None:
        raise ValueError("give threshold or keep_share, not both")
    if threshold is not None:
        if not np.isfinite(threshold) or threshold < 0:
            raise ValueError(f"threshold must be a weight >= 0, got {threshold!r}")
        return (p < threshold) & ~masked
    if keep_share is None:
        return np.zeros(p.shape, bool)
    if not 0 < keep_share <= 1:
        raise ValueError(f"keep_share must be in (0, 1], got {keep_share!r}")
    w = np.where(masked, 0.0, p)
    order = np.argsort(-w, axis=1, kind="stable")
    ranked = np.take_along_axis(w, order, axis=1)
    before = np.cumsum(ranked, axis=1) - ranked  # weight of the stronger links before this one
    need = keep_share * w.sum(axis=1, keepdims=True)
    # keep a link while the stronger ones do not yet reach the share (1e-9: float sums)
    keep_ranked = (before < need - 1e-9 * np.maximum(need, 1)) & (ranked > 0)
    keep = np.zeros(p.shape, bool)
    np.put_along_axis(keep, order, keep_ranked, axis=1)
    return ~keep & ~masked


def category_axis(labels: Sequence[str], title: str, *, reversed_: bool = False) -> dict[str, object]:
    """Axis settings for heatmaps whose ``x``/``y`` are the (distinct) token labels.

    A category axis keeps cell ``i`` at index ``i`` (so ranges read as before) while hover can
    name the token with ``%{x}``/``%{y}``; every label is a tick, as on the integer axes of
    :func:`viz.theme.token_axis`."""
    n = len(labels)
    return {
        "type": "category",
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": list(labels),
        "ticktext": list(labels),
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

    scores: np.ndarray | None = None
    mask: np.ndarray | None = None
    if scores_2d is not None:
        scores = as_array(scores_2d, 2, "scores")
        if scores.shape != p.shape:
            raise ValueError(f"scores has shape {scores.shape} but {name} has shape {p.shape}")
        mask = ~np.isfinite(scores)
    if mask_2d is not None:
        given = check_mask(mask_2d, p.shape, "mask")
        mask = given if mask is None else (mask | given)

    hidden = hidden_cells(p, mask, threshold=threshold, keep_share=keep_share)
    q0, q1 = _check_range(query_range, n_q, "query_range")
    k0, k1 = _check_range(key_range, n_k, "key_range")
    z = p.copy()
    if mask is not None:
        z[mask] = np.nan
    z[hidden] = np.nan

    if zmax is None:
        finite = z[q0:q1, k0:k1][np.isfinite(z[q0:q1, k0:k1])]
        top = float(finite.max()) if finite.size else 1.0
        zmax_used = top if top > 0 else 1.0
    else:
        if not zmax > 0:
            raise ValueError(f"zmax must be positive or None, got {zmax}")
        zmax_used = float(zmax)

    z = z[q0:q1, k0:k1]
    if mask is not None:
        mask = mask[q0:q1, k0:k1]
    block = 1 if max_cells is None else block_size(q1 - q0, k1 - k0, max_cells)
    if block > 1:
        z = pool_blocks(z, block, pool)
        mask = None if mask is None else pool_mask(mask, block)
        q_labels = [range_text(q0 + a, q0 + b) for a, b in block_ranges(q1 - q0, block)]
        k_labels = [range_text(k0 + a, k0 + b) for a, b in block_ranges(k1 - k0, block)]
    else:
        # labels are made distinct over the whole sentence, so a window keeps the subscripts
        q_labels = _unique(token_labels(q_tokens))[q0:q1]
        k_labels = _unique(token_labels(k_tokens))[k0:k1]
    scores_dropped = scores is not None and (block > 1 or (q1 - q0) * (k1 - k0) > max_score_cells)
    if scores is not None:
        scores = None if scores_dropped else scores[q0:q1, k0:k1]
    if block > 1:
        value_name = label(lang, f"value.in_block_{pool}", name=value_name)
    template, fallback = hover_template(
        escape_text(value_name), has_scores=scores is not None, blocks=block > 1, lang=lang
    )
    if hidden[q0:q1, k0:k1].any():
        # hidden cells are gaps like masked ones: their hover must not claim "masked"
        fallback = label(lang, "hover.not_shown")
    x, y = k_labels, q_labels
    traces: list[go.Heatmap] = []
    has_mask = mask is not None and bool(mask.any())
    has_gaps = has_mask or bool(np.isnan(z).any())
    if has_gaps:
        # The overlay says "masked" / "not shown" on gaps. plotly.js (v4, as Streamlit ships it)
        # never uses hovertemplatefallback for a NaN of a typed array (the value is there, NaN),
        # so the weight trace stops hovering on its gaps and the overlay beneath answers there;
        # on every other cell the weight trace comes first. Checked in tests/test_browser.py.
        traces.append(
            go.Heatmap(
                z=(np.zeros(z.shape, bool) if mask is None else mask).astype(np.uint8),
                x=x,
                y=y,
                colorscale=theme.MASK_COLORSCALE,
                zmin=0,
                zmax=1,
                showscale=False,
                hovertemplate=label(
                    lang,
                    "hover.query_key_blocks" if block > 1 else "hover.query_key",
                    query="%{y}",
                    key="%{x}",
                )
                + "<br>"
                + fallback
                + "<extra></extra>",
                name="masked",
            )
        )
    main = go.Heatmap(
        z=z,
        x=x,
        y=y,
        customdata=None if scores is None else scores.astype(np.float32),
        hovertemplate=template,
        hovertemplatefallback=fallback,  # for plotly versions that fill NaN gaps with it
        hoverongaps=not has_gaps,
        name=escape_text(value_name),
    )
    if coloraxis is None:
        main.update(
            colorscale=theme.SEQUENTIAL,
            zmin=0.0,
            zmax=zmax_used,
            colorbar=theme.colorbar(escape_text(value_name)),
        )
    else:
        main.update(coloraxis=coloraxis)
    traces.append(main)
    return HeatmapParts(
        traces=traces,
        query_labels=q_labels,
        key_labels=k_labels,
        has_mask=has_mask,
        hidden=int(hidden[q0:q1, k0:k1].sum()),
        window=((q0, q1), (k0, k1)),
        shape=(n_q, n_k),
        scores_dropped=scores_dropped,
        block=block,
    )


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
    subtitle = " · ".join(notes) if notes else None
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
            **category_axis(parts.key_labels, label(lang, "axis.key_attended")),
            "tickangle": -45,
            "constrain": "domain",
        },
        yaxis={
            **category_axis(parts.query_labels, label(lang, "axis.query_attending"), reversed_=True),
            "scaleanchor": "x",
            "constrain": "domain",
        },
    )
    layout["margin"] = {**layout["margin"], "b": 130}
    # The main page's figure, built on every new sentence: one construction, no per-property
    # validation (plotly's own templates are built the same way). Its traces and layout are
    # checked by the viz tests instead; validating cost ~10 ms of a ~30 ms build.
    fig = go.Figure(parts.traces, layout, _validate=False)
    return fig
