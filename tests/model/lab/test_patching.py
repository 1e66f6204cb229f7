"""Activation patching (model/lab/patching.py): alignment, patching A into A, the intact model untouched, a
full last-layer patch reproducing A, batched ranking = one pass per head."""

import numpy as np
import pytest
import torch

from model.lab.choices import Site
from model.lab.patching import GAP_MIN, align, patch, patch_edit, rank_patches
from model.network.kinds import layer_counts
from model.run.analysis import analyze
from model.run.interventions import intervene
from model.store.registry import load_model

A, B = "listen", "silent"  # same length: every position pairs


@pytest.fixture(scope="module")
def reverse():
    return load_model("reverse")


def sites(cfg):
    counts = layer_counts(cfg)
    out = [Site("head", k, i, h) for k in counts for i in range(counts[k]) for h in (0, cfg.n_heads - 1)]
    out += [Site("resid", "encoder", i) for i in range(cfg.n_enc_layers)]
    out += [Site("resid", "decoder", i) for i in range(cfg.n_dec_layers)]
    return out


def test_alignment_pairs_every_position_at_equal_length_else_the_token():
    same = align(list("abc"), list("xyz"), "source")
    assert same.pairs == ((0, 0), (1, 1), (2, 2)) and same.reason == "same_length" and same.unaligned == 0
    by_token = align(list("abxb"), list("bqb"), "source", "b")
    assert by_token.reason == "token" and by_token.pairs == ((0, 1), (2, 3)) and by_token.unaligned == 1
    assert align(list("ab"), list("xyz"), "source").reason == "no_token"
    missing = align(list("ab"), list("xyz"), "source", "a")
    assert missing.reason == "token_missing" and missing.pairs == ()
    assert (missing.count_a, missing.count_b) == (1, 0)
    counted = align(list("aab"), list("xa"), "target", "a")
    assert counted.reason == "token_count" and counted.pairs == () and counted.unaligned == 2


def test_patching_a_sentence_into_itself_changes_nothing(reverse):
    for site in sites(reverse.cfg):
        result = patch(reverse, A, A, site)
        assert result.output == result.output_b == result.output_a, site
        assert all(s.kl == 0.0 and s.p_intact == s.p_patched for s in result.steps), site
        assert result.toward_a is None  # A and A agree at every step: no gap to close
    for e in rank_patches(reverse, A, A):  # a batch of n_heads rows: float rounding of batched matmuls only
        assert e.mean_kl <= 1e-9 and e.toward_a is None


def test_the_intact_model_is_bit_identical_after_patching(reverse):
    before = analyze(reverse, B)
    for site in sites(reverse.cfg):
        patch(reverse, A, B, site)
    rank_patches(reverse, A, B)
    with pytest.raises(RuntimeError):  # a failing pass inside the patch still removes the hook
        _raise_inside(reverse)
    after = analyze(reverse, B)
    assert before.output_text == after.output_text
    for name, value in before.activations.items():
        assert np.array_equal(value, after.activations[name]), name
    assert not reverse.model.decoder.recompute
    assert not any(m._forward_hooks for m in reverse.model.modules())
    assert reverse.model.active_hook_count() == 0


def _raise_inside(bundle):
    point = "decoder.blocks.0.cross_attn.hook_z"
    with intervene(bundle.model, patch_edit(point, [0], torch.zeros(1, bundle.cfg.d_head), 0)):
        raise RuntimeError("inside")


def test_patching_the_last_decoder_block_everywhere_reproduces_a(reverse):
    last = reverse.cfg.n_dec_layers - 1
    result = patch(reverse, A, B, Site("resid", "decoder", last))
    assert result.output_a != result.output_b
    assert result.output == result.output_a  # B's logits are A's logits at every position
    counted = [s for s in result.steps if s.toward_a is not None]
    assert counted and all(s.gap >= GAP_MIN for s in counted)
    assert result.toward_a == pytest.approx(1.0, abs=1e-6)
    assert all(s.moved == pytest.approx(0.0, abs=1e-6) for s in counted)


def test_nothing_paired_means_nothing_patched(reverse):
    result = patch(reverse, "abc", "abcdefg", Site("head", "encoder", 0, 0))  # lengths differ, no token
    assert result.alignment.reason == "no_token" and not result.alignment.pairs
    assert all(s.kl == 0.0 for s in result.steps) and result.output == result.output_b
    shared = patch(reverse, "abc", "abcdefg", Site("head", "encoder", 0, 0), token="b")
    assert shared.alignment.pairs == ((1, 1),)


