"""The 2017 paper's formulas in float64 for the positional-encoding lab (numpy only; figures live in
viz/positional.py, RoPE and the model's own numbers in model/lab/positional.py).

The sinusoidal table and the shift matrix M_k with PE(pos + k) = M_k · PE(pos): one 2×2 rotation per
frequency pair, so the encoding of a position k steps later is a fixed linear function of the encoding
now (the relative-position property of the 2017 paper).
"""

from __future__ import annotations

import numpy as np


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
