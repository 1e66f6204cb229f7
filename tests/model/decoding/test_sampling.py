"""Sampling: the filtered distribution is what temperature, top-k and top-p say, a seed reproduces the
sample, and no step ever draws a token outside the kept set."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from model.decoding.decoders import decode, filtered_distribution, sample_decode
from model.decoding.strategy import Strategy
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.conftest import tiny_config


@functools.cache
def bundle(name: str):
    return load_model(name)


def kept_set(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> set[int]:
    """The tokens sampling may draw, computed directly in float64 with numpy."""
    z = logits.astype(np.float64) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")
    if top_k > 0:
        order = order[:top_k]
    q = p[order] / p[order].sum()
    n = int(np.searchsorted(np.cumsum(q), top_p)) + 1 if top_p < 1 else len(order)
    return {int(i) for i in order[: min(n, len(order))]}


def test_temperature_sharpens_and_flattens_like_p_to_the_power_one_over_t():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(30, generator=g) * 2
    p = torch.softmax(logits.double(), -1)
    for temperature in (0.5, 1.0, 2.0):
        want = p ** (1 / temperature)
        want = want / want.sum()
        got = filtered_distribution(logits, temperature)
        assert torch.allclose(got.double(), want, atol=1e-6)
    assert filtered_distribution(logits, 0.5).max() > p.max() > filtered_distribution(logits, 2.0).max()


@pytest.mark.parametrize("temperature,top_k,top_p", [
    (1.0, 5, 1.0), (1.0, 0, 0.5), (0.7, 10, 0.9), (2.0, 3, 0.99), (1.0, 1, 1.0), (1.0, 0, 1e-6),
])
def test_the_filtered_distribution_keeps_exactly_the_top_k_top_p_set(temperature, top_k, top_p):
    g = torch.Generator().manual_seed(1)
    for _ in range(5):
        logits = torch.randn(50, generator=g) * 3
        probs = filtered_distribution(logits, temperature, top_k, top_p)
        want = kept_set(logits.numpy(), temperature, top_k, top_p)
        assert set(torch.nonzero(probs).flatten().tolist()) == want
        assert abs(float(probs.sum()) - 1.0) < 1e-5
        if top_k == 1 or top_p < 1e-3:
            assert want == {int(logits.argmax())}  # the most likely token alone: greedy


def test_draws_follow_the_filtered_distribution():
    logits = torch.tensor([2.0, 1.5, 1.0, 0.0, -1.0, -3.0])
    probs = filtered_distribution(logits, 1.0, 4, 0.95)
    gen = torch.Generator().manual_seed(0)
    draws = torch.multinomial(probs.expand(20000, -1), 1, generator=gen).flatten()
    freq = torch.bincount(draws, minlength=6).double() / 20000
    assert (freq[probs == 0] == 0).all()
    assert torch.allclose(freq, probs.double(), atol=0.015)


def test_a_seed_reproduces_the_sample_and_other_seeds_differ():
    torch.manual_seed(2)
    model = Transformer(tiny_config()).eval()
    source = [5, 9, 13, 2]
    runs = {}
    for seed in range(6):
        s = Strategy.make("sample", temperature=1.5, seed=seed)
        first = sample_decode(model, source, [1], 2, s)
        again = sample_decode(model, source, [1], 2, s)
        assert first.ids == again.ids
        assert [x.token_id for x in first.steps] == [x.token_id for x in again.steps]
        runs[seed] = tuple(first.ids)
    assert len(set(runs.values())) > 1, "different seeds drew the same output every time"


def test_a_sample_does_not_depend_on_the_other_sentences_of_a_batch():
    b = bundle("default")
    texts = ["我吃了一个苹果", "苹果公司今天发布了一款新手机", "I ate an apple."]
    ps = [b.task.prepare(t, b.cfg.max_len) for t in texts]
    s = Strategy.make("sample", temperature=1.2, top_p=0.95, seed=7)
    eos = b.tokenizer.eos_id
    batch = decode(b.model, [p.source_ids for p in ps], [p.prefix for p in ps], eos, s)
    assert batch == [sample_decode(b.model, p.source_ids, p.prefix, eos, s).ids for p in ps]
    reversed_batch = decode(b.model, [p.source_ids for p in ps[::-1]], [p.prefix for p in ps[::-1]], eos, s)
    assert batch[::-1] == reversed_batch


@pytest.mark.parametrize("name,text,strategy", [
    ("default", "苹果公司今天发布了一款新手机",
     Strategy.make("sample", temperature=1.3, top_k=20, top_p=0.9, seed=3)),
    ("default", "I ate an apple.", Strategy.make("sample", temperature=2.0, top_k=5, seed=11)),
    ("default", "我吃了一个苹果", Strategy.make("sample", temperature=1.0, top_p=0.6, seed=0)),
    ("reverse", "attention", Strategy.make("sample", temperature=3.0, top_k=4, top_p=0.8, seed=5)),
])
def test_no_step_draws_outside_the_top_k_top_p_set(name, text, strategy):
    """Every step against a full forward pass on the prefix so far, and the set computed with numpy."""
    b = bundle(name)
    result = analyze(b, text, strategy=strategy)
    assert result.strategy == strategy.param and result.search is not None
    again = analyze(b, text, strategy=strategy)
    assert again.output_text == result.output_text  # same link, same sample
    p = result.prepared
    ids = list(p.prefix)
    for step in result.search.steps:
        with torch.no_grad():
            logits = b.model(torch.tensor([p.source_ids]), torch.tensor([ids]))[0, -1]  # [vocab]
        allowed = kept_set(logits.numpy(), strategy.temperature, strategy.top_k, strategy.top_p)
        assert step.token_id in allowed
        assert step.n_kept == len(allowed)
        assert set(step.kept_ids) <= allowed and len(step.kept_ids) == min(len(allowed), 50)
        raw = torch.softmax(logits.double(), -1)
        assert abs(step.raw_prob - float(raw[step.token_id])) < 1e-5
        ids.append(step.token_id)
    # The sampled tokens are the output (eos last when it ended), and the steps of the hooked pass agree.
    drawn = [s.token_id for s in result.search.steps]
    assert drawn[: len(result.search.ids)] == result.search.ids
    assert [s.token_id for s in result.steps][: len(drawn)] == drawn
