"""A decoder-only model's held-out loss and perplexity (model/training/lm_evaluate.py) against a plain
per-text computation of the same cross-entropy."""

from __future__ import annotations

import math

import pytest
import torch

from model.store.registry import load_model
from model.training.lm_evaluate import language_model_results


def _direct_loss(model, examples) -> tuple[float, int]:
    """Mean -log p(next token) over every predicted token, one text at a time, no padding anywhere."""
    total, count = 0.0, 0
    with torch.no_grad():
        for _, ids in examples:
            logits = model(torch.tensor([ids[:-1]]))[0].double()
            logp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids[1:])[:, None])
            total -= float(logp.sum())
            count += len(ids) - 1
    return total / count, count


def test_induction_loss_and_perplexity_equal_a_per_sequence_computation():
    bundle = load_model("induction")
    results = language_model_results(bundle.model, bundle.task, "test", n=40)
    assert list(results) == ["task"]
    loss, tokens = _direct_loss(bundle.model, bundle.task.examples("test", 40))
    got = results["task"]
    assert got["n"] == 40 and got["tokens"] == tokens
    assert got["loss"] == pytest.approx(loss, abs=1e-3)
    assert got["perplexity"] == pytest.approx(math.exp(got["loss"]), rel=1e-3)
    # the repeat is predictable: far below a uniform guess over the 26 letters
    assert got["loss"] < math.log(26)
