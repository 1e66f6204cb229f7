"""cross_attention_step and topk_bar."""

import numpy as np
import pytest

import viz
from tests.figures import title_of

SRC = ["Le", "chat", "<b>", "</s>"]


def test_cross_step_bar_for_1d():
    w = np.array([0.1, 0.6, 0.2, 0.1], np.float32)
    fig = viz.cross_attention_step(w, SRC, step=2, step_token="cat")
    assert fig.data[0].type == "bar"
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), w)
    assert list(fig.layout.xaxis.ticktext) == viz.token_labels(SRC)
    assert "step 2" in title_of(fig) and "cat" in title_of(fig)


def test_cross_step_heatmap_for_heads_and_layers():
    rng = np.random.default_rng(0)
    w = rng.random((3, 2, 4)).astype(np.float32)
    fig = viz.cross_attention_step(w[0], SRC)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w[0])
    assert list(fig.layout.yaxis.ticktext) == ["H0", "H1"]
    fig = viz.cross_attention_step(w, SRC)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w.reshape(6, 4))
    assert list(fig.layout.yaxis.ticktext)[:3] == ["L0 H0", "L0 H1", "L1 H0"]


def test_cross_step_validation():
    with pytest.raises(ValueError, match="4 source \\(key\\) positions but 3 source tokens"):
        viz.cross_attention_step(np.zeros((2, 4)), SRC[:3])
    with pytest.raises(ValueError, match="1-D .* or 2-D .* or 3-D"):
        viz.cross_attention_step(np.zeros((1, 2, 2, 4)), SRC)


def test_topk_bar_sorted_descending_and_truncated():
    toks = ["a", "b", "c", "d"]
    probs = np.array([0.1, 0.5, 0.3, 0.1], np.float32)
    fig = viz.topk_bar(toks, probs, k=3)
    bar = fig.data[0]
    assert bar.orientation == "h"
    np.testing.assert_array_equal(np.asarray(bar.x), np.array([0.5, 0.3, 0.1], np.float32))
    assert list(fig.layout.yaxis.ticktext) == ["b", "c", "a"]
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # most likely at the top
    assert list(bar.text) == ["50.0%", "30.0%", "10.0%"]


def test_topk_validation():
    with pytest.raises(ValueError, match="3 entries but 2 tokens"):
        viz.topk_bar(["a", "b"], np.array([0.2, 0.3, 0.5]))
    with pytest.raises(ValueError, match="non-negative"):
        viz.topk_bar(["a"], np.array([-0.1]))
    with pytest.raises(ValueError, match="1-D"):
        viz.topk_bar(["a"], np.array([[1.0]]))
