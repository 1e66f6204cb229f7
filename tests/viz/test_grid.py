"""all_heads_grid: one light heatmap trace, exact tiling, click mapping round trip."""

import numpy as np
import pytest

import viz
from viz.clicks import CLICK_HOVER_DISTANCE_PX
from viz.grid import GridLayout
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec


def _patterns(n_layers=6, n_heads=8, n=32, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random((n_layers, n_heads, n, n)).astype(np.float32)
    return p / p.sum(-1, keepdims=True)


def _toks(n):
    return [f"t{i}" for i in range(n)]


def _trace(fig, name):
    (trace,) = [t for t in fig.data if t.name == name]
    return trace


def test_tiles_are_the_input_patterns_with_nan_gutters():
    p = _patterns(2, 3, 4)
    fig = viz.all_heads_grid(p, _toks(4), _toks(4), gutter=1)
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]  # one heatmap + click targets
    z = np.asarray(fig.data[0].z)
    assert z.shape == (2 * 4 + 1, 3 * 4 + 2)
    for layer in range(2):
        for head in range(3):
            r, c = layer * 5, head * 5
            np.testing.assert_array_equal(z[r : r + 4, c : c + 4], p[layer, head])
    assert np.isnan(z[4, :]).all() and np.isnan(z[:, 4]).all() and np.isnan(z[:, 9]).all()
    assert np.isfinite(z).sum() == p.size
    # What goes over the wire decodes to the same matrix.
    np.testing.assert_array_equal(decode_plotly_array(fig.to_plotly_json()["data"][0]["z"]), z)


def test_hover_customdata_names_layer_head_query_key():
    p = _patterns(2, 3, 4)
    fig = viz.all_heads_grid(p, _toks(4), _toks(4), gutter=2, hover="full")
    cd = np.asarray(fig.data[0].customdata)
    layout = viz.grid_layout_from_figure(fig)
    r, c = layout.origin(1, 2)
    assert tuple(cd[r + 3, c + 1]) == (1, 2, 3, 1)
    assert "layer %{customdata[0]}" in fig.data[0].hovertemplate
    cd_json = fig.to_plotly_json()["data"][0]["customdata"]
    assert is_typed_array_spec(cd_json) and cd_json["dtype"] == "u1"  # compact, not a JSON list
    assert (
        np.asarray(viz.all_heads_grid(p, _toks(4), _toks(4), hover="head").data[0].customdata).shape[-1] == 2
    )
    assert viz.all_heads_grid(p, _toks(4), _toks(4), hover="none").data[0].customdata is None


def test_grid_json_is_small_for_6_layers_8_heads_32_tokens():
    p = _patterns()
    toks = _toks(32)
    causal = np.triu(np.ones((32, 32), bool), 1)
    size_default = len(viz.all_heads_grid(p, toks, toks).to_json())
    assert size_default < 500_000, size_default
    size_masked = len(viz.all_heads_grid(p, toks, toks, mask=causal).to_json())
    assert size_masked < 650_000, size_masked
    size_full = len(viz.all_heads_grid(p, toks, toks, mask=causal, hover="full").to_json())
    assert size_full < 1_000_000, size_full


def test_cell_to_head_round_trips_every_layer_and_head():
    n_layers, n_heads, n_q, n_k, gutter = 6, 8, 7, 5, 2
    layout = GridLayout(n_layers, n_heads, n_q, n_k, gutter)
    for layer in range(n_layers):
        for head in range(n_heads):
            r0, c0 = layout.origin(layer, head)
            for q in range(n_q):
                for k in range(n_k):
                    x, y = c0 + k, r0 + q
                    assert viz.grid_cell_to_head(x, y, n_q, n_k, gutter, n_layers, n_heads) == (layer, head)
                    assert layout.cell_to_position(x, y) == (layer, head, q, k)


def test_cell_to_head_none_for_gutters_and_outside():
    layout = GridLayout(2, 2, 3, 3, 1)
    assert viz.grid_cell_to_head(3, 0, 3, 3, 1) is None  # column gutter
    assert viz.grid_cell_to_head(0, 3, 3, 3, 1) is None  # row gutter
    assert viz.grid_cell_to_head(-1, 0, 3, 3, 1) is None
    assert viz.grid_cell_to_head(0, 7, 3, 3, 1, n_layers=2, n_heads=2) is None  # below the grid
    assert layout.cell_to_head(7, 0) is None  # right of the grid
    assert viz.grid_cell_to_head(4.0, 4.2, 3, 3, 1) == (1, 1)  # float click coordinates


