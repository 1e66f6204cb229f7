"""Head ablation (model/lab/ablation.py): the ranking's invariants, several heads re-decoded, and the measured
group-ablation expectation, on the shipped "reverse" model."""

import numpy as np
import pytest
import torch

from model.analysis import analyze
from model.decoding import greedy_decode
from model.interventions import HeadOutput, head_z, intervene
from model.lab.ablation import (
    HeadEffect,
    ablate,
    all_heads,
    effect_matrices,
    exact_match,
    format_heads,
    group_heads,
    head_edits,
    parse_heads,
    rank_heads,
)
from model.network.kinds import KINDS, layer_counts
from model.store.registry import load_model

TEXT = "attention"


@pytest.fixture(scope="module")
def reverse():
    return load_model("reverse")


@pytest.fixture(scope="module")
def effects(reverse):
    return rank_heads(reverse, TEXT)


def _teacher_forced(bundle):
    model, tok = bundle.model, bundle.tokenizer
    prepared = bundle.task.prepare(TEXT, model.cfg.max_len)
    out = greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id)[0]
    return torch.tensor([prepared.source_ids]), torch.tensor([prepared.prefix + out])


def test_replace_by_own_z_changes_nothing(reverse):
    model = reverse.model
    src, tgt = _teacher_forced(reverse)
    with torch.no_grad():
        logits, cache = model.run_with_cache(src, tgt)
        p_log = torch.log_softmax(logits[0].double(), -1)
        chosen = tgt[0, 1:]
        for kind in KINDS:
            for layer in range(layer_counts(model.cfg)[kind]):
                for head in range(model.cfg.n_heads):
                    edit = HeadOutput(kind, layer, head, "replace", head_z(cache, kind, layer, head))
                    with intervene(model, edit):
                        q_log = torch.log_softmax(model(src, tgt)[0].double(), -1)
                    kl = (p_log.exp() * (p_log - q_log)).sum(-1)
                    idx = chosen[:, None]
                    delta = (q_log[:-1].gather(-1, idx) - p_log[:-1].gather(-1, idx)).sum()
                    assert float(kl.abs().max()) <= 1e-6
                    assert abs(float(delta)) <= 1e-6


def test_one_effect_per_head_sorted_and_nonnegative(reverse, effects):
    cfg = reverse.model.cfg
    assert len(effects) == sum(layer_counts(cfg).values()) * cfg.n_heads
    assert len({(e.kind, e.layer, e.head) for e in effects}) == len(effects)
    assert all(isinstance(e, HeadEffect) and e.mean_kl >= 0 and np.isfinite(e.delta_logprob) for e in effects)
    assert [e.mean_kl for e in effects] == sorted((e.mean_kl for e in effects), reverse=True)


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_batched_equals_one_pass_per_head(reverse, mode):
    fast = {(e.kind, e.layer, e.head): e for e in rank_heads(reverse, TEXT, mode=mode)}
    for e in rank_heads(reverse, TEXT, mode=mode, batched=False):
        f = fast[(e.kind, e.layer, e.head)]
        assert f.mean_kl == pytest.approx(e.mean_kl, abs=1e-4)
        assert f.delta_logprob == pytest.approx(e.delta_logprob, abs=1e-4)


def test_intact_logits_bit_identical(reverse):
    src, tgt = _teacher_forced(reverse)
    with torch.no_grad():
        before = reverse.model(src, tgt).clone()
        rank_heads(reverse, TEXT)
        rank_heads(reverse, TEXT, mode="mean")
        after = reverse.model(src, tgt)
    assert torch.equal(before, after)


def test_matrix_puts_each_effect_at_its_layer_and_head(reverse, effects):
    cfg = reverse.model.cfg
    counts = layer_counts(cfg)
    kl = effect_matrices(effects, counts, cfg.n_heads)
    delta = effect_matrices(effects, counts, cfg.n_heads, "delta_logprob")
    for kind in KINDS:
        assert kl[kind].shape == (counts[kind], cfg.n_heads)
        assert not np.isnan(kl[kind]).any()
    for e in effects:
        assert kl[e.kind][e.layer, e.head] == e.mean_kl
        assert delta[e.kind][e.layer, e.head] == e.delta_logprob


