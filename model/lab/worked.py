"""The full activations of one attention layer, for the worked example (attention by hand).

The analysis the app shares between its pages records only attention patterns and scores
(``keep=attention_only``). Working attention out by hand needs the layer's q, k, v, raw scores and z, so
:func:`layer_tensors_for` runs ``model.run.analysis.analyze`` again (under the model's lock, which
``analyze`` takes) recording the hooks of that one attention kind and layer only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decoding.strategy import Strategy
from ..network.kinds import get_kind, hook_name
from ..run.analysis import analyze
from ..store.bundle import Bundle
from . import entry

#: The hooks of one attention module the hand computation reads (rot_*: RoPE models only).
LAYER_HOOKS = ("q", "k", "v", "rot_q", "rot_k", "raw_scores", "scores", "pattern", "z")


@dataclass(frozen=True)
class LayerTensors:
    """One attention layer of one analysis, batch axis dropped (float32, as captured)."""

    q: np.ndarray  # [query_pos, head, d_head], what the scores are made from (rotated for RoPE)
    k: np.ndarray  # [key_pos, kv_head, d_head], likewise
    v: np.ndarray  # [key_pos, kv_head, d_head]
    raw_scores: np.ndarray  # [head, query_pos, key_pos], Q K^T (hook_raw_scores)
    scores: np.ndarray  # [head, query_pos, key_pos], scaled, -inf where masked (hook_scores)
    pattern: np.ndarray  # [head, query_pos, key_pos] (hook_pattern)
    z: np.ndarray  # [query_pos, head, d_head] (hook_z)
    causal: bool  # queries may not look at later keys
    q_unrotated: np.ndarray | None = None  # RoPE models: hook_q and hook_k, before the rotation
    k_unrotated: np.ndarray | None = None
    # The layer's own scaling and window (its attention module's): scores = q·k / divisor, None meaning
    # sqrt(d_head) (Gemma 3: sqrt(query_pre_attn_scalar)); window > 0: a causal query sees that many keys.
    divisor: float | None = None
    window: int = 0

    @property
    def rope(self) -> bool:
        return self.q_unrotated is not None

    @property
    def n_heads(self) -> int:
        return int(self.q.shape[1])

    @property
    def n_kv_heads(self) -> int:
        return int(self.k.shape[1])

    @property
    def d_head(self) -> int:
        return int(self.q.shape[2])


def layer_tensors(activations: dict[str, np.ndarray], kind: str, layer: int, model=None) -> LayerTensors:
    """The arrays of one kind and layer out of a full activation cache (hook name -> [1, ...]); with
    ``model``, the layer's own divisor and sliding window (else sqrt(d_head) and none)."""
    k = get_kind(kind)
    divisor, window = None, 0
    if model is not None:
        module = model.get_submodule(hook_name(k, layer, "q").rsplit(".", 1)[0])
        divisor, window = float(module.divisor), int(module.window)

    def get(what: str) -> np.ndarray:
        return np.asarray(activations[hook_name(k, layer, what)][0])

    rope = hook_name(k, layer, "rot_q") in activations
    return LayerTensors(
        q=get("rot_q") if rope else get("q"),
        k=get("rot_k") if rope else get("k"),
        v=get("v"),
        raw_scores=get("raw_scores"),
        scores=get("scores"),
        pattern=get("pattern"),
        z=get("z"),
        causal=k.causal,
        q_unrotated=get("q") if rope else None,
        k_unrotated=get("k") if rope else None,
        divisor=divisor,
        window=window,
    )


@entry
def layer_tensors_for(bundle: Bundle, text: str, direction: str | None, kind: str, layer: int,
                      strategy: Strategy | None = None, max_new: int | None = None) -> LayerTensors:
    """q, k, v, scores, pattern and z of one attention layer for this input, decoded as the page's
    analysis was (``strategy``, ``max_new``: the sidebar's), so both hold the same positions.

    ``direction`` None lets the task detect it; raises ``InputError`` for unusable input like
    ``analyze``.
    """
    wanted = {hook_name(kind, layer, what) for what in LAYER_HOOKS}
    result = analyze(bundle, text, direction, strategy=strategy, max_new=max_new, keep=wanted.__contains__)
    return layer_tensors(result.activations, kind, layer, bundle.model)
