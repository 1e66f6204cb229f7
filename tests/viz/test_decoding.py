"""viz/decoding.py: cross-attention at one step, the top-k bars, the beam tree, the sampling bars and
the token losses draw what they are given, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from tests.figures import title_of
from viz import theme
from viz.labels import TEXT

SRC = ["Le", "chat", "<b>", "</s>"]


def test_cross_step_bar_for_1d():
    w = np.array([0.1, 0.6, 0.2, 0.1], np.float32)
    fig = viz.cross_attention_step(w, SRC, step=2, step_token="cat")
    assert fig.data[0].type == "bar"
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), w)
    assert list(fig.layout.xaxis.ticktext) == viz.token_labels(SRC)
    assert "step 2" in title_of(fig) and "cat" in title_of(fig)


def test_cross_step_heatmap_for_heads_and_layers():
    rng = np.random.default_rng(0)
    w = rng.random((3, 2, 4)).astype(np.float32)
    fig = viz.cross_attention_step(w[0], SRC)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w[0])
    assert list(fig.layout.yaxis.ticktext) == ["H0", "H1"]
    fig = viz.cross_attention_step(w, SRC)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w.reshape(6, 4))
    assert list(fig.layout.yaxis.ticktext)[:3] == ["L0 H0", "L0 H1", "L1 H0"]


def test_cross_step_validation():
    with pytest.raises(ValueError, match="4 source \\(key\\) positions but 3 source tokens"):
        viz.cross_attention_step(np.zeros((2, 4)), SRC[:3])
    with pytest.raises(ValueError, match="1-D .* or 2-D .* or 3-D"):
        viz.cross_attention_step(np.zeros((1, 2, 2, 4)), SRC)


def test_topk_bar_sorted_descending_and_truncated():
    toks = ["a", "b", "c", "d"]
    probs = np.array([0.1, 0.5, 0.3, 0.1], np.float32)
    fig = viz.topk_bar(toks, probs, k=3)
    bar = fig.data[0]
    assert bar.orientation == "h"
    np.testing.assert_array_equal(np.asarray(bar.x), np.array([0.5, 0.3, 0.1], np.float32))
    assert list(fig.layout.yaxis.ticktext) == ["b", "c", "a"]
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # most likely at the top
    assert list(bar.text) == ["50.0%", "30.0%", "10.0%"]


def test_topk_validation():
    with pytest.raises(ValueError, match="3 entries but 2 tokens"):
        viz.topk_bar(["a", "b"], np.array([0.2, 0.3, 0.5]))
    with pytest.raises(ValueError, match="non-negative"):
        viz.topk_bar(["a"], np.array([-0.1]))
    with pytest.raises(ValueError, match="1-D"):
        viz.topk_bar(["a"], np.array([[1.0]]))


# A small beam: start, two kept, one pruned at step 0; one finished and one kept at step 1.
STEPS = [0, 1, 1, 1, 2, 2]
PARENTS = [-1, 0, 0, 0, 1, 2]
TOKENS = ["<s>", "a", "b", "c", "<eos>", "d"]
LOGPS = np.array([0.0, -0.1, -0.5, -2.0, -0.3, -0.9])
STATUSES = ["start", "kept", "kept", "pruned", "finished", "kept"]


def marker_points(fig) -> dict[str, list[tuple[float, float]]]:
    out = {}
    for tr in fig.data:
        if tr.mode == "markers+text":
            out[tr.name] = list(zip(tr.x, tr.y, strict=True))
    return out


def test_beam_tree_puts_every_node_at_its_step_and_rank_and_draws_the_output_path():
    fig = viz.beam_tree(STEPS, PARENTS, TOKENS, LOGPS, STATUSES, [0, 1, 4], current=1)
    points = marker_points(fig)
    en = TEXT["en"]
    assert points[en["beam.status.kept"]] == [(1, 0), (1, 1), (2, 1)]
    assert points[en["beam.status.pruned"]] == [(1, 2)]
    assert points[en["beam.status.finished"]] == [(2, 0)]
    path = [tr for tr in fig.data if tr.name == en["beam.chosen"]][0]
    assert list(path.x) == [0, 1, 2] and list(path.y) == [0, 0, 0]
    logps = sorted(float(c[1]) for tr in fig.data if tr.mode == "markers+text" for c in tr.customdata)
    assert logps == sorted(float(f"{v:.3f}") for v in LOGPS)
    # Every edge joins a node to its parent.
    edges = [tr for tr in fig.data if tr.mode == "lines" and not tr.name]
    n_edges = sum(len([x for x in tr.x if x is None]) for tr in edges)
    assert n_edges == len(STEPS) - 1


@pytest.mark.parametrize("change,match", [
    (dict(parents=[-1, 0, 0, 0, 1]), "parents has 5"),
    (dict(parents=[-1, 0, 0, 0, 5, 2]), "earlier node"),
    (dict(statuses=["start", "kept", "kept", "gone", "finished", "kept"]), "unknown status"),
    (dict(chosen=[0, 9]), "outside"),
    (dict(tokens=TOKENS[:-1]), "tokens"),
])
def test_beam_tree_refuses_inconsistent_input(change, match):
    args = dict(steps=STEPS, parents=PARENTS, tokens=TOKENS, logps=LOGPS, statuses=STATUSES, chosen=[0, 1, 4])
    args.update(change)
    with pytest.raises(ValueError, match=match):
        viz.beam_tree(args["steps"], args["parents"], args["tokens"], args["logps"], args["statuses"],
                      args["chosen"])


def test_sampling_bars_show_both_distributions_and_mark_the_drawn_token():
    filtered, raw = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.25, 0.05])
    fig = viz.sampling_bars(["x", "y", "z"], filtered, raw, 1, n_kept=3, lang="zh")
    bars = [tr for tr in fig.data if tr.type == "bar"]
    np.testing.assert_allclose(bars[0].x, raw)
    np.testing.assert_allclose(bars[1].x, filtered)
    mark = [tr for tr in fig.data if tr.type == "scatter"][0]
    assert list(mark.y) == [1] and mark.marker.color == theme.NEGATIVE
    assert mark.name == TEXT["zh"]["sample.drawn"]
    assert TEXT["zh"]["sample.title"].format(n=3) in title_of(fig)
    with pytest.raises(ValueError, match="sampled"):
        viz.sampling_bars(["x", "y", "z"], filtered, raw, 3)
    with pytest.raises(ValueError, match="raw has 2"):
        viz.sampling_bars(["x", "y", "z"], filtered, raw[:2], 0)
    with pytest.raises(ValueError, match="non-negative"):
        viz.sampling_bars(["x", "y", "z"], -filtered, raw, 0)


def test_token_losses_draw_both_losses_and_mark_where_the_model_differs():
    nll, smoothed = np.array([0.1, 2.0, 0.3]), np.array([1.0, 2.5, 1.2])
    differs = np.array([False, True, False])
    fig = viz.token_losses(["▁I", "▁a", "<eos>"], nll, smoothed, differs, ["▁I", "▁an", "<eos>"],
                           smoothing=0.1)
    bars = [tr for tr in fig.data if tr.type == "bar"]
    np.testing.assert_allclose(bars[0].y, nll)
    np.testing.assert_allclose(bars[1].y, smoothed)
    assert "0.1" in bars[1].name
    marks = [tr for tr in fig.data if tr.type == "scatter"][0]
    assert list(marks.x) == [1] and list(marks.customdata) == ["▁an"]
    with pytest.raises(ValueError, match="boolean"):
        viz.token_losses(["a", "b", "c"], nll, smoothed, np.array([0, 1, 0]), ["a", "b", "c"], smoothing=0.1)
    with pytest.raises(ValueError, match="one entry per token"):
        viz.token_losses(["a", "b", "c"], nll, smoothed[:2], differs, ["a", "b", "c"], smoothing=0.1)
    none = np.zeros(3, dtype=bool)
    no_marks = viz.token_losses(["a", "b", "c"], nll, smoothed, none, ["a", "b", "c"], smoothing=0)
    assert not [tr for tr in no_marks.data if tr.type == "scatter"]