def test_unknown_mode_rejected(reverse):
    with pytest.raises(ValueError):
        rank_heads(reverse, TEXT, mode="replace")


# --------------------------------------------------------------------------- several heads, re-decoded

def test_ablating_nothing_changes_nothing(reverse):
    result = ablate(reverse, TEXT, heads=())
    assert result.output == result.intact_output == analyze(reverse, TEXT).output_text
    for s in result.steps:
        assert s.kl == 0.0 and s.p_intact == s.p_ablated and s.top_intact == s.top_ablated
    assert result.mean_kl == 0.0 and result.delta_logprob == 0.0


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_one_head_ablated_agrees_with_its_ranking(reverse, mode):
    ranked = {(e.kind, e.layer, e.head): e for e in rank_heads(reverse, TEXT, mode=mode)}
    for head in [("cross", 1, 2), ("decoder", 0, 2), ("encoder", 1, 0)]:
        result = ablate(reverse, TEXT, heads=[head], mode=mode)
        assert result.mean_kl == pytest.approx(ranked[head].mean_kl, abs=1e-4)
        assert result.delta_logprob == pytest.approx(ranked[head].delta_logprob, abs=1e-3)


def test_the_intact_model_is_bit_identical_after_ablations(reverse):
    before = analyze(reverse, TEXT)
    heads = group_heads(reverse.cfg, "cross", 1) + [("decoder", 0, 1)]
    for mode in ("zero", "mean"):
        ablate(reverse, TEXT, heads=heads, mode=mode)
        exact_match(reverse, head_edits(heads, mode), n=20)
    after = analyze(reverse, TEXT)
    assert before.output_text == after.output_text
    for name, value in before.activations.items():
        assert np.array_equal(value, after.activations[name]), name


def test_ablated_output_is_the_greedy_decode_under_the_edits(reverse):
    heads = group_heads(reverse.cfg, "cross", 1)
    result = ablate(reverse, TEXT, heads=heads)
    assert result.output == analyze(reverse, TEXT, edits=head_edits(heads)).output_text
    assert result.output != result.intact_output  # removing the whole layer breaks this word
    assert result.mean_kl > 0.5 and result.delta_logprob < -5


def test_ablating_all_layer1_cross_heads_drops_exact_match_below_005(reverse):
    # The measured expectation of the issue: the reverse task is shared by the four layer-1
    # cross-attention heads, so removing them together breaks it, removing any one does not.
    group = group_heads(reverse.cfg, "cross", 1)
    intact = exact_match(reverse, (), n=500)
    together = exact_match(reverse, head_edits(group, "zero"), n=500)
    alone = [exact_match(reverse, head_edits([h], "zero"), n=500) for h in group]
    assert intact >= 0.95
    assert together < 0.05
    assert min(alone) > 0.4, alone  # measured 0.54-0.65 on the shipped model
    assert exact_match(load_model("default"), ()) is None  # no exact answer for translation


def test_heads_in_links_round_trip_and_bad_parts_are_reported(reverse):
    cfg = reverse.cfg
    heads = all_heads(cfg)
    assert len(heads) == sum(layer_counts(cfg).values()) * cfg.n_heads
    text = format_heads(list(reversed(heads)))
    assert parse_heads(text, cfg) == (heads, [])
    got, bad = parse_heads("cross.1.0, cross.1.0,cross.9.0,decoder.0.x,,encoder.0.3,cross.-1.0", cfg)
    assert got == [("cross", 1, 0), ("encoder", 0, 3)]
    assert bad == ["cross.9.0", "decoder.0.x", "cross.-1.0"]
    with pytest.raises(ValueError):
        group_heads(cfg, "cross", 5)
    with pytest.raises(ValueError):
        head_edits([("cross", 0, 0)], "replace")
