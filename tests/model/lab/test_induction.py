"""The shipped induction model does what docs/models.md says it learned (measured on held-out sequences)."""

from __future__ import annotations

import numpy as np
import pytest

from model.lab.induction import induction_report
from model.store.registry import load_model


@pytest.fixture(scope="module")
def report():
    return induction_report(load_model("induction"), 200)


def test_an_induction_head_in_layer_1(report):
    layer, head = report.best(report.induction)
    assert layer == 1
    # most of its weight on the letter after the earlier occurrence
    assert report.induction[layer, head] > 0.5
    assert report.induction[0].max() < 0.3  # no layer-0 head can do it: it needs the previous token first


def test_a_previous_token_head_in_layer_0(report):
    layer, head = report.best(report.previous)
    assert layer == 0 and report.previous[layer, head] > 0.4


def test_the_second_copy_is_predicted_the_first_is_not(report):
    assert report.loss_first > 0.9 * np.log(26)  # random letters: nothing to predict them from
    assert report.loss_second < report.loss_first / 3
