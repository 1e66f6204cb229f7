"""Head ablation (model/lab/ablation.py): the ranking's invariants, several heads re-decoded, and the measured
group-ablation expectation, on the shipped "reverse" model."""

import numpy as np
import pytest
import torch

from model.decoding.decoders import greedy_decode
from model.lab.ablation import (
    HeadEffect,
    ablate,
    continuation,
    effect_matrices,
    exact_match,
    head_edits,
    rank_heads,
)
from model.lab.choices import all_heads, format_heads, group_heads, parse_heads
from model.network.kinds import KINDS, layer_counts
from model.run.analysis import analyze
from model.run.interventions import HeadOutput, head_z, intervene
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


# --------------------------------------------------------------------------- decoder-only language models

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def induction():
    return load_model("induction")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """The small local HF decoder checkpoint (GQA, RoPE, a <bos> in the prompt) of the store's tests."""
    from tests.model.store.test_hf_decoder import HF_DECODER, _save

    folder = tmp_path_factory.mktemp("llama")
    _save("llama", folder)
    return HF_DECODER.load(folder)


def _ranked(effects) -> dict:
    return {(e.kind, e.layer, e.head): e for e in effects}


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("name, text", [("induction", "qhzmtvbqhzm"), ("llama", "w5 w17 w3")])
def test_language_model_ranking_starts_each_layer_at_its_block_and_equals_one_pass_per_head(
        name, text, mode, induction, llama):
    bundle = {"induction": induction, "llama": llama}[name]
    fast = _ranked(rank_heads(bundle, text, mode=mode, max_new=5))
    slow = rank_heads(bundle, text, mode=mode, max_new=5, batched=False)
    assert len(slow) == bundle.cfg.n_dec_layers * bundle.cfg.n_heads == len(fast)
    assert any(e.mean_kl > 5e-5 for e in slow)  # the heads do something (a random llama's: ~1e-4 nats)
    for e in slow:
        assert fast[(e.kind, e.layer, e.head)].mean_kl == pytest.approx(e.mean_kl, rel=1e-3, abs=1e-9)
        got = fast[(e.kind, e.layer, e.head)].delta_logprob
        assert got == pytest.approx(e.delta_logprob, rel=1e-3, abs=1e-7)


def test_language_model_ranking_in_slices_equals_the_whole_and_reads_the_given_continuation(induction):
    whole = rank_heads(induction, "qhzmtvbqhzm", max_new=4)
    ids = continuation(induction, "qhzmtvbqhzm", None, 4)
    prompt = induction.task.prepare("qhzmtvbqhzm", induction.cfg.max_len).prefix
    assert list(ids) == greedy_decode(induction.model, [prompt], [prompt], induction.tokenizer.eos_id, 4)[0]
    parts = rank_heads(induction, "qhzmtvbqhzm", max_new=4, layers=(0, 1), output=ids)
    parts += rank_heads(induction, "qhzmtvbqhzm", max_new=4, layers=(1, 2), output=ids)
    got, want = _ranked(parts), _ranked(whole)
    assert got.keys() == want.keys()
    np.testing.assert_allclose([(got[k].mean_kl, got[k].delta_logprob) for k in want],
                               [(want[k].mean_kl, want[k].delta_logprob) for k in want], rtol=1e-6)


# slow: in the whole suite only (the quick subset keeps the same ranking on the induction model)
@pytest.mark.slow
def test_smollm2_ranking_of_the_last_layers_equals_one_pass_per_head_and_leaves_the_model_intact():
    bundle = load_model("smollm2")
    ids = torch.tensor([bundle.task.prepare(PROMPT, bundle.cfg.max_len).prefix])
    with torch.no_grad():
        before = bundle.model(ids)
    fast = _ranked(rank_heads(bundle, PROMPT, max_new=3, layers=(27, 30)))
    slow = rank_heads(bundle, PROMPT, max_new=3, layers=(27, 30), batched=False)
    assert len(slow) == 27 and {e.layer for e in slow} == {27, 28, 29}
    for e in slow:
        assert fast[(e.kind, e.layer, e.head)].mean_kl == pytest.approx(e.mean_kl, abs=1e-5)
    with torch.no_grad():
        assert torch.equal(bundle.model(ids), before)


def test_a_language_model_is_continued_again_under_the_ablation(llama):
    text, heads = "w5 w17 w3", [("decoder", 0, 1), ("decoder", 1, 3)]
    none = ablate(llama, text, heads=(), max_new=6)
    assert none.output == none.intact_output and all(s.kl == pytest.approx(0, abs=1e-9) for s in none.steps)
    assert len(none.steps) == 6  # the bound reached: no end-of-text step
    result = ablate(llama, text, heads=heads, max_new=6)
    model, prompt = llama.model, llama.task.prepare(text, llama.cfg.max_len).prefix
    with intervene(model, *head_edits(heads)):
        expected = greedy_decode(model, [prompt], [prompt], llama.tokenizer.eos_id, 6)[0]
    assert result.output == llama.tokenizer.decode(expected)
    assert result.intact_output == none.intact_output and result.mean_kl > 0
    assert exact_match(llama, ()) is None  # a continuation has no one right answer
