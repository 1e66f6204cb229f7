"""Single-head attention heatmap: which key tokens each query token attends to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_mask, check_tokens
from viz.labels import label
from viz.tokens import escape_text, token_labels


def hover_texts(
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    values: np.ndarray,
    *,
    scores: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    value_name: str | None = None,
    lang: str = "en",
) -> list[list[str]]:
    """Per-cell hover text (already escaped labels and ``value_name`` in, rich text out).

    Masked cells read ``masked`` instead of a weight; the pre-softmax score is appended when
    ``scores`` is given. ``value_name`` defaults to "weight" in ``lang``.
    """
    if value_name is None:
        value_name = label(lang, "value.weight")
    masked = label(lang, "hover.masked")
    rows: list[list[str]] = []
    for i, q in enumerate(query_labels):
        row: list[str] = []
        for j, k in enumerate(key_labels):
            head = label(lang, "hover.query_key", query=q, key=k) + "<br>"
            if mask is not None and mask[i, j]:
                row.append(head + masked)
                continue
            text = head + label(lang, "hover.value", name=value_name, value=f"{values[i, j]:.3f}")
            if scores is not None:
                text += "<br>" + label(lang, "hover.score", value=f"{scores[i, j]:.3f}")
            row.append(text)
        rows.append(row)
    return rows


@dataclass
class HeatmapParts:
    """Validated pieces of a token x token heatmap (see :func:`heatmap_parts`)."""

    traces: list[go.Heatmap]
    query_labels: list[str]
    key_labels: list[str]
    has_mask: bool


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
    lang: str = "en",
) -> HeatmapParts:
    """Validate inputs and build the traces of a token x token heatmap.

    Returns the optional grey mask overlay (a 0/1 uint8 heatmap, transparent where 0) and
    the weight heatmap (float32, NaN where masked), plus the escaped axis labels.
    ``value_name`` (plain text, escaped here) defaults to "attention weight" in ``lang``.
    """
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

    z = p.copy()
    if mask is not None:
        z[mask] = np.nan

    if zmax is None:
        finite = z[np.isfinite(z)]
        top = float(finite.max()) if finite.size else 1.0
        zmax_used = top if top > 0 else 1.0
    else:
        if not zmax > 0:
            raise ValueError(f"zmax must be positive or None, got {zmax}")
        zmax_used = float(zmax)

    q_labels = token_labels(q_tokens)
    k_labels = token_labels(k_tokens)
    text = hover_texts(
        q_labels, k_labels, p, scores=scores, mask=mask, value_name=escape_text(value_name), lang=lang
    )
    x = np.arange(n_k, dtype=np.int32)
    y = np.arange(n_q, dtype=np.int32)
    traces: list[go.Heatmap] = []
    has_mask = mask is not None and bool(mask.any())
    if has_mask:
        traces.append(
            go.Heatmap(
                z=mask.astype(np.uint8),
                x=x,
                y=y,
                colorscale=theme.MASK_COLORSCALE,
                zmin=0,
                zmax=1,
                showscale=False,
                hoverinfo="skip",
                name="masked",
            )
        )
    main = go.Heatmap(
        z=z,
        x=x,
        y=y,
        text=text,
        hovertemplate="%{text}<extra></extra>",
        hoverongaps=True,  # masked cells are gaps; their hover text says "masked"
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
    return HeatmapParts(traces=traces, query_labels=q_labels, key_labels=k_labels, has_mask=has_mask)


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
    """
    parts = heatmap_parts(
        pattern_2d,
        query_tokens,
        key_tokens,
        scores_2d=scores_2d,
        mask_2d=mask_2d,
        zmax=zmax,
        value_name=value_name,
        lang=lang,
    )
    fig = go.Figure(parts.traces)
    subtitle = escape_text(subtitle) if subtitle else None
    if parts.has_mask:
        note = label(lang, "note.grey_masked_cannot_attend")
        subtitle = f"{subtitle} · {note}" if subtitle else note
    n_q, n_k = len(parts.query_labels), len(parts.key_labels)
    cell = theme.cell_size_px(max(n_q, n_k))
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "heatmap.title")),
        subtitle=subtitle,
        height=max(380, cell * n_q + 230),
        width=max(480, cell * n_k + 260),
    )
    fig.update_layout(
        xaxis={
            **theme.token_axis(parts.key_labels, label(lang, "axis.key_attended")),
            "tickangle": -45,
            "constrain": "domain",
        },
        yaxis={
            **theme.token_axis(parts.query_labels, label(lang, "axis.query_attending"), reversed_=True),
            "scaleanchor": "x",
            "constrain": "domain",
        },
        margin={"b": 130},
    )
    return fig
