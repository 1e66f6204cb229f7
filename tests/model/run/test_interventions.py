"""Interventions: each edit does what it says, composes with caching and decoding, and leaves the
model exactly as it was (outputs bit-identical, weights untouched), also after an exception."""

import math
import threading

import pytest
import torch

from model.data.batches import pad_batch
from model.decoding.decoders import greedy_decode
from model.network.kinds import hook_name
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.run.interventions import (
    CausalMask,
    HeadOutput,
    HookFunction,
    NoPositionalEncoding,
    NoScaling,
    SoftmaxOverQueries,
    edit_problems,
    head_z,
    intervene,
    labels,
)
from model.store.registry import load_model
from tests.conftest import padded_batch, tiny_config
from tests.model.decoding.test_decoding import reference_greedy


def make(**overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(**overrides)).eval()


def unpadded_batch(seed: int = 1, src_len: int = 7, tgt_len: int = 6):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(4, 40, (2, src_len), generator=g), torch.randint(4, 40, (2, tgt_len), generator=g)


SOURCES = [[5, 9, 13, 2], [7, 30, 11, 21, 8, 2], [12, 6, 2]]


def pad_batch_of(sources):
    return pad_batch(sources, 0)  # [batch, src_pos]


def snapshot(model: Transformer):
    src, tgt = padded_batch()
    with torch.no_grad():
        logits = model(src, tgt)
    greedy = greedy_decode(model, SOURCES, [[1]] * len(SOURCES), eos_id=2)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    return logits, greedy, state


def assert_intact(model: Transformer, before) -> None:
    logits, greedy, state = snapshot(model)
    assert torch.equal(logits, before[0])
    assert greedy == before[1]
    assert state.keys() == before[2].keys()
    assert all(torch.equal(state[k], before[2][k]) for k in state)
    assert all(getattr(m, "edits", None) is None for m in model.modules())
    assert not model.decoder.recompute
    assert not model.encoder.embed.zero_positions and not model.decoder.embed.zero_positions
    assert model.active_hook_count() == 0


def lock_free_for_another_thread(model) -> bool:
    result = []

    def probe():
        ok = model.lock.acquire(blocking=False)
        if ok:
            model.lock.release()
        result.append(ok)

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return result[0]


EDITS = [
    NoScaling(),
    NoScaling("cross", 1),
    SoftmaxOverQueries(),
    SoftmaxOverQueries("decoder", 0),
    CausalMask("off"),
    CausalMask("reversed"),
    NoPositionalEncoding(),
    HeadOutput("encoder", 0, 1, "zero"),
    HeadOutput("decoder", 1, 0, "mean"),
    HeadOutput("cross", 0, 3, "mean"),
]


#: The paper's model, RoPE with grouped-query heads, and the options the Hugging Face families need:
#: Qwen3 (own head width, QK-norm per head), OLMo 2 (QK-norm over the projections, norms after each
#: branch), GPT-NeoX's partial rotary, Gemma-like norms on both sides of each branch, and Gemma 3's
#: local (sliding window) and global layers with their own RoPE and scaling.
VARIANTS = [dict(), dict(pos_encoding="rope", n_kv_heads=2),
            dict(pos_encoding="rope", n_kv_heads=2, head_dim=12, qk_norm="head", norm="rmsnorm"),
            dict(pos_encoding="rope", n_kv_heads=2, qk_norm="full", branch_norm="after", norm="rmsnorm"),
            dict(pos_encoding="rope", rotary_fraction=0.5, branch_norm="both"),
            dict(pos_encoding="rope", n_kv_heads=2, qk_norm="head", norm="rmsnorm", branch_norm="both",
                 sliding_window=2, layer_pattern="lg", rope_local_theta=100.0, rope_linear_factor=2.0,
                 score_divisor=3.0, logit_softcap=5.0)]
VARIANT_IDS = ["paper", "rope", "qwen3-like", "olmo2-like", "partial-rotary", "gemma3-like"]


@pytest.mark.parametrize("edit", EDITS, ids=lambda e: e.label)
@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_the_model_is_bit_identical_after_each_edit_and_the_edit_changed_something(edit, variant):
    model = make(**variant)
    before = snapshot(model)
    src, tgt = padded_batch()
    with intervene(model, edit) as edited, torch.no_grad():
        assert edited is model
        during = model(src, tgt)
    assert not torch.allclose(during, before[0]), "the edit had no effect on the logits"
    assert_intact(model, before)


