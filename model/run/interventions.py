"""Run the loaded model with labelled, reversible changes: the mechanism behind the mask page, the
pitfall lab, head ablation, activation patching and attribution.

    with intervene(model, NoScaling(), HeadOutput("cross", 1, 2, "zero")):
        logits, cache = model.run_with_cache(src, tgt)   # greedy_decode works here too

Each edit is a small frozen (hashable) dataclass with a `label` for the UI:

    NoScaling(kind=None, layer=None)          scores not divided by sqrt(d_head)
    SoftmaxOverQueries(kind=None, layer=None) softmax over the query axis instead of the key axis
    CausalMask("off" | "reversed")            the decoder's self-attention mask removed, or hiding the
                                              past instead of the future (a token sees itself and later)
    NoPositionalEncoding()                    sinusoidal/learned: nothing added to the embeddings (the
                                              hook_pos_embed tensors are zeros); RoPE: q and k not rotated
                                              (hook_rot_q/k then hold the unrotated tensors)
    HeadOutput(kind, layer, head, mode)       that head's z set to 0 ("zero"), to its mean over query
                                              positions ("mean"), or to `value` ("replace")
    HookFunction(hook, fn, recompute, what)   fn(tensor) -> tensor run on the output of the named hook
                                              point (an experiment's own change: a patch, attribution's
                                              integration points); recompute=True when fn reads
                                              absolute decoder positions (greedy decoding then
                                              recomputes the prefix, see below)

kind/layer restrict NoScaling and SoftmaxOverQueries (None = every attention kind / layer).

The edits are settings the forward pass reads (MultiHeadAttention.edits, Embedder.zero_positions,
Decoder.recompute, the functions HookedModule.hooks runs at a hook point), never weights. `intervene`
holds `model.lock` (re-entrant, so run_with_cache and nested `intervene` calls work inside it) and puts
every setting back on exit, also after an exception.
An edit that does not apply to the model raises ValueError before anything changes.

Greedy decoding: edits that let a position depend on later positions (CausalMask("off"), SoftmaxOverQueries
on decoder or cross attention, HeadOutput "mean" there) make cached keys/values stale, so under them
(and under a cross-attention HeadOutput "replace" or a HookFunction with recompute=True) the decoder
recomputes the whole prefix at each step; the result equals full recomputation, at quadratic cost.

HeadOutput "replace" (activation patching) takes `value` = the head's z from another run,
[batch, query_pos, d_head] (`head_z(cache, kind, layer, head)`). Encoder heads need exactly the
source length; decoder and cross heads take row i for target position i, so `value` may be longer
than the pass (greedy decoding reads it step by step). A wrong shape raises ValueError when the
model runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import torch

from ..network.attention import AttentionEdits, HeadEdit, MultiHeadAttention
from ..network.kinds import KINDS, get_kind, hook_name
from ..network.transformer import Transformer

HEAD_MODES = ("zero", "mean", "replace")
CAUSAL_MODES = ("off", "reversed")


def _check_scope(kind: str | None, layer: int | None) -> None:
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; expected one of {list(KINDS)} or None")
    if layer is not None:
        if kind is None:
            raise ValueError("give an attention kind when restricting an edit to a layer")
        if not isinstance(layer, int) or isinstance(layer, bool) or layer < 0:
            raise ValueError(f"layer must be an int >= 0, got {layer!r}")


@dataclass(frozen=True)
class _ScopedEdit:
    """An edit of every attention, or of one kind, or of one kind's layer."""

    kind: str | None = None
    layer: int | None = None
    _what: ClassVar[str] = ""  # the label's words

    def __post_init__(self) -> None:
        _check_scope(self.kind, self.layer)

    @property
    def label(self) -> str:
        if self.kind is None:
            return self._what
        return f"{self._what} ({self.kind} attention{'' if self.layer is None else f', layer {self.layer}'})"


@dataclass(frozen=True)
class NoScaling(_ScopedEdit):
    """Scores Q K^T not divided by sqrt(d_head): the softmax saturates."""

    _what: ClassVar[str] = "No 1/√d_head scaling"


@dataclass(frozen=True)
class SoftmaxOverQueries(_ScopedEdit):
    """Softmax over the query axis instead of the key axis: columns sum to 1, not rows."""

    _what: ClassVar[str] = "Softmax over queries instead of keys"


