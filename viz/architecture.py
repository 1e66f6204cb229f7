"""The encoder–decoder diagram of a model, and the multi-head split and merge of one attention layer.

Pure layout: the inputs are a small dict of config values (``n_enc_layers``, ``n_dec_layers``,
``norm_first``, ``norm``, ``pos_encoding``, ``tie_embeddings``, ...) and the real shapes of a pass,
read from the shape trace (plain dicts, ``model.analysis.Analysis.trace``). No torch.

The diagram draws one block of each stack with "× N". Flow goes upward as in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from viz.labels import label
from viz.theme import apply_theme

Shape = tuple[int, ...]

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
_BOX_W, _BOX_H, _ROW = 2.6, 0.66, 1.0
_COLUMN_X = {"encoder": 0.0, "decoder": 5.0}


@dataclass(frozen=True)
class Box:
    key: str  # stable id: "enc.attn", "dec.cross", "dec.norm2", "out", ...
    kind: str  # embed, pos, attention, cross, ffn, norm, add, output
    stack: str  # "encoder" or "decoder"
    row: int  # 0 = bottom
    text_key: str  # viz.labels key of its name
    page: str | None = None  # key of the page that shows it (single, heads, model, positional)
    in_block: bool = False
    params: tuple[tuple[str, str], ...] = ()  # placeholders of its name

    @property
    def x(self) -> float:
        return _COLUMN_X[self.stack]

    @property
    def y(self) -> float:
        return self.row * _ROW


@dataclass(frozen=True)
class Layout:
    boxes: tuple[Box, ...]
    arrows: tuple[tuple[str, str], ...]  # (from key, to key), the data flow
    residuals: tuple[tuple[str, str], ...]  # (first box of the branch, its add box)
    blocks: dict[str, tuple[int, int, int]]  # stack -> (first row, last row, number of blocks)

    def keys(self) -> list[str]:
        return [b.key for b in self.boxes]

    def box(self, key: str) -> Box:
        return next(b for b in self.boxes if b.key == key)


_SUBLAYERS = {
    "encoder": (("attn", "attention", "architecture.self_attention"), ("ffn", "ffn", "architecture.ffn")),
    "decoder": (
        ("self", "attention", "architecture.masked_self_attention"),
        ("cross", "cross", "architecture.cross_attention"),
        ("ffn", "ffn", "architecture.ffn"),
    ),
}


def _page_of(kind: str) -> str | None:
    return {"attention": "single", "cross": "single", "embed": "positional", "pos": "positional"}.get(
        kind, "model"
    )


def architecture_layout(config: Mapping[str, object]) -> Layout:
    """Boxes, arrows and residual paths of the model described by ``config``.

    Pre-LN (``norm_first``): each sub-layer is norm → sub-layer → add (the norm inside the residual
    branch), and each stack ends with a final norm. Post-LN: sub-layer → add → norm.
    A stack with 0 blocks is left out (except the decoder's output projection, which then sits on the
    encoder).
    """
    pre = bool(config.get("norm_first", True))
    norm_name = "RMSNorm" if config.get("norm") == "rmsnorm" else "LayerNorm"
    pos = str(config.get("pos_encoding", "sinusoidal"))
    counts = {"encoder": int(config.get("n_enc_layers", 0)), "decoder": int(config.get("n_dec_layers", 0))}
    boxes: list[Box] = []
    arrows: list[tuple[str, str]] = []
    residuals: list[tuple[str, str]] = []
    blocks: dict[str, tuple[int, int, int]] = {}
    last_of: dict[str, str] = {}
    for stack, short in (("encoder", "enc"), ("decoder", "dec")):
        if counts[stack] < 1:
            continue
        row = 0
        chain: list[str] = []

        def add(box: Box, stack=stack, chain=chain) -> None:
            boxes.append(box)
            if chain:
                arrows.append((chain[-1], box.key))
            chain.append(box.key)

        add(Box(f"{short}.embed", "embed", stack, row, "architecture.embedding", "positional"))
        row += 1
        if pos in ("sinusoidal", "learned"):
            add(Box(f"{short}.pos", "pos", stack, row, f"architecture.pos.{pos}", "positional"))
            row += 1
        first = row
        for i, (name, kind, text_key) in enumerate(_SUBLAYERS[stack], start=1):
            norm = Box(
                f"{short}.norm{i}",
                "norm",
                stack,
                0,
                "architecture.norm",
                "model",
                True,
                (("norm", norm_name),),
            )
            sub = Box(f"{short}.{name}", kind, stack, 0, text_key, _page_of(kind), True)
            plus = Box(f"{short}.add{i}", "add", stack, 0, "architecture.add", "model", True)
            order = (norm, sub, plus) if pre else (sub, plus, norm)
            for b in order:
                add(Box(b.key, b.kind, b.stack, row, b.text_key, b.page, True, b.params))
                row += 1
            residuals.append((order[0].key, plus.key))
        blocks[stack] = (first, row - 1, counts[stack])
        if pre:
            add(
                Box(
                    f"{short}.final_norm",
                    "norm",
                    stack,
                    row,
                    "architecture.final_norm",
                    "model",
                    params=(("norm", norm_name),),
                )
            )
            row += 1
        last_of[stack] = chain[-1]
        if stack == "encoder":
            add(Box("enc.out", "output", stack, row, "architecture.memory", "model"))
            last_of[stack] = "enc.out"
    top = "decoder" if counts["decoder"] > 0 else "encoder"
    if top in last_of:
        row = max(b.row for b in boxes if b.stack == top) + 1
        tied = bool(config.get("tie_embeddings", False))
        boxes.append(
            Box(
                "out",
                "output",
                top,
                row,
                "architecture.output_tied" if tied else "architecture.output_untied",
                "model",
            )
        )
        arrows.append((last_of[top] if top == "decoder" else "enc.out", "out"))
    if counts["encoder"] > 0 and counts["decoder"] > 0:
        arrows.append(("enc.out", "dec.cross"))
    return Layout(tuple(boxes), tuple(arrows), tuple(residuals), blocks)


def _fmt(shape: Sequence[int] | None) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")" if shape is not None else ""


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
    shapes = dict(shapes)
    fig = go.Figure()
    shapes_drawn: list[dict] = []
    annotations: list[dict] = []
    hx, hy = _BOX_W / 2, _BOX_H / 2
    for stack, (first, last, n) in layout.blocks.items():
        x = _COLUMN_X[stack]
        shapes_drawn.append(
            dict(
                type="rect",
                x0=x - hx - 0.45,
                x1=x + hx + 0.2,
                y0=first - 0.45,
                y1=last + 0.45,
                line=dict(color="#888", dash="dot"),
                fillcolor="rgba(0,0,0,0.02)",
                layer="below",
            )
        )
        annotations.append(
            dict(
                x=x - hx - 0.55,
                y=(first + last) / 2,
                xanchor="right",
                showarrow=False,
                text=f"<b>× {n}</b><br>" + label(lang, f"architecture.block.{stack}"),
                font=dict(size=13),
            )
        )
    for b in layout.boxes:
        shapes_drawn.append(
            dict(
                type="rect",
                x0=b.x - hx,
                x1=b.x + hx,
                y0=b.y - hy,
                y1=b.y + hy,
                line=dict(color="#555"),
                fillcolor=_FILL[b.kind],
            )
        )
        name = label(lang, b.text_key, **dict(b.params))
        lines = [f"<b>{name}</b>"]
        if b.key in shapes:
            lines.append(_fmt(shapes[b.key]))
        if page_titles and b.page in page_titles:
            pages = [page_titles[b.page]]
            if b.page == "single" and "heads" in page_titles:
                pages.append(page_titles["heads"])
            lines.append("<i>→ " + " · ".join(pages) + "</i>")
        annotations.append(dict(x=b.x, y=b.y, text="<br>".join(lines), showarrow=False, font=dict(size=10)))
    pos = {b.key: b for b in layout.boxes}
    for a, c in layout.arrows:
        src, dst = pos[a], pos[c]
        if src.stack == dst.stack:
            annotations.append(
                dict(
                    x=dst.x,
                    y=dst.y - hy,
                    ax=src.x,
                    ay=src.y + hy,
                    xref="x",
                    yref="y",
                    axref="x",
                    ayref="y",
                    text="",
                    showarrow=True,
                    arrowhead=2,
                    arrowwidth=1.3,
                )
            )
        else:  # encoder output -> cross-attention: K and V come from the encoder
            annotations.append(
                dict(
                    x=dst.x - hx,
                    y=dst.y,
                    ax=src.x + hx,
                    ay=src.y,
                    xref="x",
                    yref="y",
                    axref="x",
                    ayref="y",
                    text="",
                    showarrow=True,
                    arrowhead=2,
                    arrowwidth=2,
                    arrowcolor="#6a51a3",
                )
            )
            annotations.append(
                dict(
                    x=(src.x + dst.x) / 2,
                    y=(src.y + dst.y) / 2 + 0.25,
                    showarrow=False,
                    text=label(lang, "architecture.kv_from_encoder"),
                    font=dict(size=11, color="#6a51a3"),
                )
            )
    for start, end in layout.residuals:
        s, e = pos[start], pos[end]
        x = s.x + hx + 0.1
        y0 = s.y - 0.5
        shapes_drawn.append(
            dict(
                type="path",
                path=f"M {s.x},{y0} L {x},{y0} L {x},{e.y} L {s.x + hx},{e.y}",
                line=dict(color="#2171b5", width=1.5),
            )
        )
    if layout.residuals:
        annotations.append(
            dict(
                x=max(_COLUMN_X[s] for s in layout.blocks) + hx + 0.15,
                y=-0.6,
                xanchor="right",
                showarrow=False,
                font=dict(size=10, color="#2171b5"),
                text=label(lang, "architecture.residual_legend"),
            )
        )
    rows = max((b.row for b in layout.boxes), default=0)
    ln = label(lang, "architecture.pre_ln" if config.get("norm_first", True) else "architecture.post_ln")
    # The norm's place goes in the subtitle: as part of the title it ran past the figure's width.
    apply_theme(fig, label(lang, "architecture.title"), subtitle=ln, height=int(90 + 62 * (rows + 2)))
    fig.update_layout(
        shapes=shapes_drawn,
        annotations=annotations,
        xaxis=dict(visible=False, range=[-hx - 1.9, max(_COLUMN_X.values()) + hx + 0.6]),
        yaxis=dict(visible=False, range=[-1.0, rows + 0.8]),
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
        meta={"boxes": layout.keys()},
    )
    return fig


# --------------------------------------------------------------------------- shapes from the trace


def _block_prefix(stack: str) -> str:
    return f"{stack}.blocks.0"


def architecture_shapes(trace: Sequence[Mapping]) -> dict[str, Shape]:
    """Box key -> real output shape, read from the shape trace of a pass (block 0 of each stack;
    every block of a stack has the same shapes). The final norm keeps its input's shape: it is
    given the stack's last recorded shape."""
    out: dict[str, Shape] = {}
    adds = {"encoder": 0, "decoder": 0}
    modules = {"attn": "attn", "self_attn": "self", "cross_attn": "cross", "mlp": "ffn"}
    last: dict[str, Shape] = {}
    for step in trace:
        name, op, shape = str(step["name"]), str(step["op"]), tuple(int(s) for s in step["out_shape"])
        stack = name.split(".")[0]
        short = {"encoder": "enc", "decoder": "dec"}.get(stack)
        if short is None:
            if name == "unembed":
                out["out"] = shape
            continue
        last[stack] = shape
        if name == f"{stack}.embed":
            if op.startswith("embedding lookup"):
                out[f"{short}.embed"] = shape
            elif op.startswith("+"):
                out[f"{short}.pos"] = shape
        elif name == _block_prefix(stack):
            if op.startswith("norm"):
                out[f"{short}.{op.split()[0]}"] = shape
            elif op.startswith("residual add"):
                adds[stack] += 1
                out[f"{short}.add{adds[stack]}"] = shape
        elif name.startswith(_block_prefix(stack) + "."):
            module = name.rsplit(".", 1)[1]
            if module == "mlp" and op == "FFN down" or module != "mlp" and op == "output projection W_o":
                out[f"{short}.{modules[module]}"] = shape
    for stack, short in (("encoder", "enc"), ("decoder", "dec")):
        if stack in last:
            out[f"{short}.final_norm"] = last[stack]
    if "encoder" in last:
        out["enc.out"] = last["encoder"]
    return out


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


