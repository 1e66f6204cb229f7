"""The representation projector's figures (viz/projector.py): the scatter puts each sentence at its
coordinates (one trace per sense, or one colour per sentence), escapes what users typed, and the ratio figure
draws the ratio and the two distances by layer."""

import json

import numpy as np
import pytest

from viz.labels import label
from viz.lens import row_labels
from viz.projector import SENSE_COLORS, projection_scatter, ratio_figure

RNG = np.random.default_rng(0)
COORDS = RNG.normal(size=(5, 2))
LABELS = ["fruit", "<b>co</b>", "fruit", "", "<b>co</b>"]
SENTENCES = ["I ate an apple.", "<img src=x onerror=alert(1)>", "An apple a day.", "no label", "Apple Inc."]
PIECES = [["apple"], ["ap", "ple"], ["apple"], ["x"], ["<s>"]]


def _spec(fig) -> dict:
    return json.loads(fig.to_json())


def test_by_sense_one_trace_per_label_at_its_points_escaped():
    fig = projection_scatter(COORDS, LABELS, SENTENCES, PIECES, explained=(0.5, 0.25),
                             numbers=[1, 2, 4, 5, 6])
    names = [t.name for t in fig.data]
    assert names == ["fruit", "&lt;b&gt;co&lt;/b&gt;", label("en", "projector.fig.no_label")]
    for trace, members in zip(fig.data, ([0, 2], [1, 4], [3]), strict=True):
        np.testing.assert_allclose(np.asarray(trace.x, np.float64), COORDS[members, 0], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(trace.y, np.float64), COORDS[members, 1], rtol=1e-6)
    assert fig.data[0].marker.color == SENSE_COLORS[0] and fig.data[1].marker.color == SENSE_COLORS[1]
    assert [row[0] for row in fig.data[1].customdata] == ["2", "6"]  # the sentences' own numbers
    shown = json.dumps(_spec(fig), ensure_ascii=False)
    assert "<img" not in shown and "&lt;img" in shown and "<b>co" not in shown
    assert "50%" in fig.layout.xaxis.title.text and "25%" in fig.layout.yaxis.title.text


def test_by_sentence_one_colour_and_number_per_sentence_and_the_sense_as_shape():
    fig = projection_scatter(COORDS, LABELS, SENTENCES, PIECES, color_by="sentence", lang="zh")
    (trace,) = fig.data
    np.testing.assert_allclose(np.asarray(trace.x, np.float64), COORDS[:, 0], rtol=1e-6)
    assert list(trace.text) == ["1", "2", "3", "4", "5"]
    np.testing.assert_allclose(np.asarray(trace.marker.color, np.float64), [1, 2, 3, 4, 5])
    symbols = list(trace.marker.symbol)
    assert symbols[0] == symbols[2] != symbols[1] == symbols[4] != symbols[3]
    assert label("zh", "projector.fig.axis_pc", k=1, share="0%") == fig.layout.xaxis.title.text


def test_bad_shapes_and_choices_raise():
    with pytest.raises(ValueError):
        projection_scatter(COORDS[:, :1], LABELS, SENTENCES, PIECES)
    with pytest.raises(ValueError):
        projection_scatter(COORDS, LABELS[:-1], SENTENCES, PIECES)
    with pytest.raises(ValueError):
        projection_scatter(COORDS, LABELS, SENTENCES, PIECES, color_by="colour")


def test_the_ratio_figure_draws_ratio_and_distances_by_layer():
    ratio = np.array([np.nan, 1.0, 1.4, 1.2])
    between, within = np.array([0.0, 0.2, 0.28, 0.3]), np.array([0.0, 0.2, 0.2, 0.25])
    fig = ratio_figure(ratio, between, within, chosen=2, lang="zh")
    by_name = {t.name: t for t in fig.data}
    line = by_name[label("zh", "projector.fig.series_ratio")]
    np.testing.assert_allclose(np.asarray(line.y, np.float64), ratio, rtol=1e-6)  # NaN stays a gap
    for key, values in (("between", between), ("within", within)):
        drawn = by_name[label("zh", f"projector.fig.series_{key}")].y
        np.testing.assert_allclose(np.asarray(drawn, np.float64), values, rtol=1e-6)
    chosen = by_name[label("zh", "projector.fig.chosen")]
    assert list(chosen.x) == [2] and list(chosen.y) == [1.4]
    assert list(fig.layout.xaxis2.ticktext) == row_labels(4, "zh")
    assert any(s.y0 == 1.0 and s.y1 == 1.0 for s in fig.layout.shapes)  # the line of no separation
    no_ratio_there = ratio_figure(ratio, between, within, chosen=0)  # a NaN row gets no marker
    assert not [t for t in no_ratio_there.data if t.name == label("en", "projector.fig.chosen")]
    with pytest.raises(ValueError):
        ratio_figure(ratio, between[:3], within)