@dataclass(frozen=True)
class CausalMask:
    """The decoder self-attention's mask: "off" (every token sees every token) or "reversed"
    (each token sees only itself and later tokens)."""

    mode: str

    def __post_init__(self) -> None:
        if self.mode not in CAUSAL_MODES:
            raise ValueError(f"CausalMask mode must be one of {CAUSAL_MODES}, got {self.mode!r}")

    @property
    def label(self) -> str:
        if self.mode == "off":
            return "Causal mask off (decoder sees the future)"
        return "Causal mask reversed (decoder sees only itself and later tokens)"


@dataclass(frozen=True)
class NoPositionalEncoding:
    """No position information: the additive encoding is not added, RoPE does not rotate, or T5's relative
    position bias is 0."""

    @property
    def label(self) -> str:
        return "No positional encoding"


@dataclass(frozen=True, eq=False)
class HeadOutput:
    """One head's output z (before W_o) set to 0, to its mean over query positions, or to `value`.

    Equality and hash use the content of `value` (a digest), so two patches with the same numbers
    are the same edit and two with different numbers never are.
    """

    kind: str
    layer: int
    head: int
    mode: str = "zero"
    value: torch.Tensor | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_scope(self.kind, self.layer)
        if self.kind is None or self.layer is None:
            raise ValueError("HeadOutput needs an attention kind and a layer")
        if not isinstance(self.head, int) or isinstance(self.head, bool) or self.head < 0:
            raise ValueError(f"head must be an int >= 0, got {self.head!r}")
        if self.mode not in HEAD_MODES:
            raise ValueError(f"HeadOutput mode must be one of {HEAD_MODES}, got {self.mode!r}")
        if (self.mode == "replace") != (self.value is not None):
            raise ValueError('HeadOutput takes a value exactly when mode is "replace"')
        digest = ""
        if self.value is not None:
            if not isinstance(self.value, torch.Tensor | np.ndarray):
                raise ValueError(f"HeadOutput value must be a tensor, got {type(self.value).__name__}")
            # A private copy: the caller changing its tensor later must not change this edit or its hash.
            value = torch.as_tensor(self.value).detach().clone()
            if value.dim() != 3:
                raise ValueError(
                    "HeadOutput value must be [batch, query_pos, d_head] (one head's z), "
                    f"got {list(value.shape)}"
                )
            h = hashlib.sha256(f"{list(value.shape)}".encode())
            h.update(value.to("cpu", torch.float64).contiguous().numpy().tobytes())
            digest = h.hexdigest()
            object.__setattr__(self, "value", value)
        object.__setattr__(self, "_digest", digest)

    def _key(self) -> tuple:
        return (self.kind, self.layer, self.head, self.mode, self._digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HeadOutput) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def label(self) -> str:
        what = {
            "zero": "zeroed",
            "mean": "set to its mean over positions",
            "replace": f"patched (value {self._digest[:8]})",
        }[self.mode]
        return f"{self.kind} layer {self.layer} head {self.head}: output {what}"


@dataclass(frozen=True)
class HookFunction:
    """``fn(tensor) -> tensor`` run on the output of the hook point named ``hook``; what it returns
    flows on (and is what a cache records there). ``recompute``: fn depends on a position's absolute
    index in the decoder's input or on later positions, so greedy decoding recomputes the whole
    prefix at each step instead of feeding only the newest token. Equal when hook and fn are."""

    hook: str
    fn: Callable[[torch.Tensor], torch.Tensor] = field(repr=False)
    recompute: bool = False
    what: str = "function"  # the label's words

    @property
    def label(self) -> str:
        return f"{self.hook}: {self.what}"


Edit = NoScaling | SoftmaxOverQueries | CausalMask | NoPositionalEncoding | HeadOutput | HookFunction
EDIT_TYPES = (NoScaling, SoftmaxOverQueries, CausalMask, NoPositionalEncoding, HeadOutput, HookFunction)


def labels(edits) -> tuple[str, ...]:
    """The UI labels of some edits, in order."""
    return tuple(e.label for e in edits)


def head_z(cache: Mapping, kind: str, layer: int, head: int) -> torch.Tensor:
    """One head's z from a run_with_cache cache (or an Analysis' activations): [batch, query_pos, d_head],
    the `value` HeadOutput(..., "replace", value) takes for activation patching."""
    return torch.as_tensor(cache[hook_name(kind, layer, "z")])[:, :, head]