def test_model_is_restored_after_an_exception_inside_the_context():
    model = make()
    before = snapshot(model)
    src, tgt = padded_batch()
    with pytest.raises(RuntimeError, match="inside"):
        edits = (NoScaling(), CausalMask("off"), NoPositionalEncoding(), HeadOutput("cross", 1, 0))
        with intervene(model, *edits):
            model.run_with_cache(src, tgt)
            raise RuntimeError("inside")
    assert_intact(model, before)
    assert lock_free_for_another_thread(model)


def test_the_context_holds_the_lock_and_nests():
    model = make()
    src, tgt = padded_batch()
    with intervene(model, NoScaling()):
        held = not lock_free_for_another_thread(model)
        with intervene(model, HeadOutput("encoder", 0, 0)):
            _, both = model.run_with_cache(src, tgt)
        _, outer = model.run_with_cache(src, tgt)
    assert held and lock_free_for_another_thread(model)
    raw, scores = both["encoder.blocks.0.attn.hook_raw_scores"], both["encoder.blocks.0.attn.hook_scores"]
    finite = torch.isfinite(scores)
    assert torch.equal(raw[finite], scores[finite])  # the outer edit still applies inside the inner one
    assert (both[hook_name("encoder", 0, "z")][:, :, 0] == 0).all()
    assert (outer[hook_name("encoder", 0, "z")][:, :, 0] != 0).any()  # the inner edit ended with its block
    assert all(getattr(m, "edits", None) is None for m in model.modules())


@pytest.mark.parametrize(
    "variant",
    [
        dict(),
        dict(pos_encoding="rope", n_kv_heads=2),
        dict(pos_encoding="none", n_kv_heads=1, norm_first=False),
    ],
)
def test_raw_scores_over_sqrt_d_head_are_the_scores_on_unmasked_cells(variant):
    model = make(**variant)
    src, tgt = padded_batch()
    _, cache = model.run_with_cache(src, tgt)
    for kind in ("encoder", "decoder", "cross"):
        for layer in range(2):
            raw = cache[hook_name(kind, layer, "raw_scores")]  # [batch, head, query_pos, key_pos]
            scores = cache[hook_name(kind, layer, "scores")]
            assert raw.shape == scores.shape and torch.isfinite(raw).all()
            masked = torch.isneginf(scores)
            assert masked.any() and not masked.all()  # padding (and, for the decoder, the future)
            unmasked = ~masked
            assert torch.equal((raw / math.sqrt(model.cfg.d_head))[unmasked], scores[unmasked]), (kind, layer)


def mean_entropy(cache, kind, layers):
    total = []
    for layer in range(layers):
        p = cache[hook_name(kind, layer, "pattern")]  # [batch, head, query_pos, key_pos]
        total.append(-(p * p.clamp_min(1e-30).log()).sum(-1).mean())
    return float(torch.stack(total).mean())


def test_no_scaling_records_raw_scores_and_sharpens_a_trained_model():
    bundle = load_model("reverse")
    model = bundle.model
    p = bundle.task.prepare("attention", model.cfg.max_len)
    out = greedy_decode(model, [p.source_ids], [p.prefix], bundle.tokenizer.eos_id)[0]
    src, tgt = torch.tensor([p.source_ids]), torch.tensor([p.prefix + out])
    _, intact = model.run_with_cache(src, tgt)
    with intervene(model, NoScaling()):
        _, edited = model.run_with_cache(src, tgt)
    for kind in ("encoder", "decoder", "cross"):
        for layer in range(2):
            raw = edited[hook_name(kind, layer, "raw_scores")]  # [batch, head, query_pos, key_pos]
            scores = edited[hook_name(kind, layer, "scores")]
            finite = torch.isfinite(scores)
            assert torch.equal(raw[finite], scores[finite])
    # The first attention's input is not edited, so its raw scores are the intact ones.
    first = hook_name("encoder", 0, "raw_scores")
    assert torch.equal(edited[first], intact[first])
    for kind in ("encoder", "decoder", "cross"):
        assert mean_entropy(edited, kind, 2) < mean_entropy(intact, kind, 2) - 0.05, kind


