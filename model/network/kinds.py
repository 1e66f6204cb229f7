"""Attention kinds: the one place that says what "encoder", "decoder" and "cross" attention are.

Hook names, layer counts, which tokens are queries and keys, whether the future is masked and the
words the UI shows all derive from `ATTENTION_KINDS`, so adding or renaming a kind is one edit.
Plain Python only (no torch): the app and exports read this too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

Stack = Literal["encoder", "decoder"]
Side = Literal["source", "target"]


@dataclass(frozen=True)
class AttentionKind:
    # Cache / URL / menu key: "encoder", "decoder" or "cross".
    name: str
    # Module path of the stack whose blocks hold this attention; also picks its layer count.
    stack: Stack
    # Attention module inside one block of that stack: "attn", "self_attn" or "cross_attn".
    module: str
    # Token sequence the queries (rows) come from.
    queries: Side
    # Token sequence the keys (columns) come from.
    keys: Side
    # True when a query may not look at later keys (the decoder's self-attention).
    causal: bool
    # Short English label for menus and titles.
    label: str
    # One English sentence saying what rows and columns are.
    help: str


ATTENTION_KINDS: tuple[AttentionKind, ...] = (
    AttentionKind(
        name="encoder",
        stack="encoder",
        module="attn",
        queries="source",
        keys="source",
        causal=False,
        label="Encoder self-attention",
        help="Each source token (row) looks at every source token (column).",
    ),
    AttentionKind(
        name="decoder",
        stack="decoder",
        module="self_attn",
        queries="target",
        keys="target",
        causal=True,
        label="Decoder masked self-attention",
        help="Each output token (row) looks at the output so far (column); the future is masked.",
    ),
    AttentionKind(
        name="cross",
        stack="decoder",
        module="cross_attn",
        queries="target",
        keys="source",
        causal=False,
        label="Cross-attention (decoder → encoder)",
        help="Each output token (row) looks at the source tokens (column) the encoder produced.",
    ),
)

KINDS: tuple[str, ...] = tuple(k.name for k in ATTENTION_KINDS)
_BY_NAME = {k.name: k for k in ATTENTION_KINDS}


class _LayerSizes(Protocol):
    n_enc_layers: int
    n_dec_layers: int


def get_kind(name: str | AttentionKind) -> AttentionKind:
    """The kind called `name` (an AttentionKind passes through); KeyError names the valid ones."""
    if isinstance(name, AttentionKind):
        return name
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise KeyError(f"unknown attention kind {name!r}; expected one of {list(KINDS)}") from None


def hook_name(kind: str | AttentionKind, layer: int, what: str) -> str:
    """Name of an attention hook, e.g. ("cross", 1, "pattern") -> decoder.blocks.1.cross_attn.hook_pattern."""
    k = get_kind(kind)
    return f"{k.stack}.blocks.{layer}.{k.module}.hook_{what}"


def layer_counts(cfg: _LayerSizes) -> dict[str, int]:
    """Attention kind -> number of layers, for every kind (0 where the stack has no blocks, and for
    kinds whose keys are the source in a decoder-only model, which has no source)."""
    per_stack = {"encoder": cfg.n_enc_layers, "decoder": cfg.n_dec_layers}
    no_source = getattr(cfg, "decoder_only", False)
    return {k.name: 0 if no_source and k.keys == "source" else per_stack[k.stack] for k in ATTENTION_KINDS}


def decoder_only(counts: Mapping[str, int]) -> bool:
    """Whether layer counts (:func:`layer_counts`, kind -> layers) are a language model's: decoder blocks, no
    encoder (its prompt is the start of the decoder's input)."""
    return not counts.get("encoder") and bool(counts.get("decoder"))


def kinds_present(cfg: _LayerSizes) -> list[str]:
    """Kinds this model has, in menu order: a model without decoder blocks has no decoder kinds."""
    counts = layer_counts(cfg)
    return [name for name in KINDS if counts[name] > 0]
