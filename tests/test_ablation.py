"""Head ablation ranking (model/ablation.py): invariants only, on the shipped "reverse" model."""

import numpy as np
import pytest
import torch

from model.ablation import HeadEffect, effect_matrices, rank_heads
from model.decoding import greedy_decode
from model.interventions import HeadOutput, head_z, intervene
from model.network.kinds import KINDS, layer_counts
from model.registry import load_model

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
