"""The model page's parameter caption: each attention and feed-forward layer's weight count, and the
formula it follows, equal the matrices of the loaded network (plain, shared key/value heads, gated)."""

from __future__ import annotations

import pytest

from app_pages.glue.model import layer_weights
from model.store.registry import load_model


def _matrices(module) -> int:
    return sum(p.numel() for p in module.parameters() if p.dim() == 2)


@pytest.mark.parametrize("name,formula", [("default", "4·d_model²"), ("variant-gqa", "h_kv"),
                                          ("induction", "4·d_model²")])
def test_caption_counts_are_the_modules_weights(name, formula):
    bundle = load_model(name)
    block = bundle.model.decoder.blocks[0]
    weights = layer_weights(bundle.cfg)
    assert weights["attn"] == _matrices(block.self_attn) and formula in weights["attn_formula"]
    assert weights["ffn"] == _matrices(block.mlp) and weights["ffn_formula"] == "2·d_model·d_ff"


@pytest.mark.slow
def test_smollm2_shares_key_value_heads_and_has_a_gated_feed_forward():
    bundle = load_model("smollm2")
    block = bundle.model.decoder.blocks[0]
    weights = layer_weights(bundle.cfg)
    assert weights["attn"] == _matrices(block.self_attn) == 2 * 576 * 576 + 2 * 576 * 3 * 64
    assert weights["ffn"] == _matrices(block.mlp) and weights["ffn_formula"] == "3·d_model·d_ff"
