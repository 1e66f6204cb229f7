"""The head detector map: values, threshold marks, click targets and both languages."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from viz.clicks import CLICK_TRACE_NAME
from viz.detectors import ABOVE_MARK, above_threshold, detector_map, top_heads
from viz.labels import label


def test_marks_exactly_the_heads_at_or_above_the_threshold():
    v = np.array([[0.1, 0.4, np.nan], [0.39, 0.9, 0.4]])
    fig = detector_map(v, 0.4, value_name="previous", lang="en")
    heat = fig.data[0]
    np.testing.assert_array_equal(heat.z, v)
    assert heat.text.tolist() == [["", ABOVE_MARK, ""], ["", ABOVE_MARK, ABOVE_MARK]]
    assert above_threshold(v, 0.4).tolist() == [[False, True, False], [False, True, True]]
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)


def test_a_signed_score_gets_a_scale_centred_on_zero():
    v = np.array([[-2.0, 0.5], [1.0, 0.0]])
    heat = detector_map(v, 1.0, value_name="copying", signed=True).data[0]
    assert heat.zmin == -2.0 and heat.zmax == 2.0


def test_every_cell_is_a_click_target_naming_its_head():
    fig = detector_map(np.zeros((3, 4)), 0.5, value_name="x")
    clicks = [d for d in fig.data if d.name == CLICK_TRACE_NAME]
    assert len(clicks) == 1
    cells = {tuple(c) for c in clicks[0].customdata.tolist()}
    assert cells == {(layer, head) for layer in range(3) for head in range(4)}
    assert clicks[0].x.tolist() == [h for _ in range(3) for h in range(4)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_title_is_in_the_language_and_escapes_the_name(lang):
    fig = detector_map(np.zeros((1, 2)), 0.3, value_name="<i>x</i>", lang=lang)
    expected = label(lang, "detectors.map_title", stat="&lt;i&gt;x&lt;/i&gt;", threshold="0.3",
                     mark=ABOVE_MARK)
    assert expected in fig.layout.title.text.replace("<br >", "")
    assert "<i>" not in fig.layout.title.text


def test_top_heads_best_first_without_nan():
    v = np.array([[0.2, np.nan], [0.9, 0.5]])
    assert top_heads(v, 5) == [(1, 0, 0.9), (1, 1, 0.5), (0, 0, 0.2)]
    assert top_heads(v, 1) == [(1, 0, 0.9)]


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        detector_map(np.zeros(3), 0.5, value_name="x")


def test_exported_from_the_package():
    assert viz.detector_map is detector_map