def test_no_scaling_restricted_to_one_layer_leaves_the_others_scaled():
    model = make()
    src, tgt = padded_batch()
    with intervene(model, NoScaling("cross", 1)):
        _, cache = model.run_with_cache(src, tgt)
    for kind, layer, scaled in (("cross", 1, False), ("cross", 0, True), ("encoder", 1, True)):
        raw, scores = cache[hook_name(kind, layer, "raw_scores")], cache[hook_name(kind, layer, "scores")]
        finite = torch.isfinite(scores)
        want = raw / math.sqrt(model.cfg.d_head) if scaled else raw
        assert torch.equal(want[finite], scores[finite]), (kind, layer)


def test_softmax_over_queries_makes_columns_sum_to_one():
    model = make()
    src, tgt = unpadded_batch()
    with intervene(model, SoftmaxOverQueries()):
        _, cache = model.run_with_cache(src, tgt)
    for kind in ("encoder", "decoder", "cross"):
        for layer in range(2):
            p = cache[hook_name(kind, layer, "pattern")]  # [batch, head, query_pos, key_pos]
            assert torch.allclose(p.sum(-2), torch.ones(p.shape[:2] + p.shape[-1:]), atol=1e-5), (kind, layer)
            assert not torch.allclose(p.sum(-1), torch.ones(p.shape[:3]), atol=1e-2), (kind, layer)
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert (cache.pattern("decoder", 0)[:, upper] == 0).all()  # the causal mask still applies


def test_softmax_over_queries_leaves_padding_rows_out():
    """A sentence's pattern must not depend on the padding its batch adds (query rows included)."""
    model = make()
    src, tgt = padded_batch()  # src[1] padded from 5, tgt[0] from 4
    with intervene(model, SoftmaxOverQueries()):
        _, batch = model.run_with_cache(src, tgt)
        for b, (ls, lt) in enumerate(((7, 4), (5, 6))):
            _, alone = model.run_with_cache(src[b : b + 1, :ls], tgt[b : b + 1, :lt])
            for kind, (lq, lk) in (("encoder", (ls, ls)), ("decoder", (lt, lt)), ("cross", (lt, ls))):
                for layer in range(2):
                    p = batch.pattern(kind, layer, batch=b)  # [head, query_pos, key_pos]
                    assert torch.allclose(p[:, :lq, :lk], alone.pattern(kind, layer), atol=1e-5), (b, kind)
                    assert (p[:, lq:] == 0).all() and (p[:, :, lk:] == 0).all()


def test_causal_mask_off_and_reversed():
    model = make()
    src, tgt = unpadded_batch()
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    lower = torch.ones(6, 6, dtype=torch.bool).tril(-1)
    with intervene(model, CausalMask("off")):
        _, off = model.run_with_cache(src, tgt)
    with intervene(model, CausalMask("reversed")):
        _, rev = model.run_with_cache(src, tgt)
    for layer in range(2):
        p_off = off[hook_name("decoder", layer, "pattern")]  # [batch, head, tgt_pos, tgt_pos]
        assert (p_off[..., upper] > 0).all()
        p_rev = rev[hook_name("decoder", layer, "pattern")]
        assert (p_rev[..., lower] == 0).all()
        assert (p_rev[..., upper] > 0).all()
        assert torch.allclose(p_rev.sum(-1), torch.ones(p_rev.shape[:3]), atol=1e-5)
        assert torch.isneginf(rev[hook_name("decoder", layer, "scores")][..., lower]).all()
        # Only the decoder's self-attention is causal; the other kinds keep seeing everything.
        assert (off[hook_name("cross", layer, "pattern")] > 0).all()
        assert (rev[hook_name("encoder", layer, "pattern")] > 0).all()


def test_causal_mask_reversed_keeps_the_padding_mask():
    model = make()
    src, tgt = padded_batch()  # tgt[0] padded from position 4
    with intervene(model, CausalMask("reversed")):
        _, cache = model.run_with_cache(src, tgt)
    p = cache.pattern("decoder", 1, batch=0)  # [head, query_pos, key_pos]
    assert (p[:, :, 4:] == 0).all()


def encoder_out(model, src):
    _, cache = model.run_with_cache(src, src[:, :3])
    return cache["encoder.hook_out"][0]  # [src_pos, d_model]


