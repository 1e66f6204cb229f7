"""The full activations of one attention layer, for the worked-example page.

The cached analysis (:func:`app_support.models.get_analysis`) keeps only attention patterns and
scores. Working attention out by hand needs the layer's q, k, v, raw scores and z, so this module
runs ``model.analysis.analyze`` again (under the model's lock, which ``analyze`` takes) and keeps
only the arrays of one attention kind and layer, cached per (model, text, direction, kind, layer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_support import gateway as G
from model.analysis import analyze
from model.network.kinds import get_kind, hook_name


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


def layer_tensors(activations: dict[str, np.ndarray], kind: str, layer: int) -> LayerTensors:
    """The arrays of one kind and layer out of a full activation cache (hook name -> [1, ...])."""
    k = get_kind(kind)

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
    )


@st.cache_data(max_entries=32, show_spinner=False)
def _tensors(name: str, stamp: int, text: str, direction: str | None, kind: str, layer: int) -> LayerTensors:
    return layer_tensors(analyze(G.get_bundle(name), text, direction).activations, kind, layer)


def get_layer_tensors(name: str, text: str, direction: str | None, kind: str, layer: int) -> LayerTensors:
    """q, k, v, scores, pattern and z of one attention layer for this input (cached).

    Same arguments as :func:`app_support.models.get_analysis` (``direction`` "auto" = None), plus
    the kind and layer; raises ``InputError`` for unusable input like it.
    """
    if direction == "auto":
        direction = None
    return _tensors(name, G.stamp(name), text, direction, kind, int(layer))
