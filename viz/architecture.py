"""The encoder–decoder diagram of a model, and (re-exported from :mod:`viz.split_merge`) the
multi-head split and merge of one attention layer.

Pure layout: the inputs are a small dict of config values (``n_enc_layers``, ``n_dec_layers``,
``norm_first``, ``norm``, ``pos_encoding``, ``tie_embeddings``, ...) and the real shapes of a pass,
read from the shape trace (plain dicts, ``model.run.analysis.Analysis.trace``). No torch. Which boxes
there are and where they sit is :mod:`viz.architecture_boxes`; this module draws them.

The diagram draws one block of each stack with "× N". Flow goes upward as in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from viz.architecture_boxes import (
    BOX_HEIGHT,
    BOX_WIDTH,
    COLUMN_X,
    Box,
    Layout,
    Shape,
    architecture_layout,
    architecture_shapes,
    shape_text,
)
from viz.labels import label
from viz.split_merge import SPLIT_MERGE, Stage, split_merge_figure, split_merge_stages
from viz.theme import apply_theme

__all__ = [
    "SPLIT_MERGE",
    "Box",
    "Layout",
    "Shape",
    "Stage",
    "architecture_figure",
    "architecture_layout",
    "architecture_shapes",
    "split_merge_figure",
    "split_merge_stages",
]

#: Colours by box kind (fill).
_FILL = {
    "embed": "#fde2c4",
    "pos": "#fff1c9",
    "attention": "#cfe3f7",
    "cross": "#d9d2f2",
    "ffn": "#d4efd6",
    "norm": "#f2f2f2",
    "add": "#ffffff",
    "output": "#f8d3d3",
}
#: Half a box's width and height.
_HX, _HY = BOX_WIDTH / 2, BOX_HEIGHT / 2
#: Colour of the residual paths and their legend.
_RESIDUAL_COLOUR = "#2171b5"
#: Colour of cross-attention's input from the encoder.
_CROSS_COLOUR = "#6a51a3"


def _block_frames(layout: Layout, lang: str) -> tuple[list[dict], list[dict]]:
    """A dotted frame around each stack's block (shapes) and "× N" with the block's name to its left
    (annotations)."""
    frames, notes = [], []
    for stack, (first, last, n) in layout.blocks.items():
        x = COLUMN_X[stack]
        frames.append(
            dict(
                type="rect",
                x0=x - _HX - 0.45,
                x1=x + _HX + 0.2,
                y0=first - 0.45,
                y1=last + 0.45,
                line=dict(color="#888", dash="dot"),
                fillcolor="rgba(0,0,0,0.02)",
                layer="below",
            )
        )
        notes.append(
            dict(
                x=x - _HX - 0.55,
                y=(first + last) / 2,
                xanchor="right",
                showarrow=False,
                text=f"<b>× {n}</b><br>" + label(lang, f"architecture.block.{stack}"),
                font=dict(size=13),
            )
        )
    return frames, notes


def _box_text(box: Box, shapes: Mapping[str, Sequence[int]], page_titles: Mapping[str, str] | None,
              lang: str) -> str:
    """The box's name in bold, its shape where known, and the page(s) that show it."""
    name = label(lang, box.text_key, **dict(box.params))
    lines = [f"<b>{name}</b>"]
    if box.key in shapes:
        lines.append(shape_text(shapes[box.key]))
    if page_titles and box.page in page_titles:
        pages = [page_titles[box.page]]
        if box.page == "single" and "heads" in page_titles:
            pages.append(page_titles["heads"])
        lines.append("<i>→ " + " · ".join(pages) + "</i>")
    return "<br>".join(lines)


def _boxes(layout: Layout, shapes: Mapping[str, Sequence[int]], page_titles: Mapping[str, str] | None,
           lang: str) -> tuple[list[dict], list[dict]]:
    """Each box as a rectangle filled by its kind (shapes) with its text in it (annotations)."""
    rects, texts = [], []
    for b in layout.boxes:
        rects.append(
            dict(
                type="rect",
                x0=b.x - _HX,
                x1=b.x + _HX,
                y0=b.y - _HY,
                y1=b.y + _HY,
                line=dict(color="#555"),
                fillcolor=_FILL[b.kind],
            )
        )
        text = _box_text(b, shapes, page_titles, lang)
        texts.append(dict(x=b.x, y=b.y, text=text, showarrow=False, font=dict(size=10)))
    return rects, texts


def _arrow(x: float, y: float, ax: float, ay: float, **style: object) -> dict:
    """An arrow annotation from (ax, ay) to (x, y), both in data units."""
    return dict(x=x, y=y, ax=ax, ay=ay, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
                arrowhead=2, **style)