@pytest.mark.parametrize("pos", ["sinusoidal", "learned", "rope"])
def test_without_positions_the_encoder_is_permutation_equivariant(pos):
    model = make(pos_encoding=pos)
    with torch.no_grad():  # a learned table starts near 0: make the intact model clearly order-aware
        for m in model.modules():
            if type(m).__name__ == "LearnedPositions":
                m.table.mul_(50)
    src = torch.tensor([[5, 9, 13, 22, 31, 17, 2]])
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    intact, intact_perm = encoder_out(model, src), encoder_out(model, src[:, perm])
    assert (intact[perm] - intact_perm).abs().max() > 1e-3  # the intact model knows the order
    with intervene(model, NoPositionalEncoding()):
        out, out_perm = encoder_out(model, src), encoder_out(model, src[:, perm])
        _, cache = model.run_with_cache(src, src[:, :3])
    assert torch.allclose(out[perm], out_perm, atol=1e-5)
    if pos == "rope":
        for layer in range(2):
            q = cache[hook_name("encoder", layer, "q")]
            assert torch.equal(cache[hook_name("encoder", layer, "rot_q")], q)
    else:
        for side in ("encoder", "decoder"):
            assert (cache[f"{side}.embed.hook_pos_embed"] == 0).all()
            assert torch.equal(cache[f"{side}.embed.hook_resid_in"], cache[f"{side}.embed.hook_embed"])


def test_head_output_zero_mean_and_replace():
    model = make()
    src, tgt = padded_batch()
    _, intact = model.run_with_cache(src, tgt)
    name = hook_name("cross", 1, "z")  # [batch, query_pos, head, d_head]
    others = [0, 1, 3]
    with intervene(model, HeadOutput("cross", 1, 2, "zero")):
        _, zero = model.run_with_cache(src, tgt)
    assert (zero[name][:, :, 2] == 0).all() and (intact[name][:, :, 2] != 0).any()
    assert torch.equal(zero[name][:, :, others], intact[name][:, :, others])

    with intervene(model, HeadOutput("cross", 1, 2, "mean")):
        _, mean = model.run_with_cache(src, tgt)
    want = intact[name][:, :, 2].mean(dim=1, keepdim=True)  # [batch, 1, d_head]
    assert torch.allclose(mean[name][:, :, 2], want.expand(-1, tgt.shape[1], -1), atol=1e-6)
    assert torch.equal(mean[name][:, :, others], intact[name][:, :, others])

    value = torch.randn(2, 6, model.cfg.d_head)
    with intervene(model, HeadOutput("cross", 1, 2, "replace", value)):
        _, repl = model.run_with_cache(src, tgt)
    assert torch.equal(repl[name][:, :, 2], value)
    assert torch.equal(repl[name][:, :, others], intact[name][:, :, others])
    assert not torch.allclose(repl["hook_logits"], intact["hook_logits"])


@pytest.mark.parametrize("kind,layer,head", [("encoder", 1, 0), ("decoder", 0, 3), ("cross", 1, 1)])
def test_patching_a_head_with_its_own_z_leaves_the_logits_unchanged(kind, layer, head):
    model = make()
    src, tgt = padded_batch()
    logits, cache = model.run_with_cache(src, tgt)
    with intervene(model, HeadOutput(kind, layer, head, "replace", head_z(cache, kind, layer, head))):
        patched, _ = model.run_with_cache(src, tgt)
    assert (patched - logits).abs().max() <= 1e-6


def test_patching_from_another_run_moves_the_logits_towards_it():
    model = make()
    src, tgt = padded_batch()
    other = padded_batch(seed=5)[0]
    other[1, 5:] = 0  # same padding, other tokens
    clean, clean_cache = model.run_with_cache(other, tgt)
    corrupt, _ = model.run_with_cache(src, tgt)
    patches = [HeadOutput("cross", 1, h, "replace", head_z(clean_cache, "cross", 1, h)) for h in range(4)]
    with intervene(model, *patches):
        patched, _ = model.run_with_cache(src, tgt)
    assert (patched - clean).abs().mean() < (corrupt - clean).abs().mean()


def test_a_replacement_of_the_wrong_shape_is_a_clear_error_and_the_model_recovers():
    model = make()
    before = snapshot(model)
    src, tgt = padded_batch()
    with pytest.raises(ValueError, match=r"replacement for head 2 of encoder layer 0 must be \[batch=2"):
        with intervene(model, HeadOutput("encoder", 0, 2, "replace", torch.zeros(2, 5, 8))):
            model(src, tgt)
    with pytest.raises(ValueError, match="d_head=3"):
        with intervene(model, HeadOutput("encoder", 0, 2, "replace", torch.zeros(2, 7, 3))):
            pass
    with pytest.raises(ValueError, match="one head's z"):
        HeadOutput("encoder", 0, 2, "replace", torch.zeros(7, 8))
    assert_intact(model, before)


