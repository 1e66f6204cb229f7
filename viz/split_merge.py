"""The multi-head split and merge of one attention layer: its stages, with the real and the symbolic
shapes read from the shape trace of a pass (plain dicts, ``model.run.analysis.Analysis.trace``), drawn
left to right. No torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from viz.architecture_boxes import Shape, shape_text
from viz.labels import label
from viz.theme import apply_theme

#: The stages of the multi-head split and merge: (key, op of the trace step, which shape of it).
SPLIT_MERGE = (
    ("input", "linear Q = x W_q", "in"),
    ("split", "split heads: view Q", "out"),
    ("heads_first", "transpose Q to heads-first", "out"),
    ("scores", "scores = Q K^T", "out"),
    ("weighted", "weighted sum: pattern @ V", "out"),
    ("positions_first", "transpose back to positions-first", "out"),
    ("merge", "merge heads: view", "out"),
    ("project", "output projection W_o", "out"),
)


@dataclass(frozen=True)
class Stage:
    key: str
    shape: Shape
    symbol: tuple[str, ...]


def split_merge_stages(trace: Sequence[Mapping], path: str) -> list[Stage]:
    """The shapes of the split into heads and the merge back, for the attention module at ``path``
    ("encoder.blocks.0.attn"), read from its trace steps. KeyError when a step is missing."""
    steps = {str(s["op"]): s for s in trace if s["name"] == path}
    stages = []
    for key, op, which in SPLIT_MERGE:
        if op not in steps:
            raise KeyError(f"no step {op!r} at {path!r} in the trace")
        s = steps[op]
        shape = s["in_shapes"][0] if which == "in" else s["out_shape"]
        symbol = s["in_symbols"][0] if which == "in" else s["out_symbol"]
        symbol = [str(x).replace("*", "·") for x in symbol]
        if key == "merge":  # the merged view is h·d_head wide (= d_model, before W_o)
            symbol[-1] = "h·d_head"
        stages.append(Stage(key, tuple(int(v) for v in shape), tuple(symbol)))
    return stages


_OPS = {  # the operation between a stage and the next (label key)
    "split": "architecture.op.view",
    "heads_first": "architecture.op.transpose",
    "scores": "architecture.op.qk",
    "weighted": "architecture.op.av",
    "positions_first": "architecture.op.transpose",
    "merge": "architecture.op.view",
    "project": "architecture.op.wo",
}
#: Distance between two stages along x (data units).
_STEP = 2.2
#: Most heads drawn as stacked blocks for one tensor.
_MAX_HEADS_DRAWN = 8


def _tensor_blocks(stage: Stage, x: float) -> list[dict]:
    """The tensor at ``x`` as a block, stacked once per head (up to 8) where it has a head axis."""
    has_heads = "h" in stage.symbol
    n_drawn = min(stage.shape[stage.symbol.index("h")], _MAX_HEADS_DRAWN) if has_heads else 1
    colour = "#d9d2f2" if stage.key == "scores" else ("#cfe3f7" if has_heads else "#fde2c4")
    return [
        dict(
            type="rect",
            x0=x - 0.6 + 0.09 * j,
            x1=x + 0.45 + 0.09 * j,
            y0=-0.6 + 0.09 * j,
            y1=0.6 + 0.09 * j,
            line=dict(color="#555", width=1),
            fillcolor=colour,
        )
        for j in range(n_drawn)
    ]


def _stage_key(stage: str) -> str:
    """The figure's word for a stage (its input is plain "input x": the page says whose queries)."""
    return "architecture.split_input" if stage == "input" else f"architecture.stage.{stage}"


def _stage_texts(stage: Stage, x: float, lang: str) -> list[dict]:
    """The stage's name above its block, its real shape under it and its symbolic shape under that."""
    # Two symbols a line: on one line neighbouring stages' symbolic shapes ran into each other.
    symbol = stage.symbol
    pairs = [", ".join(symbol[k : k + 2]) for k in range(0, len(symbol), 2)]
    return [
        dict(
            x=x,
            y=1.55,
            showarrow=False,
            font=dict(size=11),
            text="<b>" + label(lang, _stage_key(stage.key)) + "</b>",
        ),
        dict(x=x, y=-1.05, showarrow=False, font=dict(size=12), text=shape_text(stage.shape)),
        dict(
            x=x,
            y=-1.3,
            yanchor="top",
            showarrow=False,
            font=dict(size=10, color="#555"),
            text="(" + ",<br>".join(pairs) + ")",
        ),
    ]


def _operation_arrow(stage: Stage, x: float, lang: str) -> list[dict]:
    """The arrow from the previous stage into the one at ``x``, and the operation written above it."""
    return [
        dict(
            x=x - 0.68,
            y=0,
            ax=x - _STEP + 0.62,
            ay=0,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            text="",
            showarrow=True,
            arrowhead=2,
        ),
        dict(
            x=x - _STEP / 2,
            y=0.95,
            showarrow=False,
            font=dict(size=10, color="#6a51a3"),
            text=label(lang, _OPS[stage.key]),
        ),
    ]


def split_merge_figure(stages: Sequence[Stage], *, lang: str = "en") -> go.Figure:
    """The split and merge drawn left to right: each tensor as a block (stacked per head where
    it has a head axis), its real shape under it and its symbolic shape under that."""
    fig = go.Figure()
    shapes_drawn: list[dict] = []
    annotations: list[dict] = []
    for i, stage in enumerate(stages):
        x = i * _STEP
        shapes_drawn += _tensor_blocks(stage, x)
        annotations += _stage_texts(stage, x, lang)
        if i:
            annotations += _operation_arrow(stage, x, lang)
    apply_theme(fig, label(lang, "architecture.split_title"), height=320)
    fig.update_layout(
        shapes=shapes_drawn,
        annotations=annotations,
        xaxis=dict(visible=False, range=[-1.2, _STEP * max(len(stages) - 1, 0) + 1.2]),
        yaxis=dict(visible=False, range=[-1.8, 1.9]),
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
        meta={"shapes": [list(s.shape) for s in stages]},
    )
    return fig
