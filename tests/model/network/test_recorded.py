"""Every head's scores and pattern computed again from the recorded queries, keys and mask equal the
explicit pass's own (every model family, padded batches, grouped-query attention, RoPE, edits), and the
fused kernel gives the explicit pass's output."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.network import attention as attention_module
from model.network.attention_stack import AttentionStack
from model.network.config import ModelConfig
from model.network.kinds import hook_name, layer_counts
from model.network.recorded import BLOCK_BYTES, record_attention
from model.network.transformer import Transformer
from model.run.interventions import CausalMask, NoScaling, SoftmaxOverQueries, intervene

BASE = dict(vocab_size=40, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2, n_dec_layers=2, max_len=64,
            dropout=0.0, pad_id=0)
FAMILIES = {
    "encoder-decoder, sinusoidal": dict(),
    "encoder-only, learned": dict(encoder_only=True, n_dec_layers=0, pos_encoding="learned"),
    "decoder-only, RoPE, GQA": dict(decoder_only=True, n_enc_layers=0, pos_encoding="rope", n_kv_heads=2,
                                    norm="rmsnorm", gated_ffn=True),
    "decoder-only, RoPE, MQA": dict(decoder_only=True, n_enc_layers=0, pos_encoding="rope", n_kv_heads=1),
}


def _model(**sizes) -> Transformer:
    torch.manual_seed(0)
    return Transformer(ModelConfig(**{**BASE, **sizes})).eval()


def _batch(cfg: ModelConfig, lengths: list[int], left: bool = False) -> torch.Tensor:
    """Token ids [batch, max(lengths)], padded with pad_id (on the left when ``left``)."""
    g = torch.Generator().manual_seed(1)
    rows = []
    for n in lengths:
        ids = torch.randint(1, cfg.vocab_size, (n,), generator=g)
        pad = torch.zeros(max(lengths) - n, dtype=torch.long)
        rows.append(torch.cat([pad, ids] if left else [ids, pad]))
    return torch.stack(rows)


def _run(model: Transformer, ids: torch.Tensor):
    """(every hook tensor, the recorded attention inputs) of one explicit, fully hooked pass."""
    cfg = model.cfg
    args = (ids,) if cfg.decoder_only or cfg.encoder_only else (ids, ids[:, : max(2, ids.shape[1] - 3)])
    with record_attention() as recorded:
        _, cache = model.run_with_cache(*args)
    return cache, recorded


def _assert_recomputed_equals(cache, recorded, cfg: ModelConfig, batch: int) -> None:
    checked = 0
    for kind, n in layer_counts(cfg).items():
        for layer in range(n):
            path = hook_name(kind, layer, "pattern").rsplit(".", 1)[0]
            scores, pattern = recorded[path].compute(slice(None), batch)
            want_scores = cache[hook_name(kind, layer, "scores")][batch]
            want_pattern = cache[hook_name(kind, layer, "pattern")][batch]
            assert torch.equal(torch.isinf(scores), torch.isinf(want_scores)), (kind, layer)
            finite = torch.isfinite(want_scores)
            torch.testing.assert_close(scores[finite], want_scores[finite], rtol=1e-6, atol=1e-6)
            torch.testing.assert_close(pattern, want_pattern, rtol=1e-6, atol=1e-7)
            checked += 1
    assert checked == sum(layer_counts(cfg).values())


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("left", [False, True])
def test_recomputed_heads_equal_the_explicit_pass_in_a_padded_batch(family, left):
    model = _model(**FAMILIES[family])
    ids = _batch(model.cfg, [11, 7, 3], left=left)
    cache, recorded = _run(model, ids)
    for batch in range(ids.shape[0]):
        _assert_recomputed_equals(cache, recorded, model.cfg, batch)


EDITS = [NoScaling(), SoftmaxOverQueries(), CausalMask("off"), CausalMask("reversed")]


@pytest.mark.parametrize("edit", EDITS, ids=lambda e: e.label)
def test_recomputed_heads_follow_the_edits_the_pass_ran_under(edit):
    model = _model(**FAMILIES["decoder-only, RoPE, GQA"])
    ids = _batch(model.cfg, [9, 5])
    with intervene(model, edit):
        cache, recorded = _run(model, ids)
    for batch in range(ids.shape[0]):
        _assert_recomputed_equals(cache, recorded, model.cfg, batch)


def test_rows_computed_block_by_block_equal_the_whole_layer():
    model = _model(**FAMILIES["decoder-only, RoPE, GQA"])
    _, recorded = _run(model, _batch(model.cfg, [40]))
    rec = recorded["decoder.blocks.1.self_attn"]
    whole_scores, whole = rec.compute()
    blocks = list(rec.row_blocks(max_bytes=4 * 3 * rec.n_heads * rec.n_keys * 7))  # 7 rows a block
    assert len(blocks) == 6 and blocks[0] == slice(0, 7) and blocks[-1] == slice(35, 40)
    parts = [rec.compute(rows=b) for b in blocks]
    assert torch.equal(torch.cat([p for _, p in parts], dim=1), whole)
    assert torch.equal(torch.cat([s for s, _ in parts], dim=1), whole_scores)
    one_head = rec.compute(2)[1][0]
    assert torch.equal(one_head, whole[2])


@pytest.mark.parametrize("family", ["encoder-decoder, sinusoidal", "decoder-only, RoPE, GQA",
                                    "decoder-only, RoPE, window"])
def test_block_max_pools_the_recomputed_pattern_as_the_all_heads_grid_does(family):
    from viz.pooling import pool_blocks, pool_mask

    sizes = FAMILIES.get(family) or dict(FAMILIES["decoder-only, RoPE, GQA"], sliding_window=6)
    model = _model(**sizes)
    # left padding: the first query of the short row sees only padding, a row with every key masked
    _, recorded = _run(model, _batch(model.cfg, [37, 30], left=True))
    checked = 0
    for rec in recorded.values():
        for batch in (0, 1):
            _, pattern = rec.compute(slice(None), batch)
            mask = rec.mask(batch)
            full_mask = np.zeros(pattern.shape[1:], dtype=bool) if mask is None else np.broadcast_to(
                mask.numpy(), pattern.shape[1:])
            drawn = np.where(full_mask, np.float32(np.nan), pattern.numpy())
            for block in (1, 4, 5):
                want = pool_blocks(drawn, block, "max")
                for rows in (slice(None), slice(0, 2 * block), slice(2 * block, rec.n_queries)):
                    values, masked = rec.block_max(block, batch, rows)
                    start, stop, _ = rows.indices(rec.n_queries)
                    part = pool_blocks(drawn[:, start:stop], block, "max")
                    # the same weights (a block of rows' products may differ in the last bit), NaN if masked
                    np.testing.assert_allclose(values.numpy(), part, rtol=0, atol=1e-6)
                    np.testing.assert_array_equal(np.isnan(values.numpy()), np.isnan(part))
                    if rows == slice(None):
                        np.testing.assert_allclose(values.numpy(), want, rtol=0, atol=1e-6)
                    if mask is None:
                        assert masked is None
                    else:
                        np.testing.assert_array_equal(masked.numpy(), pool_mask(full_mask[start:stop], block))
                    checked += 1
    assert checked == len(recorded) * 2 * 3 * 3
    assert any(rec.causal == "causal" for rec in recorded.values())


def test_an_attention_stack_indexes_like_the_stacked_array():
    model = _model(**FAMILIES["encoder-decoder, sinusoidal"])
    ids = _batch(model.cfg, [12])
    cache, recorded = _run(model, ids)
    for kind in ("encoder", "decoder", "cross"):
        layers = [recorded[hook_name(kind, i, "pattern").rsplit(".", 1)[0]] for i in range(2)]
        full = torch.stack([cache[hook_name(kind, i, "pattern")][0] for i in range(2)]).numpy()
        stack = AttentionStack(layers, "pattern")
        assert stack.shape == full.shape
        for key in [(1, 2), (0,), (slice(None), 3), (1, slice(1, 3), 4), (0, 1, slice(2, 5), 3),
                    (slice(0, 2), slice(None), -1), (1, [0, 2])]:
            np.testing.assert_allclose(stack[key], full[key], rtol=1e-6, atol=1e-7, err_msg=str(key))
        np.testing.assert_allclose(np.asarray(stack), full, rtol=1e-6, atol=1e-7)
        mask = AttentionStack(layers, "mask")
        want = ~np.isfinite(torch.stack([cache[hook_name(kind, i, "scores")][0] for i in range(2)]).numpy())
        np.testing.assert_array_equal(np.asarray(mask), want)
        assert any(rec.masks_anything() for rec in layers) == bool(want.any())


def test_an_attention_stack_under_a_softmax_over_queries_gives_whole_layers_and_heads():
    # every query row is computed at once there: indexing a layer or a head must not ask for a block of rows
    model = _model(**FAMILIES["encoder-decoder, sinusoidal"])
    ids = _batch(model.cfg, [12])
    with intervene(model, SoftmaxOverQueries("cross")):
        cache, recorded = _run(model, ids)
    layers = [recorded[hook_name("cross", i, "pattern").rsplit(".", 1)[0]] for i in range(2)]
    full = torch.stack([cache[hook_name("cross", i, "pattern")][0] for i in range(2)]).numpy()
    stack = AttentionStack(layers, "pattern")
    for key in [(1,), (0, 2), (1, slice(None), slice(None), 3)]:
        np.testing.assert_allclose(stack[key], full[key], rtol=1e-6, atol=1e-7, err_msg=str(key))
    np.testing.assert_allclose(np.asarray(stack), full, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="compute all rows at once"):
        stack[0, 0, 1:3]


def test_the_fused_kernel_gives_the_explicit_pass_output(monkeypatch):
    """Past FUSED_FROM_CELLS an unhooked pass uses scaled_dot_product_attention; its logits are the
    explicit path's to float32 rounding, and so are the inputs recorded in either (the first layer's
    exactly: nothing before it differs)."""
    model = _model(**{**FAMILIES["decoder-only, RoPE, GQA"], "max_len": 256})
    ids = _batch(model.cfg, [200])
    monkeypatch.setattr(attention_module, "FUSED_FROM_CELLS", 1)
    calls = []
    real = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    with torch.no_grad(), record_attention() as fused_inputs:
        fused = model(ids)
    assert len(calls) == model.cfg.n_dec_layers
    monkeypatch.setattr(attention_module, "FUSED_FROM_CELLS", 2**62)
    with torch.no_grad(), record_attention() as explicit_inputs:
        explicit = model(ids)
    assert len(calls) == model.cfg.n_dec_layers  # the explicit pass did not call the kernel
    torch.testing.assert_close(fused, explicit, rtol=1e-4, atol=1e-5)
    for path, rec in explicit_inputs.items():
        compare = np.testing.assert_array_equal if ".0." in path else lambda a, b: np.testing.assert_allclose(
            a, b, rtol=1e-4, atol=1e-5)
        compare(fused_inputs[path].q, rec.q)
        compare(fused_inputs[path].k, rec.k)


def test_a_hooked_pattern_or_padding_keeps_the_explicit_path(monkeypatch):
    model = _model(**{**FAMILIES["decoder-only, RoPE, GQA"], "max_len": 256})
    monkeypatch.setattr(attention_module, "FUSED_FROM_CELLS", 1)
    calls = []
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", lambda *a, **k: calls.append(1))
    model.run_with_cache(_batch(model.cfg, [30]), names_filter=lambda n: n.endswith("hook_pattern"))
    with torch.no_grad():
        model(_batch(model.cfg, [30, 20]))  # padding: a fully masked row must stay 0, not NaN
    assert calls == []


def test_what_is_recorded_grows_with_width_times_length():
    model = _model(**{**FAMILIES["decoder-only, RoPE, GQA"], "max_len": 512})
    sizes = {}
    for n in (128, 256, 512):
        _, recorded = _run(model, _batch(model.cfg, [n]))
        sizes[n] = sum(rec.nbytes for rec in recorded.values())
    cfg = model.cfg
    assert sizes[512] == 2 * sizes[256] == 4 * sizes[128]
    # q and k, and one value norm per head and key (norm-based attention)
    per_position = (cfg.n_heads + cfg.kv_heads) * cfg.d_head + cfg.n_heads
    assert sizes[512] == 4 * 512 * cfg.n_dec_layers * per_position
    assert BLOCK_BYTES >= 4 * 3 * cfg.n_heads * 512  # a block holds at least one row of every head


LONG_PROMPT = "The quick brown fox jumps over the lazy dog. " * 110  # 1,100 tokens for SmolLM2

MEMORY_CHILD = r"""
import json, sys
import psutil, torch
torch.set_num_threads(1)
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
bundle = load_model("smollm2")
analyze(bundle, "warm up", keep=attention_only, max_new=1)
def high_water():  # peak resident bytes since the last reset (Linux: VmHWM)
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
    return int(line.split()[1]) * 1024
