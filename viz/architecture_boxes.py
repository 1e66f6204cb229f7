"""Which boxes the architecture diagram has, where they sit and how they connect, and the real shape
of each box read from the shape trace of a pass. Plain data, no plotly: :mod:`viz.architecture`
draws it.

One block of each stack stands for all of them ("× N"); rows count upward from 0 at the bottom, as
the data flows in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

Shape = tuple[int, ...]

#: Size of a box and height of a row, in data units.
BOX_WIDTH, BOX_HEIGHT, ROW_HEIGHT = 2.6, 0.66, 1.0
#: x of each stack's column.
COLUMN_X = {"encoder": 0.0, "decoder": 5.0}
#: The stacks bottom to top of the data flow, with the short prefix of their box keys.
_STACKS = (("encoder", "enc"), ("decoder", "dec"))


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
        return COLUMN_X[self.stack]

    @property
    def y(self) -> float:
        return self.row * ROW_HEIGHT


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


@dataclass(frozen=True)
class _Style:
    """The config values that shape every stack alike."""

    pre_ln: bool  # norm_first: the norm inside the residual branch, and a final norm per stack
    norm_name: str  # "LayerNorm" or "RMSNorm"
    pos: str  # pos_encoding: only "sinusoidal" and "learned" add a box


def _input_boxes(stack: str, short: str, style: _Style) -> list[Box]:
    """The embedding and, where the encoding is added to it, the positional encoding (rows 0, 1)."""
    boxes = [Box(f"{short}.embed", "embed", stack, 0, "architecture.embedding", "positional")]
    if style.pos in ("sinusoidal", "learned"):
        boxes.append(Box(f"{short}.pos", "pos", stack, 1, f"architecture.add_pos.{style.pos}", "positional"))
    return boxes


def _sublayer_boxes(stack: str, short: str, i: int, sublayer: tuple[str, str, str], row: int,
                    style: _Style) -> list[Box]:
    """Sub-layer ``i`` (1-based) of a block from ``row`` up: norm → sub-layer → add (Pre-LN) or
    sub-layer → add → norm (Post-LN)."""
    name, kind, text_key = sublayer
    norm = Box(f"{short}.norm{i}", "norm", stack, 0, "architecture.norm", "model", True,
               (("norm", style.norm_name),))
    sub = Box(f"{short}.{name}", kind, stack, 0, text_key, _page_of(kind), True)
    plus = Box(f"{short}.add{i}", "add", stack, 0, "architecture.add", "model", True)
    order = (norm, sub, plus) if style.pre_ln else (sub, plus, norm)
    return [replace(b, row=row + j) for j, b in enumerate(order)]


def _stack_boxes(stack: str, short: str, n_blocks: int, style: _Style,
                 has_encoder: bool) -> tuple[list[Box], list[tuple[str, str]], tuple[int, int, int]]:
    """One stack bottom to top (each box one row above the last), its residual paths (first box of
    the branch, its add box) and its block (first row, last row, number of blocks). A decoder without
    an encoder (a GPT-style language model) has no cross-attention sub-layer."""
    boxes = _input_boxes(stack, short, style)
    residuals = []
    first = len(boxes)
    sublayers = [sub for sub in _SUBLAYERS[stack] if has_encoder or sub[1] != "cross"]
    for i, sublayer in enumerate(sublayers, start=1):
        branch = _sublayer_boxes(stack, short, i, sublayer, len(boxes), style)
        boxes += branch
        residuals.append((branch[0].key, f"{short}.add{i}"))
    block = (first, len(boxes) - 1, n_blocks)
    if style.pre_ln:
        boxes.append(Box(f"{short}.final_norm", "norm", stack, len(boxes), "architecture.final_norm", "model",
                         params=(("norm", style.norm_name),)))
    if stack == "encoder":
        boxes.append(Box("enc.out", "output", stack, len(boxes), "architecture.memory", "model"))
    return boxes, residuals, block


def architecture_layout(config: Mapping[str, object]) -> Layout:
    """Boxes, arrows and residual paths of the model described by ``config``.

    Pre-LN (``norm_first``): each sub-layer is norm → sub-layer → add (the norm inside the residual
    branch), and each stack ends with a final norm. Post-LN: sub-layer → add → norm.
    A stack with 0 blocks is left out (except the decoder's output projection, which then sits on the
    encoder).
    """
    style = _Style(
        pre_ln=bool(config.get("norm_first", True)),
        norm_name="RMSNorm" if config.get("norm") == "rmsnorm" else "LayerNorm",
        pos=str(config.get("pos_encoding", "sinusoidal")),
    )
    counts = {"encoder": int(config.get("n_enc_layers", 0)), "decoder": int(config.get("n_dec_layers", 0))}
    boxes: list[Box] = []
    arrows: list[tuple[str, str]] = []
    residuals: list[tuple[str, str]] = []
    blocks: dict[str, tuple[int, int, int]] = {}
    for stack, short in _STACKS:
        if counts[stack] < 1:
            continue
        stack_boxes, stack_residuals, blocks[stack] = _stack_boxes(stack, short, counts[stack], style,
                                                                   has_encoder=counts["encoder"] > 0)
        boxes += stack_boxes
        arrows += [(a.key, b.key) for a, b in pairwise(stack_boxes)]
        residuals += stack_residuals
    top = "decoder" if counts["decoder"] > 0 else "encoder"
    if top in blocks:  # the output projection reads the top stack's last box
        last = [b for b in boxes if b.stack == top][-1]
        tied = bool(config.get("tie_embeddings", False))
        text_key = "architecture.output_tied" if tied else "architecture.output_untied"
        boxes.append(Box("out", "output", top, last.row + 1, text_key, "model"))
        arrows.append((last.key, "out"))
    if counts["encoder"] > 0 and counts["decoder"] > 0:
        arrows.append(("enc.out", "dec.cross"))
    return Layout(tuple(boxes), tuple(arrows), tuple(residuals), blocks)


def shape_text(shape: Sequence[int] | None) -> str:
    """``(1, 7, 64)`` as the boxes and stages print a shape ("" for None)."""
    return "(" + ", ".join(str(int(s)) for s in shape) + ")" if shape is not None else ""


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
        short = dict(_STACKS).get(stack)
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
    for stack, short in _STACKS:
        if stack in last:
            out[f"{short}.final_norm"] = last[stack]
    if "encoder" in last:
        out["enc.out"] = last["encoder"]
    return out
