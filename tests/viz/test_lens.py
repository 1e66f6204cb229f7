"""The logit-lens figures (viz/lens.py): the grid shows the values and top tokens given (escaped),
its click targets name positions, and the position figure draws probability, rank + 1 and entropy."""

import json

import numpy as np
import pytest

from viz.clicks import CLICK_TRACE_NAME
from viz.labels import label
from viz.lens import lens_cell_hover, lens_heatmap, lens_position_figure, row_labels

ROWS, POS, K = 3, 4, 2
RNG = np.random.default_rng(0)
VALUES = RNG.random((ROWS, POS))
TOKENS = ["<b>x</b>", " a", "b", "&"]
TOPS = [[f"t{r}{p}" for p in range(POS)] for r in range(ROWS)]
TOPS[1][2] = "<img src=x onerror=alert(1)>"


def _spec(fig) -> dict:
    return json.loads(fig.to_json())


def _trace(fig, name):
    return next(t for t in _spec(fig)["data"] if t.get("name") == name)


def test_grid_colours_are_the_values_and_texts_the_top_tokens_escaped():
    fig = lens_heatmap(VALUES, TOPS, TOKENS, positions=[5, 6, 7, 8], prompt_len=7, value_name="p")
    heat = fig.data[0]
    np.testing.assert_allclose(np.asarray(heat.z, dtype=np.float64), VALUES, rtol=1e-6)
    assert list(heat.x) == [5, 6, 7, 8]
    assert heat.text[0][0] == "t00"
    shown = json.dumps(_spec(fig))
    assert "<img" not in shown and "&lt;img" in shown
    assert "<b>x</b>" not in shown and "&lt;b&gt;x&lt;/b&gt;" in shown
    ticks = fig.layout.xaxis.ticktext
    assert ticks[0] == "&lt;b&gt;x&lt;/b&gt;" and ticks[1] == "␣a"


def test_grid_rows_are_embeddings_then_layers_and_the_prompt_line_sits_before_the_output():
    fig = lens_heatmap(VALUES, TOPS, TOKENS, positions=[5, 6, 7, 8], prompt_len=7, chosen=6, lang="zh")
    expected = [label("zh", "lens.row_embed"), "1", "2"]
    assert list(fig.layout.yaxis.ticktext) == row_labels(ROWS, "zh") == expected
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [s.x0 for s in lines] == [6.5]
    assert [(s.x0, s.x1) for s in rects] == [(5.5, 6.5)]


def test_no_prompt_line_when_the_window_holds_only_the_output():
    fig = lens_heatmap(VALUES, TOPS, TOKENS, positions=[5, 6, 7, 8], prompt_len=2)
    assert not [s for s in fig.layout.shapes if s.type == "line"]


def test_click_targets_carry_row_and_position_of_every_cell():
    fig = lens_heatmap(VALUES, TOPS, TOKENS, positions=[5, 6, 7, 8])
    clicks = next(t for t in fig.data if t.name == CLICK_TRACE_NAME)
    data = np.asarray(clicks.customdata)
    assert data.shape == (ROWS * POS, 2)
    assert {tuple(d) for d in data} == {(r, p) for r in range(ROWS) for p in (5, 6, 7, 8)}
    np.testing.assert_array_equal(np.asarray(clicks.x), data[:, 1])
    # Streamlit gives a chart whose drag draws a box clicks that select nothing (the browser test clicks)
    assert fig.layout.clickmode == "event+select" and fig.layout.dragmode not in ("select", "lasso")


def test_cell_hover_lists_top_k_final_choice_and_entropy():
    top_ids = np.array([[[1, 0]] * POS] * ROWS)
    top_probs = np.full((ROWS, POS, K), 0.25)
    words = {0: "<zero>", 1: " one"}
    final_rank = np.zeros((ROWS, POS), dtype=int)
    final_rank[0, 0] = 7
    hover = lens_cell_hover(top_ids, top_probs, words, TOKENS, np.array([0] * POS), final_rank,
                            np.full((ROWS, POS), 0.5), np.full((ROWS, POS), 1.234), [5, 6, 7, 8], "en")
    cell = hover[0][0]
    assert "␣one  0.250" in cell and "&lt;zero&gt;" in cell and "<zero>" not in cell
    assert label("en", "lens.hover_final", token="&lt;zero&gt;", rank=8, prob="0.5") in cell
    assert label("en", "lens.hover_entropy", value="1.23") in cell
    assert "position 5" in cell


def test_position_figure_draws_probability_rank_plus_one_and_entropy():
    rank = np.array([900, 40, 3, 0])
    prob = np.array([0.0, 0.01, 0.2, 0.8])
    ent = np.array([5.0, 4.0, 2.0, 1.0])
    fig = lens_position_figure(rank, prob, ent, ["a", "b", "c", " Paris"], final_token=" Paris", lang="en")
    probs, ranks, ents = fig.data
    np.testing.assert_allclose(np.asarray(probs.y, dtype=float), prob, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ranks.y, dtype=float), rank + 1)
    np.testing.assert_allclose(np.asarray(ents.y, dtype=float), ent)
    assert fig.layout.yaxis2.type == "log"
    assert probs.name == label("en", "lens.series_prob", token="␣Paris")
    assert list(probs.customdata)[-1] == "␣Paris"


def test_bad_shapes_are_refused_with_a_message():
    with pytest.raises(ValueError, match="top_tokens"):
        lens_heatmap(VALUES, TOPS[:2], TOKENS)
    with pytest.raises(ValueError, match="column tokens"):
        lens_heatmap(VALUES, TOPS, TOKENS[:3])
    with pytest.raises(ValueError, match="positions"):
        lens_heatmap(VALUES, TOPS, TOKENS, positions=[1, 2])
    with pytest.raises(ValueError, match="entropy"):
        lens_position_figure(np.zeros(3), np.zeros(3), np.zeros(2), ["a"] * 3, final_token="a")