def test_edits_that_do_not_apply_raise_before_changing_anything():
    no_decoder = make(n_dec_layers=0)
    with pytest.raises(ValueError, match="no decoder self-attention"):
        with intervene(no_decoder, CausalMask("off")):
            pass
    no_positions = make(pos_encoding="none")
    with pytest.raises(ValueError, match='pos_encoding="none"'):
        with intervene(no_positions, NoPositionalEncoding()):
            pass
    model = make()
    before = snapshot(model)
    problems = edit_problems(
        model,
        NoScaling(),
        NoScaling("cross", 5),  # no such layer
        HeadOutput("decoder", 0, 4),  # no such head
        HeadOutput("encoder", 3, 0),  # no such layer
        CausalMask("off"),
        CausalMask("reversed"),  # contradicts "off"
        HeadOutput("cross", 0, 1),
        HeadOutput("cross", 0, 1, "mean"),  # the same head twice
    )
    assert len(problems) == 5, problems
    assert any("layers 0..1" in p for p in problems) and any("heads 0..3" in p for p in problems)
    assert any("contradict" in p for p in problems) and any("already edited" in p for p in problems)
    with pytest.raises(ValueError, match="cannot apply"):
        with intervene(model, NoScaling(), NoScaling("cross", 5)):
            pass
    assert_intact(model, before)
    assert edit_problems(model, *(e for e in EDITS if e != CausalMask("reversed"))) == []
    for bad in (
        lambda: CausalMask("on"),
        lambda: NoScaling(layer=1),
        lambda: HeadOutput("cross", 0, 0, "drop"),
        lambda: HeadOutput("cross", 0, 0, "zero", torch.zeros(1, 2, 8)),
        lambda: SoftmaxOverQueries("self"),
    ):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError, match="not an edit"):
        with intervene(model, "NoScaling"):
            pass


GREEDY_EDITS = EDITS + [
    HeadOutput("encoder", 1, 2, "mean"),
    HeadOutput("decoder", 0, 1, "zero"),
    SoftmaxOverQueries("cross"),
    (CausalMask("reversed"), NoScaling(), NoPositionalEncoding()),
]


def edit_id(e) -> str:
    return " + ".join(labels(e if isinstance(e, tuple) else [e]))


@pytest.mark.parametrize("edit", GREEDY_EDITS, ids=edit_id)
@pytest.mark.parametrize(
    "variant", [dict(), dict(pos_encoding="rope", n_kv_heads=2, norm_first=False)], ids=["paper", "rope"]
)
def test_cached_greedy_decoding_equals_full_recompute_under_each_edit(edit, variant):
    model = make(**variant)
    edits = edit if isinstance(edit, tuple) else (edit,)
    with intervene(model, *edits):
        got = greedy_decode(model, SOURCES, [[1]] * len(SOURCES), eos_id=2)
        want = [reference_greedy(model, s, [1], 2) for s in SOURCES]
    assert got == want
    assert sum(len(w) for w in want) > 10


@pytest.mark.parametrize("edit", GREEDY_EDITS, ids=edit_id)
def test_each_incremental_decoder_step_equals_the_full_pass_over_its_prefix(edit):
    """Logits, not only argmax tokens: a stale cache can hide behind an unchanged argmax."""
    model = make()
    edits = edit if isinstance(edit, tuple) else (edit,)
    src = pad_batch_of(SOURCES)
    tgt = torch.randint(4, 40, (len(SOURCES), 9), generator=torch.Generator().manual_seed(4))
    tgt[:, 0] = 1
    with intervene(model, *edits), torch.no_grad():
        memory, src_pad = model.encode(src)
        caches = [{} for _ in model.decoder.blocks]
        for t in range(tgt.shape[1]):
            hidden = model.decoder(tgt[:, t : t + 1], memory, None, src_pad, caches, t)  # [batch, 1, d_model]
            step = model.unembed(hidden[:, -1])  # [batch, vocab]
            full = model(src, tgt[:, : t + 1])[:, -1]  # [batch, vocab]
            assert torch.allclose(step, full, atol=1e-5), t


