"""The traces of a token x token heatmap: the weights, and beneath them the grey overlay that
draws masked cells and answers hover on every gap; one hover template serves all cells."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz.heatmap_cells import ShownCells
from viz.labels import label
from viz.tokens import escape_text


def _query_key_line(blocks: bool, lang: str) -> str:
    """Hover's first line: the cell's query and key labels (position ranges for pooled blocks)."""
    return label(lang, "hover.query_key_blocks" if blocks else "hover.query_key", query="%{y}", key="%{x}")


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
    head = _query_key_line(blocks, lang)
    text = head + "<br>" + label(lang, "hover.value", name=value_name, value="%{z:.3f}")
    if has_scores:
        text += "<br>" + label(lang, "hover.score", value="%{customdata:.3f}")
    return text + "<extra></extra>", label(lang, "hover.masked")


def _gap_overlay_trace(cells: ShownCells, fallback: str, lang: str) -> go.Heatmap:
    """0/1 uint8 heatmap, grey where masked, transparent elsewhere, whose hover names the gaps.

    The overlay says "masked" / "not shown" on gaps. plotly.js (v4, as Streamlit ships it) never
    uses hovertemplatefallback for a NaN of a typed array (the value is there, NaN), so the weight
    trace stops hovering on its gaps and the overlay beneath answers there; on every other cell the
    weight trace comes first. Checked in tests/browser/test_browser.py."""
    mask = np.zeros(cells.z.shape, bool) if cells.mask is None else cells.mask
    return go.Heatmap(
        z=mask.astype(np.uint8),
        x=cells.key_labels,
        y=cells.query_labels,
        colorscale=theme.MASK_COLORSCALE,
        zmin=0,
        zmax=1,
        showscale=False,
        hovertemplate=_query_key_line(cells.block > 1, lang) + "<br>" + fallback + "<extra></extra>",
        name="masked",
    )


def heatmap_traces(
    cells: ShownCells,
    scores: np.ndarray | None,
    value_name: str,
    *,
    any_hidden: bool,
    zmax: float,
    coloraxis: str | None,
    lang: str,
) -> list[go.Heatmap]:
    """``[overlay, weights]`` (the overlay only where there are gaps): the weights float32 with
    NaN gaps, scores (if given) as ``customdata``; own colour scale ``[0, zmax]`` unless
    ``coloraxis`` names a shared one. ``value_name`` is plain text (escaped here)."""
    template, fallback = hover_template(
        escape_text(value_name), has_scores=scores is not None, blocks=cells.block > 1, lang=lang
    )
    if any_hidden:
        # hidden cells are gaps like masked ones: their hover must not claim "masked"
        fallback = label(lang, "hover.not_shown")
    traces: list[go.Heatmap] = []
    has_gaps = cells.has_mask or bool(np.isnan(cells.z).any())
    if has_gaps:
        traces.append(_gap_overlay_trace(cells, fallback, lang))
    main = go.Heatmap(
        z=cells.z,
        x=cells.key_labels,
        y=cells.query_labels,
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
            zmax=zmax,
            colorbar=theme.colorbar(escape_text(value_name)),
        )
    else:
        main.update(coloraxis=coloraxis)
    traces.append(main)
    return traces
