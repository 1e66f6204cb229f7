"""viz.interventions: head matrices, per-step bars, attribution figures; checks on inputs and invariants."""

import json

import numpy as np
import pytest

from app_support.i18n.check import untranslated
from tests.figures import title_of
from viz import theme
from viz.clicks import CLICK_TRACE_NAME
from viz.interventions import (
    attention_change,
    attribution_bars,
    attribution_heatmap,
    head_matrix,
    heads_over_source,
    normalise_abs,
    step_bars,
    step_pair_bars,
)
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

RNG = np.random.default_rng(0)
PAYLOAD = "<img src=x onerror=alert(1)>"


def _pattern(shape):
    p = RNG.random(shape)
    return p / p.sum(-1, keepdims=True)


def _z(trace):
    z = trace.z
    return decode_plotly_array(z) if is_typed_array_spec(z) else np.asarray(z)


def test_attention_change_is_a_total_variation_per_head():
    a, b = _pattern((2, 3, 4, 5)), _pattern((2, 3, 4, 5))
    change = attention_change(a, b)
    assert change.shape == (2, 3)
    np.testing.assert_array_equal(attention_change(a, a), 0.0)
    np.testing.assert_allclose(change, attention_change(b, a))
    assert (change > 0).all() and (change <= 1).all()
    one_hot = np.zeros((1, 1, 1, 3))
    other = one_hot.copy()
    one_hot[..., 0], other[..., 2] = 1, 1
    assert attention_change(one_hot, other)[0, 0] == 1.0  # disjoint rows
    with pytest.raises(ValueError, match="same shape"):
        attention_change(a, b[:, :, :3])


def test_head_matrix_has_a_click_target_per_head_and_frames_the_marked_ones():
    values = RNG.random((3, 4))
    values[0, 1] = np.nan
    fig = head_matrix(values, title=PAYLOAD, marked=[(2, 3), (0, 0), (9, 9)])
    heat = [t for t in fig.data if t.name == "values"][0]
    np.testing.assert_allclose(_z(heat), values.astype(np.float32))
    assert heat.text[0][1] == "" and heat.text[2][3] == f"{values[2, 3]:.2f}"
    clicks = [t for t in fig.data if t.name == CLICK_TRACE_NAME][0]
    cd = np.asarray(decode_plotly_array(clicks.customdata) if is_typed_array_spec(clicks.customdata)
                    else clicks.customdata)
    assert sorted(map(tuple, cd.tolist())) == [(la, h) for la in range(3) for h in range(4)]
    assert len(fig.layout.shapes) == 2  # the head outside the matrix is ignored
    assert PAYLOAD not in title_of(fig) and "&lt;img" in title_of(fig)
    signed = head_matrix(values - 0.5, signed=True, zmax=1.0)
    assert signed.data[0].zmin == -1.0
    assert signed.data[0].colorscale[0][1] == _first_colour(theme.DIVERGING_REVERSED)
    with pytest.raises(ValueError):
        head_matrix(np.ones(3))


def _first_colour(scale: str) -> str:
    import plotly.graph_objects as go

    return go.Heatmap(colorscale=scale).colorscale[0][1]


def test_step_figures_check_their_lengths_and_escape_tokens():
    fig = step_bars([PAYLOAD, "b"], np.array([0.1, 0.2]))
    assert all(PAYLOAD not in x for x in fig.data[0].x)
    pair = step_pair_bars(["a", "b"], np.array([0.1, 0.2]), np.array([0.3, 0.4]), names=("x", "y"))
    assert [t.meta for t in pair.data] == ["before", "after"]
    with pytest.raises(ValueError):
        step_bars(["a"], np.array([0.1, 0.2]))
    with pytest.raises(ValueError):
        step_pair_bars(["a", "b"], np.array([0.1, 0.2]), np.array([0.3]), names=("x", "y"))


def test_attribution_figures():
    values = RNG.normal(size=(3, 4))
    fig = attribution_heatmap(values, ["a", "b", "c"], ["q", "w", PAYLOAD, "r"])
    np.testing.assert_allclose(_z(fig.data[0]), values.astype(np.float32))
    assert fig.data[0].zmin == -fig.data[0].zmax == -np.abs(values).max().astype(np.float32)
    with pytest.raises(ValueError, match="source tokens"):
        attribution_heatmap(values, ["a", "b", "c"], ["q"])
    series = {"IG": np.array([1.0, -3.0, 0.0]), "att": np.array([0.2, 0.2, 0.6])}
    bars = attribution_bars(["q", "w", "e"], series)
    np.testing.assert_allclose(bars.data[0].y, [0.25, 0.75, 0.0])
    np.testing.assert_allclose(normalise_abs(np.zeros(3)), 0.0)
    assert normalise_abs(RNG.normal(size=5)).sum() == pytest.approx(1.0)
    with pytest.raises(ValueError):
        attribution_bars(["q"], {"IG": np.array([1.0, 2.0])})
    heads = heads_over_source(_pattern((4, 3)), ["L0 H0", "L0 H1", "L1 H0", "L1 H1"], ["q", "w", "e"])
    assert heads.data[0].zmax == 1.0
    with pytest.raises(ValueError):
        heads_over_source(_pattern((4, 3)), ["L0 H0"], ["q", "w", "e"])


def test_figures_speak_chinese():
    figs = [head_matrix(RNG.random((2, 2)), lang="zh"), step_bars(["a"], np.array([1.0]), lang="zh"),
            attribution_heatmap(RNG.normal(size=(1, 2)), ["a"], ["b", "c"], lang="zh"),
            attribution_bars(["b", "c"], {"积分梯度": np.array([1.0, 2.0])}, lang="zh"),
            heads_over_source(_pattern((1, 2)), ["L0 H0"], ["b", "c"], lang="zh")]
    for fig in figs:
        layout = json.loads(fig.to_json())["layout"]
        texts = [layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]]
        texts += [t.get("hovertemplate", "") for t in json.loads(fig.to_json())["data"]]
        for text in texts:
            assert not untranslated(text, ["a", "b", "c", "L0", "H0"]), text


def test_head_matrix_can_label_its_columns_by_other_things_than_heads():
    values = np.arange(6, dtype=np.float64).reshape(2, 3)
    fig = head_matrix(values, columns=["The", "<b>", "of"], column_title="position").to_plotly_json()
    axis = fig["layout"]["xaxis"]
    assert axis["title"]["text"] == "position" and len(axis["ticktext"]) == 3
    assert "<b>" not in axis["ticktext"][1]  # token text is escaped, never read as markup
    plain = head_matrix(values).to_plotly_json()["layout"]["xaxis"]
    assert "ticktext" not in plain and plain["title"]["text"] != "position"