@pytest.mark.parametrize("kind,layer", [("decoder", 1), ("cross", 0)])
def test_greedy_decoding_reads_a_longer_patch_row_by_row(kind, layer):
    model = make()
    g = torch.Generator().manual_seed(2)
    value = 30 * torch.randn(1, model.cfg.max_len, model.cfg.d_head, generator=g)
    src = SOURCES[1]
    with intervene(model, HeadOutput(kind, layer, 1, "replace", value)):
        got = greedy_decode(model, [src], [[1]], eos_id=2)[0]
        want = reference_greedy(model, src, [1], 2)
    assert got == want
    assert got != greedy_decode(model, [src], [[1]], eos_id=2)[0]


def test_a_hook_function_rewrites_its_point_and_the_cache_records_what_flows_on():
    model = make()
    before = snapshot(model)
    src, tgt = padded_batch()
    point = hook_name("cross", 1, "pattern")
    flat = HookFunction(point, lambda p: torch.full_like(p, 1.0 / p.shape[-1]), what="uniform")
    with intervene(model, flat):
        during, cache = model.run_with_cache(src, tgt)
    assert (cache[point] == 1.0 / src.shape[1]).all()
    assert not torch.allclose(during, before[0])
    assert flat.label == f"{point}: uniform" and flat == flat and len({flat, flat}) == 1
    with pytest.raises(RuntimeError, match="inside"):
        with intervene(model, flat, HookFunction("decoder.hook_out", lambda x: x, recompute=True)):
            assert model.decoder.recompute and model.active_hook_count() == 2
            raise RuntimeError("inside")
    assert_intact(model, before)


def test_hook_functions_on_one_point_compose_in_order_and_nest():
    model = make()
    src, tgt = padded_batch()
    point = "encoder.embed.hook_embed"
    with intervene(model, HookFunction(point, lambda x: x + 1), HookFunction(point, lambda x: x * 2)):
        with intervene(model, HookFunction(point, lambda x: x - 3)):
            _, inner = model.run_with_cache(src, tgt)
        _, outer = model.run_with_cache(src, tgt)
    _, plain = model.run_with_cache(src, tgt)
    assert torch.allclose(outer[point], (plain[point] + 1) * 2)
    assert torch.allclose(inner[point], (plain[point] + 1) * 2 - 3)
    assert model.active_hook_count() == 0


def test_hook_functions_that_do_not_apply_raise_before_changing_anything():
    model = make()
    before = snapshot(model)
    with pytest.raises(ValueError, match="no hook point named 'encoder.blocks.9.attn.hook_z'"):
        with intervene(model, NoScaling(), HookFunction("encoder.blocks.9.attn.hook_z", lambda x: x)):
            pass
    assert_intact(model, before)
    with pytest.raises(ValueError, match="no decoder to recompute"):
        with intervene(make(n_dec_layers=0, encoder_only=True),
                       HookFunction("encoder.hook_out", lambda x: x, recompute=True)):
            pass


def test_greedy_decoding_under_a_position_dependent_hook_function_recomputes_the_prefix():
    model = make()
    g = torch.Generator().manual_seed(3)
    shift = 3 * torch.randn(model.cfg.max_len, model.cfg.d_model, generator=g)  # [tgt_pos, d_model]

    def by_position(x):  # reads absolute decoder positions: only right when the whole prefix is fed
        return x + shift[: x.shape[1]]

    src = SOURCES[1]
    with intervene(model, HookFunction("decoder.blocks.0.hook_resid_post", by_position, recompute=True)):
        got = greedy_decode(model, [src], [[1]], eos_id=2)[0]
        want = reference_greedy(model, src, [1], 2)
    assert got == want
    assert got != greedy_decode(model, [src], [[1]], eos_id=2)[0]


def test_edits_are_hashable_and_labelled_unambiguously():
    a = torch.ones(1, 3, 8)
    same, other = HeadOutput("cross", 0, 1, "replace", a.clone()), HeadOutput("cross", 0, 1, "replace", a * 2)
    patch = HeadOutput("cross", 0, 1, "replace", a)
    a.mul_(3)  # the edit keeps its own copy
    assert patch == same and hash(patch) == hash(same) and patch.label == same.label
    assert patch != other and patch.label != other.label
    assert len({*EDITS, *EDITS, patch, same, other}) == len(EDITS) + 2
    assert len(set(labels(EDITS))) == len(EDITS)
    assert NoScaling() == NoScaling() and NoScaling() != NoScaling("cross")
    assert {(NoScaling(), CausalMask("off")): 1}[(NoScaling(), CausalMask("off"))] == 1


