"""Hook points: names, caching, invariants of the cached attention, and cleanup."""

import threading

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model.network.transformer import Transformer
from tests.conftest import padded_batch, tiny_config

GOLDEN_ONE_LAYER = [
    "encoder.embed.hook_embed",
    "encoder.embed.hook_pos_embed",
    "encoder.embed.hook_resid_in",
    "encoder.blocks.0.attn.hook_q",
    "encoder.blocks.0.attn.hook_k",
    "encoder.blocks.0.attn.hook_v",
    "encoder.blocks.0.attn.hook_raw_scores",
    "encoder.blocks.0.attn.hook_scores",
    "encoder.blocks.0.attn.hook_pattern",
    "encoder.blocks.0.attn.hook_z",
    "encoder.blocks.0.attn.hook_out",
    "encoder.blocks.0.mlp.hook_hidden",
    "encoder.blocks.0.hook_resid_pre",
    "encoder.blocks.0.hook_resid_mid",
    "encoder.blocks.0.hook_resid_post",
    "encoder.hook_out",
    "decoder.embed.hook_embed",
    "decoder.embed.hook_pos_embed",
    "decoder.embed.hook_resid_in",
    "decoder.blocks.0.self_attn.hook_q",
    "decoder.blocks.0.self_attn.hook_k",
    "decoder.blocks.0.self_attn.hook_v",
    "decoder.blocks.0.self_attn.hook_raw_scores",
    "decoder.blocks.0.self_attn.hook_scores",
    "decoder.blocks.0.self_attn.hook_pattern",
    "decoder.blocks.0.self_attn.hook_z",
    "decoder.blocks.0.self_attn.hook_out",
    "decoder.blocks.0.cross_attn.hook_q",
    "decoder.blocks.0.cross_attn.hook_k",
    "decoder.blocks.0.cross_attn.hook_v",
    "decoder.blocks.0.cross_attn.hook_raw_scores",
    "decoder.blocks.0.cross_attn.hook_scores",
    "decoder.blocks.0.cross_attn.hook_pattern",
    "decoder.blocks.0.cross_attn.hook_z",
    "decoder.blocks.0.cross_attn.hook_out",
    "decoder.blocks.0.mlp.hook_hidden",
    "decoder.blocks.0.hook_resid_pre",
    "decoder.blocks.0.hook_resid_mid",
    "decoder.blocks.0.hook_resid_mid2",
    "decoder.blocks.0.hook_resid_post",
    "decoder.hook_out",
    "hook_logits",
]

VARIANTS = [
    dict(),
    dict(norm_first=False),
    dict(norm="rmsnorm", activation="gelu"),
    dict(pos_encoding="rope"),
    dict(pos_encoding="learned", n_kv_heads=2),
    dict(pos_encoding="none", n_kv_heads=1),
    dict(tie_embeddings=False),
]


def test_golden_hook_names():
    model = Transformer(tiny_config(n_enc_layers=1, n_dec_layers=1))
    assert model.hook_names() == GOLDEN_ONE_LAYER


def test_rope_adds_rotated_qk_hooks_and_drops_additive_positions():
    names = Transformer(tiny_config(n_enc_layers=1, n_dec_layers=1, pos_encoding="rope")).hook_names()
    assert "encoder.blocks.0.attn.hook_rot_q" in names and "decoder.blocks.0.self_attn.hook_rot_k" in names
    assert "decoder.blocks.0.cross_attn.hook_rot_q" not in names  # no rotation across two sequences
    assert not any(n.endswith("hook_pos_embed") for n in names)


@pytest.mark.parametrize(
    "variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v}" for k, v in v.items()) or "paper"
)
def test_cache_records_every_hook_and_does_not_change_logits(variant):
    torch.manual_seed(0)
    model = Transformer(tiny_config(**variant)).eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        plain = model(src, tgt)
    cached, cache = model.run_with_cache(src, tgt)
    assert torch.equal(plain, cached)
    assert sorted(cache) == sorted(model.hook_names())
    assert model.active_hook_count() == 0
    assert torch.equal(cache["hook_logits"], plain)


