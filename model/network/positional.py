"""Positional information: sinusoidal and learned tables (added to embeddings) and rotary (RoPE)."""

from __future__ import annotations

import math

import torch
from torch import nn


def sinusoidal_table(max_len: int, d_model: int, layout: str = "interleaved") -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...), as in the paper; layout "halves"
    (Marian): the same sines in the first half of the row, the same cosines in the second."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # [pos, 1]
    i = torch.arange(0, d_model, 2, dtype=torch.float32)  # [d_model/2]
    inv_freq = torch.exp(-math.log(10000.0) * i / d_model)  # [d_model/2]
    table = torch.zeros(max_len, d_model)  # [pos, d_model]
    if layout == "halves":
        half = d_model // 2
        table[:, :half] = torch.sin(pos * inv_freq[:half])
        table[:, half:] = torch.cos(pos * inv_freq[:half])
        return table
    table[:, 0::2] = torch.sin(pos * inv_freq)
    table[:, 1::2] = torch.cos(pos * inv_freq[: d_model // 2])
    return table


class SinusoidalPositions(nn.Module):
    def __init__(self, max_len: int, d_model: int, layout: str = "interleaved"):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, d_model, layout), persistent=False)

    def forward(self, length: int) -> torch.Tensor:
        return self.table[:length]  # [pos, d_model]


class LearnedPositions(nn.Module):
    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, length: int) -> torch.Tensor:
        return self.table[:length]  # [pos, d_model]


def rope_angles(
    length: int, d_head: int, base: float = 10000.0, device=None, factor: float = 1.0,
    pair_factors: tuple[float, ...] = (), scale: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotation angles, each [pos, d_head/2]. ``factor`` (linear RoPE scaling):
    every frequency divided by it, as if positions were pos / factor. ``pair_factors`` (longrope,
    Phi-3): pair i's frequency divided by its own factor; ``scale``: cos and sin both multiplied by it
    (longrope's attention factor, so every q . k is scale^2 larger)."""
    if pair_factors:  # 1 / (factor_i * base^(2i/d)), the order of operations transformers uses
        shape = torch.arange(0, d_head, 2, dtype=torch.int64, device=device).float() / d_head
        inv_freq = 1.0 / (torch.tensor(pair_factors, dtype=torch.float32, device=device) * base**shape)
    else:
        inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=torch.float32, device=device) / d_head)
    if factor != 1.0:
        inv_freq = inv_freq / factor
    angles = torch.arange(length, dtype=torch.float32, device=device)[:, None] * inv_freq  # [pos, d_head/2]
    if scale != 1.0:
        return angles.cos() * scale, angles.sin() * scale
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (even, odd) pair of x [batch, pos, head, d_head] by its position's angle."""
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # [batch, pos, head, d_head/2]
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    out = torch.empty_like(x)
    out[..., 0::2] = x_even * cos - x_odd * sin
    out[..., 1::2] = x_even * sin + x_odd * cos
    return out
