"""How much each attention link moves: norm-based attention (Kobayashi et al. 2020).

A weight α_ij says how much of key j's value vector query i takes, not how large that vector is once the
head's output projection has turned it into a change of the residual stream: f_h(x_j) = (x_j W_V + b_V)_h
W_O,h. Since α ≥ 0, the vector that arrives has the norm α_ij · ‖f_h(x_j)‖; the attention pages can show
it instead of α, each row divided by its sum so that the colour scale reads as the weights' does.

The analysis records each head's ‖f_h(x_j)‖ per key ([batch, head, key_pos] per layer,
:attr:`~model.network.recorded.AttentionInputs.value_norms`), so the weighted pattern is computed from
the same recorded inputs as the weights, a head or a block of rows at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..network.attention_stack import AttentionStack
from ..network.kinds import get_kind
from ..network.recorded import AttentionInputs
from ..run.analysis import Analysis

#: The display options of the attention pages: the softmax's weights, or weight × ‖value‖.
WEIGHTINGS = ("weight", "norm")


class NoValueNorms(ValueError):
    """The analysis holds no value norms (one saved before they were recorded)."""


def reweight_rows(pattern: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """``pattern`` [..., rows, key] times ``norms`` [..., key] (broadcast over rows), each row divided by
    its sum; a row that moves nothing (all masked, or every value zero) stays 0."""
    weighted = np.asarray(pattern, dtype=np.float32) * np.asarray(norms, dtype=np.float32)[..., None, :]
    total = weighted.sum(-1, keepdims=True)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def layer_value_norms(result: Analysis, kind: str, batch: int = 0) -> list[np.ndarray]:
    """Each layer's ‖f_h(x_j)‖ [head, key_pos] of one attention kind; NoValueNorms when not recorded."""
    try:
        layers = result.layer_inputs(kind)
    except KeyError as e:
        raise NoValueNorms(str(e)) from None
    if any(rec.value_norms is None for rec in layers):
        raise NoValueNorms(f"the analysis recorded no value norms for {get_kind(kind).name} attention")
    return [rec.value_norms[batch] for rec in layers]


class ValueWeightedStack(AttentionStack):
    """``[layer, head, query_pos, key_pos]`` of α_ij · ‖f_h(x_j)‖, each row summing to 1, computed when
    indexed from the recorded inputs, as :class:`AttentionStack` computes the weights."""

    def __init__(self, layers: Sequence[AttentionInputs], batch: int = 0):
        super().__init__(layers, "pattern", batch)
        if any(rec.value_norms is None for rec in self.layers):
            raise NoValueNorms("the analysis recorded no value norms")

    def layer(self, i: int, heads=slice(None), rows: slice = slice(None)) -> np.ndarray:
        pattern = super().layer(i, heads, rows)  # [head, rows, key]
        index = np.atleast_1d(np.arange(self.shape[1])[heads])
        return reweight_rows(pattern, self.layers[i].value_norms[self.batch, index])


def weighted_attention(result: Analysis, kind: str, pattern, heads: tuple[int, int] | None = None):
    """``pattern`` (a stack, kept arrays [layer, head, q, k], or one head's [1, 1, q, k] with ``heads``)
    as weight × ‖value‖, row-normalised: a stack stays a stack, an array becomes an array."""
    if isinstance(pattern, AttentionStack):
        return ValueWeightedStack(pattern.layers, pattern.batch)
    norms = layer_value_norms(result, kind)
    if heads is not None:
        layer, head = heads
        return reweight_rows(pattern, norms[layer][head][None, None])
    return reweight_rows(pattern, np.stack(norms))  # [layer, head, key] broadcast over rows


def first_key_share(pattern: np.ndarray) -> float:
    """Mean over query rows of the share the first key gets ([query, key])."""
    return float(np.asarray(pattern)[:, 0].mean())
