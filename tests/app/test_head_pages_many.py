"""All heads of a model with many (SmolLM2: 30 layers x 9 heads), a page of layers at a time."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support.selection import head_from_grid_selection
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
from tests.app.test_app_pages import arr
from tests.paths import REPO_ROOT
from viz.grid import grid_layout_from_figure

APP = str(REPO_ROOT / "app.py")
#: The issue's bound: figure JSON the all-heads page sends, at any length.
MAX_FIGURE_BYTES = 3_000_000



def _page(text: str, layers: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"model": "smollm2", "text": text})
    at.run()
    if layers is not None:
        at.query_params["layers"] = str(layers)
    at.switch_page("app_pages/heads.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _prompt(tokens: int) -> str:
    """A prompt SmolLM2 reads as exactly ``tokens`` tokens."""
    tok = load_model("smollm2").tokenizer
    words = " ".join(["the quick brown fox jumps over the lazy dog"] * 60).split()
    n = next(n for n in range(len(words)) if len(tok.encode(" ".join(words[:n]))) >= tokens)
    assert len(tok.encode(" ".join(words[:n]))) == tokens
    return " ".join(words[:n])


@pytest.mark.slow
@pytest.mark.parametrize("tokens", [5, 224, 250])  # + 32 new: 256 is the largest pooled tile (64 x 64)
def test_the_figure_stays_within_3_mb_at_any_length(tokens):
    at = _page(_prompt(tokens))
    sizes = [len(el.proto.spec) for el in at.get("plotly_chart")]
    assert sizes and sum(sizes) <= MAX_FIGURE_BYTES, sizes


def test_layers_per_figure_bounds_tiles_and_pooled_cells():
    from viz import layers_per_figure
    from viz.grid import MAX_FIGURE_CELLS, tile_cells_for

    assert layers_per_figure(6, 12, 512, 512, 1150, 72) == 6  # MiniLM: one page
    assert layers_per_figure(30, 9, 32, 32, 1150, 72) == 8  # short: the tile bound
    side = tile_cells_for(1150, 9)
    assert layers_per_figure(30, 9, 256, 256, 1150, 72) == MAX_FIGURE_CELLS // (9 * side * side) < 8
    assert layers_per_figure(30, 9, 10_000, 10_000, 1150, 72) >= 1


# slow: in the whole suite only (the quick subset keeps the paging arithmetic and the figure-size bound)
@pytest.mark.slow
def test_a_page_of_layers_shows_those_layers_of_the_model():
    at = _page("The capital of France is", layers=8)  # 8 layers a page at this length
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    meta = fig["layout"]["meta"]["attention_grid"]
    assert meta["first_layer"] == 8 and meta["n_layers"] == 8 and meta["n_heads"] == 9
    ticks = [t for t in fig["layout"]["yaxis"]["ticktext"] if t.startswith("L")]
    assert ticks[:8] == [f"L{i}" for i in range(8, 16)]
    # The tile of the page's first row is the model's layer 8, head 0: its weights (the analysis the pages
    # read: attention only), and a click on it.
    result = analyze(load_model("smollm2"), "The capital of France is", keep=attention_only)
    expected = result.attention("decoder")[8, 0]
    weights = next(t for t in fig["data"] if t.get("name") == "attention")
    z = arr(weights["z"])
    n = expected.shape[0]
    if meta["block"] == 1:
        # masked cells are NaN in the weights (drawn grey by their own layer)
        np.testing.assert_allclose(np.nan_to_num(z[:n, :n]), expected, atol=1e-6)
    import plotly.graph_objects as go

    layout = grid_layout_from_figure(go.Figure(fig))
    assert head_from_grid_selection({"selection": {"points": [{"x": 1, "y": 1}]}}, layout) == (8, 0)