with open("/proc/self/clear_refs", "w") as f:  # "5": reset the peak, so loading's peak is not counted
    f.write("5")
loaded = psutil.Process().memory_info().rss
before = high_water()
result = analyze(bundle, sys.argv[1], keep=attention_only, max_new=2)
stack = result.attention("decoder")
one = stack[29, 8]
peak = high_water()
kept = sum(r.nbytes for r in result.attention_inputs.values())
print(json.dumps({"tokens": len(result.target_tokens), "loaded": loaded, "before": before, "peak": peak,
                  "kept": kept, "one": list(one.shape)}))
"""


@pytest.mark.slow
def test_a_long_smollm2_analysis_never_holds_every_heads_square():
    """At 1,102 tokens every head's float32 pattern alone is 1.25 GB; the analysis keeps q and k (97 MiB)
    and the value norms (1 MiB)
    and its pass grows the process by 175 MB here (bound: 0.4 of all patterns)."""
    import json
    import subprocess
    import sys

    from tests.paths import REPO_ROOT

    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, LONG_PROMPT], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=600, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    n = got["tokens"]
    assert n > 1000 and got["one"] == [n, n]
    all_patterns = 30 * 9 * n * n * 4
    assert got["kept"] == 4 * n * 30 * ((9 + 3) * 64 + 9)  # q, k and one value norm per head and key
    growth = max(0, got["peak"] - max(got["before"], got["loaded"]))
    assert growth < 0.4 * all_patterns, (growth / 2**20, all_patterns / 2**20)


@pytest.mark.slow
def test_smollm2_heads_recomputed_after_a_fused_pass_equal_an_explicit_hooked_pass():
    from model.run.analysis import analyze, attention_only
    from model.store.registry import load_model

    bundle = load_model("smollm2")
    text = LONG_PROMPT[:1800]  # ~400 tokens: 9 x 400² squares, past FUSED_FROM_CELLS
    lazy = analyze(bundle, text, keep=attention_only, max_new=1)
    n = len(lazy.target_tokens)
    assert 9 * n * n > attention_module.FUSED_FROM_CELLS
    explicit = analyze(bundle, text, keep=lambda h: h.endswith(("hook_pattern", "hook_scores")), max_new=1)
    for layer, head in [(0, 0), (7, 4), (29, 8)]:
        scores, pattern = lazy.head_attention("decoder", layer, head)
        want = explicit.attention("decoder")[layer, head]
        np.testing.assert_allclose(pattern, want, atol=2e-4)
        finite = np.isfinite(scores)
        want_scores = explicit.attention("decoder", "scores")[layer, head]
        np.testing.assert_array_equal(finite, np.isfinite(want_scores))
    assert lazy.output_text == explicit.output_text
