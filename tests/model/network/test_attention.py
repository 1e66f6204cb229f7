"""The explicit attention equals PyTorch's fused kernel, and masking behaves."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from model.network.attention import MultiHeadAttention, build_mask, masked_softmax
from model.network.config import ConfigError, ModelConfig


def fused_reference(attn: MultiHeadAttention, x_q, x_kv, key_padding, causal):
    B, Lq, _ = x_q.shape
    Lk = x_kv.shape[1]
    H, Hkv, dh = attn.n_heads, attn.n_kv_heads, attn.d_head
    q = attn.W_q(x_q).view(B, Lq, H, dh).transpose(1, 2)
    k = attn.W_k(x_kv).view(B, Lk, Hkv, dh).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
    v = attn.W_v(x_kv).view(B, Lk, Hkv, dh).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
    mask = build_mask(key_padding, Lq, Lk, causal)
    allowed = None if mask is None else ~mask
    z = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    return attn.W_o(z.transpose(1, 2).reshape(B, Lq, H * dh))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_explicit_attention_matches_sdpa(causal, padded, kv_heads):
    torch.manual_seed(1)
    cfg = ModelConfig(vocab_size=10, d_model=32, n_heads=4, n_kv_heads=kv_heads, d_ff=64, dropout=0.0)
    attn = MultiHeadAttention(cfg, "L", "L", causal=causal, rotary=False).eval()
    x = torch.randn(3, 6, 32)
    pad = None
    if padded:
        pad = torch.zeros(3, 6, dtype=torch.bool)
        pad[1, 4:] = True
        pad[2, 2:] = True
    with torch.no_grad():
        ours = attn(x, x, pad)
        ref = fused_reference(attn, x, x, pad, causal)
    assert (ours - ref).abs().max().item() <= 1e-5


def test_cross_attention_matches_sdpa_with_different_lengths():
    torch.manual_seed(2)
    cfg = ModelConfig(vocab_size=10, d_model=32, n_heads=4, d_ff=64, dropout=0.0)
    attn = MultiHeadAttention(cfg, "L_tgt", "L_src", causal=False, rotary=False).eval()
    y, mem = torch.randn(2, 3, 32), torch.randn(2, 7, 32)
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[0, 5:] = True
    with torch.no_grad():
        assert (attn(y, mem, pad) - fused_reference(attn, y, mem, pad, False)).abs().max() <= 1e-5


def test_fully_masked_row_is_zero_not_nan():
    scores = torch.randn(1, 2, 3, 4)
    mask = torch.zeros(1, 1, 3, 4, dtype=torch.bool)
    mask[..., 1, :] = True  # query 1 may look nowhere
    masked = scores.masked_fill(mask, float("-inf"))
    masked.requires_grad_(True)
    p = masked_softmax(masked, mask)
    assert torch.isfinite(p).all()
    assert (p[..., 1, :] == 0).all()
    assert torch.allclose(p[..., 0, :].sum(-1), torch.ones(1, 2))
    p.sum().backward()
    assert torch.isfinite(masked.grad).all()


@settings(max_examples=30, deadline=None)
@given(
    lq=st.integers(1, 6),
    lk=st.integers(1, 6),
    seed=st.integers(0, 10_000),
    pad_from=st.integers(0, 6),
)
def test_softmax_rows_sum_to_one_over_unmasked_keys(lq, lk, seed, pad_from):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(1, 2, lq, lk, generator=g) * 5
    pad = torch.zeros(1, lk, dtype=torch.bool)
    pad[0, min(pad_from, lk) :] = True
    mask = build_mask(pad, lq, lk, causal=False)
    p = masked_softmax(scores.masked_fill(mask, float("-inf")), mask)
    visible = (~pad).sum().item()
    expected = torch.full((1, 2, lq), 1.0 if visible else 0.0)
    assert torch.allclose(p.sum(-1), expected, atol=1e-6)
    assert (p[..., pad[0]] == 0).all()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(d_model=30, n_heads=4), "divisible by n_heads"),
        (dict(n_heads=4, n_kv_heads=3), "n_kv_heads"),
        (dict(norm="batchnorm"), "norm must be"),
        (dict(activation="tanh"), "activation"),
        (dict(pos_encoding="alibi"), "pos_encoding"),
        (dict(dropout=1.5), "dropout"),
        (dict(d_model=24, n_heads=8, pos_encoding="rope"), "even d_head"),
    ],
)
def test_invalid_configs_are_rejected_with_a_reason(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ModelConfig(**kwargs)
