"""mean_over_heads and attention_rollout, with their figures."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import viz
from tests.figures import title_of


def _stochastic(raw: np.ndarray, causal: bool) -> np.ndarray:
    p = np.abs(raw) + 1e-3
    if causal:
        n = p.shape[-1]
        p = p * np.tril(np.ones((n, n)))
    return p / p.sum(-1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(
    raw=arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 3), st.integers(1, 6)).map(
            lambda t: (t[0], t[1], t[2], t[2])
        ),
        elements=st.floats(0, 5),
    ),
    causal=st.booleans(),
    residual=st.booleans(),
)
def test_rollout_rows_sum_to_one(raw, causal, residual):
    p = _stochastic(raw, causal).astype(np.float32)
    r = viz.attention_rollout(p, add_residual=residual)
    assert r.shape == p.shape[2:]
    np.testing.assert_allclose(r.sum(-1), 1.0, atol=1e-5)
    assert (r >= -1e-12).all()
    if causal:  # information never flows from the future
        assert np.allclose(np.triu(r, 1), 0.0)


def test_rollout_single_layer_matches_definition():
    p = np.array([[[[1.0, 0.0], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]]], dtype=np.float32)  # 1 layer, 2 heads
    mean = np.array([[1.0, 0.0], [0.75, 0.25]])
    np.testing.assert_allclose(viz.attention_rollout(p, add_residual=False), mean)
    np.testing.assert_allclose(viz.attention_rollout(p), (mean + np.eye(2)) / 2)
    two = np.concatenate([p, p])
    a = (mean + np.eye(2)) / 2
    np.testing.assert_allclose(viz.attention_rollout(two), a @ a)


def test_rollout_rejects_cross_attention():
    with pytest.raises(ValueError, match="square"):
        viz.attention_rollout(np.ones((1, 1, 2, 3)) / 3)


def test_mean_over_heads():
    rng = np.random.default_rng(0)
    p = rng.random((3, 4, 5, 5)).astype(np.float32)
    m = viz.mean_over_heads(p)
    assert m.shape == (3, 5, 5) and m.dtype == np.float32
    np.testing.assert_allclose(m, p.mean(axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match="4-D"):
        viz.mean_over_heads(p[0])


def test_aggregate_figures_are_titled_and_carry_the_data():
    rng = np.random.default_rng(1)
    p = _stochastic(rng.random((2, 3, 4, 4)), causal=True).astype(np.float32)
    toks = ["a", "b", "c", "d"]
    causal = np.triu(np.ones((4, 4), bool), 1)
    fig = viz.mean_over_heads_figure(p, toks, toks, 1, mask_2d=causal)
    assert "not a head of the model" in title_of(fig)
    z = np.asarray(fig.data[-1].z)
    np.testing.assert_allclose(z[~causal], p[1].mean(0)[~causal], rtol=1e-6)
    assert np.isnan(z[causal]).all()
    fig = viz.attention_rollout_figure(p, toks)
    assert "rollout" in title_of(fig) and "estimate" in title_of(fig)
    np.testing.assert_allclose(np.asarray(fig.data[-1].z), viz.attention_rollout(p).astype(np.float32))
    with pytest.raises(ValueError, match="layer"):
        viz.mean_over_heads_figure(p, toks, toks, 5)