def test_one_head_patched_agrees_with_its_ranking_and_batched_equals_one_pass(reverse):
    fast = rank_patches(reverse, A, B)
    slow = {(e.kind, e.layer, e.head): e for e in rank_patches(reverse, A, B, batched=False)}
    assert [e.mean_kl for e in fast] == sorted((e.mean_kl for e in fast), reverse=True)
    assert len(fast) == sum(layer_counts(reverse.cfg).values()) * reverse.cfg.n_heads
    for e in fast:
        s = slow[(e.kind, e.layer, e.head)]
        assert e.mean_kl == pytest.approx(s.mean_kl, abs=1e-5)
        assert (e.toward_a is None) == (s.toward_a is None)
        if e.toward_a is not None:
            assert e.toward_a == pytest.approx(s.toward_a, abs=1e-4)
    for kind, layer, head in [("cross", 1, 1), ("encoder", 0, 2), ("decoder", 1, 3)]:
        one = patch(reverse, A, B, Site("head", kind, layer, head))
        assert one.mean_kl == pytest.approx(slow[(kind, layer, head)].mean_kl, abs=1e-6)
    assert fast[0].mean_kl > 0.1  # some head carries part of the difference


def test_sites_the_model_lacks_are_refused(reverse):
    with pytest.raises(ValueError):
        Site("head", "cross", 0)  # a head site needs a head
    with pytest.raises(ValueError):
        Site("resid", "cross", 0, 1)
    with pytest.raises(ValueError):
        Site("mlp", "cross", 0)
    with pytest.raises(ValueError):
        patch(reverse, A, B, Site("head", "cross", 7, 0))
    with pytest.raises(ValueError):
        patch(reverse, A, B, Site("head", "cross", 0, 99))


def test_a_translation_is_patched_as_far_as_its_new_token_cap(reverse):
    """max_new caps A's, B's and the patched output where the analysis caps them (the sidebar's new tokens);
    a source-side patch's steps are the first ones of the uncapped patch (the decoder is causal), a cap
    past the end changes nothing, and at 0 there is no output to patch: refused."""
    site = Site("head", "encoder", 1, 2)
    whole, capped = patch(reverse, A, B, site), patch(reverse, A, B, site, max_new=3)
    assert capped.output_a == analyze(reverse, A, max_new=3).output_text == whole.output_a[:3]
    assert capped.output_b == analyze(reverse, B, max_new=3).output_text == whole.output_b[:3]
    assert len(capped.output) <= 3 and len(whole.output_b) > 3  # one character, one token
    assert [s.token for s in capped.steps] == list(capped.output_b)
    for c, w in zip(capped.steps, whole.steps[:3], strict=True):  # float32 over longer rows: 1e-8 apart
        assert c.kl == pytest.approx(w.kl, rel=1e-4, abs=1e-7)
        assert c.p_patched == pytest.approx(w.p_patched, rel=1e-5, abs=1e-7)
    past = patch(reverse, A, B, site, max_new=50)
    assert (past.output_b, past.output, len(past.steps)) == (whole.output_b, whole.output, len(whole.steps))
    ranked = {(e.kind, e.layer, e.head): e for e in rank_patches(reverse, A, B, max_new=3)}
    for kind, layer, head in [("cross", 1, 1), ("decoder", 0, 2)]:
        one = patch(reverse, A, B, Site("head", kind, layer, head), max_new=3)
        assert ranked[(kind, layer, head)].mean_kl == pytest.approx(one.mean_kl, abs=1e-6)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="max_new"):
            patch(reverse, A, B, site, max_new=bad)
        with pytest.raises(ValueError, match="max_new"):
            rank_patches(reverse, A, B, max_new=bad)


# --------------------------------------------------------------------------- decoder-only language models

from model.lab import patching_lm  # noqa: E402

CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"  # 9 tokens each
IND_A, IND_B = "qhzmtvbqhzm", "qhzmkwbqhzm"  # the induction model copies what followed "qhzm"


