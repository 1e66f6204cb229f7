"""attention_heatmap: data matches the input, masks are distinct, inputs are validated."""

import numpy as np
import pytest

import viz
from tests.figures import title_of
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

TOKENS = ["<s>", "the", "cat", "sat", "the"]


def _causal(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n, n)).astype(np.float32)
    scores[np.triu(np.ones((n, n), bool), 1)] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    pattern = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    return pattern, scores


def test_weight_trace_equals_input_without_mask():
    p = np.random.default_rng(1).random((5, 5)).astype(np.float32)
    fig = viz.attention_heatmap(p, TOKENS, TOKENS)
    assert len(fig.data) == 1
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), p)
    # Sent as a float32 base64 typed array, not as a JSON list.
    z_json = fig.to_plotly_json()["data"][0]["z"]
    assert is_typed_array_spec(z_json) and z_json["dtype"] == "f4"
    np.testing.assert_array_equal(decode_plotly_array(z_json), p)


def test_float64_input_is_sent_as_float32():
    p = np.full((5, 5), 0.2)
    fig = viz.attention_heatmap(p, TOKENS, TOKENS)
    assert fig.to_plotly_json()["data"][0]["z"]["dtype"] == "f4"
    np.testing.assert_allclose(np.asarray(fig.data[0].z), p.astype(np.float32))


def test_masked_cells_from_scores_are_nan_and_drawn_by_overlay():
    p, s = _causal(5)
    fig = viz.attention_heatmap(p, TOKENS, TOKENS, scores_2d=s)
    assert len(fig.data) == 2
    overlay, main = fig.data
    mask = ~np.isfinite(s)
    z = np.asarray(main.z)
    assert np.isnan(z[mask]).all()
    np.testing.assert_array_equal(z[~mask], p[~mask])
    np.testing.assert_array_equal(np.asarray(overlay.z), mask.astype(np.uint8))
    assert overlay.showscale is False
    # the overlay answers hover on the gaps (plotly.js shows NaN, not the fallback, for a typed-array NaN)
    assert main.hoverongaps is False and "<i>masked</i>" in overlay.hovertemplate
    # The overlay colour for 1 is the opaque mask grey; for 0 it is transparent.
    assert overlay.colorscale[-1][1] == viz.theme.MASK_COLOR
    assert "rgba(0,0,0,0)" in overlay.colorscale[0][1]
    # The weight colour scale is fixed to [0, 1] by default.
    assert (main.zmin, main.zmax) == (0.0, 1.0)


def hover_at(trace, i: int, j: int) -> str:
    """What plotly shows when hovering cell (i, j): the one template filled in with the cell's
    category labels, weight and score; a gap (NaN weight) shows the fallback for the weight."""
    z = np.asarray(trace.z, dtype=np.float64)[i, j]
    out = trace.hovertemplate.replace("<extra></extra>", "")
    out = out.replace("%{y}", str(trace.y[i])).replace("%{x}", str(trace.x[j]))
    out = out.replace("%{z:.3f}", trace.hovertemplatefallback if np.isnan(z) else f"{z:.3f}")
    if trace.customdata is not None:
        out = out.replace("%{customdata:.3f}", f"{np.asarray(trace.customdata)[i, j]:.3f}")
    assert "%{" not in out, out
    return out


def test_hover_text_has_tokens_weights_scores_and_masked():
    p, s = _causal(5)
    fig = viz.attention_heatmap(p, TOKENS, TOKENS, scores_2d=s)
    main = fig.data[-1]
    assert "masked" in hover_at(main, 0, 1)  # query 0 cannot see key 1 (causal)
    assert "masked" in fig.data[0].hovertemplate and main.hoverongaps is False  # the overlay says it
    assert "cat" in hover_at(main, 2, 1) and "the₁" in hover_at(main, 2, 1)
    assert f"{p[2, 1]:.3f}" in hover_at(main, 2, 1)
    assert f"{s[2, 1]:.3f}" in hover_at(main, 2, 1)
    assert "masked" not in hover_at(main, 2, 1)
    # one template for every cell, no per-cell strings
    assert main.text is None and isinstance(main.hovertemplate, str)


def test_explicit_mask_and_scores_combine():
    p = np.full((5, 5), 0.2, dtype=np.float32)
    mask = np.zeros((5, 5), bool)
    mask[:, 4] = True
    s = np.zeros((5, 5), np.float32)
    s[0, 0] = -np.inf
    fig = viz.attention_heatmap(p, TOKENS, TOKENS, scores_2d=s, mask_2d=mask)
    combined = mask.copy()
    combined[0, 0] = True
    np.testing.assert_array_equal(np.isnan(np.asarray(fig.data[-1].z)), combined)