def split_merge_figure(stages: Sequence[Stage], *, lang: str = "en") -> go.Figure:
    """The split and merge drawn left to right: each tensor as a block (stacked per head where
    it has a head axis), its real shape under it and its symbolic shape under that."""
    fig = go.Figure()
    shapes_drawn: list[dict] = []
    annotations: list[dict] = []
    step = 2.2
    for i, st in enumerate(stages):
        x = i * step
        symbol = st.symbol
        has_heads = "h" in symbol
        h_axis = symbol.index("h") if has_heads else None
        n_drawn = min(st.shape[h_axis], 8) if h_axis is not None else 1
        colour = "#d9d2f2" if st.key == "scores" else ("#cfe3f7" if has_heads else "#fde2c4")
        for j in range(n_drawn):
            off = 0.09 * j
            shapes_drawn.append(
                dict(
                    type="rect",
                    x0=x - 0.6 + off,
                    x1=x + 0.45 + off,
                    y0=-0.6 + off,
                    y1=0.6 + off,
                    line=dict(color="#555", width=1),
                    fillcolor=colour,
                )
            )
        annotations.append(
            dict(
                x=x,
                y=1.55,
                showarrow=False,
                font=dict(size=11),
                text="<b>" + label(lang, f"architecture.stage.{st.key}") + "</b>",
            )
        )
        annotations.append(dict(x=x, y=-1.05, showarrow=False, font=dict(size=12), text=_fmt(st.shape)))
        # Two symbols a line: on one line neighbouring stages' symbolic shapes ran into each other.
        pairs = [", ".join(symbol[k : k + 2]) for k in range(0, len(symbol), 2)]
        annotations.append(
            dict(
                x=x,
                y=-1.3,
                yanchor="top",
                showarrow=False,
                font=dict(size=10, color="#555"),
                text="(" + ",<br>".join(pairs) + ")",
            )
        )
        if i:
            annotations.append(
                dict(
                    x=x - 0.68,
                    y=0,
                    ax=x - step + 0.62,
                    ay=0,
                    xref="x",
                    yref="y",
                    axref="x",
                    ayref="y",
                    text="",
                    showarrow=True,
                    arrowhead=2,
                )
            )
            annotations.append(
                dict(
                    x=x - step / 2,
                    y=0.95,
                    showarrow=False,
                    font=dict(size=10, color="#6a51a3"),
                    text=label(lang, _OPS[st.key]),
                )
            )
    apply_theme(fig, label(lang, "architecture.split_title"), height=320)
    fig.update_layout(
        shapes=shapes_drawn,
        annotations=annotations,
        xaxis=dict(visible=False, range=[-1.2, step * max(len(stages) - 1, 0) + 1.2]),
        yaxis=dict(visible=False, range=[-1.8, 1.9]),
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
        meta={"shapes": [list(s.shape) for s in stages]},
    )
    return fig
