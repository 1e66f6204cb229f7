"""Figure payloads follow the screen, not the sentence length squared (bytes, never time).

Every size here is the JSON plotly sends to the browser (``plotly.io.to_json``); every value is
read back from that JSON and compared with a plain numpy reference computed here.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import plotly.io as pio
import pytest

import viz
from app_support.i18n.check import untranslated
from tests.figures import title_of
from viz.typed_arrays import decode_plotly_array

MB = 1_000_000


def _patterns(n_layers: int, n_heads: int, n_q: int, n_k: int | None = None, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = rng.random((n_layers, n_heads, n_q, n_k or n_q)).astype(np.float32) ** 8  # a few sharp peaks
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def _toks(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


def _sent(fig) -> dict:
    """The figure as the browser receives it."""
    return json.loads(pio.to_json(fig))


def _trace(sent: dict, name: str) -> dict:
    (t,) = [t for t in sent["data"] if t.get("name") == name]
    return t


def _reference_pool(tile: np.ndarray, block: int, how: str) -> np.ndarray:
    """Block by block with explicit slices: NaN ignored, all-NaN block -> NaN."""
    n_q, n_k = tile.shape
    out = np.full((-(-n_q // block), -(-n_k // block)), np.nan)
    for bi, r in enumerate(range(0, n_q, block)):
        for bj, c in enumerate(range(0, n_k, block)):
            cells = tile[r : r + block, c : c + block]
            if np.isfinite(cells).any():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out[bi, bj] = np.nanmax(cells) if how == "max" else np.nanmean(cells.astype(np.float64))
    return out


def _tiles(z: np.ndarray, layout: viz.GridLayout) -> dict[tuple[int, int], np.ndarray]:
    out = {}
    for li in range(layout.n_layers):
        for hi in range(layout.n_heads):
            r, c = layout.origin(li, hi)
            out[li, hi] = z[r : r + layout.n_q, c : c + layout.n_k]
    return out


# --------------------------------------------------------------------------- all heads


def test_all_heads_json_at_512_tokens_6x12_heads_is_at_most_5_mb():
    p = _patterns(6, 12, 512)
    size = len(pio.to_json(viz.all_heads_grid(p, _toks(512), _toks(512))))
    assert size <= 5 * MB, size


def test_all_heads_json_at_128_tokens_6x12_heads_is_at_most_2_7_mb():
    p = _patterns(6, 12, 128)
    size = len(pio.to_json(viz.all_heads_grid(p, _toks(128), _toks(128))))
    assert size <= 2.7 * MB, size


@pytest.mark.parametrize("how", ["max", "mean"])
def test_pooled_tiles_hold_each_blocks_max_or_mean_of_the_full_pattern(how):
    # 150 = 2 blocks of 64 + a short last block: edge blocks pool what they have
    p = _patterns(2, 3, 150, 130, seed=1)
    fig = viz.all_heads_grid(p, _toks(150), _toks(130), pool=how)
    layout = viz.grid_layout_from_figure(fig)
    assert layout.block == 3 and (layout.n_q, layout.n_k) == (50, 44)
    z = decode_plotly_array(_trace(_sent(fig), "attention")["z"]).astype(np.float64)
    for (li, hi), tile in _tiles(z, layout).items():
        np.testing.assert_allclose(tile, _reference_pool(p[li, hi], 3, how), rtol=1e-6, atol=0)
    assert f"each cell = 3 × 3 positions, {how}" in title_of(fig)


def test_max_pooling_keeps_a_single_sharp_peak_visible():
    p = np.zeros((1, 1, 512, 512), np.float32)
    p[0, 0, np.arange(512), np.arange(512)] = 1.0  # a "look at yourself" head
    p[0, 0, 300] = 0.0
    p[0, 0, 300, 7] = 1.0  # one query looks far back
    fig = viz.all_heads_grid(p, _toks(512), _toks(512))
    z = decode_plotly_array(_trace(_sent(fig), "attention")["z"])
    assert z.shape == (64, 64)
    assert z[300 // 8, 7 // 8] == 1.0 and np.all(np.diag(z) == 1.0)


def test_pooled_mask_grey_only_where_the_whole_block_is_masked():
    n = 100
    p = _patterns(1, 2, n, seed=2)
    causal = np.triu(np.ones((n, n), bool), 1)
    p = np.where(causal, 0, p).astype(np.float32)
    fig = viz.all_heads_grid(p, _toks(n), _toks(n), mask=causal, gutter=1)
    layout = viz.grid_layout_from_figure(fig)
    b = layout.block
    assert b == 2
    sent = _sent(fig)
    overlay = decode_plotly_array(_trace(sent, "masked")["z"])
    z = decode_plotly_array(_trace(sent, "attention")["z"]).astype(np.float64)
    expected_mask = np.array(
        [[causal[r : r + b, c : c + b].all() for c in range(0, n, b)] for r in range(0, n, b)]
    )
    for hi in range(2):
        r, c = layout.origin(0, hi)
        np.testing.assert_array_equal(overlay[r : r + 50, c : c + 50], expected_mask.astype(np.uint8))
        visible = np.where(causal, np.nan, p[0, hi])
        np.testing.assert_allclose(z[r : r + 50, c : c + 50], _reference_pool(visible, b, "max"), rtol=1e-6)


def test_short_inputs_are_not_pooled_and_send_the_same_data_as_before():
    p = _patterns(2, 3, 64, 40, seed=3)
    causal = np.triu(np.ones((64, 40), bool), 1)
    for kwargs in ({}, {"mask": causal, "hover": "full"}):
        fig = viz.all_heads_grid(p, _toks(64), _toks(40), gutter=2, **kwargs)
        # a limit far above the input cannot pool: the same figure data as before pooling existed
        ref = viz.all_heads_grid(p, _toks(64), _toks(40), gutter=2, max_tile_cells=10_000, **kwargs)
        assert viz.grid_layout_from_figure(fig).block == 1
        assert _sent(fig)["data"] == _sent(ref)["data"]
        values = p if "mask" not in kwargs else np.where(causal, np.nan, p)
        z = decode_plotly_array(_trace(_sent(fig), "attention")["z"])
        np.testing.assert_array_equal(z, viz.tile_heads(values, 2))
        assert "each cell" not in title_of(fig)


def test_pooled_grid_clicks_and_hover_map_back_to_heads_and_position_ranges():
    n_q, n_k = 200, 140
    p = _patterns(3, 4, n_q, n_k, seed=4)
    fig = viz.all_heads_grid(p, _toks(n_q), _toks(n_k), hover="full")
    layout = viz.grid_layout_from_figure(fig)
    b = layout.block
    assert b == 4 and (layout.n_q_positions, layout.n_k_positions) == (n_q, n_k)
    targets = _trace(_sent(fig), viz.CLICK_TRACE_NAME)
    cd = decode_plotly_array(targets["customdata"])
    for x, y, (li, hi) in zip(targets["x"] if isinstance(targets["x"], list) else
                              decode_plotly_array(targets["x"]),
                              decode_plotly_array(targets["y"]), cd, strict=True):
        assert viz.grid_cell_to_head(x, y, layout.n_q, layout.n_k, layout.gutter, 3, 4) == (li, hi)
    r, c = layout.origin(2, 3)
    assert layout.cell_to_position(c + 34, r + 49) == (2, 3, 49 * b, 34 * b)
    assert layout.query_range(49) == (196, 199) and layout.key_range(34) == (136, 139)
    hover_cd = decode_plotly_array(_trace(_sent(fig), "attention")["customdata"])
    assert tuple(hover_cd[r + 49, c + 34]) == (2, 3, 196, 199, 136, 139)
    assert "queries #%{customdata[2]}–%{customdata[3]}" in fig.data[-2].hovertemplate
    assert "max weight in block" in fig.data[-2].hovertemplate


def test_pooled_tiles_name_their_position_ranges():
    fig = viz.all_heads_grid(_patterns(2, 2, 130), _toks(130), _toks(130))
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[:2] == ["L0", "L1"] and ticks[2:4] == ["0–2", "129"]
    below = [a.text for a in fig.layout.annotations]
    assert below == ["0–2", "129", "0–2", "129"]


def test_chinese_pooled_grid_has_no_english_left():
    p = _patterns(2, 2, 130)
    causal = np.triu(np.ones((130, 130), bool), 1)
    for kwargs in ({"pool": "max"}, {"pool": "mean", "mask": causal, "hover": "full"}):
        fig = viz.all_heads_grid(p, _toks(130), _toks(130), lang="zh", **kwargs)
        words = [title_of(fig)] + [t.hovertemplate for t in fig.data if t.hovertemplate]
        words += [a.text for a in fig.layout.annotations] + list(fig.layout.yaxis.ticktext)
        assert "每格 = 3 × 3 个位置" in title_of(fig)
        assert not [w for w in words if untranslated(w)], words


# --------------------------------------------------------------------------- single head


def _softmax_rows(n: int, seed: int = 0, causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scores = (rng.normal(size=(n, n)) * 3).astype(np.float32)
    if causal:
        scores[np.triu(np.ones((n, n), bool), 1)] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32), scores


@pytest.mark.parametrize("causal", [False, True])
def test_single_head_json_at_512_tokens_is_at_most_3_mb(causal):
    p, s = _softmax_rows(512, causal=causal)
    fig = viz.attention_heatmap(p, _toks(512), _toks(512), s)
    size = len(pio.to_json(fig))
    assert size <= 3 * MB, size
    # every weight still travels, at full precision
    z = decode_plotly_array(_sent(fig)["data"][-1]["z"])
    np.testing.assert_array_equal(z, np.where(np.isfinite(s), p, np.nan))


def test_single_head_scores_travel_once_per_cell_for_a_window():
    p, s = _softmax_rows(512, seed=1)
    fig = viz.attention_heatmap(p, _toks(512), _toks(512), s, query_range=(100, 164), key_range=(0, 300))
    main = _sent(fig)["data"][-1]
    np.testing.assert_array_equal(decode_plotly_array(main["z"]), p[100:164, :300])
    np.testing.assert_array_equal(decode_plotly_array(main["customdata"]), s[100:164, :300])
    assert main["y"] == [f"t{i}" for i in range(100, 164)] and main["x"] == _toks(300)
    assert "queries 100–163 of 512 × keys 0–299 of 512" in title_of(fig)
    assert "%{customdata:.3f}" in main["hovertemplate"]
    # the whole 512 x 512 view leaves the score out of hover, and says so
    whole = viz.attention_heatmap(p, _toks(512), _toks(512), s)
    assert whole.data[-1].customdata is None and "score" not in whole.data[-1].hovertemplate
    assert "pre-softmax score in hover for windows of up to" in title_of(whole)


def test_threshold_hides_exactly_the_weights_below_it():
    p, s = _softmax_rows(40, seed=2, causal=True)
    fig = viz.attention_heatmap(p, _toks(40), _toks(40), s, threshold=0.05)
    z = decode_plotly_array(_sent(fig)["data"][-1]["z"])
    masked = ~np.isfinite(s)
    shown = ~masked & (p >= 0.05)
    np.testing.assert_array_equal(np.isfinite(z), shown)
    np.testing.assert_array_equal(z[shown], p[shown])
    # masked cells stay grey (overlay); hidden ones are empty (no overlay) and hover says "not shown"
    overlay = decode_plotly_array(_sent(fig)["data"][0]["z"])
    np.testing.assert_array_equal(overlay, masked.astype(np.uint8))
    assert fig.data[-1].hovertemplatefallback.startswith("<i>not shown</i>")
    assert "weights below 0.05 hidden (empty)" in title_of(fig)


@pytest.mark.parametrize("share", [0.5, 0.9, 1.0])
def test_keep_share_keeps_per_row_the_strongest_links_reaching_the_share(share):
    p, s = _softmax_rows(30, seed=3, causal=True)
    hidden = viz.hidden_cells(p, ~np.isfinite(s), keep_share=share)
    fig = viz.attention_heatmap(p, _toks(30), _toks(30), s, keep_share=share)
    z = decode_plotly_array(_sent(fig)["data"][-1]["z"])
    for i in range(30):
        row = np.where(np.isfinite(s[i]), p[i].astype(np.float64), 0.0)
        kept, total = [], 0.0
        for j in sorted(range(30), key=lambda j: (-row[j], j)):
            if total >= share * row.sum() - 1e-9 or row[j] == 0:
                break
            kept.append(j)
            total += row[j]
        expected_shown = np.zeros(30, bool)
        expected_shown[kept] = True
        np.testing.assert_array_equal(np.isfinite(z[i]), expected_shown, err_msg=f"row {i}")
        np.testing.assert_array_equal(hidden[i], ~expected_shown & np.isfinite(s[i]))
        assert p[i][expected_shown].sum() >= share - 1e-5
    assert f"holding {share:.0%} of its weight" in title_of(fig)


def test_filters_and_windows_are_checked():
    p, s = _softmax_rows(8)
    with pytest.raises(ValueError, match="not both"):
        viz.attention_heatmap(p, _toks(8), _toks(8), threshold=0.1, keep_share=0.9)
    with pytest.raises(ValueError, match="keep_share"):
        viz.attention_heatmap(p, _toks(8), _toks(8), keep_share=1.5)
    with pytest.raises(ValueError, match="query_range"):
        viz.attention_heatmap(p, _toks(8), _toks(8), query_range=(4, 9))


def test_chinese_single_head_filters_have_no_english_left():
    p, s = _softmax_rows(300, seed=4, causal=True)
    window = {"query_range": (0, 50), "key_range": (0, 60)}
    for kwargs in ({"threshold": 0.02}, {"keep_share": 0.9, **window}, {}):
        fig = viz.attention_heatmap(p, _toks(300), _toks(300), s, lang="zh", **kwargs)
        words = [title_of(fig), fig.data[-1].hovertemplate, fig.data[-1].hovertemplatefallback]
        assert not [w for w in words if untranslated(w, _toks(300))], words


# --------------------------------------------------------------------------- the other figures


def _z(sent: dict, index: int = -1) -> np.ndarray:
    return decode_plotly_array(sent["data"][index]["z"]).astype(np.float64)


def test_token_focus_grid_json_does_not_grow_with_the_sentence():
    p = _patterns(6, 12, 512)
    big = len(pio.to_json(viz.token_focus_grid(p, 300, "from", query_tokens=_toks(512))))
    small = len(pio.to_json(viz.token_focus_grid(p[:, :, :16, :16], 3, "from", query_tokens=_toks(16))))
    # one cell per head whatever the length: only the token names' own lengths may differ
    assert big <= 3 * MB and big <= small + 2_000, (big, small)


@pytest.mark.parametrize("direction", ["from", "to"])
def test_token_focus_grid_at_512_tokens_holds_each_heads_max_and_its_partner(direction):
    p = _patterns(6, 12, 512, seed=5)
    fig = viz.token_focus_grid(p, 300, direction, query_tokens=_toks(512))
    main = _sent(fig)["data"][0]
    vectors = p[:, :, 300, :] if direction == "from" else p[:, :, :, 300]
    np.testing.assert_array_equal(_z(_sent(fig), 0), vectors.max(-1))
    assert main["text"] == [[f"t{j}" for j in row] for row in vectors.argmax(-1)]


def _arc_pairs(sent: dict) -> set[tuple[int, int]]:
    pairs = set()
    for t in sent["data"]:
        if t.get("mode") == "lines":
            ys = t["y"]
            pairs |= {(int(ys[n]), int(ys[n + 1])) for n in range(0, len(ys), 3)}
    return pairs


def _reference_arcs(w: np.ndarray, min_weight: float, top_k: int, cap: int) -> set[tuple[int, int]]:
    """Plain loops: per query the top_k strongest (ties: lower key) at or above min_weight,
    then the cap strongest overall (ties: reading order)."""
    links = []
    for i in range(w.shape[0]):
        row = sorted((j for j in range(w.shape[1]) if w[i, j] >= min_weight), key=lambda j: (-w[i, j], j))
        links += [(i, j) for j in row[:top_k]]
    links.sort(key=lambda ij: (-w[ij], ij))
    return set(links[:cap])


def test_arcs_at_512_tokens_draw_at_most_8_links_per_query_and_say_what_was_dropped():
    p = _patterns(1, 1, 512, seed=6)[0, 0]
    fig = viz.attention_arcs(p, _toks(512))
    size = len(pio.to_json(fig))
    assert size <= 0.5 * MB, size
    drawn = _arc_pairs(_sent(fig))
    assert drawn == _reference_arcs(p, 0.01, 8, 4096)
    total = int((p >= 0.01).sum())
    assert total > len(drawn)
    assert f"{len(drawn):,} of the {total:,} links with weight ≥ 0.01 drawn" in title_of(fig)
    assert "at most the 8 strongest per query" in title_of(fig)


def test_arcs_hard_cap_keeps_the_strongest_links_overall():
    p = _patterns(1, 1, 300, seed=7)[0, 0]
    fig = viz.attention_arcs(p, _toks(300), min_weight=0.0, top_k=50, max_links=1000)
    drawn = _arc_pairs(_sent(fig))
    assert len(drawn) == 1000 and drawn == _reference_arcs(p, 0.0, 50, 1000)
    assert "at most 1,000 in all" in title_of(fig)
    # every drawn line sits in the weight bin whose width matches its weight
    for t in _sent(fig)["data"]:
        if t.get("mode") == "lines":
            ys = t["y"]
            weights = [p[int(ys[n]), int(ys[n + 1])] for n in range(0, len(ys), 3)]
            strength = (t["line"]["width"] - 1) / 7
            assert all(min(int(v * 8), 7) == round(strength * 8) - 1 for v in weights)


def test_arcs_of_short_inputs_draw_every_link_and_say_nothing():
    p = _patterns(1, 1, 64, seed=8)[0, 0]
    fig = viz.attention_arcs(p, _toks(64), min_weight=0.0)
    assert _arc_pairs(_sent(fig)) == {(i, j) for i in range(64) for j in range(64)}
    assert "drawn" not in title_of(fig)


def test_mean_over_heads_at_512_tokens_is_max_pooled_and_says_so():
    p = _patterns(6, 12, 512, seed=9)
    causal = np.triu(np.ones((512, 512), bool), 1)
    fig = viz.mean_over_heads_figure(p, _toks(512), _toks(512), 2, mask_2d=causal)
    size = len(pio.to_json(fig))
    assert size <= 3 * MB, size
    sent = _sent(fig)
    mean = p.mean(axis=1, dtype=np.float64).astype(np.float32)[2]
    np.testing.assert_allclose(_z(sent), _reference_pool(np.where(causal, np.nan, mean), 8, "max"), rtol=1e-6)
    overlay = decode_plotly_array(_trace(sent, "masked")["z"])
    all_masked = [[causal[r : r + 8, c : c + 8].all() for c in range(0, 512, 8)] for r in range(0, 512, 8)]
    np.testing.assert_array_equal(overlay, np.array(all_masked, np.uint8))
    assert sent["data"][-1]["y"][:2] == ["0–7", "8–15"] and sent["data"][-1]["x"][-1] == "504–511"
    assert "each cell = 8 × 8 positions, max of the block" in title_of(fig)
    assert "mean weight, max in block" in sent["data"][-1]["hovertemplate"]


def test_mean_over_heads_pools_a_mean_or_draws_a_window_cell_for_cell():
    p = _patterns(2, 3, 200, seed=10)
    mean = p.mean(axis=1, dtype=np.float64).astype(np.float32)[1]
    fig = viz.mean_over_heads_figure(p, _toks(200), _toks(200), 1, pool="mean")
    np.testing.assert_allclose(_z(_sent(fig)), _reference_pool(mean, 4, "mean"), rtol=1e-6)
    window = viz.mean_over_heads_figure(
        p, _toks(200), _toks(200), 1, query_range=(100, 164), key_range=(10, 50)
    )
    np.testing.assert_array_equal(_z(_sent(window)), mean[100:164, 10:50])
    assert "each cell" not in title_of(window)


def test_rollout_at_512_tokens_is_max_pooled():
    p = _patterns(6, 12, 512, seed=11)
    fig = viz.attention_rollout_figure(p, _toks(512))
    size = len(pio.to_json(fig))
    assert size <= 3 * MB, size
    roll = viz.attention_rollout(p).astype(np.float32)
    expected = _reference_pool(roll, 8, "max")
    np.testing.assert_allclose(_z(_sent(fig)), expected, rtol=1e-6)
    assert fig.data[-1].zmax == pytest.approx(float(roll.max()))
    assert "each cell = 8 × 8 positions, max of the block" in title_of(fig)


def test_compare_heatmaps_pool_each_long_sentence_on_its_own():
    pa, pb = _patterns(1, 1, 512, seed=12)[0, 0], _patterns(1, 1, 100, 90, seed=13)[0, 0]
    fig = viz.compare_heatmaps(pa, _toks(512), pb, _toks(100), key_tokens_b=_toks(90))
    size = len(pio.to_json(fig))
    assert size <= 3 * MB, size
    sent = _sent(fig)
    np.testing.assert_allclose(_z(sent, 0), _reference_pool(pa, 8, "max"), rtol=1e-6)
    np.testing.assert_allclose(_z(sent, 1), _reference_pool(pb, 2, "max"), rtol=1e-6)
    title = title_of(fig)
    assert "Sentence A: each cell = 8 × 8 positions" in title and "Sentence B: each cell = 2 × 2" in title


def test_compare_heatmaps_of_two_512_token_sentences_fit_in_3_mb_masked():
    pa, pb = _patterns(2, 1, 512, seed=14)[:, 0]
    causal = np.triu(np.ones((512, 512), bool), 1)
    fig = viz.compare_heatmaps(pa, _toks(512), pb, _toks(512), mask_a=causal, mask_b=causal)
    size = len(pio.to_json(fig))
    assert size <= 3 * MB, size
    expected = _reference_pool(np.where(causal, np.nan, pb), 8, "max")
    np.testing.assert_allclose(_z(_sent(fig)), expected, rtol=1e-6)


def test_chinese_pooled_figures_and_arcs_have_no_english_left():
    p = _patterns(2, 2, 130, seed=15)
    figs = [
        viz.mean_over_heads_figure(p, _toks(130), _toks(130), 0, lang="zh"),
        viz.attention_rollout_figure(p, _toks(130), pool="mean", lang="zh"),
        viz.compare_heatmaps(p[0, 0], _toks(130), p[1, 1], _toks(130), lang="zh"),
        viz.attention_arcs(p[0, 0], _toks(130), min_weight=0.0, max_links=500, lang="zh"),
    ]
    for fig in figs:
        words = [title_of(fig)] + [t.hovertemplate for t in fig.data if t.hovertemplate]
        assert not [w for w in words if untranslated(w, _toks(130))], words
    assert "每格 = 3 × 3 个位置，取块内最大值" in title_of(figs[0])
    assert "每个查询最多画最强的 8 条" in title_of(figs[3])
