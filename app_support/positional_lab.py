"""Computations behind the positional-encoding lab (numpy and torch; figures live in viz/positional.py).

* The sinusoidal table in float64 and the shift matrix M_k with PE(pos + k) = M_k · PE(pos): one
  2×2 rotation per frequency pair, so the encoding of a position k steps later is a fixed linear
  function of the encoding now (the relative-position property of the 2017 paper).
* RoPE, with the model's own functions (``rope_angles``, ``apply_rope``): the rotation angle per
  position step of each pair, and q · k for one q and one k moved to every pair of positions.
* The two vectors added at the encoder's input for a sentence, read from the real hooks
  ``encoder.embed.hook_embed`` and ``encoder.embed.hook_pos_embed`` (cached per input).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from app_support import gateway as G
from model.analysis import analyze
from model.network.positional import apply_rope, rope_angles

EMBED_HOOK = "encoder.embed.hook_embed"
POS_HOOK = "encoder.embed.hook_pos_embed"


def sinusoidal_table64(n_pos: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(...), float64 ``[n_pos, d_model]``."""
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even and >= 2, got {d_model}")
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    angles = pos / base ** (two_i / d_model)  # [pos, d_model/2]
    table = np.empty((n_pos, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """ω_i = 1 / base^(2i/d) of each pair (2i, 2i+1), float64 ``[d_model/2]``."""
    return 1.0 / base ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def shift_matrix(d_model: int, k: int, base: float = 10000.0) -> np.ndarray:
    """M_k (float64 ``[d, d]``) with PE(pos + k) = M_k · PE(pos) for every pos.

    Block diagonal: pair (sin, cos) of frequency ω turns by the angle kω,
    sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω).
    """
    theta = k * sinusoidal_frequencies(d_model, base)
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    even = np.arange(0, d_model, 2)
    m[even, even] = c
    m[even, even + 1] = s
    m[even + 1, even] = -s
    m[even + 1, even + 1] = c
    return m


def shift_errors(table: np.ndarray, k: int, base: float = 10000.0) -> np.ndarray:
    """max_j |PE(pos + k) − M_k · PE(pos)|_j for pos = 0 … n_pos − k − 1 (float64 ``[n_pos − k]``)."""
    t = np.asarray(table, dtype=np.float64)
    n_pos, d = t.shape
    if not 0 <= k < n_pos:
        raise ValueError(f"k must be in [0, {n_pos - 1}], got {k}")
    shifted = t[: n_pos - k] @ shift_matrix(d, k, base).T  # row p: M_k · PE(p)
    return np.abs(t[k:] - shifted).max(axis=1)


# --------------------------------------------------------------------------- RoPE


def rope_frequencies(d_head: int) -> np.ndarray:
    """The model's rotation angle per position step of each pair (radians, ``[d_head/2]``).

    Read from ``rope_angles`` itself: the angle of position 1 (every angle is below π).
    """
    cos, sin = rope_angles(2, d_head)
    return np.arctan2(sin[1].double().numpy(), cos[1].double().numpy())


def rope_scores(d_head: int, n_pos: int, seed: int = 0) -> np.ndarray:
    """q · k (float32 ``[m, n]``) for one random q rotated to position m and one random k rotated to n.

    Uses the model's ``rope_angles`` and ``apply_rope``; the result depends on m − n only.
    """
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_head, generator=g)
    cos, sin = rope_angles(n_pos, d_head)  # [pos, d_head/2]
    q_rot = apply_rope(q.expand(1, n_pos, 1, d_head), cos, sin)[0, :, 0]  # [pos, d_head]
    k_rot = apply_rope(k.expand(1, n_pos, 1, d_head), cos, sin)[0, :, 0]
    return (q_rot @ k_rot.T).numpy()


# --------------------------------------------------------------------------- one sentence


@dataclass(frozen=True)
class InputVectors:
    """What the encoder adds at its input for one sentence (batch axis dropped, float32)."""

    tokens: list[str]
    embed: np.ndarray  # [pos, d_model], hook_embed: token embedding × sqrt(d_model)
    pos: np.ndarray | None  # [pos, d_model], hook_pos_embed; None for RoPE / no positional encoding

    @property
    def embed_norm(self) -> np.ndarray:
        return np.linalg.norm(self.embed, axis=-1)

    @property
    def pos_norm(self) -> np.ndarray | None:
        return None if self.pos is None else np.linalg.norm(self.pos, axis=-1)


def input_vectors(activations: dict[str, np.ndarray], tokens: list[str]) -> InputVectors:
    pos = activations.get(POS_HOOK)
    return InputVectors(list(tokens), np.asarray(activations[EMBED_HOOK][0]),
                        None if pos is None else np.asarray(pos))


@st.cache_data(max_entries=32, show_spinner=False)
def _input_vectors(name: str, stamp: int, text: str, direction: str | None) -> InputVectors:
    result = analyze(G.get_bundle(name), text, direction)
    return input_vectors(result.activations, result.source_tokens)


def get_input_vectors(name: str, text: str, direction: str | None = None) -> InputVectors:
    """The two hooks of the encoder's input for ``text`` (cached); raises InputError on unusable input."""
    if direction == "auto":
        direction = None
    return _input_vectors(name, G.stamp(name), text, direction)
