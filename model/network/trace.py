"""Shape trace: the ordered steps one forward pass takes, recorded from the real tensors.

Modules call `record(...)` at each step (attention hands its tensors over a paragraph at a time,
when `tracing()`). Outside a `trace_shapes()` block that is a cheap no-op, so the trace never drifts
from the code: the shapes come from the tensors that flowed.
Each step also carries the symbolic shape the code expects (B, L_src, d_model, ...);
`resolve(symbols, sizes)` turns it into numbers so tests can check both agree.
"""

from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from .hooks import HookPoint

Symbolic = tuple[str, ...]


@dataclass
class TraceStep:
    name: str  # where in the network, e.g. "encoder.blocks.0.attn"
    op: str  # what happens, e.g. "Q K^T / sqrt(d_head)"
    hook: str | None  # hook point holding the output tensor, if any
    in_shapes: list[tuple[int, ...]]
    out_shape: tuple[int, ...]
    in_symbols: list[Symbolic]
    out_symbol: Symbolic
    note: str = ""

    def to_dict(self) -> dict:
        # Written out: dataclasses.asdict deep-copies recursively and cost ~25 ms per request
        # (about 200 steps), a quarter of the app's server time for a new sentence.
        return {
            "name": self.name,
            "op": self.op,
            "hook": self.hook,
            "in_shapes": [list(s) for s in self.in_shapes],
            "out_shape": list(self.out_shape),
            "in_symbols": [list(s) for s in self.in_symbols],
            "out_symbol": list(self.out_symbol),
            "note": self.note,
        }


@dataclass
class ShapeTrace:
    steps: list[TraceStep] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)  # symbol -> value in this pass

    def to_dicts(self) -> list[dict]:
        return [s.to_dict() for s in self.steps]


_active: contextvars.ContextVar[ShapeTrace | None] = contextvars.ContextVar("shape_trace", default=None)


def tracing() -> bool:
    """Whether a trace_shapes() block is collecting steps (modules skip building them otherwise)."""
    return _active.get() is not None


def record(
    name: str,
    op: str,
    inputs: list[torch.Tensor] | torch.Tensor,
    output: torch.Tensor,
    in_symbols: list[Symbolic] | Symbolic,
    out_symbol: Symbolic,
    hook: HookPoint | None = None,
    note: str = "",
) -> None:
    """One step of the forward pass. hook: the HookPoint holding `output`, so the step's hook
    name is the one the cache uses (it is only read while tracing)."""
    trace = _active.get()
    if trace is None:
        return
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
        in_symbols = [in_symbols]  # type: ignore[list-item]
    trace.steps.append(
        TraceStep(
            name=name,
            op=op,
            hook=None if hook is None else hook.name,
            in_shapes=[tuple(t.shape) for t in inputs],
            out_shape=tuple(output.shape),
            in_symbols=[tuple(s) for s in in_symbols],  # type: ignore[arg-type]
            out_symbol=tuple(out_symbol),
            note=note,
        )
    )


@contextmanager
def trace_shapes():
    """Collect the steps of every forward pass run inside the block into a ShapeTrace."""
    trace = ShapeTrace()
    token = _active.set(trace)
    try:
        yield trace
    finally:
        _active.reset(token)


def record_sizes(**sizes: int) -> None:
    """Tell the active trace what each symbol (B, L_src, d_model, ...) stands for in this pass."""
    trace = _active.get()
    if trace is not None:
        trace.sizes.update(sizes)


def resolve(symbols: Symbolic, sizes: dict[str, int]) -> tuple[int, ...]:
    """Numeric shape of a symbolic one; raises KeyError for an unknown symbol."""
    def one(sym: str) -> int:
        return math.prod(int(part) if part.isdigit() else sizes[part] for part in sym.split("*"))

    return tuple(one(s) for s in symbols)


def parameter_counts(model: nn.Module) -> dict[str, int]:
    """Trainable parameters grouped by module (tied matrices counted once, where first met).

    Groups: embeddings, each block's attention / cross-attention / feed-forward / norms, final norms,
    output projection.
    """
    seen: set[int] = set()
    counts: dict[str, int] = {}
    for pname, p in model.named_parameters(remove_duplicate=False):
        if id(p) in seen:
            continue
        seen.add(id(p))
        parts = pname.split(".")
        if parts[0] in ("encoder", "decoder") and len(parts) > 3 and parts[1] == "blocks":
            sub = parts[3]
            group = "norms" if sub.startswith(("norm", "post_norm")) else sub  # Gemma 3's post_norm1, ...
            key = f"{parts[0]}.blocks.{parts[2]}.{group}"
        elif parts[0] in ("encoder", "decoder"):
            key = f"{parts[0]}.{parts[1]}"
        else:
            key = parts[0]
        counts[key] = counts.get(key, 0) + p.numel()
    return counts
