"""Head statistics, JS divergence, cosine similarity: properties and worked examples."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import viz
from viz.stats import LN2

SETTINGS = settings(max_examples=60, deadline=None)

sizes = st.integers(min_value=1, max_value=12)


def distributions(n: int):
    """Probability vectors of length n (non-negative, at least one positive entry)."""
    return (
        arrays(np.float64, n, elements=st.floats(0.0, 10.0))
        .filter(lambda a: a.sum() > 1e-6)
        .map(lambda a: a / a.sum())
    )


@SETTINGS
@given(n=sizes, hot=st.integers(0, 11))
def test_entropy_of_one_hot_is_zero(n, hot):
    row = np.zeros(n)
    row[hot % n] = 1.0
    assert viz.entropy(row) == pytest.approx(0.0, abs=1e-12)


@SETTINGS
@given(n=sizes)
def test_entropy_of_uniform_is_log_n(n):
    assert viz.entropy(np.full(n, 1.0 / n)) == pytest.approx(np.log(n), rel=1e-9, abs=1e-12)


@SETTINGS
@given(data=st.data(), n=sizes)
def test_entropy_between_zero_and_log_n(data, n):
    p = data.draw(distributions(n))
    h = viz.entropy(p)
    assert -1e-12 <= h <= np.log(n) + 1e-9


@SETTINGS
@given(data=st.data(), n=st.integers(1, 10))
def test_js_symmetric_zero_on_identical_and_bounded(data, n):
    p = data.draw(distributions(n))
    q = data.draw(distributions(n))
    pq = viz.js_divergence(p, q)
    assert pq == pytest.approx(viz.js_divergence(q, p), abs=1e-12)
    assert 0.0 <= pq <= LN2 + 1e-12
    assert viz.js_divergence(p, p) == pytest.approx(0.0, abs=1e-12)


def test_js_of_disjoint_distributions_is_log2():
    assert viz.js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(np.log(2))


def test_js_rejects_negative():
    with pytest.raises(ValueError, match="non-negative"):
        viz.js_divergence(np.array([1.0, -1.0]), np.array([0.5, 0.5]))


@SETTINGS
@given(x=arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 6)), elements=st.floats(-100, 100)))
def test_cosine_similarity_diagonal_one_and_bounded(x):
    sim = viz.cosine_similarity_matrix(x)
    nonzero = np.linalg.norm(x, axis=1) > 0
    assert sim.shape == (x.shape[0], x.shape[0])
    np.testing.assert_allclose(np.diag(sim)[nonzero], 1.0)
    assert np.isnan(np.diag(sim)[~nonzero]).all()
    finite = sim[np.isfinite(sim)]
    assert (finite <= 1.0).all() and (finite >= -1.0).all()
    np.testing.assert_allclose(sim, sim.T, equal_nan=True)


def test_cosine_similarity_known_values():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    np.testing.assert_allclose(
        viz.cosine_similarity_matrix(x), [[1, 0, -1], [0, 1, 0], [-1, 0, 1]], atol=1e-12
    )


def _causal_uniform(n):
    p = np.tril(np.ones((n, n)))
    return p / p.sum(-1, keepdims=True)


def test_head_stats_on_hand_made_heads():
    n = 5
    eye = np.eye(n)
    prev = np.zeros((n, n))
    prev[0, 0] = 1.0
    prev[np.arange(1, n), np.arange(n - 1)] = 1.0
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    uniform = _causal_uniform(n)
    p = np.stack([eye, prev, first, uniform])[None].astype(np.float32)  # [1 layer, 4 heads, q, k]
    causal = np.triu(np.ones((n, n), bool), 1)
    special = np.array([True, False, False, False, True])
    df = viz.head_stats(p, key_mask=causal, special_tokens=special)
    assert list(df.columns) == list(viz.HEAD_STATS_COLUMNS)
    assert list(df["head"]) == [0, 1, 2, 3] and (df["layer"] == 0).all()
    d = df.set_index("head")
    # diagonal head
    assert d.loc[0, "entropy"] == pytest.approx(0.0, abs=1e-6)
    assert d.loc[0, "diagonal"] == pytest.approx(1.0)
    assert d.loc[0, "previous_token"] == pytest.approx(0.0)
    assert d.loc[0, "mean_distance"] == pytest.approx(0.0)
    assert d.loc[0, "max_weight"] == pytest.approx(1.0)
    # previous-token head: rows 1..4 put everything on q-1
    assert d.loc[1, "previous_token"] == pytest.approx(1.0)
    assert d.loc[1, "mean_distance"] == pytest.approx(4 / 5)
    # first-token head
    assert d.loc[2, "first_token"] == pytest.approx(1.0)
    assert d.loc[2, "special_tokens"] == pytest.approx(1.0)
    assert d.loc[2, "mean_distance"] == pytest.approx(np.mean(np.arange(n)))
    # causal uniform head: entropy of row q is log(q+1); normalised entropy 1 on rows with >1 key
    assert d.loc[3, "entropy"] == pytest.approx(np.mean(np.log(np.arange(1, n + 1))), rel=1e-5)
    assert d.loc[3, "entropy_norm"] == pytest.approx(1.0, rel=1e-5)
    assert d.loc[3, "first_token"] == pytest.approx(np.mean(1 / np.arange(1, n + 1)), rel=1e-5)
    assert (df["n_rows"] == n).all()
    assert "nats" in df.attrs["units"]["entropy"]


def test_head_stats_skips_padded_and_empty_rows():
    p = np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32)
    p[0, 0, 2] = 0.0  # an all-zero row (e.g. fully masked) is not averaged
    p[0, 0, 0] = [1.0, 0.0, 0.0]
    df = viz.head_stats(p)
    assert df.loc[0, "n_rows"] == 2
    assert df.loc[0, "entropy"] == pytest.approx(np.log(3) / 2, rel=1e-6)
    df = viz.head_stats(p, query_mask=np.array([True, False, False]))
    assert df.loc[0, "n_rows"] == 1
    assert df.loc[0, "entropy"] == pytest.approx(np.log(3), rel=1e-6)
    assert np.isnan(df.loc[0, "special_tokens"])


def test_head_stats_cross_attention_diagonal_rows():
    # 4 queries, 2 keys: only rows q<2 have a diagonal, rows 1..2 have a previous token.
    p = np.array([[[[1.0, 0], [0, 1.0], [0, 1.0], [1.0, 0]]]], dtype=np.float32)
    df = viz.head_stats(p)
    assert df.loc[0, "diagonal"] == pytest.approx(1.0)  # rows 0, 1
    assert df.loc[0, "previous_token"] == pytest.approx(0.5)  # row 1 -> key 0: 0, row 2 -> key 1: 1


def test_head_stats_validation():
    with pytest.raises(ValueError, match="3-D .* or 4-D"):
        viz.head_stats(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="special_tokens"):
        viz.head_stats(np.zeros((1, 1, 2, 2)), special_tokens=np.array([True]))
    with pytest.raises(ValueError, match="query_mask"):
        viz.head_stats(np.zeros((1, 1, 2, 2)), query_mask=np.array([1, 0]))
    with pytest.raises(ValueError, match="does not fit"):
        viz.head_stats(np.zeros((1, 1, 2, 2)), key_mask=np.zeros(3, bool))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), n_heads=st.integers(1, 4), n=st.integers(1, 5))
def test_head_divergence_properties(data, n_heads, n):
    rows = [data.draw(distributions(n)) for _ in range(n_heads * n)]
    p = np.array(rows).reshape(n_heads, n, n)
    div = viz.head_divergence(p)
    assert div.shape == (n_heads, n_heads)
    np.testing.assert_allclose(div, div.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(div), 0.0, atol=1e-12)
    assert (div >= 0).all() and (div <= LN2 + 1e-9).all()
    sim = viz.head_similarity(p)
    np.testing.assert_allclose(sim, 1 - div / LN2)


def test_head_divergence_known_value_and_4d_flattening():
    a = np.eye(3)
    b = np.eye(3)[[1, 2, 0]]  # every row disjoint from a's
    p4 = np.stack([np.stack([a, b]), np.stack([a, a])]).astype(np.float32)  # [2 layers, 2 heads]
    div = viz.head_divergence(p4)
    assert div.shape == (4, 4)
    assert div[0, 1] == pytest.approx(np.log(2))
    assert div[0, 2] == pytest.approx(0.0) and div[0, 3] == pytest.approx(0.0)
    _, labels = viz.flatten_heads(p4)
    assert labels == ["L0H0", "L0H1", "L1H0", "L1H1"]


def test_stats_figures():
    rng = np.random.default_rng(0)
    p = rng.random((2, 3, 4, 4)).astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    df = viz.head_stats(p)
    fig = viz.head_stats_scatter(df)
    np.testing.assert_allclose(np.asarray(fig.data[0].x), df["entropy"].to_numpy(np.float32))
    np.testing.assert_allclose(np.asarray(fig.data[0].y), df["mean_distance"].to_numpy(np.float32))
    np.testing.assert_array_equal(np.asarray(fig.data[0].customdata), df[["layer", "head"]].to_numpy())
    bar = viz.head_stats_bar(df, "max_weight")
    np.testing.assert_allclose(np.asarray(bar.data[0].y), df["max_weight"].to_numpy(np.float32))
    assert list(bar.layout.xaxis.ticktext)[:2] == ["L0H0", "L0H1"]
    sim = viz.head_similarity(p)
    _, labels = viz.flatten_heads(p)
    hm = viz.head_similarity_heatmap(sim, labels)
    np.testing.assert_allclose(np.asarray(hm.data[0].z), sim.astype(np.float32))
    with pytest.raises(ValueError, match="missing column"):
        viz.head_stats_scatter(pd.DataFrame({"layer": [0]}))
    with pytest.raises(ValueError, match="6 rows but 2 labels"):
        viz.head_similarity_heatmap(sim, labels[:2])
    with pytest.raises(ValueError, match="kind"):
        viz.head_similarity_heatmap(sim, labels, kind="cosine")


def _divergence_by_pairs(p: np.ndarray, rows: np.ndarray, query_mask=None) -> np.ndarray:
    """Reference: every pair of heads, row by row, with the elementwise js_divergence."""
    n, n_q, _ = p.shape
    total = p.sum(-1)
    valid = np.isfinite(total) & (total > 0)
    if query_mask is not None:
        valid &= ~query_mask
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(n):
            used = [r for r in rows if valid[i, r] and valid[j, r]]
            if used:
                out[i, j] = np.mean([viz.js_divergence(p[i, r], p[j, r]) for r in used])
    return out


@settings(max_examples=30, deadline=None)
@given(data=st.data(), n_heads=st.integers(1, 5), n_q=st.integers(1, 7), n_k=st.integers(1, 7))
def test_head_divergence_equals_pairwise_reference(data, n_heads, n_q, n_k):
    p = np.array([[data.draw(distributions(n_k)) for _ in range(n_q)] for _ in range(n_heads)])
    dead = data.draw(arrays(bool, (n_heads, n_q)))
    p[dead] = np.nan  # rows that are not distributions (padding queries) take no part
    qmask = data.draw(arrays(bool, n_q))
    got = viz.head_divergence(p, query_mask=qmask)
    want = _divergence_by_pairs(p, np.arange(n_q), qmask)
    np.fill_diagonal(want, np.where(np.isnan(np.diag(want)), np.nan, 0.0))
    np.testing.assert_allclose(got, want, atol=2e-6, equal_nan=True)


def test_head_divergence_on_long_inputs_uses_evenly_spaced_rows():
    rng = np.random.default_rng(3)
    n_q = 300
    p = rng.random((3, n_q, 40)) ** 4
    p /= p.sum(-1, keepdims=True)
    rows = viz.divergence_rows(n_q)
    assert len(rows) == viz.MAX_DIVERGENCE_ROWS and rows[0] == 0 and rows[-1] == n_q - 1
    assert np.all(np.diff(rows) > 0)
    got = viz.head_divergence(p)
    np.testing.assert_allclose(got, _divergence_by_pairs(p, rows), atol=2e-6)
    every = viz.head_divergence(p, max_rows=None)
    np.testing.assert_allclose(every, _divergence_by_pairs(p, np.arange(n_q)), atol=2e-6)
    assert not np.allclose(got, every, atol=1e-9)  # the subset is an estimate, not the same number
    np.testing.assert_array_equal(viz.divergence_rows(50), np.arange(50))
    with pytest.raises(ValueError, match="max_rows"):
        viz.head_divergence(p, max_rows=0)