def _attention_modules(model: Transformer, kind: str | None, layer: int | None):
    """(kind, layer, module) in scope; empty when the model lacks them."""
    counts = model.attention_layer_counts()
    for name in KINDS if kind is None else (kind,):
        k = get_kind(name)
        layers = range(counts[name]) if layer is None else [layer] if layer < counts[name] else []
        for i in layers:
            yield name, i, model.get_submodule(f"{k.stack}.blocks.{i}.{k.module}")


class _Plan:
    """What some edits change (see _plan), gathered one edit at a time by the method for its kind."""

    def __init__(self, model: Transformer):
        self.model, self.cfg, self.counts = model, model.cfg, model.attention_layer_counts()
        self.problems: list[str] = []
        self.hook_fns: list[tuple[str, Callable]] = []
        # id(module) -> (module, its settings)
        self.attn: dict[int, tuple[MultiHeadAttention, AttentionEdits]] = {}
        self.flags: dict[tuple[int, str], tuple[object, str, object]] = {}
        self.head_targets: set[tuple[str, int, int]] = set()
        self.causal_modes: set[str] = set()

    def writes(self) -> list[tuple[object, str, object]]:
        return [(m, "edits", e) for m, e in self.attn.values()] + list(self.flags.values())

    def change(self, kind: str, layer: int, module: MultiHeadAttention, **kw) -> None:
        """Module's AttentionEdits with the fields kw changed (HeadEdits added to the earlier ones)."""
        current = self.attn.get(id(module), (module, module.edits))[1]
        if current is None:
            current = AttentionEdits(exact_positions=kind == "encoder", where=f"{kind} layer {layer}")
        if "heads" in kw:
            kw["heads"] = current.heads + kw["heads"]
        self.attn[id(module)] = (module, replace(current, **kw))

    def flag(self, obj: object, attr: str, value: object) -> None:
        self.flags[(id(obj), attr)] = (obj, attr, value)

    def recompute(self) -> None:
        """Greedy decoding must recompute the whole prefix at each step (see the module docstring)."""
        self.flag(self.model.decoder, "recompute", True)

    def scoped(self, edit: NoScaling | SoftmaxOverQueries, what: str):
        """The (kind, layer, module) the edit reaches; none is a problem."""
        found = list(_attention_modules(self.model, edit.kind, edit.layer))
        if not found:
            where = "any attention" if edit.kind is None else f"{edit.kind} attention"
            if edit.kind is not None and self.counts[edit.kind]:
                where += f" layer {edit.layer} (it has layers 0..{self.counts[edit.kind] - 1})"
            self.problems.append(f"{edit.label}: the model has no {where} to {what}")
        return found

    def no_scaling(self, edit: NoScaling) -> None:
        for kind, i, m in self.scoped(edit, "unscale"):
            self.change(kind, i, m, scale=False)

    def softmax_over_queries(self, edit: SoftmaxOverQueries) -> None:
        for kind, i, m in self.scoped(edit, "change"):
            self.change(kind, i, m, softmax_dim=-2)
            if kind != "encoder":
                self.recompute()

    def causal_mask(self, edit: CausalMask) -> None:
        self.causal_modes.add(edit.mode)
        if not self.counts["decoder"]:
            self.problems.append(f"{edit.label}: the model has no decoder self-attention (n_dec_layers=0)")
        for kind, i, m in _attention_modules(self.model, "decoder", None):
            self.change(kind, i, m, causal=edit.mode)
            # Reversed, the newest token sees only itself, so the cache stays exact; off, earlier
            # tokens would also see the newest one.
            if edit.mode == "off":
                self.recompute()

    def hook_function(self, edit: HookFunction) -> None:
        if edit.hook not in self.model.hook_points:
            self.problems.append(f"{edit.label}: the model has no hook point named {edit.hook!r}")
        elif edit.recompute and self.model.decoder is None:
            self.problems.append(f"{edit.label}: the model has no decoder to recompute")
        else:
            self.hook_fns.append((edit.hook, lambda x, _point, fn=edit.fn: fn(x)))
            if edit.recompute:
                self.recompute()

    def no_positional_encoding(self, edit: NoPositionalEncoding) -> None:
        model = self.model
        if self.cfg.pos_encoding == "none":
            self.problems.append(f'{edit.label}: the model has none to remove (pos_encoding="none")')
        elif self.cfg.pos_encoding == "rope":
            # RoPE adds nothing to the embeddings; the rotation of q and k is the position signal.
            for kind, i, m in _attention_modules(model, None, None):
                if m.rotary:
                    self.change(kind, i, m, rotary=False)
        elif self.cfg.pos_encoding == "relative":
            # T5 adds nothing to the embeddings either; its position signal is the bias on the scores.
            for kind, i, m in _attention_modules(model, None, None):
                if m.relative:
                    self.change(kind, i, m, position_bias=False)
        else:
            if model.encoder is not None:  # decoder-only models have none
                self.flag(model.encoder.embed, "zero_positions", True)
            if model.decoder is not None:  # encoder-only models have none
                self.flag(model.decoder.embed, "zero_positions", True)

    def head_output(self, edit: HeadOutput) -> None:
        problem = self._head_problem(edit)
        if problem:
            self.problems.append(f"{edit.label}: {problem}")
            return
        self.head_targets.add((edit.kind, edit.layer, edit.head))
        m = self.model.get_submodule(hook_name(edit.kind, edit.layer, "z").rsplit(".", 1)[0])
        self.change(edit.kind, edit.layer, m, heads=(HeadEdit(edit.head, edit.mode, edit.value),))
        # A mean mixes later positions in; cross-attention gets no decoding cache, so it cannot
        # tell which row of a replacement the current step is.
        stale = edit.mode == "mean" and edit.kind != "encoder"
        if stale or (edit.mode, edit.kind) == ("replace", "cross"):
            self.recompute()

    def _head_problem(self, edit: HeadOutput) -> str:
        """Why the HeadOutput cannot apply ("" when it can)."""
        n, cfg = self.counts[edit.kind], self.cfg
        if edit.layer >= n:
            return f"{edit.kind} attention has {f'layers 0..{n - 1}' if n else 'no layers'}"
        if edit.head >= cfg.n_heads:
            return f"the model has heads 0..{cfg.n_heads - 1}"
        if (edit.kind, edit.layer, edit.head) in self.head_targets:
            return "that head is already edited by another HeadOutput"
        if edit.value is not None and edit.value.shape[-1] != cfg.d_head:
            return f"value has d_head={edit.value.shape[-1]}, the model's heads have {cfg.d_head}"
        return ""


