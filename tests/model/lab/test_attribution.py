"""Attribution (model/lab/attribution.py): completeness of integrated gradients within a stated tolerance,
gradient x input against a finite difference, the attributed log-probabilities against the analysis,
rank correlation, rollout, agreement, and the model left untouched."""

import numpy as np
import pytest
import torch

import viz
from model.lab.ablation import sample_texts
from model.lab.attribution import EMBED_HOOK, agreement, attribute, cross_rollout, self_rollout, spearman
from model.run.analysis import analyze
from model.run.interventions import HookFunction, intervene
from model.store.registry import load_model

TEXT = "attention"


@pytest.fixture(scope="module")
def reverse():
    return load_model("reverse")


def _logp_scaled(bundle, text: str, scale: float) -> np.ndarray:
    """log p(own token) per step with the source token embeddings multiplied by `scale` (direct)."""
    model = bundle.model
    intact = analyze(bundle, text)
    prepared = intact.prepared
    full = prepared.prefix + [s.token_id for s in intact.steps][:-1]
    with intervene(model, HookFunction(EMBED_HOOK, lambda out: out * scale)), torch.no_grad():
        logits = model(torch.tensor([prepared.source_ids]), torch.tensor([full]))[0]  # [tgt_pos, vocab]
        logp = torch.log_softmax(logits.double(), -1)
    rows = [s.position for s in intact.steps]
    return logp[rows, [s.token_id for s in intact.steps]].numpy()


def test_attributed_values_are_the_models_log_probabilities(reverse):
    r = attribute(reverse, TEXT, n_steps=8)
    intact = analyze(reverse, TEXT)
    assert r.output_tokens == [s.token for s in intact.steps]
    np.testing.assert_allclose(r.f_input, np.log([s.prob for s in intact.steps]), atol=1e-5)
    np.testing.assert_allclose(r.f_baseline, _logp_scaled(reverse, TEXT, 0.0), atol=1e-5)
    assert r.integrated.shape == r.grad_x_input.shape == (len(r.output_tokens), len(r.source_tokens))


def test_gradient_x_input_sums_to_the_derivative_along_the_input(reverse):
    # sum_i x_i . df/dx_i = d/da f(a x) at a = 1: checked against a central finite difference
    r = attribute(reverse, TEXT, n_steps=4)
    eps = 1e-3
    numeric = (_logp_scaled(reverse, TEXT, 1 + eps) - _logp_scaled(reverse, TEXT, 1 - eps)) / (2 * eps)
    np.testing.assert_allclose(r.grad_x_input.sum(-1), numeric, atol=5e-3, rtol=2e-2)


@pytest.mark.parametrize("name,text", [("reverse", TEXT), ("default", "我吃了一个苹果")])
def test_integrated_gradients_are_complete_within_the_stated_tolerance(name, text):
    # Tolerance: with 128 midpoint steps the sum of the attributions is within 5 % of the largest
    # change f(input) - f(baseline) of any step, and the error shrinks as the steps grow.
    bundle = load_model(name)
    coarse, fine = attribute(bundle, text, n_steps=8), attribute(bundle, text, n_steps=128)
    delta = np.abs(fine.f_input - fine.f_baseline)
    assert fine.completeness_error.max() <= 0.05 * delta.max(), (fine.completeness_error, delta)
    assert fine.completeness_error.mean() < coarse.completeness_error.mean()
    np.testing.assert_array_equal(fine.f_input, coarse.f_input)