def test_mask_broadcasts_from_key_vector():
    p = np.full((3, 4), 0.25, dtype=np.float32)
    fig = viz.attention_heatmap(
        p, ["a", "b", "c"], ["w", "x", "y", "<pad>"], mask_2d=np.array([0, 0, 0, 1], bool)
    )
    assert np.isnan(np.asarray(fig.data[-1].z)[:, 3]).all()


def test_per_head_scale():
    p = np.full((5, 5), 0.1, dtype=np.float32)
    p[0, 0] = 0.3
    assert viz.attention_heatmap(p, TOKENS, TOKENS, zmax=None).data[0].zmax == pytest.approx(0.3)
    assert viz.attention_heatmap(p, TOKENS, TOKENS, zmax=0.5).data[0].zmax == 0.5
    with pytest.raises(ValueError, match="zmax"):
        viz.attention_heatmap(p, TOKENS, TOKENS, zmax=0)


def test_axes_use_integer_positions_with_token_ticktext():
    p = np.eye(5, dtype=np.float32)
    fig = viz.attention_heatmap(p, TOKENS, TOKENS, title="Head 3")
    labels = ["&lt;s&gt;", "the₁", "cat", "sat", "the₄"]
    # category axes of distinct labels: cell i sits at index i, duplicates stay apart
    assert fig.layout.xaxis.type == "category" and list(fig.layout.xaxis.tickvals) == labels
    assert list(fig.layout.yaxis.ticktext) == labels
    assert list(fig.data[0].x) == labels
    # Query 0 at the top: reversed y range.
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]
    assert "Head 3" in title_of(fig)


def test_mismatched_tokens_raise_clear_errors():
    p = np.zeros((7, 6), np.float32)
    with pytest.raises(ValueError, match="pattern has 7 query rows but 6 query tokens were given"):
        viz.attention_heatmap(p, ["a"] * 6, ["b"] * 6)
    with pytest.raises(ValueError, match="pattern has 6 key columns but 5 key tokens were given"):
        viz.attention_heatmap(p, ["a"] * 7, ["b"] * 5)


def test_wrong_dimensions_and_bad_inputs_raise():
    with pytest.raises(ValueError, match="2-D"):
        viz.attention_heatmap(np.zeros((2, 3, 3)), ["a"] * 3, ["a"] * 3)
    with pytest.raises(ValueError, match="scores has shape"):
        viz.attention_heatmap(np.zeros((3, 3)), ["a"] * 3, ["a"] * 3, scores_2d=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="boolean"):
        viz.attention_heatmap(np.zeros((3, 3)), ["a"] * 3, ["a"] * 3, mask_2d=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="does not fit"):
        viz.attention_heatmap(np.zeros((3, 3)), ["a"] * 3, ["a"] * 3, mask_2d=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="list of strings"):
        viz.attention_heatmap(np.zeros((3, 3)), "abc", ["a"] * 3)
    with pytest.raises(ValueError, match="numeric"):
        viz.attention_heatmap(np.array([["a"]]), ["a"], ["a"])


@pytest.mark.parametrize("n,causal", [(5, False), (13, True), (100, True)])
@pytest.mark.parametrize("options", [{}, {"threshold": 0.05}, {"keep_share": 0.8}, {"lang": "zh"},
                                     {"query_range": (2, 4), "key_range": (0, 3)}])
def test_fast_build_equals_a_validated_figure(n, causal, options):
    """attention_heatmap skips plotly's per-property validation for speed; what it sends must be
    exactly what plotly's validation would have made of the same figure."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    rng = np.random.default_rng(n)
    p = rng.random((n, n)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    s = np.log(p)
    if causal:
        future = np.triu(np.ones((n, n), dtype=bool), 1)
        s, p = np.where(future, -np.inf, s), np.where(future, 0, p)
    toks = [f"t{i}" for i in range(n)]
    fig = viz.attention_heatmap(p, toks, toks, scores_2d=s, title="x", subtitle="<b>y</b>", **options)
    fast = json.loads(pio.to_json(fig, validate=False))
    checked = json.loads(pio.to_json(go.Figure(fig.to_dict()), validate=True))
    assert fast == checked
