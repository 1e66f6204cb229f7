"""The pages that draw many heads stream them (issue 29): the numbers equal the full computation on
short inputs, and at 1,024 tokens on SmolLM2 no page step holds every head's L² at once."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import psutil
import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_support import overview
from app_support.token_display import TokenDisplay, shown_attention
from model.network.attention_stack import AttentionStack
from model.network.recorded import AttentionInputs
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from viz.grid import grid_block, pool_tiles, pooled_heads_grid

APP = str(REPO_ROOT / "app.py")
LONG_TOKENS = 1024


def _analysis(model: str, text: str):
    return analyze(load_model(model), text, keep=attention_only)


@pytest.fixture(scope="module")
def lm():
    """SmolLM2 on a causal prompt: every layer masks the future."""
    return _analysis("smollm2", "The quick brown fox jumps over the lazy dog, and the dog sleeps on.")


@pytest.fixture(scope="module")
def encoder():
    """MiniLM on one sentence: nothing is masked."""
    return _analysis("minilm", "The bank raised interest rates while we sat on the river bank.")


def _kind(result) -> str:
    return "decoder" if result.n_layers("decoder") else "encoder"


# ------------------------------------------------------------------ what shown_attention hands over
# slow: whole suite only (quick keeps the long-input tests of test_long_inputs)
@pytest.mark.slow
def test_the_model_s_own_tokens_come_as_stacks_and_nothing_is_computed(lm, monkeypatch):
    calls = []
    original = AttentionInputs.compute

    def counted(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AttentionInputs, "compute", counted)
    shown = shown_attention(lm, "decoder")
    assert isinstance(shown.pattern, AttentionStack) and isinstance(shown.scores, AttentionStack)
    assert isinstance(shown.mask, AttentionStack) and shown.mask.what == "mask"
    assert shown.any_masked == lm.masks_anything("decoder") is True
    assert not calls  # handed over as they are: computed when a page indexes them
    one = shown_attention(lm, "decoder", heads=(3, 2))
    assert len(calls) == 1 and calls[0][0] == 2  # that head alone
    scores, pattern = lm.head_attention("decoder", 3, 2)
    np.testing.assert_array_equal(one.pattern[0, 0], pattern)
    np.testing.assert_array_equal(one.mask[0, 0], np.isneginf(scores))


def test_merged_word_pieces_per_layer_equal_merging_the_whole_array(encoder):
    from viz.wordpieces import merge_pieces

    display = TokenDisplay(merge=True, special="renorm")
    shown = shown_attention(encoder, "encoder", display)
    full = np.asarray(encoder.attention("encoder"))
    expected = merge_pieces(full, shown.queries, shown.keys, renormalise=True)
    np.testing.assert_array_equal(shown.pattern, expected)
    hidden = shown_attention(encoder, "encoder", TokenDisplay(special="hide"))
    keep = [ps[0] for ps in hidden.queries.positions]
    scores = np.asarray(encoder.attention("encoder", "scores"))
    np.testing.assert_array_equal(hidden.scores, scores[:, :, keep][..., keep])


# ------------------------------------------------------------------------ all heads: pooled tiles
@pytest.mark.parametrize("pool", ["max", "mean"])
@pytest.mark.parametrize("which", ["lm", "encoder"])
def test_tiles_pooled_from_the_stream_equal_all_heads_grid_s_own_pooling(which, pool, request):
    result = request.getfixturevalue(which)
    kind = _kind(result)
    shown = shown_attention(result, kind)
    n = shown.pattern.shape[2]
    full, mask = np.asarray(shown.pattern), np.asarray(shown.mask)
    for block in (1, 3, 4):
        values, pooled_mask = overview.pooled_tiles(result, kind, shown, block, pool)
        want_values, want_mask = pool_tiles(full, mask if shown.any_masked else None, block, pool)
        np.testing.assert_array_equal(values, want_values)  # bit for bit, NaN where all masked
        if shown.any_masked:
            np.testing.assert_array_equal(pooled_mask, want_mask)
        else:
            assert pooled_mask is None
        assert values.shape[2] == -(-n // block)
    # the figure drawn from the kept tiles is all_heads_grid's figure of the whole array
    block = grid_block(n, n, 1000, shown.pattern.shape[1], max_tile_cells=6)
    values, pooled_mask = overview.pooled_tiles(result, kind, shown, block, pool)
    tokens = shown.query_tokens
    drawn = pooled_heads_grid(values, pooled_mask, block, tokens, tokens, pool=pool)
    whole = viz.all_heads_grid(full, tokens, tokens, mask=mask if shown.any_masked else None, pool=pool,
                               max_tile_cells=6)
    assert drawn.to_json() == whole.to_json()


def test_blocks_of_rows_pool_to_the_same_tiles_as_a_whole_layer(lm):
    shown = shown_attention(lm, "decoder")
    n_heads, n = shown.pattern.shape[1:3]
    row_bytes = 4 * 3 * n_heads * n  # what AttentionInputs.row_blocks counts per query row
    for block in (2, 3):
        blocks = list(overview.row_blocks(shown.pattern, 5, block, max_bytes=5 * row_bytes))
        assert len(blocks) > 2 and all((b.stop - b.start) % block == 0 for b in blocks[:-1])
        assert blocks[0].start == 0 and blocks[-1].stop == n
        streamed = overview.pool_layer(shown, 5, block, "max", max_bytes=5 * row_bytes)
        layer, mask = np.asarray(shown.pattern[5]), np.asarray(shown.mask[5])
        whole = pool_tiles(layer, mask, block, "max")
        # recomputed a block of rows at a time: the products differ from the whole layer's in the last bit
        np.testing.assert_allclose(streamed[0], whole[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(streamed[1], whole[1])
        # the same weights pooled a block of rows at a time: bit for bit the whole layer's tiles
        for how in ("max", "mean"):
            parts = [pool_tiles(layer[:, b], mask[:, b], block, how) for b in blocks]
            np.testing.assert_array_equal(np.concatenate([v for v, _ in parts], axis=-2),
                                          pool_tiles(layer, mask, block, how)[0])


def test_tiles_are_computed_once_per_input_and_block(lm, monkeypatch):
    shown = shown_attention(lm, "decoder")
    first = overview.pooled_tiles(lm, "decoder", shown, 5)
    monkeypatch.setattr(overview, "pool_layer", lambda *a, **k: pytest.fail("pooled again"))
    assert overview.pooled_tiles(lm, "decoder", shown, 5) is first
    assert not first[0].flags.writeable


def test_a_page_of_layers_pools_those_layers_once_and_keeps_each_page(lm, monkeypatch):
    shown = shown_attention(lm, "decoder")
    whole = overview.pooled_tiles(lm, "decoder", shown, 3)
    pooled = []
    original = overview.pool_layer

    def counted(shown, layer, *args, **kwargs):
        pooled.append(layer)
        return original(shown, layer, *args, **kwargs)

    monkeypatch.setattr(overview, "pool_layer", counted)
    page = overview.pooled_tiles(lm, "decoder", shown, 3, layers=range(8, 16))
    assert pooled == list(range(8, 16))  # the shown layers only
    np.testing.assert_array_equal(page[0], whole[0][8:16])
    np.testing.assert_array_equal(page[1], whole[1][8:16])
    other = overview.pooled_tiles(lm, "decoder", shown, 3, layers=range(16, 24))
    assert pooled == list(range(8, 24))
    assert overview.pooled_tiles(lm, "decoder", shown, 3, layers=range(8, 16)) is page  # back: kept
    assert overview.pooled_tiles(lm, "decoder", shown, 3, layers=range(16, 24)) is other
    assert pooled == list(range(8, 24))


@pytest.mark.parametrize("model, tokens", [("tiny-gpt", 60), ("smollm2", 400)])
def test_tiles_pooled_from_the_scores_of_a_long_input_equal_the_full_layers_pooling(model, tokens):
    bundle = load_model(model)
    words = ("the quick brown fox jumps over the lazy dog " * 80).split()
    text = next(" ".join(words[:n]) for n in range(1, len(words))
                if len(bundle.task.prepare(" ".join(words[:n]), bundle.cfg.max_len).prefix) >= tokens)
    result = analyze(bundle, text, keep=attention_only, max_new=0)
    shown = shown_attention(result, "decoder")
    n_layers, n_heads, n = shown.pattern.shape[:3]
    assert n >= tokens
    for block in (1, 5, grid_block(n, n, 1150, n_heads)):
        for layer in sorted({0, n_layers // 2, n_layers - 1}):
            values, mask = overview.pool_layer(shown, layer, block)  # from the scores, rows in blocks
            full = np.asarray(shown.pattern[layer])  # today's: the whole layer's pattern, then pooled
            want_values, want_mask = pool_tiles(full, np.asarray(shown.mask[layer]), block, "max")
            np.testing.assert_allclose(values, want_values, rtol=0, atol=1e-6)
            np.testing.assert_array_equal(np.isnan(values), np.isnan(want_values))
            np.testing.assert_array_equal(mask, want_mask)


# ---------------------------------------------------------------------- token focus: one row / column
@pytest.mark.parametrize("which", ["lm", "encoder"])
def test_focus_rows_and_columns_streamed_equal_the_full_computation(which, request):
    result = request.getfixturevalue(which)
    kind = _kind(result)
    shown = shown_attention(result, kind)
    full = np.asarray(shown.pattern)
    n = full.shape[2]
    for side in ("from", "to"):
        for index in (0, n // 2, n - 1):
            values, partners = overview.focus_values(result, kind, shown, side, index)
            want_values, _ = viz.token_focus_values(full, index, side)
            # one row recomputed alone: its products differ from the whole layer's in the last bit
            np.testing.assert_allclose(values, want_values, rtol=1e-5, atol=1e-6)
            vectors = full[:, :, index] if side == "from" else full[..., index]  # [layer, head, other]
            picked = np.take_along_axis(vectors, partners[..., None], axis=-1)[..., 0]
            np.testing.assert_allclose(picked, want_values, rtol=1e-5, atol=1e-6)  # a strongest partner
    tokens = shown.query_tokens
    values, partners = viz.token_focus_values(full, 2, "to")
    assert (viz.focus.focus_grid_of_values(values, partners, 2, "to", query_tokens=tokens).to_json()
            == viz.token_focus_grid(full, 2, "to", query_tokens=tokens).to_json())


def test_focus_on_merged_word_pieces_equals_the_merged_array_bit_for_bit(encoder):
    shown = shown_attention(encoder, "encoder", TokenDisplay(merge=True, special="hide"))
    assert isinstance(shown.pattern, np.ndarray)
    for side in ("from", "to"):
        for index in range(shown.pattern.shape[2]):
            got = overview.focus_values(encoder, "encoder", shown, side, index)
            want = viz.token_focus_values(shown.pattern, index, side)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


# ---------------------------------------------------------------------------- compare: the ranking
# slow: in the whole suite only (the quick subset keeps the streamed heads, focus and stats at length)
@pytest.mark.slow
def test_the_ranking_streamed_equals_the_whole_arrays_ranking():
    a = _analysis("smollm2", "The bank raised interest rates.")
    b = _analysis("smollm2", "We sat on the river bank.")
    shown_a, shown_b = shown_attention(a, "decoder"), shown_attention(b, "decoder")
    qa, qb = shown_a.query_tokens, shown_b.query_tokens
    full_a, full_b = np.asarray(shown_a.pattern), np.asarray(shown_b.pattern)
    for token in (" bank", "."):
        streamed = overview.rank_heads_streamed(shown_a, shown_b, token)
        pd.testing.assert_frame_equal(streamed, viz.rank_heads_by_change(full_a, qa, full_b, qb, token))
        assert len(streamed) == 30 * 9 and streamed["js_divergence"].iloc[0] > 0
    pd.testing.assert_frame_equal(overview.rank_heads_streamed(shown_a, shown_b),
                                  viz.rank_heads_by_change(full_a, qa, full_b, qb))
    with pytest.raises(ValueError, match="does not occur"):
        overview.rank_heads_streamed(shown_a, shown_b, "zebra")


# ----------------------------------------------------------- 1,024 tokens on SmolLM2, in the app
def long_prompt(tokens: int = LONG_TOKENS) -> str:
    """English SmolLM2 reads as ``tokens`` prompt tokens."""
    bundle = load_model("smollm2")
    sentence = "The quick brown fox jumps over the lazy dog. "
    text = sentence * (tokens // 10)
    while len(bundle.task.prepare(text, bundle.cfg.max_len).prefix) < tokens:
        text += "dog "
    assert len(bundle.task.prepare(text, bundle.cfg.max_len).prefix) == tokens
    return text


class PeakRss:
    """The process's largest resident memory above where it started, sampled every 5 ms."""

    def __enter__(self) -> PeakRss:
        self._proc = psutil.Process()
        self.start = self.peak = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.growth = self.peak - self.start


