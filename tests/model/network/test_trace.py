"""The shape trace is recorded from real tensors, and its symbols agree with its numbers."""

import pytest
import torch

from model.network.trace import parameter_counts, resolve, trace_shapes
from model.network.transformer import Transformer
from tests.conftest import padded_batch, tiny_config


@pytest.mark.parametrize("variant", [dict(), dict(norm_first=False), dict(pos_encoding="rope", n_kv_heads=2)])
def test_every_step_shape_resolves_from_its_symbols(variant):
    model = Transformer(tiny_config(**variant)).eval()
    src, tgt = padded_batch()
    with trace_shapes() as trace:
        model.run_with_cache(src, tgt)
    assert trace.sizes["B"] == 2 and trace.sizes["L_src"] == 7 and trace.sizes["L_tgt"] == 6
    assert len(trace.steps) > 50
    for step in trace.steps:
        assert resolve(step.out_symbol, trace.sizes) == step.out_shape, step
        for sym, shape in zip(step.in_symbols, step.in_shapes, strict=True):
            assert resolve(sym, trace.sizes) == shape, step


def test_hooked_steps_match_the_cached_tensors():
    model = Transformer(tiny_config()).eval()
    src, tgt = padded_batch()
    with trace_shapes() as trace:
        _, cache = model.run_with_cache(src, tgt)
    hooked = [s for s in trace.steps if s.hook]
    assert len({s.hook for s in hooked}) >= 30
    for step in hooked:
        assert tuple(cache[step.hook].shape) == step.out_shape, step.hook


def test_trace_covers_the_papers_steps_in_order():
    model = Transformer(tiny_config(n_enc_layers=1, n_dec_layers=1)).eval()
    src, tgt = padded_batch()
    with trace_shapes() as trace:
        model(src, tgt)
    ops = [s.op for s in trace.steps if s.name == "encoder.blocks.0.attn"]
    expected_order = [
        "linear Q = x W_q",
        "split heads: view Q",
        "transpose Q to heads-first",
        "scores = Q K^T",
        "scale by 1 / sqrt(d_head)",
        "softmax over key positions",
        "weighted sum: pattern @ V",
        "transpose back to positions-first",
        "contiguous (copy into a dense layout)",
        "merge heads: view",
        "output projection W_o",
    ]
    positions = [ops.index(op) for op in expected_order]
    assert positions == sorted(positions)
    first, last = trace.steps[0], trace.steps[-1]
    assert first.op.startswith("embedding lookup") and first.in_symbols == [("B", "L_src")]
    assert last.out_symbol == ("B", "L_tgt", "V")
    cross = [s for s in trace.steps if s.name == "decoder.blocks.0.cross_attn" and s.op.startswith("scores")]
    assert cross[0].out_symbol == ("B", "h", "L_tgt", "L_src")


def test_nothing_recorded_outside_a_trace_block():
    model = Transformer(tiny_config()).eval()
    src, tgt = padded_batch()
    with trace_shapes() as trace:
        pass
    model(src, tgt)
    assert trace.steps == []


def test_parameter_counts_add_up_and_ffn_is_twice_attention():
    model = Transformer(tiny_config(d_model=64, d_ff=256, n_heads=4))
    counts = parameter_counts(model)
    assert sum(counts.values()) == sum(p.numel() for p in model.parameters())
    attn = counts["encoder.blocks.0.attn"]
    mlp = counts["encoder.blocks.0.mlp"]
    # 4 d^2 (+ biases) for attention vs 2 * d * 4d (+ biases) for the FFN: the ratio is about 2.
    assert 1.9 < mlp / attn < 2.1
    assert "unembed" not in counts  # tied to the embedding, counted once


def test_untied_output_projection_is_counted():
    counts = parameter_counts(Transformer(tiny_config(tie_embeddings=False)))
    assert counts["unembed"] == 40 * 32


def test_trace_of_a_gqa_model_names_the_sharing_step():
    model = Transformer(tiny_config(n_kv_heads=1)).eval()
    src, tgt = padded_batch()
    with trace_shapes() as trace, torch.no_grad():
        model(src, tgt)
    share = [s for s in trace.steps if "GQA" in s.op]
    assert share and share[0].in_shapes[0][1] == 1 and share[0].out_shape[1] == 4


def test_trace_step_to_dict_holds_every_field_as_json_data():
    import dataclasses
    import json

    from model.network.trace import TraceStep

    sym = ("B", "h", "L_src", "L_src")
    step = TraceStep("encoder.blocks.0.attn", "softmax", "encoder.blocks.0.attn.hook_pattern",
                     [(1, 4, 5, 5)], (1, 4, 5, 5), [sym], sym, note="n")
    d = step.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(TraceStep)}
    expected = json.loads(json.dumps(dataclasses.asdict(step)))  # tuples become lists, as in JSON
    assert d == expected
