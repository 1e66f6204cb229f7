"""Cell labels: a fixed count of significant digits, so small effects stay readable."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from viz.interventions import head_matrix
from viz.masks import _weights_figure
from viz.numbers import cell_texts, significant


@pytest.mark.parametrize("x,text", [(0.00432, "0.0043"), (0.004, "0.004"), (0.5, "0.5"), (0.43, "0.43"),
                                    (12.3, "12"), (1234.6, "1235"), (0.0999, "0.1"), (-0.004, "-0.004"),
                                    (0.0, "0"), (1.2e-6, "1.2e-06"), (float("nan"), ""),
                                    (float("-inf"), "−∞")])
def test_examples(x, text):
    assert significant(x) == text


@given(st.floats(min_value=1e-4, max_value=99.0) | st.floats(min_value=-99.0, max_value=-1e-4),
       st.integers(1, 4))
def test_the_label_is_the_value_to_its_significant_digits(x, digits):
    text = significant(x, digits)
    back = float(text)
    assert math.copysign(1, back) == math.copysign(1, x)
    # rounded to `digits` significant digits: within half a unit of the last digit kept
    unit = 10 ** (math.floor(math.log10(abs(x))) - digits + 1)
    assert abs(back - x) <= unit / 2 * (1 + 1e-9) + 1e-12
    # no more digits than asked for, except a whole number's own integer digits
    assert len(text.lstrip("-").replace(".", "").lstrip("0")) <= max(digits, len(str(int(abs(back)))))


def test_cell_texts_keep_the_shape_and_blank_what_is_asked():
    v = np.array([[0.004, np.nan], [0.5, 2.0]])
    out = cell_texts(v, blank=np.array([[False, False], [True, False]]))
    assert out.shape == (2, 2) and out.tolist() == [["0.004", ""], ["", "2"]]


def test_a_small_ablation_effect_is_not_printed_as_zero():
    effects = np.array([[0.0041, 0.0037], [0.012, 0.0005]])
    fig = head_matrix(effects, title="Effect of removing each head: Encoder self-attention")
    labels = np.asarray(fig.data[0].text).tolist()
    assert labels == [["0.0041", "0.0037"], ["0.012", "0.0005"]]
    assert all(float(t) > 0 for row in labels for t in row)


def test_mask_page_weights_print_significant_digits():
    p = np.array([[1.0, 0.0], [0.996, 0.004]], dtype=np.float32)
    fig = _weights_figure(p, ["a", "b"], ["a", "b"], None, ["", ""], "", [], "en")
    assert np.asarray(fig.data[0].text).tolist() == [["1", "0"], ["1", "0.004"]]