def test_analyze_runs_the_whole_request_under_the_edits_and_records_them():
    bundle = load_model("reverse")
    intact = analyze(bundle, "attention")
    assert intact.edits == () and intact.output_text == "noitnetta"
    edits = (NoPositionalEncoding(), HeadOutput("cross", 1, 0, "zero"))
    edited = analyze(bundle, "attention", edits=edits)
    assert edited.edits == labels(edits)
    assert edited.output_text != intact.output_text  # decoding ran under the edits
    assert (edited.activations[hook_name("cross", 1, "z")][:, :, 0] == 0).all()  # and the hooked pass too
    assert (edited.activations["encoder.embed.hook_pos_embed"] == 0).all()
    again = analyze(bundle, "attention")
    assert again.output_text == intact.output_text
    for k, v in intact.activations.items():
        assert (again.activations[k] == v).all(), k
    forced = analyze(bundle, "attention", target="noitnetta", edits=(NoScaling(),))
    assert forced.edits == ("No 1/√d_head scaling",)


@pytest.mark.parametrize("what", ["raw_scores", "scores", "pattern"])
def test_an_analysis_that_keeps_attention_only_shows_what_a_hook_function_on_the_squares_made(what):
    """A hook function on a layer's raw scores, scores or pattern: the pages' analysis (attention only, every
    head otherwise computed from the recorded queries and keys) shows the pattern the forward pass used,
    for every head of that kind, within 1e-6 of an analysis that keeps every hook."""
    from model.run.analysis import attention_only

    bundle = load_model("reverse")
    if what == "pattern":  # the first key's weight moved onto the second: still rows that sum to 1
        def fn(p):
            p = p.clone()
            p[..., 1] += p[..., 0]
            p[..., 0] = 0
            return p
    else:
        def fn(s):
            return s + torch.linspace(0.0, 3.0, s.shape[-1])  # later keys favoured
    edit = HookFunction(hook_name("encoder", 1, what), fn, what="later keys")
    shown = analyze(bundle, "attention", edits=(edit,), keep=attention_only)
    whole = analyze(bundle, "attention", edits=(edit,))
    intact = analyze(bundle, "attention", keep=attention_only)
    assert shown.output_text == whole.output_text
    worst, moved = 0.0, 0.0
    for layer in range(shown.n_layers("encoder")):
        for head in range(bundle.cfg.n_heads):
            pattern = shown.head_attention("encoder", layer, head)[1]
            used = whole.activations[hook_name("encoder", layer, "pattern")][0, head]
            worst = max(worst, float(abs(pattern - used).max()))
            if layer == 1:
                moved = max(moved, float(abs(pattern - intact.head_attention("encoder", 1, head)[1]).max()))
    assert worst <= 1e-6 and moved > 1e-2, (worst, moved)
    # the kinds without such a function are still computed from their recorded inputs
    assert hook_name("cross", 0, "pattern") not in shown.activations


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_the_shape_trace_under_edits_resolves_and_names_the_edited_steps(variant):
    from model.network.trace import resolve, trace_shapes

    model = make(**variant)
    src, tgt = padded_batch()
    edits = (NoScaling(), SoftmaxOverQueries("cross"), CausalMask("reversed"), NoPositionalEncoding(),
             HeadOutput("encoder", 0, 1, "mean"))
    with intervene(model, *edits), trace_shapes() as trace:
        _, cache = model.run_with_cache(src, tgt)
    for step in trace.steps:
        assert resolve(step.out_symbol, trace.sizes) == step.out_shape, step
        if step.hook:
            assert tuple(cache[step.hook].shape) == step.out_shape, step.hook
    ops = {s.op for s in trace.steps}
    assert sum(1 for s in trace.steps if s.hook and s.hook.endswith("hook_raw_scores")) == 6
    assert "not scaled (edit: no 1 / sqrt(d_head))" in ops and "scale by 1 / sqrt(d_head)" not in ops
    assert "softmax over query positions (edit)" in ops and "softmax over key positions" in ops
    assert "mask (reversed causal) -> -inf" in ops or "mask (reversed causal + padding) -> -inf" in ops
    assert "edit head outputs (edit)" in ops
    moved = "Q not rotated (edit: RoPE off)" if variant else "positional encoding set to 0 (edit)"
    assert moved in ops
