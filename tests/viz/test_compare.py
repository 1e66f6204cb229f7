"""Two-sentence comparison: side-by-side heatmaps, shared-token rows, head ranking."""

import numpy as np
import pytest

import viz

A = ["<s>", "the", "cat", "sat", "</s>"]
B = ["<s>", "a", "cat", "sat", "down", "</s>"]


def _rand(shape, seed):
    p = np.random.default_rng(seed).random(shape).astype(np.float32)
    return p / p.sum(-1, keepdims=True)


def test_align_tokens_multiset_in_order():
    assert viz.align_tokens(["a", "b", "a", "c"], ["a", "a", "b"]) == [(0, 0), (1, 2), (2, 1)]
    assert viz.align_tokens(["x"], ["y"]) == []


def test_compare_heatmaps_side_by_side_with_shared_scale():
    pa, pb = _rand((5, 5), 0), _rand((6, 6), 1)
    fig = viz.compare_heatmaps(pa, A, pb, B, names=("first", "second"))
    mains = [t for t in fig.data if t.name != "masked"]
    assert len(mains) == 2
    np.testing.assert_array_equal(np.asarray(mains[0].z), pa)
    np.testing.assert_array_equal(np.asarray(mains[1].z), pb)
    assert mains[0].coloraxis == mains[1].coloraxis == "coloraxis"
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert list(fig.layout.xaxis2.ticktext) == viz.token_labels(B)
    assert [a.text for a in fig.layout.annotations][:2] == ["first", "second"]
    with pytest.raises(ValueError, match="pattern_b has 6 query rows but 5 query tokens"):
        viz.compare_heatmaps(pa, A, pb, A)


def test_shared_token_row_diff():
    pa, pb = _rand((5, 5), 0), _rand((6, 6), 1)
    rd = viz.shared_token_row_diff(pa, A, pb, B, "cat")
    assert (rd.query_index_a, rd.query_index_b) == (2, 2)
    np.testing.assert_array_equal(rd.row_a, pa[2])
    np.testing.assert_array_equal(rd.row_b, pb[2])
    assert rd.shared_keys == ["<s>", "cat", "sat", "</s>"]
    np.testing.assert_array_equal(rd.shared_index_a, [0, 2, 3, 4])
    np.testing.assert_array_equal(rd.shared_index_b, [0, 2, 3, 5])
    np.testing.assert_allclose(rd.diff, pb[2, [0, 2, 3, 5]] - pa[2, [0, 2, 3, 4]])
    fig = viz.row_diff_figure(rd)
    assert len(fig.data) == 3
    np.testing.assert_allclose(np.asarray(fig.data[2].y), rd.diff)
    with pytest.raises(ValueError, match="does not occur"):
        viz.shared_token_row_diff(pa, A, pb, B, "down")
    with pytest.raises(ValueError, match="occurrence"):
        viz.shared_token_row_diff(pa, A, pb, B, "cat", occurrence=1)


def test_rank_heads_by_change_finds_the_changed_head():
    pa = _rand((2, 3, 5, 5), 2)
    pb = np.zeros((2, 3, 6, 6), np.float32)
    # Make B identical to A on the shared keys/queries except for head (1, 2).
    qa = [0, 2, 3, 4]
    qb = [0, 2, 3, 5]
    for i, j in zip(qa, qb, strict=True):
        pb[:, :, j, qb] = pa[:, :, i, qa]
    pb[:, :, [1, 4], :] = 1 / 6
    pb[1, 2] = np.roll(pb[1, 2], 1, axis=-1)
    pb /= pb.sum(-1, keepdims=True)
    df = viz.rank_heads_by_change(pa, A, pb, B)
    assert list(df.columns) == ["rank", "layer", "head", "js_divergence", "n_queries"]
    assert (df.loc[0, "layer"], df.loc[0, "head"]) == (1, 2)
    assert list(df["rank"]) == list(range(1, 7))
    assert (df["js_divergence"].iloc[1:] < 1e-6).all()
    assert (df["n_queries"] == 4).all()
    assert df["js_divergence"].is_monotonic_decreasing
    one = viz.rank_heads_by_change(pa, A, pb, B, token="cat")
    assert (one["n_queries"] == 1).all()


def test_rank_heads_validation():
    pa = _rand((2, 3, 5, 5), 0)
    with pytest.raises(ValueError, match=r"\(layer, head\)"):
        viz.rank_heads_by_change(pa, A, _rand((1, 3, 6, 6), 1), B)
    with pytest.raises(ValueError, match="share no key tokens"):
        viz.rank_heads_by_change(pa, A, _rand((2, 3, 2, 2), 1), ["x", "y"])
    with pytest.raises(ValueError, match="does not occur"):
        viz.rank_heads_by_change(pa, A, _rand((2, 3, 6, 6), 1), B, token="dog")


def test_shared_tokens_are_in_a_order_without_repeats():
    assert viz.shared_tokens(["a", "b", "a", "c"], ["c", "a", "a", "x"]) == ["a", "c"]
    assert viz.shared_tokens(["a"], ["b"]) == []


@pytest.mark.parametrize("shared,word,special,expected", [
    (["▁The", "▁bank", "<eos>"], "bank", {"<eos>"}, "▁bank"),  # word marker ignored
    (["▁The", "▁Bank", "<eos>"], "bank", {"<eos>"}, "▁Bank"),  # case ignored
    (["苹", "果", "<eos>"], "苹果", {"<eos>"}, "苹"),  # a split word: its first piece
    (["<eos>", "n", "a"], "n", {"<eos>"}, "n"),
    (["<eos>", "x"], "zzz", {"<eos>"}, "x"),  # no match: first non-special token
    (["<eos>"], "zzz", {"<eos>"}, "<eos>"),
    (["▁banking", "▁The"], "bank", set(), "▁banking"),  # containment
])
def test_pick_shared_token(shared, word, special, expected):
    assert viz.pick_shared_token(shared, word, special) == expected


def test_pick_shared_token_needs_a_shared_token():
    with pytest.raises(ValueError, match="share no token"):
        viz.pick_shared_token([], "x")
