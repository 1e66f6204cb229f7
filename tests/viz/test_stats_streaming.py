"""Head statistics and head similarity streamed a block of rows at a time equal the whole computation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import viz
from viz.stats import LN2


class LazyStack:
    """Stands for the model's AttentionStack: [layer, head, query, key] read by indexing only, with
    every block read counted; converting the whole stack fails, as a long input must never do."""

    def __init__(self, data: np.ndarray):
        self.data = data
        self.shape = data.shape
        self.reads: list[tuple] = []

    def __getitem__(self, key):
        self.reads.append(key)
        return np.array(self.data[key])

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("the whole stack was converted")


def _patterns(rng, n_layers, n_heads, n_q, n_k, causal):
    p = rng.random((n_layers, n_heads, n_q, n_k)) ** 3
    mask = np.zeros((n_q, n_k), bool)
    if causal:
        mask = np.arange(n_k)[None, :] > np.arange(n_q)[:, None]
        p[..., mask] = 0.0
    p /= np.where(p.sum(-1, keepdims=True) > 0, p.sum(-1, keepdims=True), 1)
    return p.astype(np.float32), np.broadcast_to(mask, p.shape).copy()


def _reference_stats(p, key_mask, query_mask, special, sinks):
    """Every statistic of every head from its definition, row by row, in float64."""
    n_layers, n_heads, n_q, n_k = p.shape
    rows = []
    for li in range(n_layers):
        for h in range(n_heads):
            vals = {k: [] for k in ("entropy", "entropy_norm", "max_weight", "mean_distance", "first_token",
                                    "special_tokens", "sinks", "diagonal", "previous_token")}
            n_rows = 0
            for q in range(n_q):
                w = p[li, h, q].astype(np.float64)
                keys_open = int((~key_mask[li, h, q]).sum())
                if not (np.isfinite(w.sum()) and w.sum() > 0 and keys_open > 0 and not query_mask[q]):
                    continue
                n_rows += 1
                ent = -sum(x * np.log(x) for x in w if x > 0)
                vals["entropy"].append(ent)
                if keys_open > 1:
                    vals["entropy_norm"].append(ent / np.log(keys_open))
                vals["max_weight"].append(w.max())
                vals["mean_distance"].append(sum(w[k] * abs(q - k) for k in range(n_k)))
                vals["first_token"].append(w[0])
                vals["special_tokens"].append(w[special].sum())
                vals["sinks"].append(w[sinks].sum())
                if q < n_k:
                    vals["diagonal"].append(w[q])
                if 1 <= q <= n_k:
                    vals["previous_token"].append(w[q - 1])
            rows.append({"layer": li, "head": h, "n_rows": n_rows,
                         **{k: np.mean(v) if v else np.nan for k, v in vals.items()}})
    return rows


@settings(max_examples=25, deadline=None)
@given(n_layers=st.integers(1, 3), n_heads=st.integers(1, 3), n_q=st.integers(1, 9), n_k=st.integers(1, 9),
       causal=st.booleans(), block=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_streamed_head_stats_equal_every_column_of_the_definition(n_layers, n_heads, n_q, n_k, causal, block,
                                                                   seed):
    rng = np.random.default_rng(seed)
    p, mask = _patterns(rng, n_layers, n_heads, n_q, n_k, causal and n_q == n_k)
    query_mask = rng.random(n_q) < 0.2
    special, sinks = rng.random(n_k) < 0.3, rng.random(n_k) < 0.4
    stack = LazyStack(p)
    got = viz.head_stats(stack, key_mask=LazyStack(mask), query_mask=query_mask, special_tokens=special,
                         sink_tokens=sinks, blocks=lambda layer: viz.aggregates.row_blocks(n_q, 1, block))
    want = _reference_stats(p, mask, query_mask, special, sinks)
    assert list(got.columns) == list(viz.HEAD_STATS_COLUMNS)
    for col in viz.HEAD_STATS_COLUMNS:
        np.testing.assert_allclose(got[col].to_numpy(np.float64), [r[col] for r in want], rtol=1e-5,
                                   atol=1e-6, equal_nan=True, err_msg=col)
    assert all(isinstance(k[2], slice) and k[2].stop - k[2].start <= block for k in stack.reads)


@pytest.mark.parametrize("block_bytes", [1, 4 * 3 * 7 * 2, 10**9])
def test_any_blocking_gives_the_same_table_as_the_whole_array(block_bytes):
    rng = np.random.default_rng(0)
    p, mask = _patterns(rng, 2, 3, 11, 11, causal=True)
    p[1, 2, 4] = np.nan  # a row that is not a distribution is skipped wherever its block falls
    whole = viz.head_stats(p, key_mask=mask, special_tokens=np.arange(11) == 0)
    blocks = lambda layer: viz.aggregates.row_blocks(11, 4 * 3 * 11, block_bytes)  # noqa: E731
    streamed = viz.head_stats(LazyStack(p), key_mask=LazyStack(mask), special_tokens=np.arange(11) == 0,
                              blocks=blocks)
    for col in viz.HEAD_STATS_COLUMNS:  # the same per-row numbers, so to float rounding of the means
        np.testing.assert_allclose(streamed[col], whole[col], rtol=1e-12, atol=1e-15, equal_nan=True,
                                   err_msg=col)
    assert whole.loc[5, "n_rows"] == 10


def test_a_stack_never_read_in_full_and_blocks_within_the_byte_budget():
    rng = np.random.default_rng(1)
    n_q = 300
    p, _ = _patterns(rng, 2, 4, n_q, n_q, causal=True)
    stack = LazyStack(p)
    viz.head_stats(stack)
    most = max(k[2].stop - k[2].start for k in stack.reads)
    assert most * 4 * 4 * n_q <= viz.aggregates.STREAM_BLOCK_BYTES
    assert all(isinstance(k[0], int) for k in stack.reads)  # one layer per read
    with pytest.raises(ValueError, match="never added"):
        viz.HeadStatsStream(p.shape).table()


def test_similarity_streamed_equals_the_whole_computation_and_takes_all_rows_of_short_inputs():
    rng = np.random.default_rng(2)
    p, _ = _patterns(rng, 3, 2, 20, 20, causal=True)
    blocks = lambda layer: viz.aggregates.row_blocks(20, 1, 3)  # noqa: E731  sampled rows split over blocks
    streamed = viz.head_similarity(LazyStack(p), blocks=blocks)
    whole = viz.head_similarity(p.reshape(6, 20, 20))
    np.testing.assert_allclose(streamed, whole, rtol=0, atol=1e-12)
    # 20 rows <= MAX_DIVERGENCE_ROWS: every row is compared, so this is the exact pairwise mean over rows
    flat = p.reshape(6, 20, 20).astype(np.float64)
    exact = np.array([[np.mean([viz.js_divergence(flat[i, r], flat[j, r]) for r in range(20)])
                       for j in range(6)] for i in range(6)])
    np.testing.assert_allclose(streamed, 1 - exact / LN2, atol=3e-6)


def test_the_sampled_similarity_is_the_mean_over_the_same_evenly_spaced_rows_of_every_head():
    rng = np.random.default_rng(3)
    n_q = 150
    p, _ = _patterns(rng, 2, 3, n_q, n_q, causal=True)
    sample = viz.RowSample(p.shape)
    np.testing.assert_array_equal(sample.rows, viz.divergence_rows(n_q))
    assert len(sample.rows) == viz.MAX_DIVERGENCE_ROWS < n_q
    for layer, rows, block in viz.stream_layers(p, lambda layer: viz.aggregates.row_blocks(n_q, 1, 17)):
        sample.add(layer, rows, block)
    np.testing.assert_array_equal(sample.data, p.reshape(6, n_q, n_q)[:, sample.rows])  # every head's rows
    got = sample.divergence()
    flat = p.reshape(6, n_q, n_q).astype(np.float64)
    want = np.array([[np.mean([viz.js_divergence(flat[i, r], flat[j, r]) for r in sample.rows])
                      for j in range(6)] for i in range(6)])
    np.testing.assert_allclose(got, want, atol=3e-6)
    every = viz.head_divergence(p, max_rows=None)
    assert not np.allclose(got, every, atol=1e-6)  # an estimate of the mean over all rows, not that mean
    assert np.abs(got - every).max() < 0.05


def test_similarity_rows_with_no_weight_anywhere_and_padding_keys():
    p = np.zeros((1, 2, 3, 4), np.float32)
    p[0, :, :, :2] = 0.5  # the last two keys (padding) take no weight in any head
    p[0, 1, 2] = 0.0  # a row of head 1 that is not a distribution
    got = viz.head_divergence(p)
    np.testing.assert_allclose(got, [[0.0, 0.0], [0.0, 0.0]], atol=1e-7)
    p[0, 1, :2, :2] = [[1.0, 0.0], [0.0, 1.0]]
    got = viz.head_divergence(p)
    want = np.mean([viz.js_divergence(p[0, 0, r], p[0, 1, r]) for r in range(2)])
    assert got[0, 1] == pytest.approx(want, abs=1e-6) and got[1, 0] == got[0, 1]