def _flow_arrows(layout: Layout, lang: str) -> list[dict]:
    """The data flow: up a stack from top edge to bottom edge; from the encoder's output across into
    cross-attention, written as its K and V."""
    pos = {b.key: b for b in layout.boxes}
    arrows = []
    for a, c in layout.arrows:
        src, dst = pos[a], pos[c]
        if src.stack == dst.stack:
            arrows.append(_arrow(dst.x, dst.y - _HY, src.x, src.y + _HY, arrowwidth=1.3))
        else:  # encoder output -> cross-attention: K and V come from the encoder
            arrows.append(
                _arrow(dst.x - _HX, dst.y, src.x + _HX, src.y, arrowwidth=2, arrowcolor=_CROSS_COLOUR)
            )
            arrows.append(
                dict(
                    x=(src.x + dst.x) / 2,
                    y=(src.y + dst.y) / 2 + 0.25,
                    showarrow=False,
                    text=label(lang, "architecture.kv_from_encoder"),
                    font=dict(size=11, color=_CROSS_COLOUR),
                )
            )
    return arrows


def _residual_paths(layout: Layout) -> list[dict]:
    """Each residual path: from below the branch's first box out to the right and up into its add box."""
    pos = {b.key: b for b in layout.boxes}
    paths = []
    for start, end in layout.residuals:
        s, e = pos[start], pos[end]
        x = s.x + _HX + 0.1
        y0 = s.y - 0.5
        paths.append(
            dict(
                type="path",
                path=f"M {s.x},{y0} L {x},{y0} L {x},{e.y} L {s.x + _HX},{e.y}",
                line=dict(color=_RESIDUAL_COLOUR, width=1.5),
            )
        )
    return paths


def _residual_legend(layout: Layout, lang: str) -> list[dict]:
    """What the residual paths' colour means, under the rightmost stack (none without residuals)."""
    if not layout.residuals:
        return []
    return [
        dict(
            x=max(COLUMN_X[s] for s in layout.blocks) + _HX + 0.15,
            y=-0.6,
            xanchor="right",
            showarrow=False,
            font=dict(size=10, color=_RESIDUAL_COLOUR),
            text=label(lang, "architecture.residual_legend"),
        )
    ]


def architecture_family(config: Mapping[str, object]) -> str:
    """"encoder_decoder", "encoder_only" or "decoder_only", from the config's block counts."""
    enc, dec = int(config.get("n_enc_layers", 0)), int(config.get("n_dec_layers", 0))
    return "encoder_decoder" if enc and dec else "encoder_only" if enc else "decoder_only"


def architecture_figure(
    config: Mapping[str, object],
    shapes: Mapping[str, Sequence[int]] | Sequence[tuple[str, Sequence[int]]] = (),
    *,
    page_titles: Mapping[str, str] | None = None,
    lang: str = "en",
) -> go.Figure:
    """The diagram: one box per step of one block (labelled with its real output shape from
    ``shapes``, box key -> shape), "× N" beside each block, the residual paths, cross-attention's K
    and V from the encoder output, and the output projection (tied or not). ``page_titles``: page key
    -> title, written under each box (the page that shows it)."""
    layout = architecture_layout(config)
    frames, block_notes = _block_frames(layout, lang)
    rects, box_texts = _boxes(layout, dict(shapes), page_titles, lang)
    fig = go.Figure()
    rows = max((b.row for b in layout.boxes), default=0)
    # the boxes follow Pre-LN or Post-LN; another wiring (config "norm_style", as app_support.anatomy names
    # it) is said in the subtitle
    style = config.get("norm_style")
    if style in ("after", "both", "parallel"):
        ln = label(lang, f"architecture.norm_style.{style}")
    else:
        ln = label(lang, "architecture.pre_ln" if config.get("norm_first", True) else "architecture.post_ln")
    # The norm's place goes in the subtitle: as part of the title it ran past the figure's width.
    title = label(lang, f"architecture.diagram_title.{architecture_family(config)}")
    apply_theme(fig, title, subtitle=ln, height=int(90 + 62 * (rows + 2)))
    fig.update_layout(
        shapes=[*frames, *rects, *_residual_paths(layout)],
        annotations=[*block_notes, *box_texts, *_flow_arrows(layout, lang), *_residual_legend(layout, lang)],
        xaxis=dict(visible=False, range=[-_HX - 1.9, max(COLUMN_X.values()) + _HX + 0.6]),
        yaxis=dict(visible=False, range=[-1.0, rows + 0.8]),
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
        meta={"boxes": layout.keys()},
    )
    return fig
