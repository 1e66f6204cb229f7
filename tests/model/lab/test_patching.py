"""Activation patching (model/lab/patching.py): alignment, patching A into A, the intact model untouched, a
full last-layer patch reproducing A, batched ranking = one pass per head."""

import numpy as np
import pytest
import torch

from model.analysis import analyze
from model.interventions import intervene
from model.lab.patching import GAP_MIN, Site, align, patch, patch_edit, rank_patches
from model.network.kinds import layer_counts
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
