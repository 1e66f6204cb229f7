"""token_focus_grid / token_focus_values and attention_arcs."""

import numpy as np
import pytest

import viz
from tests.figures import title_of

TOKS = ["<s>", "a", "b", "c"]


def _p(seed=0, shape=(3, 2, 4, 4)):
    rng = np.random.default_rng(seed)
    p = rng.random(shape).astype(np.float32)
    return p / p.sum(-1, keepdims=True)


def test_focus_values_from_and_to():
    p = _p()
    v, arg = viz.token_focus_values(p, 2, "from")
    np.testing.assert_array_equal(v, p[:, :, 2, :].max(-1))
    np.testing.assert_array_equal(arg, p[:, :, 2, :].argmax(-1))
    v, arg = viz.token_focus_values(p, 1, "to")
    np.testing.assert_array_equal(v, p[:, :, :, 1].max(-1))
    np.testing.assert_array_equal(arg, p[:, :, :, 1].argmax(-1))
    v, _ = viz.token_focus_values(p, 2, "from", other_index=0)
    np.testing.assert_array_equal(v, p[:, :, 2, 0])
    v, _ = viz.token_focus_values(p, 2, "to", other_index=3)
    np.testing.assert_array_equal(v, p[:, :, 3, 2])


def test_focus_grid_figure_shows_values_and_partner_tokens():
    p = _p()
    fig = viz.token_focus_grid(p, 2, "from", query_tokens=TOKS)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), p[:, :, 2, :].max(-1))
    argmax = p[:, :, 2, :].argmax(-1)
    labels = viz.token_labels(TOKS)
    assert fig.data[0].text[1][0] == labels[argmax[1, 0]]
    assert list(fig.layout.yaxis.ticktext) == ["L0", "L1", "L2"]
    assert "b" in title_of(fig)
    # Invisible click targets make cells selectable in streamlit; customdata is [layer, head].
    targets = fig.data[-1]
    assert targets.type == "scatter"
    for x, y, (li, hi) in zip(targets.x, targets.y, np.asarray(targets.customdata), strict=True):
        assert (int(x), int(y)) == (hi, li)


def test_focus_grid_cross_attention_shapes():
    p = _p(shape=(2, 2, 3, 5))
    q = ["x", "y", "z"]
    k = ["a", "b", "c", "d", "e"]
    fig = viz.token_focus_grid(p, 4, "to", query_tokens=q, key_tokens=k, other_index=2)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), p[:, :, 2, 4])
    with pytest.raises(ValueError, match="out of range"):
        viz.token_focus_grid(p, 4, "from", query_tokens=q, key_tokens=k)  # 4 is not a query position


def test_focus_validation():
    p = _p()
    with pytest.raises(ValueError, match="direction"):
        viz.token_focus_values(p, 0, "sideways")
    with pytest.raises(ValueError, match="out of range"):
        viz.token_focus_values(p, 0, "from", other_index=9)
    with pytest.raises(ValueError, match="4 query rows but 3"):
        viz.token_focus_grid(p, 0, query_tokens=TOKS[:3])
    with pytest.raises(ValueError, match="4-D"):
        viz.token_focus_values(p[0], 0)


def test_arcs_single_token_lines_match_weights():
    p = np.array(
        [[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.7, 0.0, 0.3, 0], [0.05, 0.05, 0.1, 0.8]], dtype=np.float32
    )
    fig = viz.attention_arcs(p, TOKS, 3, n_bins=4)
    line_traces = [t for t in fig.data if t.mode == "lines"]
    style = {}
    for t in line_traces:
        xs, ys = list(t.x), list(t.y)
        for i in range(0, len(xs), 3):
            assert (xs[i], xs[i + 1]) == (0.0, 1.0)
            style[(int(ys[i]), int(ys[i + 1]))] = (t.line.width, t.opacity)
    assert set(style) == {(3, 0), (3, 1), (3, 2), (3, 3)}
    # Heavier weights get wider, more opaque lines.
    assert style[(3, 3)][0] > style[(3, 2)][0] >= style[(3, 0)][0]
    assert style[(3, 3)][1] > style[(3, 0)][1]
    texts = [t for t in fig.data if t.mode == "text"]
    assert len(texts) == 2 and list(texts[0].text) == viz.token_labels(TOKS)


def test_arcs_all_rows_respect_min_weight():
    p = np.array([[1.0, 0.0], [0.995, 0.005]], dtype=np.float32)
    fig = viz.attention_arcs(p, ["a", "b"], min_weight=0.01)
    n_lines = sum(len(t.x) // 3 for t in fig.data if t.mode == "lines")
    assert n_lines == 2
    with pytest.raises(ValueError, match="token_index"):
        viz.attention_arcs(p, ["a", "b"], 5)
