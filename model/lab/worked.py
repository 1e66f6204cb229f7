"""The full activations of one attention layer, for the worked example (attention by hand).

The analysis the app shares between its pages records only attention patterns and scores
(``keep=attention_only``). Working attention out by hand needs the layer's q, k, v, raw scores and z, so
:func:`layer_tensors_for` runs ``model.run.analysis.analyze`` again (under the model's lock, which
``analyze`` takes) recording the hooks of that one attention kind and layer only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..decoding.strategy import Strategy
from ..network.kinds import get_kind, hook_name
from ..run.analysis import analyze
from ..store.bundle import Bundle
from . import entry

#: The hooks of one attention module the hand computation reads (rot_*: RoPE models only; *_normed:
#: QK-norm models only, Qwen3, Gemma 3, OLMo 2; position_bias: T5's self-attentions only).
LAYER_HOOKS = ("q", "k", "v", "q_normed", "k_normed", "rot_q", "rot_k",
               "raw_scores", "position_bias", "scores",
               "pattern", "z")


@dataclass(frozen=True)
class QKNorm:
    """The layer's QK-norm, as its modules hold it: a norm of q and k before RoPE, over each head's
    d_head ("head": Qwen3, Gemma 3) or over each position's whole projection ("full": OLMo 2)."""

    over: str  # "head" or "full"
    kind: str  # "rmsnorm" (x / rms(x) * weight) or "layernorm" ((x - mean) / std * weight + bias)
    eps: float
    q_weight: np.ndarray  # [d_head] ("head") or [head * d_head] ("full"); Gemma's already holds 1 + w
    k_weight: np.ndarray  # [d_head] or [kv_head * d_head]
    q_bias: np.ndarray | None = None  # layernorm only
    k_bias: np.ndarray | None = None


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
    # QK-norm models: q and k after the norm, before RoPE (hook_q_normed, hook_k_normed), and the norm;
    # q_unrotated / k_unrotated are then the projections before it (hook_q, hook_k)
    q_normed: np.ndarray | None = None
    k_normed: np.ndarray | None = None
    qk_norm: QKNorm | None = None
    # RoPE models: the rotation of this layer (its own base: Gemma 3's local and global layers differ)
    rotary_dims: int = 0  # dims of each head that turn, the first ones in (even, odd) pairs; the rest pass
    rope_base: float = 10000.0
    rope_factor: float = 1.0  # linear RoPE scaling: positions divided by it
    # longrope (Phi-3): the factors this sequence was rotated with (each pair's angle divided by its own)
    # and the attention factor (cos and sin times it); ((), 1.0) for plain RoPE
    rope_pairs: tuple[float, ...] = ()
    rope_scale: float = 1.0
    rope_switch: int = 0  # longrope: the longest sequence the short factors serve (0: no longrope)
    # T5: the relative position bias the layer added to its scaled scores (hook_position_bias)
    position_bias: np.ndarray | None = None  # [head, query_pos, key_pos]

    @property
    def q_before_rotation(self) -> np.ndarray | None:
        """What RoPE turned: q after QK-norm where there is one, else the projection."""
        return self.q_normed if self.q_normed is not None else self.q_unrotated

    @property
    def k_before_rotation(self) -> np.ndarray | None:
        return self.k_normed if self.k_normed is not None else self.k_unrotated

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
    divisor, window, norm, rotation = None, 0, None, {}
    if model is not None:
        module = model.get_submodule(hook_name(k, layer, "q").rsplit(".", 1)[0])
        divisor, window, norm = float(module.divisor), int(module.window), _qk_norm(module)
        if module.rotary:
            length = int(activations[hook_name(k, layer, "q")].shape[1])  # the pass's whole sequence
            pairs, scale = module.rope_pass(length)
            rotation = dict(rotary_dims=int(module.rotary_dims), rope_base=float(module.rope_theta),
                            rope_factor=float(module.rope_factor), rope_pairs=tuple(pairs),
                            rope_scale=float(scale), rope_switch=module.longrope[2] if module.longrope else 0)

    def get(what: str) -> np.ndarray:
        return np.asarray(activations[hook_name(k, layer, what)][0])

    def maybe(what: str) -> np.ndarray | None:
        return get(what) if hook_name(k, layer, what) in activations else None

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
        q_normed=maybe("q_normed"),
        k_normed=maybe("k_normed"),
        qk_norm=norm,
        position_bias=maybe("position_bias"),
        **rotation,
    )


def _copy(parameter: torch.Tensor) -> np.ndarray:
    return parameter.detach().float().numpy().copy()  # not a view of the weights


def _weights(norm) -> tuple[np.ndarray, np.ndarray | None]:
    bias = getattr(norm, "bias", None)
    return _copy(norm.weight), None if bias is None else _copy(bias)


def _qk_norm(module) -> QKNorm | None:
    """The attention module's QK-norm (None: it has none), its weights copied out of the model."""
    if module.q_norm is None:
        return None
    (q_weight, q_bias), (k_weight, k_bias) = _weights(module.q_norm), _weights(module.k_norm)
    kind = "layernorm" if isinstance(module.q_norm, torch.nn.LayerNorm) else "rmsnorm"
    return QKNorm(module.qk_norm, kind, float(module.q_norm.eps), q_weight, k_weight, q_bias, k_bias)


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
