"""The shipped tiny-gpt (assets/models/tiny-gpt): a decoder-only model of ours trained on Tatoeba's
Chinese and English sentences. Its stored held-out figures are what the model computes now, it sits in
the didactic group, and it continues a Chinese prompt in Chinese."""

from __future__ import annotations

import math
import unicodedata

import pytest

from model.run.analysis import analyze
from model.store.registry import load_model, model_info
from model.training.lm_evaluate import language_model_results


@pytest.fixture(scope="module")
def bundle():
    return load_model("tiny-gpt")


def test_it_is_a_decoder_only_model_in_the_didactic_group(bundle):
    assert bundle.cfg.decoder_only and bundle.cfg.n_dec_layers == 4 and bundle.cfg.n_heads == 4
    assert model_info("tiny-gpt").group == model_info("induction").group == "didactic"
    assert bundle.history, "its training curve ships for the model page"


@pytest.mark.slow
def test_stored_test_loss_is_what_the_model_computes(bundle):
    stored = bundle.metrics["results"]
    again = language_model_results(bundle.model, bundle.task, "test")
    assert set(stored) == {"zh", "en"}
    for lang in ("zh", "en"):
        assert stored[lang]["loss"] == pytest.approx(again[lang]["loss"], abs=2e-3)
        assert stored[lang]["perplexity"] == pytest.approx(math.exp(stored[lang]["loss"]), rel=1e-2)
        # far better than a uniform guess over its 8,000 tokens (ln 8000 = 8.99)
        assert stored[lang]["loss"] < 0.6 * math.log(bundle.cfg.vocab_size)


def test_a_chinese_prompt_is_continued_in_chinese(bundle):
    result = analyze(bundle, "我吃了一个", max_new=12)
    written = result.output_text.strip()
    assert written and any(unicodedata.name(c, "").startswith("CJK UNIFIED") for c in written), written