#: Which _Plan method takes each kind of edit (checked in order, with isinstance).
_PLANNERS: tuple[tuple[type, Callable[[_Plan, object], None]], ...] = (
    (NoScaling, _Plan.no_scaling),
    (SoftmaxOverQueries, _Plan.softmax_over_queries),
    (CausalMask, _Plan.causal_mask),
    (HookFunction, _Plan.hook_function),
    (NoPositionalEncoding, _Plan.no_positional_encoding),
    (HeadOutput, _Plan.head_output),
)


def _plan(model: Transformer, edits) -> tuple[list[tuple[object, str, object]], list[tuple[str, Callable]],
                                              list[str]]:
    """The settings to write, as (object, attribute, value), the functions to run at hook points, as
    (hook name, fn(tensor, point)) for HookedModule.hooks, and the reasons edits do not apply."""
    plan = _Plan(model)
    for edit in edits:
        if not isinstance(edit, EDIT_TYPES):
            raise TypeError(f"not an edit: {edit!r}; expected one of {[t.__name__ for t in EDIT_TYPES]}")
        next(add for kind, add in _PLANNERS if isinstance(edit, kind))(plan, edit)
    if len(plan.causal_modes) > 1:
        plan.problems.append(f"CausalMask: modes {sorted(plan.causal_modes)} contradict each other")
    return plan.writes(), plan.hook_fns, plan.problems


def edit_problems(model: Transformer, *edits: Edit) -> list[str]:
    """Why each edit cannot be applied to this model (empty: all apply); for greying out UI options."""
    return _plan(model, edits)[2]


@contextmanager
def intervene(model: Transformer, *edits: Edit) -> Iterator[Transformer]:
    """Run the block with the edits applied to `model` (see the module docstring); yields the model."""
    with model.lock:
        writes, hook_fns, problems = _plan(model, edits)
        if problems:
            raise ValueError("cannot apply these edits to this model: " + "; ".join(problems))
        saved: list[tuple[object, str, object]] = []
        try:
            for obj, attr, value in writes:
                saved.append((obj, attr, getattr(obj, attr)))
                setattr(obj, attr, value)
            with model.hooks(hook_fns):
                yield model
        finally:
            for obj, attr, old in reversed(saved):
                setattr(obj, attr, old)