def test_spearman_is_the_rank_correlation():
    a = np.array([0.1, 0.5, 0.2, 0.9, 0.3])
    b = np.array([1.0, 3.0, 2.0, 5.0, 0.0])
    d = np.argsort(np.argsort(a)) - np.argsort(np.argsort(b))
    n = len(a)
    assert spearman(a, b) == pytest.approx(1 - 6 * (d**2).sum() / (n * (n**2 - 1)))
    assert spearman(a, a * 3 + 1) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    # ties get their average rank: ranks (0.5, 0.5, 2) against (0, 1, 2)
    ra, rb = np.array([0.5, 0.5, 2.0]), np.array([0.0, 1.0, 2.0])
    ra, rb = ra - ra.mean(), rb - rb.mean()
    assert spearman(np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(
        (ra * rb).sum() / np.sqrt((ra**2).sum() * (rb**2).sum()))
    assert np.isnan(spearman(np.ones(4), np.arange(4.0)))


def test_rollout_is_the_viz_rollout_carried_through_cross_attention(reverse):
    result = analyze(reverse, TEXT)
    enc = result.attention("encoder")
    np.testing.assert_allclose(self_rollout(enc), viz.attention_rollout(enc, add_residual=True), atol=1e-6)
    r = attribute(reverse, TEXT, n_steps=4)
    rows = [s.position for s in result.steps]
    np.testing.assert_allclose(r.cross, result.attention("cross")[:, :, rows], atol=1e-6)
    np.testing.assert_allclose(r.rollout, cross_rollout(r.cross, enc), atol=1e-9)
    np.testing.assert_allclose(r.rollout.sum(-1), 1.0, atol=1e-6)  # rows of stochastic matrices
    np.testing.assert_allclose(r.mean_attention, r.cross.astype(np.float64).mean(axis=(0, 1)))


def test_agreement_over_sentences(reverse):
    texts = sample_texts(reverse, 4)
    ag = agreement(reverse, texts, n_steps=8)
    assert ag.heads.shape == (reverse.cfg.n_dec_layers, reverse.cfg.n_heads)
    assert ag.n_sentences == 4
    steps = sum(len(attribute(reverse, t, n_steps=8).output_tokens) for t in texts)
    assert 0 < ag.n_steps <= steps
    assert np.all(np.abs(ag.heads) <= 1) and -1 <= ag.mean_attention <= 1 and -1 <= ag.rollout <= 1
    # each head's score is the mean of its per-step rank correlations (steps where every one is defined)
    per_step = []
    for t in texts:
        r = attribute(reverse, t, n_steps=8)
        for s in range(len(r.output_tokens)):
            target = np.abs(r.integrated[s])
            heads = [[spearman(row[s], target) for row in layer] for layer in r.cross]
            rest = [spearman(x[s], target) for x in (r.mean_attention, r.rollout, np.abs(r.grad_x_input))]
            if not np.isnan(heads).any() and not np.isnan(rest).any():
                per_step.append(heads)
    assert len(per_step) == ag.n_steps
    np.testing.assert_allclose(ag.heads, np.mean(per_step, axis=0), atol=1e-12)


def test_attribution_leaves_the_model_untouched_and_checks_its_input(reverse):
    before = analyze(reverse, TEXT)
    attribute(reverse, TEXT, n_steps=4)
    after = analyze(reverse, TEXT)
    for name, value in before.activations.items():
        assert np.array_equal(value, after.activations[name]), name
    assert not any(m._forward_hooks for m in reverse.model.modules())
    assert all(p.grad is None for p in reverse.model.parameters())
    with pytest.raises(ValueError):
        attribute(reverse, TEXT, n_steps=0)


def test_a_translation_is_attributed_as_far_as_its_new_token_cap(reverse):
    """max_new caps the output where the analysis caps it (the sidebar's new tokens): the steps kept are the
    uncapped ones' first (the decoder is causal, the source the same), a cap past the end changes nothing,
    and at 0 there is no step to attribute: refused."""
    whole, capped = attribute(reverse, TEXT, n_steps=8), attribute(reverse, TEXT, n_steps=8, max_new=3)
    shown = analyze(reverse, TEXT, max_new=3).target_tokens[1:]  # after the decoder's start token
    assert capped.output_tokens == shown == whole.output_tokens[:3]
    np.testing.assert_allclose(capped.integrated, whole.integrated[:3], rtol=1e-5, atol=1e-6)  # float32 sums
    np.testing.assert_allclose(capped.cross, whole.cross[:, :, :3], atol=1e-6)
    assert attribute(reverse, TEXT, n_steps=8, max_new=50).output_tokens == whole.output_tokens
    with pytest.raises(ValueError, match="max_new"):
        attribute(reverse, TEXT, n_steps=4, max_new=0)


# --------------------------------------------------------------------------- decoder-only language models

IND = "qhzmtvbqhzm"


@pytest.fixture(scope="module")
def induction():
    return load_model("induction")


def test_language_model_integrated_gradients_are_complete_over_the_prompt(induction):
    r = attribute(induction, IND, n_steps=64, max_new=4)
    prompt = induction.task.prepare(IND, induction.cfg.max_len).prefix
    assert r.source_tokens == induction.tokenizer.tokens(prompt) and len(r.output_tokens) == 4
    assert r.integrated.shape == r.grad_x_input.shape == (4, len(prompt))
    delta = r.f_input - r.f_baseline
    assert np.abs(delta).min() > 1.0  # the end-of-text baseline is far from the prompt: a real test
    assert r.completeness_error.max() < 0.05 * np.abs(delta).max()  # measured ~1e-2 nats at 64 steps
    coarse = attribute(induction, IND, n_steps=8, max_new=4)
    assert coarse.completeness_error.max() > r.completeness_error.max()  # the rule's error shrinks


def test_language_model_attention_beside_it_is_the_steps_self_attention_over_the_prompt(induction):
    r = attribute(induction, IND, n_steps=8, max_new=4)
    analysis = analyze(induction, IND, max_new=4)
    n = len(r.source_tokens)
    want = analysis.attention("decoder")[:, :, r.rows][..., :n]  # [layer, head, step, prompt]
    np.testing.assert_allclose(r.cross, want, atol=1e-5)
    assert r.output_tokens[:4] == [s.token for s in analysis.steps[:4]]
    np.testing.assert_allclose(r.f_input, [np.log(s.prob) for s in analysis.steps[:4]], atol=1e-4)
    assert np.all(r.rollout >= 0) and np.all(r.rollout.sum(-1) <= 1 + 1e-9)


def test_attributing_the_first_outputs_only_equals_the_first_rows_of_all(induction):
    first = attribute(induction, IND, n_steps=8, max_new=4, outputs=1)
    every = attribute(induction, IND, n_steps=8, max_new=4)
    assert first.integrated.shape[0] == 1 and every.integrated.shape[0] == 4
    np.testing.assert_allclose(first.integrated, every.integrated[:1], atol=1e-5)
    np.testing.assert_allclose(first.cross, every.cross[:, :, :1], atol=1e-6)


# slow: whole suite only (quick keeps attribution on the didactic and translation models)
@pytest.mark.slow
def test_smollm2_attribution_leaves_the_model_intact():
    bundle = load_model("smollm2")
    ids = torch.tensor([bundle.task.prepare("The capital of France is", bundle.cfg.max_len).prefix])
    with torch.no_grad():
        before = bundle.model(ids)
    r = attribute(bundle, "The capital of France is", n_steps=4, max_new=3, outputs=1)
    assert r.output_tokens == [" Paris"] and r.cross.shape == (30, 9, 1, 5)
    assert np.isfinite(r.integrated).all() and np.isfinite(r.completeness_error).all()
    with torch.no_grad():
        assert torch.equal(bundle.model(ids), before)
    assert all(not p.requires_grad or p.grad is None for p in bundle.model.parameters())
