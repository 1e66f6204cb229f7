"""Positional information: sinusoidal and learned tables (added to embeddings), rotary (RoPE) and T5's
relative position bias (added to the attention scores)."""

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
    pair_factors: tuple[float, ...] = (), scale: float = 1.0, start: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotation angles of positions ``start`` to ``length`` - 1, each [pos, d_head/2]
    (a decoding step's own positions: the whole table's rows from ``start``, exactly). ``factor`` (linear
    RoPE scaling): every frequency divided by it, as if positions were pos / factor. ``pair_factors``
    (longrope, Phi-3): pair i's frequency divided by its own factor; ``scale``: cos and sin both multiplied
    by it (longrope's attention factor, so every q . k is scale^2 larger)."""
    if pair_factors:  # 1 / (factor_i * base^(2i/d)), the order of operations transformers uses
        shape = torch.arange(0, d_head, 2, dtype=torch.int64, device=device).float() / d_head
        inv_freq = 1.0 / (torch.tensor(pair_factors, dtype=torch.float32, device=device) * base**shape)
    else:
        inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=torch.float32, device=device) / d_head)
    if factor != 1.0:
        inv_freq = inv_freq / factor
    positions = torch.arange(start, length, dtype=torch.float32, device=device)[:, None]  # [pos, 1]
    angles = positions * inv_freq  # [pos, d_head/2]
    if scale != 1.0:
        return angles.cos() * scale, angles.sin() * scale
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (even, odd) pair of x [batch, pos, head, d_head] by its position's angle (cos, sin:
    [pos, d_head/2], :func:`rope_angles`)."""
    return rotate_pairs(x, rope_turns(cos, sin))


def rope_turns(cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """[pos, 1, d_head/2]: each pair's turn cos + i sin, broadcast over the heads (:func:`rotate_pairs`)."""
    return torch.complex(cos, sin)[:, None, :]


def rotate_pairs(x: torch.Tensor, turns: torch.Tensor) -> torch.Tensor:
    """x [batch, pos, head, d_head], each (even, odd) pair read as the complex number even + i odd and
    multiplied by its turn ([pos, 1, d_head/2], :func:`rope_turns`): (even cos - odd sin, even sin + odd cos).
    One complex product, equal to the four real ones (tests/model/network/test_positional.py): the real form
    wrote q and k out seven times, 2.3 ms a layer for 1,024 positions where this takes 0.13 ms."""
    if x.dtype not in (torch.float32, torch.float64):  # no complex type of their own on every device
        cos, sin = turns.real.to(x.dtype), turns.imag.to(x.dtype)
        x_even, x_odd = x[..., 0::2], x[..., 1::2]  # [batch, pos, head, d_head/2]
        return torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1).flatten(-2)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))  # [batch, pos, head, d_head/2]
    return torch.view_as_real(pairs * turns).flatten(-2)  # [batch, pos, head, d_head]


def relative_buckets(distance: torch.Tensor, bidirectional: bool, n_buckets: int,
                     max_distance: int) -> torch.Tensor:
    """The bucket of each distance (key position - query position), as T5 sorts them. Bidirectional (the
    encoder): half the buckets for keys after the query, half for keys at or before it; causal (the
    decoder): every bucket for the past, a later key falls in bucket 0 (the mask hides it anyway). Within a
    half, distances below half its buckets each get their own; larger ones share logarithmically wider
    buckets up to ``max_distance``; beyond it, the last bucket."""
    buckets = torch.zeros_like(distance)
    if bidirectional:
        n_buckets //= 2
        buckets = buckets + (distance > 0).long() * n_buckets
        distance = distance.abs()
    else:
        distance = -distance.clamp(max=0)
    exact = n_buckets // 2
    # the same float steps as T5's own code, so a distance at a bucket edge lands where it lands there
    wide = exact + (torch.log(distance.float() / exact) / math.log(max_distance / exact)
                    * (n_buckets - exact)).to(torch.long)
    wide = wide.clamp(max=n_buckets - 1)
    return buckets + torch.where(distance < exact, distance, wide)


def relative_bias(table: torch.Tensor, n_query: int, n_key: int, offset: int, bidirectional: bool,
                  max_distance: int, rows: slice = slice(None)) -> torch.Tensor:
    """[head, query rows, key_pos]: table [buckets, head] read at the bucket of each (query, key) distance;
    query i sits at position offset + i (decoding from a cache), ``rows`` a block of the queries."""
    start, stop, _ = rows.indices(n_query)
    query = torch.arange(start, stop, device=table.device)[:, None] + offset  # [rows, 1]
    key = torch.arange(n_key, device=table.device)[None, :]  # [1, key_pos]
    index = relative_buckets(key - query, bidirectional, table.shape[0], max_distance)  # [rows, key_pos]
    return table[index].permute(2, 0, 1)  # [head, rows, key_pos]


class RelativePositionBias(nn.Module):
    """T5's relative position bias: one learned number per head and distance bucket, added to the scores
    (pos_encoding "relative"). The first self-attention of a stack holds it, the others read it."""

    def __init__(self, n_buckets: int, n_heads: int, bidirectional: bool, max_distance: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_buckets, n_heads) * 0.02)  # [bucket, head]
        self.bidirectional, self.max_distance = bidirectional, max_distance
        self._last: tuple | None = None  # (sizes, weight version, bias): every layer of a pass reads one bias

    def forward(self, n_query: int, n_key: int, offset: int = 0) -> torch.Tensor:
        """[1, head, query_pos, key_pos], broadcast over the batch. Outside autograd the last one is kept,
        so the layers of one pass (and one decoding step) build it once, as T5 does; a change of the
        table (its version) builds it again."""
        key = (n_query, n_key, offset, self.weight._version, self.weight.data_ptr())
        if not torch.is_grad_enabled() and self._last is not None and self._last[0] == key:
            return self._last[1]
        bias = relative_bias(self.weight, n_query, n_key, offset, self.bidirectional, self.max_distance)[None]
        self._last = None if torch.is_grad_enabled() else (key, bias)
        return bias