def test_layout_meta_matches_the_figure():
    p = _patterns(3, 2, 5)
    fig = viz.all_heads_grid(p, _toks(5), _toks(5), gutter=3)
    layout = viz.grid_layout_from_figure(fig)
    assert layout == GridLayout(3, 2, 5, 5, 3)
    assert np.asarray(fig.data[0].z).shape == (layout.n_rows, layout.n_cols)
    assert list(fig.layout.yaxis.ticktext) == ["L0", "L1", "L2"]
    assert list(fig.layout.xaxis.ticktext) == ["H0", "H1"]
    with pytest.raises(ValueError, match="all_heads_grid"):
        viz.grid_layout_from_figure(viz.attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"]))


def test_mask_overlay_is_light_uint8_and_masked_cells_are_nan():
    p = _patterns(2, 2, 4)
    causal = np.triu(np.ones((4, 4), bool), 1)
    fig = viz.all_heads_grid(p, _toks(4), _toks(4), mask=causal, gutter=1)
    overlay, main = _trace(fig, "masked"), _trace(fig, "attention")
    assert fig.to_plotly_json()["data"][0]["z"]["dtype"] == "u1"
    ov = np.asarray(overlay.z)
    z = np.asarray(main.z)
    np.testing.assert_array_equal(ov[:4, :4], causal.astype(np.uint8))
    assert np.isnan(z[:4, :4][causal]).all()
    np.testing.assert_array_equal(z[5:9, 5:9][~causal], p[1, 1][~causal])


def test_grid_validation():
    p = _patterns(2, 2, 4)
    with pytest.raises(ValueError, match="patterns has 4 query rows but 3 query tokens were given"):
        viz.all_heads_grid(p, _toks(3), _toks(4))
    with pytest.raises(ValueError, match="4-D"):
        viz.all_heads_grid(p[0], _toks(4), _toks(4))
    with pytest.raises(ValueError, match="gutter"):
        viz.all_heads_grid(p, _toks(4), _toks(4), gutter=-1)
    with pytest.raises(ValueError, match="hover"):
        viz.all_heads_grid(p, _toks(4), _toks(4), hover="yes")


def test_click_targets_carry_layer_head_and_map_back():
    p = _patterns(3, 4, 5)
    fig = viz.all_heads_grid(p, _toks(5), _toks(5), gutter=2)
    targets = _trace(fig, "click targets")
    cd = np.asarray(targets.customdata)
    assert sorted(map(tuple, cd)) == [(li, hi) for li in range(3) for hi in range(4)]
    for x, y, (li, hi) in zip(targets.x, targets.y, cd, strict=True):
        assert viz.grid_cell_to_head(x, y, 5, 5, 2, 3, 4) == (li, hi)
    assert targets.marker.opacity == 0
    # Plotly sends clicks only for points that join hover: the targets must not skip it.
    assert targets.hoverinfo != "skip" and "click to open" in targets.hovertemplate
    assert fig.layout.hoverdistance == CLICK_HOVER_DISTANCE_PX
    assert fig.layout.clickmode == "event+select"
    assert len(viz.all_heads_grid(p, _toks(5), _toks(5), click_targets=False).data) == 1


def test_default_tile_size_follows_the_pixels_a_tile_gets():
    import viz.grid as grid

    # 12 heads in 1,150 px: ~81 px a tile -> 50 cells; 8 heads keep the full 64 from 1,000 px
    assert grid.tile_cells_for(1150, 12) == 50
    assert grid.tile_cells_for(1000, 8) == grid.MAX_TILE_CELLS
    for width in (600, 1000, 1150, 1300, 2000):
        for heads in (1, 4, 8, 12, 16, 32):
            cells = grid.tile_cells_for(width, heads)
            assert 16 <= cells <= grid.MAX_TILE_CELLS
            if cells > 16:  # every cell gets at least MIN_CELL_PX pixels
                assert (width - grid.PLOT_MARGIN_PX) / heads / cells >= grid.MIN_CELL_PX
    rng = np.random.default_rng(0)
    p = rng.random((2, 12, 512, 512), dtype=np.float32)
    toks = [f"t{i}" for i in range(512)]
    fig = viz.all_heads_grid(p, toks, toks, width=1150)
    layout = viz.grid_layout_from_figure(fig)
    assert layout.n_q <= 50 and layout.block == 11  # ceil(512 / 50)
    grid = viz.all_heads_grid(p, toks, toks, width=1150, max_tile_cells=64)
    assert grid.layout.meta["attention_grid"]["n_q"] == 64
