"""Decoder-only networks and the options pretrained LLMs need (model/network/config.py)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from model.decoding.beam import beam_search
from model.decoding.decoders import greedy_decode
from model.network.config import ConfigError, ModelConfig
from model.network.kinds import hook_name, kinds_present
from model.network.layers import FeedForward
from model.network.positional import rope_angles
from model.network.trace import trace_shapes
from model.network.transformer import Transformer
from model.run.interventions import CausalMask, HeadOutput, NoPositionalEncoding, NoScaling, intervene


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)


def _cfg(**kw) -> ModelConfig:
    base = dict(vocab_size=40, d_model=16, n_heads=4, d_ff=24, n_enc_layers=0, n_dec_layers=2, max_len=16,
                dropout=0.0, decoder_only=True, scale_embeddings=False)
    return ModelConfig(**{**base, **kw})


def _llama_like(**kw) -> ModelConfig:
    base = dict(norm="rmsnorm", activation="silu", gated_ffn=True, pos_encoding="rope", rope_theta=500.0,
                qkv_bias=False, out_bias=False, ffn_bias=False, tie_embeddings=False, n_kv_heads=2)
    return _cfg(**{**base, **kw})


IDS = torch.tensor([[3, 5, 7, 9, 11, 4], [6, 8, 10, 12, 14, 2]])

#: The decoder families the Hugging Face loader builds, as tiny configs: hooks, the cache, the trace and
#: the interventions must work on each.
FAMILIES = {
    "llama": lambda: _llama_like(),
    "qwen3": lambda: _llama_like(head_dim=8, qk_norm="head"),
    "olmo2": lambda: _llama_like(qk_norm="full", branch_norm="after"),
    "gpt_neox": lambda: _cfg(pos_encoding="rope", rotary_fraction=0.5, parallel_residual=True,
                             activation="gelu", tie_embeddings=False),
    # a local layer (window 3, its own RoPE base) then a global one (linear RoPE scaling)
    "gemma3": lambda: _llama_like(head_dim=8, qk_norm="head", branch_norm="both", activation="gelu_tanh",
                                  sliding_window=3, layer_pattern="lg", rope_local_theta=100.0,
                                  rope_linear_factor=2.0, score_divisor=3.0, scale_embeddings=True,
                                  embed_scale=4.0, logit_softcap=5.0),
    "phi3": lambda: _llama_like(rotary_fraction=0.5, sliding_window=3),  # the window on every layer
}


def test_decoder_only_checks():
    with pytest.raises(ConfigError, match="decoder_only needs n_enc_layers = 0"):
        _cfg(n_enc_layers=1)
    with pytest.raises(ConfigError, match="rope_theta must be > 1"):
        _cfg(rope_theta=0.5)
    with pytest.raises(ConfigError, match="activation must be one of"):
        _cfg(activation="swish")


def test_decoder_only_has_no_encoder_and_no_cross_attention():
    model = Transformer(_llama_like()).eval()
    assert model.encoder is None and model.decoder.blocks[0].cross_attn is None
    assert kinds_present(model.cfg) == ["decoder"]
    assert not any("cross" in n or n.startswith("encoder") for n in model.hook_points)
    logits, cache = model.run_with_cache(IDS)
    assert logits.shape == (2, 6, 40)
    pattern = cache[hook_name("decoder", 1, "pattern")]  # [batch, head, query_pos, key_pos]
    assert pattern.shape == (2, 4, 6, 6) and torch.all(pattern.triu(1) == 0)
    raw, scores = cache[hook_name("decoder", 0, "raw_scores")], cache[hook_name("decoder", 0, "scores")]
    assert raw.isfinite().all() and torch.isinf(scores[..., 0, 1]).all()
    with pytest.raises(ValueError, match="decoder-only"):
        model(IDS, IDS)


def test_causal_prefix_does_not_depend_on_later_tokens():
    model = Transformer(_cfg(pos_encoding="learned", activation="gelu_tanh")).eval()
    changed = IDS.clone()
    changed[:, -1] = 13
    with torch.no_grad():
        assert torch.allclose(model(IDS)[:, :-1], model(changed)[:, :-1], atol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_continuation_through_the_cache_matches_full_passes(family):
    model = Transformer(FAMILIES[family]()).eval()
    prompt = [3, 5, 7]
    new = greedy_decode(model, [prompt], [prompt], eos_id=-1, max_new=5)[0]  # no encoder: memory None
    out = prompt + new
    assert len(out) == 8
    with torch.no_grad():
        full = model(torch.tensor([out]))[0].argmax(-1).tolist()  # [pos]
    assert out[3:] == full[2:-1]
    long_prompt = list(range(1, 15))
    assert len(greedy_decode(model, [long_prompt], [long_prompt], -1, max_new=10)[0]) == 2  # max_len 16
    assert (beam_search(model, [prompt], [prompt], -1, width=1, max_new=5)[0].best.ids == new)


def test_gated_ffn_is_swiglu_and_biases_follow_the_config():
    cfg = _llama_like()
    ffn = FeedForward(cfg, "L_tgt")
    x = torch.randn(2, 3, 16)
    expected = ffn.W_out(nn.functional.silu(ffn.W_gate(x)) * ffn.W_in(x))
    assert torch.allclose(ffn(x), expected)
    assert ffn.W_gate.bias is None and ffn.W_out.bias is None
    attn = Transformer(cfg).decoder.blocks[0].self_attn
    assert attn.W_q.bias is None and attn.W_o.bias is None
    qwen = Transformer(ModelConfig(**{**cfg.to_dict(), "qkv_bias": True})).decoder.blocks[0]
    assert qwen.self_attn.W_k.bias is not None and qwen.self_attn.W_o.bias is None
    gpt2 = FeedForward(_cfg(activation="gelu_tanh"), "L_tgt")
    assert gpt2.W_gate is None and gpt2.W_in.bias is not None
    assert torch.allclose(gpt2.act(x), nn.functional.gelu(x, approximate="tanh"))


def test_rope_theta_reaches_the_rotation():
    model = Transformer(_llama_like()).eval()
    _, cache = model.run_with_cache(IDS[:1])
    attn = model.decoder.blocks[0].self_attn
    q = cache[hook_name("decoder", 0, "q")]
    cos, sin = rope_angles(6, 4, 500.0)
    even, odd = q[..., 0::2], q[..., 1::2]
    rotated = cache[hook_name("decoder", 0, "rot_q")]
    assert torch.allclose(rotated[..., 0::2], even * cos[None, :, None] - odd * sin[None, :, None], atol=1e-6)
    assert attn.rope_theta == 500.0


def test_tied_and_separate_output_embeddings():
    tied = Transformer(_cfg(tie_embeddings=True))
    assert tied.unembed.weight is tied.token_embed.weight
    separate = Transformer(_llama_like())
    assert separate.unembed.weight is not separate.token_embed.weight


@pytest.mark.parametrize("family", FAMILIES)
def test_shape_trace_runs_on_a_decoder_only_model(family):
    model = Transformer(FAMILIES[family]()).eval()
    with trace_shapes() as trace:
        model(IDS)
    ops = [s.op for s in trace.steps]
    assert any("RoPE" in op for op in ops) and any("gate" in op for op in ops) == model.cfg.gated_ffn
    assert any("QK-norm" in op for op in ops) == (family in ("qwen3", "olmo2", "gemma3"))
    assert any("sliding window of 3" in op for op in ops) == (family in ("gemma3", "phi3"))
    assert not any(s.name.startswith("encoder") or "cross" in s.name for s in trace.steps)


@pytest.mark.parametrize("family", FAMILIES)
def test_interventions_work_on_a_decoder_only_model(family):
    model = Transformer(FAMILIES[family]()).eval()
    with torch.no_grad():
        base = model(IDS)
        edits = (CausalMask("off"), NoScaling(), NoPositionalEncoding(), HeadOutput("decoder", 0, 1, "zero"))
        for edit in edits:
            with intervene(model, edit) as edited:
                changed = edited(IDS)
            assert not torch.allclose(changed, base), edit
        assert torch.allclose(model(IDS), base)  # every edit is undone


def test_removing_learned_positions_works_on_a_gpt2_like_model():
    model = Transformer(_cfg(pos_encoding="learned", activation="gelu_tanh")).eval()
    with torch.no_grad():
        base = model(IDS)
        with intervene(model, NoPositionalEncoding()) as edited:
            changed = edited(IDS)
        assert not torch.allclose(changed, base)
        assert torch.equal(model(IDS), base)  # and undone


@pytest.mark.parametrize("family", ["gemma3", "phi3"])
def test_the_sliding_window_is_the_same_in_the_fused_kernel_in_steps_and_while_decoding(family, monkeypatch):
    from model.network import attention

    model = Transformer(FAMILIES[family]()).eval()
    ids = torch.randint(3, 40, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        steps = model(ids)
        monkeypatch.setattr(attention, "FUSED_FROM_CELLS", 0)
        fused = model(ids)
        monkeypatch.undo()
        # one position at a time from a cache: the window counts back from each absolute position
        caches = [{} for _ in model.decoder.blocks]
        rows = [model.unembed(model.decoder(ids[:, i:i + 1], None, None, None, caches, i)) for i in range(9)]
    assert torch.allclose(fused, steps, atol=1e-5)
    assert torch.allclose(torch.cat(rows, dim=1), steps, atol=1e-5)
    first = model.decoder.blocks[0].self_attn
    assert first.window == 3 and first.divisor == (3.0 if family == "gemma3" else 2.0)
    if family == "gemma3":  # the global layer: no window, rope_theta scaled linearly; the local: its own base
        second = model.decoder.blocks[1].self_attn
        assert second.window == 0 and (second.rope_theta, second.rope_factor) == (500.0, 2.0)
        assert (first.rope_theta, first.rope_factor) == (100.0, 1.0)


def test_the_key_value_store_grows_and_follows_reordered_rows(monkeypatch):
    """A decoding cache writes each step into its store's room, grows it by a copy when full, and keeps the
    rows a beam continues (reordered, one row twice): each row's steps equal a full pass over its ids."""
    from model.network import attention

    monkeypatch.setattr(attention, "STORE_ROOM", 2)  # the store fills after 2 steps: it must grow
    model = Transformer(_llama_like(max_len=32)).eval()  # grouped heads: 4 query heads on 2 key heads
    ids = torch.randint(3, 40, (3, 12), generator=torch.Generator().manual_seed(5))
    order = torch.tensor([2, 0, 2])  # after step 6: row 2 continued twice, row 1 dropped
    with torch.no_grad():
        caches = [{} for _ in model.decoder.blocks]
        model.decoder(ids[:, :4], None, None, None, caches, 0)  # the prefill
        rooms = {caches[0]["k_store"].shape[2]}  # [batch, kv_head, room, d_head]
        seqs, rows = ids[:, :4], []
        for i in range(4, 12):
            if i == 7:
                attention.select_cache_rows(caches, order)
                seqs, rows = seqs[order], [r[order] for r in rows]
            new = ids[: len(seqs), i : i + 1] if i < 7 else ids[order, i : i + 1]
            seqs = torch.cat([seqs, new], dim=1)
            rows.append(model.unembed(model.decoder(new, None, None, None, caches, i)[:, -1]))
            rooms.add(caches[0]["k_store"].shape[2])
            held, store = caches[0]["k"], caches[0]["k_store"]
            assert held.shape[2] == i + 1 and held.data_ptr() == store.data_ptr()  # a view of the store
        full = model(seqs)[:, 4:]  # [3, 8, vocab]
    assert len(rooms) > 2  # it grew more than once
    assert torch.allclose(torch.stack(rows, dim=1), full, atol=1e-5)


def test_window_and_scaling_options_are_checked():
    with pytest.raises(ConfigError, match="sliding_window must be >= 0"):
        _cfg(sliding_window=-1)
    with pytest.raises(ConfigError, match="one letter per decoder layer"):
        _cfg(sliding_window=3, layer_pattern="l")
    with pytest.raises(ConfigError, match="only 'l'"):
        _cfg(sliding_window=3, layer_pattern="lx")
    with pytest.raises(ConfigError, match="names local layers but sliding_window is 0"):
        _cfg(layer_pattern="lg")
    with pytest.raises(ConfigError, match="score_divisor must be > 0"):
        _cfg(score_divisor=0.0)
    with pytest.raises(ConfigError, match="logit_softcap must be >= 0"):
        _cfg(logit_softcap=-1.0)