@pytest.mark.parametrize(
    "variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v}" for k, v in v.items()) or "paper"
)
def test_attention_invariants(variant):
    torch.manual_seed(0)
    model = Transformer(tiny_config(**variant)).eval()
    src, tgt = padded_batch()
    _, cache = model.run_with_cache(src, tgt)
    src_pad, tgt_pad = src == 0, tgt == 0
    for kind, key_pad in (("encoder", src_pad), ("decoder", tgt_pad), ("cross", src_pad)):
        for layer in range(cache.n_layers[kind]):
            for b in range(src.shape[0]):
                p = cache.pattern(kind, layer, batch=b)  # [head, q, k]
                assert torch.allclose(p.sum(-1), torch.ones(p.shape[:2]), atol=1e-5), (kind, layer, b)
                assert (p[:, :, key_pad[b]] == 0).all(), "padded key columns must get exactly 0"
                s = cache.scores(kind, layer, batch=b)
                assert torch.isneginf(s[:, :, key_pad[b]]).all()
                if kind == "decoder":
                    upper = torch.ones(p.shape[-2:], dtype=torch.bool).triu(1)
                    assert (p[:, upper] == 0).all(), "causal upper triangle must be exactly 0"
                    assert torch.isneginf(s[:, upper]).all()


def test_hooks_removed_even_when_forward_raises(tiny_model):
    src, tgt = padded_batch()
    with pytest.raises(ValueError, match="at most"):
        tiny_model.run_with_cache(src, torch.zeros(1, 99, dtype=torch.long) + 5)
    assert tiny_model.active_hook_count() == 0

    def boom(t, hp):
        raise RuntimeError("hook failed")

    with pytest.raises(RuntimeError, match="hook failed"):
        with tiny_model.hooks([("encoder.blocks.0.attn.hook_pattern", boom)]):
            tiny_model(src, tgt)
    assert tiny_model.active_hook_count() == 0


def test_a_hook_can_edit_a_tensor_and_the_edit_flows_downstream(tiny_model):
    src, tgt = padded_batch()
    with torch.no_grad():
        before = tiny_model(src, tgt)
        with tiny_model.hooks(
            [("decoder.blocks.1.cross_attn.hook_pattern", lambda t, hp: torch.zeros_like(t))]
        ):
            after = tiny_model(src, tgt)
    assert not torch.allclose(before, after)
    assert tiny_model.active_hook_count() == 0


def test_the_cache_records_a_hooked_tensor_as_it_flows_on(tiny_model):
    src, tgt = padded_batch()
    point = "encoder.blocks.0.hook_resid_post"
    _, plain = tiny_model.run_with_cache(src, tgt)
    with tiny_model.hooks([(point, lambda t, hp: t * 2), (point, lambda t, hp: None)]):
        assert tiny_model.active_hook_count() == 2
        _, hooked = tiny_model.run_with_cache(src, tgt)
    assert torch.equal(hooked[point], plain[point] * 2)  # None: the tensor flows on unchanged
    assert tiny_model.active_hook_count() == 0


def test_unknown_hook_name_is_an_error(tiny_model):
    with pytest.raises(KeyError, match="no hook point"):
        with tiny_model.hooks([("encoder.blocks.9.attn.hook_pattern", lambda t, hp: None)]):
            pass


def test_cache_accessors(tiny_model):
    src, tgt = padded_batch()
    _, cache = tiny_model.run_with_cache(src, tgt)
    assert cache.pattern("cross").shape == (2, 4, 6, 7)  # [layer, head, L_tgt, L_src]
    assert cache.pattern("encoder", 1).shape == (4, 7, 7)
    assert torch.equal(
        cache.pattern("decoder", 0, 3, batch=1), cache["decoder.blocks.0.self_attn.hook_pattern"][1, 3]
    )
    with pytest.raises(IndexError):
        cache.pattern("encoder", 5)
    with pytest.raises(KeyError):
        cache.pattern("sideways", 0)