#: Memory a page step may add at 1,024 tokens: every head's float32 pattern alone would be 1.1 GB.
MAX_GROWTH = 400 * 2**20
PAGES = ("single", "heads", "focus", "compare")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_head_pages_at_1024_tokens_stream_within_bounded_memory(lang, monkeypatch):
    from app_support import gateway as G

    text = long_prompt()
    other = text.replace("lazy", "sleepy")
    at = AppTest.from_file(APP, default_timeout=900)
    at.query_params.update({"model": "smollm2", "text": text, "lang": lang, "layer": "17", "head": "4"})
    at.run()  # the analyses, cached for the pages (not what is measured)
    assert not at.exception, [e.message for e in at.exception]
    G.get_analysis("smollm2", other)
    for page in PAGES:
        if page == "compare":
            at.query_params.update({"a": text, "b": other, "token": " fox"})
        with PeakRss() as first:
            at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
        with PeakRss() as again:
            at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert max(first.growth, again.growth) < MAX_GROWTH, (page, first.growth, again.growth)
        assert at.get("plotly_chart"), page
    # A new session on the same input draws the kept tiles: nothing is pooled again; under 3 MB.
    monkeypatch.setattr(overview, "pool_layer", lambda *a, **k: pytest.fail("the tiles were pooled again"))
    at = AppTest.from_file(APP, default_timeout=900)
    at.query_params.update({"model": "smollm2", "text": text, "lang": lang})
    at.run()
    at.switch_page("app_pages/heads.py").run()
    assert not at.exception, [e.message for e in at.exception]
    sizes = [len(el.proto.spec) for el in at.get("plotly_chart")]
    assert sizes and sum(sizes) <= 3_000_000, sizes


def test_shown_attention_says_whether_anything_is_masked_and_keeps_the_mask_exact():
    encoder = analyze(load_model("reverse"), "attention")
    shown = shown_attention(encoder, "encoder")
    assert not shown.any_masked and not shown.mask.any() and shown.mask.shape == shown.pattern.shape
    decoder = analyze(load_model("reverse"), "attention")
    shown = shown_attention(decoder, "decoder")
    assert shown.any_masked
    np.testing.assert_array_equal(shown.mask, np.isneginf(decoder.attention("decoder", "scores")))
    one = shown_attention(decoder, "decoder", heads=(0, 1))
    np.testing.assert_array_equal(one.mask[0, 0], np.isneginf(decoder.attention("decoder", "scores")[0, 1]))
