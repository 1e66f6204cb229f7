"""The logit lens drawn: a layer x position grid of each cell's top token, and one position's path
through the layers (the final choice's probability and rank, the entropy). Pure plotly and numpy;
every word from ``viz.labels``; tokens HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz import theme
from viz._validate import as_array, check_tokens
from viz.clicks import CLICK_HOVER_DISTANCE_PX, CLICK_TRACE_NAME
from viz.labels import label
from viz.tokens import escape_text, token_label, token_labels

__all__ = ["CELL_CHARS", "lens_cell_hover", "lens_heatmap", "lens_position_figure", "row_labels"]

#: Characters of a top token printed in its cell (the hover shows it whole).
CELL_CHARS = 6
#: Outline of the position chosen below the grid.
CHOSEN_COLOR = "#cb181d"


def row_labels(n_rows: int, lang: str = "en") -> list[str]:
    """Row names: the embeddings, then block 1 .. n_rows - 1."""
    return [label(lang, "lens.row_embed")] + [str(r) for r in range(1, n_rows)]


def lens_cell_hover(
    top_ids: np.ndarray,
    top_probs: np.ndarray,
    words: Mapping[int, str],
    column_tokens: Sequence[str],
    final_ids: np.ndarray,
    final_rank: np.ndarray,
    final_prob: np.ndarray,
    entropy: np.ndarray,
    positions: Sequence[int] | None = None,
    lang: str = "en",
) -> list[list[str]]:
    """[row][pos] hover text of each cell: its top-k tokens with their probabilities, where the final
    choice stands (rank 1 = top) and the entropy. Every token escaped."""
    ids = as_array(top_ids, 3, "top_ids", dims="[row, pos, k]", dtype=np.int64)
    probs = as_array(top_probs, 3, "top_probs", dims="[row, pos, k]", dtype=np.float64)
    n_rows, n_pos, _ = ids.shape
    column_tokens = check_tokens(column_tokens, n_pos, array_name="top_ids", axis_name="positions",
                                 token_name="column tokens")
    pos = list(range(n_pos)) if positions is None else [int(p) for p in positions]
    rows = row_labels(n_rows, lang)
    out = []
    for r in range(n_rows):
        line = []
        for c in range(n_pos):
            read = token_label(column_tokens[c])
            head = label(lang, "lens.hover_cell", row=rows[r], pos=pos[c], token=read)
            pairs = zip(ids[r, c], probs[r, c], strict=True)
            tops = "<br>".join(f"{token_label(words[int(i)])}  {p:.3f}" for i, p in pairs)
            final = label(lang, "lens.hover_final", token=token_label(words[int(final_ids[c])]),
                          rank=int(final_rank[r, c]) + 1, prob=f"{float(final_prob[r, c]):.3g}")
            ent = label(lang, "lens.hover_entropy", value=f"{float(entropy[r, c]):.2f}")
            line.append(f"{head}<br>{tops}<br>{final}<br>{ent}")
        out.append(line)
    return out


def lens_heatmap(
    values: np.ndarray,
    top_tokens: Sequence[Sequence[str]],
    column_tokens: Sequence[str],
    *,
    positions: Sequence[int] | None = None,
    prompt_len: int = 0,
    chosen: int | None = None,
    hover: Sequence[Sequence[str]] | None = None,
    value_name: str = "",
    zmax: float | None = 1.0,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """The grid: rows = layers (0 = embeddings, at the bottom), columns = positions labelled by the
    token read there; colour ``values`` [row, pos] (e.g. the top token's probability), text = each
    cell's top token. ``prompt_len``: a dashed line before the first generated position; ``chosen``:
    the position outlined. Invisible click targets carry ``customdata = [row, position]``."""
    v = as_array(values, 2, "values", dims="[row, pos]", dtype=np.float64)
    n_rows, n_pos = v.shape
    if len(top_tokens) != n_rows or any(len(row) != n_pos for row in top_tokens):
        raise ValueError(f"top_tokens must be {n_rows} rows of {n_pos} tokens")
    column_tokens = check_tokens(column_tokens, n_pos, array_name="values", axis_name="positions",
                                 token_name="column tokens")
    pos = np.arange(n_pos, dtype=np.int32) if positions is None else np.asarray(positions, dtype=np.int32)
    if pos.shape != (n_pos,):
        raise ValueError(f"positions must hold {n_pos} positions, got shape {pos.shape}")
    cells = [[token_label(tok, CELL_CHARS) for tok in row] for row in top_tokens]
    name = escape_text(value_name) if value_name else label(lang, "value.value")
    heat = go.Heatmap(
        z=v.astype(np.float32), x=pos, y=np.arange(n_rows, dtype=np.int32),
        zmin=0.0, zmax=zmax, colorscale=theme.SEQUENTIAL, colorbar=theme.colorbar(name),
        text=cells, texttemplate="%{text}", textfont={"size": 11}, name="lens",
        hovertext=[list(row) for row in hover] if hover is not None else None,
        hovertemplate=("%{hovertext}" if hover is not None
                       else label(lang, "lens.hover_plain", row="%{y}", pos="%{x}"))
        + "<br>" + label(lang, "hover.value", name=name, value="%{z:.4f}") + "<extra></extra>",
    )
    rows, cols = np.meshgrid(np.arange(n_rows), np.arange(n_pos), indexing="ij")
    hidden = {"marker": {"opacity": 0.0}}
    clicks = go.Scatter(
        x=pos[cols.ravel()].astype(np.float32), y=rows.ravel().astype(np.float32),
        customdata=np.stack([rows.ravel(), pos[cols.ravel()]], 1).astype(np.int32),
        mode="markers", marker={"size": 14, "symbol": "square", "opacity": 0.0, "color": "black"},
        selected=hidden, unselected=hidden, showlegend=False, name=CLICK_TRACE_NAME,
        hovertemplate=label(lang, "lens.hover_click", pos="%{customdata[1]}") + "<extra></extra>",
    )
    fig = go.Figure([heat, clicks])
    layout = theme.theme_layout(theme.pick_title(title, ""), height=160 + 24 * n_rows,
                                width=max(420, 170 + 46 * n_pos))
    layout.update(
        xaxis={"title": {"text": label(lang, "lens.axis_position")}, "tickmode": "array",
               "tickvals": pos.tolist(), "ticktext": token_labels(column_tokens), "tickangle": -60,
               "range": [float(pos[0]) - 0.5, float(pos[-1]) + 0.5], "showgrid": False},
        yaxis={"title": {"text": label(lang, "lens.axis_layer")}, "tickmode": "array",
               "tickvals": list(range(n_rows)), "ticktext": row_labels(n_rows, lang),
               "range": [-0.5, n_rows - 0.5], "showgrid": False},
        # no box-select drag: Streamlit turns a chart dragged by box into one whose clicks select nothing
        hoverdistance=CLICK_HOVER_DISTANCE_PX, clickmode="event+select", dragmode="pan",
    )
    shapes = []
    if pos[0] < prompt_len <= pos[-1]:
        shapes.append({"type": "line", "x0": prompt_len - 0.5, "x1": prompt_len - 0.5, "y0": -0.5,
                       "y1": n_rows - 0.5, "line": {"color": "#444444", "width": 2, "dash": "dash"}})
    if chosen is not None and pos[0] <= chosen <= pos[-1]:
        shapes.append({"type": "rect", "x0": chosen - 0.5, "x1": chosen + 0.5, "y0": -0.5, "y1": n_rows - 0.5,
                       "line": {"color": CHOSEN_COLOR, "width": 3}})
    layout["shapes"] = shapes
    fig.update_layout(layout)
    return fig


def lens_position_figure(
    final_rank: np.ndarray,
    final_prob: np.ndarray,
    entropy: np.ndarray,
    top_tokens: Sequence[str],
    *,
    final_token: str,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """One position through the layers: the final choice's probability, its rank (1 = top, log
    axis) and the entropy of each row's distribution (nats). ``top_tokens``: each row's top token,
    in the hover."""
    rank = as_array(final_rank, 1, "final_rank", dims="[row]", dtype=np.float64) + 1
    prob = as_array(final_prob, 1, "final_prob", dims="[row]", dtype=np.float64)
    ent = as_array(entropy, 1, "entropy", dims="[row]", dtype=np.float64)
    n_rows = rank.shape[0]
    if prob.shape != rank.shape or ent.shape != rank.shape:
        raise ValueError(f"final_rank, final_prob and entropy must all be [{n_rows}]")
    tops = check_tokens(top_tokens, n_rows, array_name="final_rank", axis_name="rows",
                        token_name="top tokens")
    token = token_label(final_token)
    names = [label(lang, "lens.series_prob", token=token), label(lang, "lens.series_rank", token=token),
             label(lang, "lens.series_entropy")]
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07)
    x = np.arange(n_rows, dtype=np.int32)
    shown_tops = [token_label(tok) for tok in tops]
    for i, (y, name) in enumerate(zip((prob, rank, ent), names, strict=True)):
        fig.add_trace(go.Scatter(
            x=x, y=y.astype(np.float32), mode="lines+markers", name=name, customdata=shown_tops,
            line={"color": (theme.ACCENT, theme.NEGATIVE, "#238b45")[i]},
            hovertemplate=label(lang, "lens.hover_row", row="%{x}", token="%{customdata}")
            + "<br>" + label(lang, "hover.value", name=name, value="%{y:.4g}") + "<extra></extra>",
        ), row=i + 1, col=1)
    layout = theme.theme_layout(theme.pick_title(title, ""), height=620)
    fig.update_layout(layout, legend={"orientation": "h", "y": -0.15})
    fig.update_yaxes(title_text=label(lang, "axis.probability"), range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text=label(lang, "lens.axis_rank"), type="log", autorange="reversed", row=2, col=1)
    fig.update_yaxes(title_text=label(lang, "lens.axis_entropy"), rangemode="tozero", row=3, col=1)
    fig.update_xaxes(tickmode="array", tickvals=x.tolist(), ticktext=row_labels(n_rows, lang), row=3, col=1)
    fig.update_xaxes(title_text=label(lang, "lens.axis_layer"), row=3, col=1)
    return fig