def test_concurrent_cached_runs_do_not_mix(tiny_model):
    """Many app sessions share one model: each run must get its own, complete cache."""
    inputs = [padded_batch(seed=s) for s in range(6)]
    expected = [tiny_model.run_with_cache(*x)[1]["hook_logits"] for x in inputs]
    results: dict[int, torch.Tensor] = {}

    def worker(i):
        for _ in range(3):
            _, cache = tiny_model.run_with_cache(*inputs[i])
            results[i] = cache["hook_logits"]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        assert torch.equal(results[i], expected[i])
    assert tiny_model.active_hook_count() == 0


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 1000), src_len=st.integers(1, 16), tgt_len=st.integers(1, 16), pad=st.integers(0, 15)
)
def test_padding_does_not_change_unpadded_outputs(seed, src_len, tgt_len, pad):
    """Appending padding to a sentence leaves its logits at real positions unchanged."""
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 40, (1, src_len), generator=g)
    tgt = torch.randint(4, 40, (1, tgt_len), generator=g)
    extra = min(pad, 16 - src_len)
    src_padded = torch.cat([src, torch.zeros(1, extra, dtype=torch.long)], dim=1)
    with torch.no_grad():
        a = model(src, tgt)
        b = model(src_padded, tgt)
    assert torch.allclose(a, b, atol=1e-5)


def test_a_torch_forward_hook_on_a_hook_point_still_runs(tiny_model):
    """A point with nothing set returns its tensor without the module call; a PyTorch hook a notebook
    registers on it is still called, and what it returns flows on."""
    src = torch.randint(4, 20, (1, 5))
    tgt = torch.randint(4, 20, (1, 4))
    point = tiny_model.hook_points["encoder.blocks.0.hook_resid_post"]
    seen = []
    handle = point.register_forward_hook(lambda module, args, out: seen.append(out.shape) or out * 0)
    try:
        with torch.no_grad():
            edited = tiny_model(src, tgt)
    finally:
        handle.remove()
    with torch.no_grad():
        intact = tiny_model(src, tgt)
    assert seen == [torch.Size([1, 5, tiny_model.cfg.d_model])]
    assert not torch.allclose(edited, intact)  # the zeroed residual changed the output


def test_dropout_is_the_identity_only_where_it_does_nothing():
    from model.network.dropout import Dropout

    x = torch.ones(1000)
    drop = Dropout(0.5).eval()
    assert drop(x) is x
    drop.train()
    dropped = drop(x)
    assert 0 < int((dropped == 0).sum()) < 1000  # training: it drops, and scales the rest by 2
    assert set(dropped.unique().tolist()) <= {0.0, 2.0}
    assert Dropout(0.0).train()(x) is x
    drop.eval()
    calls = []
    handle = drop.register_forward_hook(lambda module, args, out: calls.append(1))
    drop(x)
    handle.remove()
    assert calls == [1]


def test_a_global_torch_hook_still_sees_idle_points_and_dropouts(tiny_model):
    """A forward hook registered for every module (a notebook's tracer) reaches the hook points and the
    dropouts the fast paths would otherwise skip."""
    from torch.nn.modules.module import register_module_forward_hook

    from model.network.dropout import Dropout
    from model.network.hooks import HookPoint

    src = torch.randint(4, 20, (1, 5))
    tgt = torch.randint(4, 20, (1, 4))
    seen: list[type] = []
    handle = register_module_forward_hook(lambda module, args, out: seen.append(type(module)))
    try:
        with torch.no_grad():
            tiny_model(src, tgt)
    finally:
        handle.remove()
    points = sum(1 for t in seen if t is HookPoint)
    assert points >= len(tiny_model.hook_points) // 2  # every point a pass reaches (cross-attention's too)
    assert Dropout in seen
    seen.clear()
    with torch.no_grad():
        tiny_model(src, tgt)
    assert seen == []  # removed: the fast paths again
