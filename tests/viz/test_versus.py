"""Model vs model figures: the moved map holds the distances and names the nearest heads, its cells are
clickable, the two heads' heatmaps hold the two patterns, words in both languages, names escaped."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from tests.figures import title_of
from viz.clicks import CLICK_TRACE_NAME
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec


def _z(trace) -> np.ndarray:
    z = trace.z
    if is_typed_array_spec(z):
        return decode_plotly_array(z)
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=np.float64)


def _maps(lang="en"):
    rng = np.random.default_rng(0)
    d = rng.random((2, 3))
    near = np.stack([rng.integers(0, 4, (2, 3)), rng.integers(0, 2, (2, 3))], axis=-1)
    return d, near, viz.moved_map(d, near, measure="same", model_b="<b>B</b>", lang=lang)


def test_moved_map_holds_the_distances_and_names_the_nearest_head():
    d, near, fig = _maps()
    heat = fig.data[0]
    np.testing.assert_allclose(_z(heat), d)
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert heat.text[1][2] == f"L{near[1, 2, 0]}H{near[1, 2, 1]}"
    clicks = [t for t in fig.data if t.name == CLICK_TRACE_NAME]
    assert len(clicks) == 1
    cells = {tuple(int(v) for v in c) for c in clicks[0].customdata}
    assert cells == {(i, h) for i in range(2) for h in range(3)}
    assert "<b>B</b>" not in title_of(fig) and "&lt;b&gt;B&lt;/b&gt;" in title_of(fig)


def test_moved_map_words_follow_the_language():
    _, _, en = _maps("en")
    _, _, zh = _maps("zh")
    assert title_of(en) != title_of(zh)
    assert "距离" in title_of(zh) and "distance" in title_of(en)
    nearest = viz.moved_map(np.zeros((1, 1)), np.zeros((1, 1, 2), int), measure="nearest", model_b="B")
    assert "nearest" in title_of(nearest)


def test_moved_map_refuses_bad_shapes():
    with pytest.raises(ValueError, match="nearest"):
        viz.moved_map(np.zeros((2, 3)), np.zeros((2, 2, 2), int), measure="same", model_b="B")
    with pytest.raises(ValueError, match="measure"):
        viz.moved_map(np.zeros((2, 3)), np.zeros((2, 3, 2), int), measure="other", model_b="B")


def test_two_heads_side_by_side_hold_the_two_patterns():
    rng = np.random.default_rng(2)
    a, b = rng.dirichlet(np.ones(4), 3), rng.dirichlet(np.ones(4), 3)
    tokens_q, tokens_k = list("xyz"), list("abcd")
    fa, fb = viz.versus_heads(a, b, tokens_q, tokens_k, names=("A<i>", "B"), heads=((1, 2), (0, 3)),
                              distance=0.25, lang="en")
    np.testing.assert_allclose(_z(fa.data[-1]), a, rtol=1e-6)
    np.testing.assert_allclose(_z(fb.data[-1]), b, rtol=1e-6)
    assert "L1H2" in title_of(fa) and "L0H3" in title_of(fb) and "A<i>" not in title_of(fa)
    assert "0.250" in (fa.layout.title.text or "")
    zh = viz.versus_heads(a, b, tokens_q, tokens_k, names=("A", "B"), heads=((1, 2), (0, 3)), distance=0.25,
                          lang="zh")[0]
    assert "头" in title_of(zh)
    with pytest.raises(ValueError, match="same tokens"):
        viz.versus_heads(a, b[:2], tokens_q, tokens_k, names=("A", "B"), heads=((0, 0), (0, 0)), distance=0.0)
