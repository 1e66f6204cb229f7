"""Beam search: width 1 is greedy decoding, batched equals one sentence at a time, every figure of the
trace is the model's own log-probability, and it does at least as well as greedy on the didactic models."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from model.decoding.beam import beam_search, length_normalised
from model.decoding.decoders import greedy_decode
from model.decoding.strategy import Strategy
from model.network.transformer import Transformer
from model.store.registry import load_model
from model.training.evaluate import evaluate_model
from tests.conftest import tiny_config

DIDACTIC = ("reverse", "copy", "sort")


@functools.cache
def bundle(name: str):
    return load_model(name)


def prepared(name: str, texts: list[str]):
    b = bundle(name)
    return [b.task.prepare(t, b.cfg.max_len) for t in texts]


def log_probs(model: Transformer, source: list[int], ids: list[int]) -> torch.Tensor:
    """log p(next token | ids) over the vocabulary, the slow obvious way: [vocab]."""
    with torch.no_grad():
        logits = model(torch.tensor([source]), torch.tensor([ids]))  # [1, pos, vocab]
    return torch.log_softmax(logits[0, -1].double(), dim=-1)


@pytest.mark.parametrize(
    "variant",
    [dict(), dict(pos_encoding="rope", n_kv_heads=2), dict(pos_encoding="learned", norm_first=False)],
)
def test_width_one_is_greedy_on_random_models_that_run_to_max_len(variant):
    torch.manual_seed(5)
    model = Transformer(tiny_config(**variant)).eval()
    g = torch.Generator().manual_seed(1)
    sources = [torch.randint(4, 40, (n,), generator=g).tolist() + [2] for n in (3, 9, 6)]
    for max_new in (None, 4):
        greedy = greedy_decode(model, sources, [[1]] * 3, eos_id=2, max_new=max_new)
        beams = beam_search(model, sources, [[1]] * 3, eos_id=2, width=1, max_new=max_new)
        assert [r.best.ids for r in beams] == greedy
    # Random models never say eos, so at least one row reached max_len and was cut there.
    assert not all(r.best.ended for r in beam_search(model, sources, [[1]] * 3, eos_id=2, width=1))


@pytest.mark.parametrize("name,texts", [
    ("reverse", ["attention", "transformer", "abc", "zebra"]),
    ("sort", ["banana", "keyboard", "python"]),
    ("default", ["我吃了一个苹果", "苹果公司今天发布了一款新手机", "I ate an apple.",
                 "Where is the station?"]),
])
def test_width_one_is_greedy_token_for_token_on_the_shipped_models(name, texts):
    b = bundle(name)
    ps = prepared(name, texts)
    args = ([p.source_ids for p in ps], [p.prefix for p in ps], b.tokenizer.eos_id)
    assert [r.best.ids for r in beam_search(b.model, *args, width=1)] == greedy_decode(b.model, *args)


@pytest.mark.parametrize("width,penalty", [(2, 0.0), (4, 1.0), (5, 0.6)])
def test_batched_beam_search_equals_one_sentence_at_a_time(width, penalty):
    b = bundle("default")
    ps = prepared("default", ["我吃了一个苹果", "苹果公司今天发布了一款新手机", "I ate an apple.", "我爱你"])
    eos = b.tokenizer.eos_id
    batched = beam_search(b.model, [p.source_ids for p in ps], [p.prefix for p in ps], eos, width, penalty)
    for p, got in zip(ps, batched, strict=True):
        alone = beam_search(b.model, [p.source_ids], [p.prefix], eos, width, penalty)[0]
        assert got.best.ids == alone.best.ids
        assert math.isclose(got.best.logp, alone.best.logp, abs_tol=1e-4)


@pytest.mark.parametrize("name,text,width,penalty", [
    ("default", "我吃了一个苹果", 4, 1.0),
    ("default", "苹果公司今天发布了一款新手机", 3, 0.0),
    ("reverse", "attention", 3, 1.0),
])
def test_every_figure_of_the_trace_is_the_models_own(name, text, width, penalty):
    """Each candidate's log-probability is its parent's plus log p(token | parent) from a full forward
    pass; the kept ones are the best `width` (the beam shrinking as hypotheses finish), best first."""
    b = bundle(name)
    p = prepared(name, [text])[0]
    eos = b.tokenizer.eos_id
    result = beam_search(b.model, [p.source_ids], [p.prefix], eos, width, penalty, trace=True)[0]
    assert result.steps and result.steps[0].beams == [[]]
    slots = width
    for t, step in enumerate(result.steps):
        assert len(step.beams) <= slots
        values = [c.logp for c in step.candidates]
        assert values == sorted(values, reverse=True)
        survivors = [c for c in step.candidates if c.status != "pruned"]
        assert survivors == step.candidates[: len(survivors)] and len(survivors) == slots
        for c in step.candidates:
            parent = step.beams[c.parent]
            step_logp = log_probs(b.model, p.source_ids, p.prefix + parent)  # [vocab]
            direct = step.beam_logp[c.parent] + float(step_logp[c.token_id])
            assert math.isclose(c.logp, direct, abs_tol=2e-4)
            assert math.isclose(c.score, length_normalised(c.logp, len(parent) + 1, penalty), rel_tol=1e-9)
            assert (c.status == "finished") == (c.token_id == eos and c.status != "pruned")
        # The next step's beams are exactly this step's kept extensions, in order.
        if t + 1 < len(result.steps):
            kept = [step.beams[c.parent] + [c.token_id] for c in step.candidates if c.status == "kept"]
            assert result.steps[t + 1].beams == kept
        slots -= sum(c.status == "finished" for c in step.candidates)
    # The output is the best finished hypothesis, and its log-probability is the model's.
    assert result.best == max(result.finished, key=lambda h: h.score)
    ids = p.prefix + result.best.ids
    direct = sum(float(log_probs(b.model, p.source_ids, ids[:j])[ids[j]])
                 for j in range(len(p.prefix), len(ids)))
    if result.best.ended:
        direct += float(log_probs(b.model, p.source_ids, ids)[eos])
    assert math.isclose(result.best.logp, direct, abs_tol=5e-4)


def test_a_wider_beam_finds_a_more_likely_output_than_greedy_here():
    """Greedy writes "我们坐在河上。" (on the river); beam search keeps "河边" (the bank) alive."""
    b = bundle("default")
    p = prepared("default", ["We sat on the river bank."])[0]
    eos = b.tokenizer.eos_id
    greedy = beam_search(b.model, [p.source_ids], [p.prefix], eos, 1, 0.0)[0].best
    wide = beam_search(b.model, [p.source_ids], [p.prefix], eos, 4, 0.0)[0].best
    assert wide.logp >= greedy.logp - 1e-6
    assert b.tokenizer.decode(greedy.ids) != b.tokenizer.decode(wide.ids)


@pytest.mark.parametrize("name", DIDACTIC)
def test_beam_exact_match_on_the_didactic_models_is_at_least_greedys(name):
    b = bundle(name)
    greedy = evaluate_model(b.model, b.task, "test")["task"]
    beam = evaluate_model(b.model, b.task, "test", strategy=Strategy.make("beam", beam=4))["task"]
    assert greedy["n"] == beam["n"] >= 100
    assert beam["exact_match"] >= greedy["exact_match"]


def test_prefixes_of_different_lengths_and_bad_widths_are_refused():
    b = bundle("reverse")
    with pytest.raises(ValueError, match="one length"):
        beam_search(b.model, [[5, 2], [6, 2]], [[1], [1, 5]], 2)
    with pytest.raises(ValueError, match="at least 1"):
        beam_search(b.model, [[5, 2]], [[1]], 2, width=0)
