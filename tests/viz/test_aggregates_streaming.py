"""The mean over heads of one layer and attention rollout, streamed, equal the whole computation."""

import numpy as np
import pytest

import viz
from tests.viz.test_stats_streaming import LazyStack, _patterns
from viz.wordpieces import group_pieces, merge_pieces


def _rollout_reference(p: np.ndarray, add_residual: bool) -> np.ndarray:
    """Abnar & Zuidema's rollout on the whole array at once, float64."""
    eye = np.eye(p.shape[-1])
    out = eye
    for layer in np.nan_to_num(p.astype(np.float64)).mean(axis=1):
        a = layer + eye if add_residual else layer
        total = a.sum(-1, keepdims=True)
        a = np.where(total > 0, a / np.where(total > 0, total, 1), 0.0)
        out = a @ out
    return out


@pytest.mark.parametrize("block", [1, 5, 100])
def test_one_layers_mean_over_heads_streamed_is_the_whole_arrays_mean(block):
    rng = np.random.default_rng(0)
    p, _ = _patterns(rng, 3, 4, 13, 13, causal=True)
    stack = LazyStack(p)
    got = viz.mean_over_heads(stack, 2, blocks=lambda layer: viz.aggregates.row_blocks(13, 1, block))
    np.testing.assert_array_equal(got, viz.mean_over_heads(p)[2])  # bit-equal: the same sums over heads
    assert {k[0] for k in stack.reads} == {2}  # the other layers are never computed
    np.testing.assert_array_equal(viz.mean_over_heads(LazyStack(p)), viz.mean_over_heads(p))
    with pytest.raises(ValueError, match="layer"):
        viz.mean_over_heads(stack, 3)


@pytest.mark.parametrize("add_residual", [True, False])
@pytest.mark.parametrize("causal", [True, False])
def test_rollout_streamed_layer_by_layer_equals_the_whole_computation(add_residual, causal):
    rng = np.random.default_rng(1)
    p, _ = _patterns(rng, 4, 3, 17, 17, causal=causal)
    p[2, 1, 5] = np.nan  # NaN weights count as 0, as before
    stack = LazyStack(p)
    got = viz.attention_rollout(stack, add_residual, blocks=lambda layer: viz.aggregates.row_blocks(17, 1, 4))
    np.testing.assert_allclose(got, _rollout_reference(p, add_residual), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(viz.attention_rollout(p, add_residual), got, rtol=1e-12, atol=1e-15)
    assert max(k[2].stop - k[2].start for k in stack.reads) <= 4


def test_merged_rollout_and_the_drawn_figures_carry_the_streamed_numbers():
    rng = np.random.default_rng(2)
    p, mask = _patterns(rng, 2, 3, 6, 6, causal=True)
    toks = ["a", "##b", "c", "d", "##e", "f"]
    units = group_pieces(toks, merge=True)
    roll, labels = viz.merged_rollout(LazyStack(p), toks, units=units, renormalise=True)
    want = merge_pieces(_rollout_reference(p, True), units, renormalise=True)
    np.testing.assert_allclose(roll, want, rtol=1e-6)
    assert labels == list(units.labels) and roll.shape == (len(labels), len(labels))
    fig = viz.rollout_figure(roll, labels)
    np.testing.assert_allclose(np.asarray(fig.data[-1].z), roll)
    whole = viz.attention_rollout_figure(p, toks, units=units, renormalise=True)
    np.testing.assert_allclose(np.asarray(whole.data[-1].z), roll, rtol=1e-6)
    mean = viz.mean_over_heads(LazyStack(p), 1)
    fig = viz.layer_mean_figure(mean, toks, toks, 1, mask_2d=mask[1, 0])
    z = np.asarray(fig.data[-1].z)
    np.testing.assert_allclose(z[~mask[1, 0]], p[1].mean(0)[~mask[1, 0]], rtol=1e-6)
    assert "1" in fig.layout.title.text
    with pytest.raises(ValueError, match="positions"):
        viz.merged_rollout(p, toks[:-1], units=units)
