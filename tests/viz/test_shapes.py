"""Shape trace table and parameter breakdown chart."""

import numpy as np
import pytest

import viz
from tests.figures import title_of

STEPS = [
    {
        "name": "src_embed",
        "op": "Embedding",
        "hook": "enc.embed",
        "in_shapes": [(2, 7)],
        "out_shape": (2, 7, 64),
        "in_symbols": ["B S"],
        "out_symbol": "B S d_model",
    },
    {
        "name": "attn_scores",
        "op": "matmul",
        "hook": None,
        "in_shapes": [(2, 4, 7, 16), (2, 4, 16, 7)],
        "out_shape": (2, 4, 7, 7),
        "in_symbols": ["B H S d_head", "B H d_head S"],
        "out_symbol": "B H S S",
    },
]


def test_shape_trace_table_rows():
    df = viz.shape_trace_table(STEPS)
    assert list(df.columns) == [
        "step",
        "name",
        "op",
        "hook",
        "input shapes",
        "input symbols",
        "output shape",
        "output symbol",
    ]
    assert df.loc[0, "output shape"] == "2 × 7 × 64"
    assert df.loc[1, "input shapes"] == "2 × 4 × 7 × 16 ; 2 × 4 × 16 × 7"
    assert df.loc[1, "hook"] == "—"
    assert df.loc[1, "output symbol"] == "B H S S"
    assert viz.shape_trace_table([]).empty


def test_shape_trace_validation():
    bad = dict(STEPS[0])
    del bad["out_shape"]
    with pytest.raises(ValueError, match="missing key"):
        viz.shape_trace_table([bad])
    bad = dict(STEPS[1], in_symbols=["B H S d_head"])
    with pytest.raises(ValueError, match="2 input shapes but 1 input symbols"):
        viz.shape_trace_table([bad])
    with pytest.raises(ValueError, match="integers"):
        viz.shape_trace_table([dict(STEPS[0], out_shape=(2, "T"))])


def test_parameter_treemap_hierarchy_and_values():
    counts = {"embed": 1000, "encoder.layers.0.attn": 300, "encoder.layers.0.ffn": 600, "decoder.out": 50}
    fig = viz.parameter_breakdown_chart(counts)
    tm = fig.data[0]
    ids = list(tm.ids)
    values = dict(zip(ids, np.asarray(tm.values), strict=True))
    parents = dict(zip(ids, tm.parents, strict=True))
    assert values["encoder.layers.0.ffn"] == 600 and values["encoder"] == 0
    assert parents["encoder.layers.0.ffn"] == "encoder.layers.0" and parents["embed"] == ""
    assert tm.branchvalues == "remainder"
    assert sum(values.values()) == sum(counts.values())
    assert "1,950" in title_of(fig)


def test_parameter_bar_sorted():
    fig = viz.parameter_breakdown_chart({"a": 5, "b": 50, "c": 10}, kind="bar")
    np.testing.assert_array_equal(np.asarray(fig.data[0].x), [50, 10, 5])
    assert list(fig.layout.yaxis.ticktext) == ["b", "c", "a"]


def test_parameter_validation():
    with pytest.raises(ValueError, match="empty"):
        viz.parameter_breakdown_chart({})
    with pytest.raises(ValueError, match="non-negative integer"):
        viz.parameter_breakdown_chart({"a": -1})
    with pytest.raises(ValueError, match="kind"):
        viz.parameter_breakdown_chart({"a": 1}, kind="pie")
