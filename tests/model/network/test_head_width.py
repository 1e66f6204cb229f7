"""A head width of its own (cfg.head_dim): heads wider or narrower than d_model / n_heads, as in Qwen3
(16 x 128 on 1,024: as wide) and Gemma 3 (4 x 256 on 640: wider). Q, K and V are n_heads x head_dim,
W_o maps that width back to d_model; the trace, the parameter count, the budget and the worked example
follow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from app_pages.glue.model import layer_weights
from model.data.tasks import SyntheticTask
from model.lab.worked import layer_tensors
from model.network.config import ConfigError, ModelConfig
from model.network.kinds import KINDS, hook_name
from model.network.trace import resolve, trace_shapes
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.budget import attention_layers, kept_bytes, pass_bytes
from model.store.bundle import Bundle
from tests.app.test_worked_example import check_head
from tests.conftest import padded_batch, tiny_config

WIDE = dict(d_model=32, n_heads=4, head_dim=12, n_kv_heads=2, pos_encoding="rope")  # 48 wide on 32


def _model(**overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(**{**WIDE, **overrides})).eval()


def _matrices(module) -> int:
    return sum(p.numel() for p in module.parameters() if p.dim() == 2)


def test_default_head_width_is_d_model_over_heads_and_old_configs_load():
    cfg = tiny_config()
    assert cfg.head_dim is None and cfg.d_head == 8
    old = cfg.to_dict()
    del old["head_dim"]  # a config.json written before the field existed
    assert ModelConfig.from_dict(old) == cfg
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg


def test_head_width_is_checked():
    assert tiny_config(d_model=30, n_heads=4, head_dim=8).d_head == 8  # d_model need not divide
    with pytest.raises(ConfigError, match="head_dim must be >= 1"):
        tiny_config(head_dim=0)
    with pytest.raises(ConfigError, match="head_dim must be <= 1024"):
        tiny_config(head_dim=4096)
    with pytest.raises(ConfigError, match="even d_head"):
        tiny_config(head_dim=7, pos_encoding="rope")
    with pytest.raises(ConfigError, match="divisible"):  # without head_dim the old rule holds
        tiny_config(d_model=30, n_heads=4)


@pytest.mark.parametrize("head_dim", [12, 4])
def test_shapes_and_parameter_count(head_dim):
    model = _model(head_dim=head_dim)
    attn = model.decoder.blocks[0].self_attn
    assert attn.W_q.weight.shape == (4 * head_dim, 32) and attn.W_k.weight.shape == (2 * head_dim, 32)
    assert attn.W_v.weight.shape == (2 * head_dim, 32) and attn.W_o.weight.shape == (32, 4 * head_dim)
    src, tgt = padded_batch()
    with torch.no_grad():
        logits, cache = model.run_with_cache(src, tgt)
    assert logits.shape == (2, 6, 40)
    assert cache[hook_name("decoder", 0, "q")].shape == (2, 6, 4, head_dim)
    assert cache[hook_name("cross", 1, "k")].shape == (2, 7, 2, head_dim)
    assert cache[hook_name("encoder", 0, "z")].shape == (2, 7, 4, head_dim)
    assert cache[hook_name("encoder", 0, "out")].shape == (2, 7, 32)
    weights = layer_weights(model.cfg)  # the model page's caption and formula
    assert weights["attn"] == _matrices(attn) == 2 * 32 * 4 * head_dim + 2 * 32 * 2 * head_dim
    assert "h·d_head" in weights["attn_formula"]
    # the whole count, from the config alone: every attention module the same
    per_attention = _matrices(attn) + sum(p.numel() for p in attn.parameters() if p.dim() == 1)
    attention_modules = [m for m in model.modules() if type(m).__name__ == "MultiHeadAttention"]
    assert len(attention_modules) == 2 + 2 * 2
    assert sum(sum(p.numel() for p in m.parameters()) for m in attention_modules) == 6 * per_attention


def test_trace_symbols_resolve_with_a_head_width_of_its_own():
    model = _model()
    src, tgt = padded_batch()
    with trace_shapes() as trace:
        model.run_with_cache(src, tgt)
    assert trace.sizes["d_head"] == 12 and trace.sizes["d_model"] == 32
    for step in trace.steps:
        assert resolve(step.out_symbol, trace.sizes) == step.out_shape, step
        for sym, shape in zip(step.in_symbols, step.in_shapes, strict=True):
            assert resolve(sym, trace.sizes) == shape, step
    merged = [s for s in trace.steps if s.op == "merge heads: view"]
    assert merged and all(s.out_symbol[-1] == "h*d_head" and s.out_shape[-1] == 48 for s in merged)


def test_budget_counts_the_heads_width():
    wide, plain = tiny_config(**WIDE), tiny_config(**{**WIDE, "head_dim": None})
    # queries and keys grow with the head width; the value norms (one float a head and key) do not
    norms = 4 * 16 * attention_layers(wide) * wide.n_heads
    assert kept_bytes(wide, 16) - norms == (kept_bytes(plain, 16) - norms) * 12 // 8
    assert pass_bytes(wide, 16) > pass_bytes(plain, 16)


def test_analysis_and_worked_example_on_wide_heads():
    task = SyntheticTask("reverse")
    model = _model(vocab_size=task.tokenizer.vocab_size)
    bundle = Bundle(name="wide", model=model, task=task, directory=Path("."))
    result = analyze(bundle, "abcdef", target="fedcba")
    for kind in KINDS:
        pattern = result.attention(kind)
        assert pattern.shape[1] == 4 and np.allclose(pattern.sum(-1), 1, atol=1e-5)
    src, tgt = torch.tensor([[5, 6, 7, 8, 9]]), torch.tensor([[1, 9, 10, 11]])
    with torch.no_grad():
        _, cache = model.run_with_cache(src, tgt)
    acts = cache.to_numpy()
    for kind in KINDS:
        data = layer_tensors(acts, kind, 1)
        assert data.d_head == 12 and data.n_kv_heads == 2
        for head in range(data.n_heads):
            check_head(data, head)