@pytest.fixture(scope="module")
def induction():
    return load_model("induction")


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def _close(fast, slow, key) -> None:
    assert len(fast) == len(slow)
    got = {key(e): e for e in fast}
    for e in slow:
        f = got[key(e)]
        assert f.mean_kl == pytest.approx(e.mean_kl, rel=1e-4, abs=1e-7)
        assert (f.recovered is None) == (e.recovered is None)
        if e.recovered is not None:
            assert f.recovered == pytest.approx(e.recovered, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("layers", [None, (1, 2)])
def test_language_model_rankings_equal_one_pass_per_site(induction, layers):
    heads = patching_lm.rank_heads(induction, IND_A, IND_B, layers=layers)
    _close(heads, patching_lm.rank_heads(induction, IND_A, IND_B, layers=layers, batched=False),
           lambda e: (e.layer, e.head))
    assert any(e.recovered is not None and abs(e.recovered) > 0.05 for e in heads)  # sites do move B
    grid = patching_lm.rank_residual(induction, IND_A, IND_B, layers=layers)
    _close(grid, patching_lm.rank_residual(induction, IND_A, IND_B, layers=layers, batched=False),
           lambda e: (e.layer, e.position))
    end, top = len(induction.task.prepare(IND_B, 64).prefix) - 1, induction.cfg.n_dec_layers - 1
    for e in (e for e in grid if e.layer == top):  # after the last block only the last position is read
        assert e.recovered == pytest.approx(1.0 if e.position == end else 0.0, abs=1e-4)


# slow: in the whole suite only (the quick subset keeps patching on the induction model, the same code path)
@pytest.mark.slow
def test_smollm2_patching_of_the_last_blocks_equals_one_pass_per_site(smollm2):
    _close(patching_lm.rank_heads(smollm2, CLEAN, CORRUPT, layers=(28, 30)),
           patching_lm.rank_heads(smollm2, CLEAN, CORRUPT, layers=(28, 30), batched=False),
           lambda e: (e.layer, e.head))
    grid = patching_lm.rank_residual(smollm2, CLEAN, CORRUPT, layers=(28, 30))
    _close(grid, patching_lm.rank_residual(smollm2, CLEAN, CORRUPT, layers=(28, 30), batched=False),
           lambda e: (e.layer, e.position))
    assert len(grid) == 2 * 9 and grid[2].token == "osse"


# slow: whole suite only (quick keeps patching on the induction model)
@pytest.mark.slow
def test_a_language_model_patch_moves_b_to_a_and_continues_it_again(smollm2):
    whole = patch(smollm2, CLEAN, CORRUPT, Site("resid", "decoder", 29), max_new=4)
    assert whole.answers == (" Paris", " Rome")
    assert whole.alignment.reason == "prompt" and len(whole.alignment.pairs) == 9
    ld_a, ld_b, ld_patched = whole.logit_diff
    assert ld_patched == pytest.approx(ld_a, abs=1e-4) and whole.recovered == pytest.approx(1.0, abs=1e-5)
    assert whole.output.startswith(" Paris") and whole.output_b.startswith(" Rome")
    assert len(whole.steps) == 4 and whole.steps[0].toward_a == pytest.approx(1.0, abs=1e-5)
    assert all(s.toward_a is None for s in whole.steps[1:])  # later steps read different prefixes
    one = patch(smollm2, CLEAN, CORRUPT, Site("resid", "decoder", 20), max_new=4, position=2)
    assert one.alignment.reason == "position" and one.alignment.pairs == ((2, 2),)
    grid = patching_lm.rank_residual(smollm2, CLEAN, CORRUPT, layers=(20, 21))
    cell = next(e for e in grid if e.position == 2)
    assert one.recovered == pytest.approx(cell.recovered, abs=1e-4)


def test_prompts_of_different_token_counts_are_not_paired(smollm2):
    result = patch(smollm2, CLEAN, "Rome is a city", Site("head", "decoder", 3, 4), max_new=3)
    assert result.alignment.reason == "prompt_length" and not result.alignment.pairs
    assert (result.alignment.count_a, result.alignment.count_b) == (9, 4)
    assert result.output == result.output_b and all(s.kl == pytest.approx(0, abs=1e-9) for s in result.steps)
    with pytest.raises(ValueError, match="equal token counts"):
        patching_lm.rank_heads(smollm2, CLEAN, "Rome is a city")
    with pytest.raises(ValueError, match="patching_lm"):  # the encoder-decoder ranking says where to go
        rank_patches(smollm2, CLEAN, CORRUPT)
