"""The masks page: masks of a real padded batch, the recorded patterns behind them, the causal mask
switched off, and the page itself (run on its own with AppTest) in both languages."""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_support.i18n.check import untranslated
from model.lab.masks import causal_demo_run, default_other, padded_batch
from model.run.analysis import analyze
from model.run.interventions import CausalMask
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGE = str(REPO_ROOT / "app_pages" / "masks.py")
CASES = [("reverse", "attention"), ("default", "我吃了一个苹果"), ("default", "I like apples.")]


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def batch_of(name: str, text: str):
    b = bundle(name)
    return padded_batch(b, [text, default_other(b, text)])


def no_causal(b, text: str, target: str):
    """The reference: the whole teacher-forced analysis with the causal mask off, every layer kept."""
    return analyze(b, text, target=target, edits=(CausalMask("off"),))


# --------------------------------------------------------------------------- pure functions


@pytest.mark.parametrize("name,text", CASES)
def test_the_default_second_sentence_needs_padding(name, text):
    batch = batch_of(name, text)
    assert batch.source_lengths[0] != batch.source_lengths[1]
    if bundle(name).task.directions:  # same language as the input
        assert batch_of(name, text).texts[1].isascii() == text.isascii()


@pytest.mark.parametrize("name,text", CASES)
def test_padding_masks_are_the_pad_ids_of_the_padded_batch(name, text):
    batch = batch_of(name, text)
    for ids, padding, lengths in ((batch.source_ids, batch.source_padding, batch.source_lengths),
                                  (batch.target_ids, batch.target_padding, batch.target_lengths)):
        assert padding.dtype == bool and padding.shape == ids.shape
        np.testing.assert_array_equal(padding, ids == batch.pad_id)
        # right padding: exactly the positions after each sentence's own length
        positions = np.arange(ids.shape[1])
        np.testing.assert_array_equal(padding, positions[None, :] >= np.array(lengths)[:, None])
        assert padding.any(), "one of the two sentences is shorter, so it is padded"
        assert [tok == "<pad>" for tok in batch.source_tokens[0]] == batch.source_padding[0].tolist()


@pytest.mark.parametrize("name,text", CASES)
def test_the_causal_mask_is_the_strict_upper_triangle(name, text):
    batch = batch_of(name, text)
    n = batch.target_ids.shape[1]
    np.testing.assert_array_equal(batch.causal, np.triu(np.ones((n, n), bool), 1))
    # the decoder's mask is the causal mask OR the padding of the keys, for each sentence
    for i in range(2):
        src_pad, tgt_pad = batch.source_padding[i][None, :], batch.target_padding[i][None, :]
        np.testing.assert_array_equal(batch.masks["decoder"][i], batch.causal | tgt_pad)
        for kind in ("encoder", "cross"):
            got = batch.masks[kind][i]
            np.testing.assert_array_equal(got, np.broadcast_to(src_pad, got.shape))


@pytest.mark.parametrize("name,text", CASES)
def test_recorded_patterns_are_zero_exactly_where_masked_and_rows_sum_to_one(name, text):
    batch = batch_of(name, text)
    for kind, mask in batch.masks.items():
        pattern, scores = batch.patterns[kind], batch.scores[kind]  # [sentence, layer, head, q, k]
        full = np.broadcast_to(mask[:, None, None], pattern.shape)
        np.testing.assert_array_equal(~np.isfinite(scores), full)  # the model masked exactly these cells
        assert (pattern[full] == 0).all(), kind
        assert (pattern[~full] > 0).all(), kind
        np.testing.assert_allclose(pattern.astype(np.float64).sum(-1), 1.0, atol=1e-6)
        np.testing.assert_allclose(viz.row_sums(pattern[0, 0, 0]), 1.0, atol=1e-6)


@pytest.mark.parametrize("name,text", CASES[:2])
def test_the_batch_is_what_the_model_records_for_each_sentence_alone(name, text):
    # padding changes nothing for the real tokens: sentence A's weights equal its unpadded analysis
    batch = batch_of(name, text)
    alone = analyze(bundle(name), text)
    assert batch.outputs[0] == alone.output_text
    n_src, n_tgt = batch.source_lengths[0], batch.target_lengths[0]
    sizes = {"encoder": (n_src, n_src), "decoder": (n_tgt, n_tgt), "cross": (n_tgt, n_src)}
    for kind, (nq, nk) in sizes.items():
        np.testing.assert_allclose(batch.patterns[kind][0][..., :nq, :nk], alone.attention(kind), atol=1e-5)


@pytest.mark.parametrize("name,text", CASES[:2])
def test_causal_mask_off_sees_the_future_and_leaves_the_model_intact(name, text):
    b = bundle(name)
    greedy = analyze(b, text)
    before = analyze(b, text, target=greedy.output_text)
    off = no_causal(b, text, greedy.output_text)
    after = analyze(b, text, target=greedy.output_text)
    assert off.edits and off.target_tokens == before.target_tokens
    scores, pattern = off.attention("decoder", "scores"), off.attention("decoder")
    assert np.isfinite(scores).all(), "no cell of decoder self-attention is masked"
    upper = np.triu(np.ones(pattern.shape[-2:], bool), 1)
    future = (pattern * upper).sum(axis=(-1, -2))  # [layer, head]
    assert (future > 0).all(), "every head puts weight on the future"
    assert (pattern[..., upper] > 0).any()
    first = pattern[0, 0].astype(np.float64)
    np.testing.assert_array_equal(viz.future_weight(pattern[0, 0]), np.triu(first, 1).sum(1))
    # intact before and after: bit-identical, and causal (future exactly 0)
    for key, value in before.activations.items():
        assert np.array_equal(value, after.activations[key]), key
    assert (before.attention("decoder")[..., upper] == 0).all()
    assert [s.token for s in before.steps] == [s.token for s in off.steps]
    assert any(a.prob != o.prob for a, o in zip(before.steps, off.steps, strict=True))
    # what the page draws keeps one layer: exactly that layer of the whole analyses, and their steps
    layer = off.n_layers("decoder") - 1
    for causal_off, whole in ((False, before), (True, off)):
        run = causal_demo_run(b, text, None, greedy.output_text, layer, causal_off)
        assert np.array_equal(run.pattern, whole.attention("decoder")[layer])
        assert np.array_equal(run.masked, ~np.isfinite(whole.attention("decoder", "scores")[layer]))
        assert run.query_tokens == whole.target_tokens and run.edits == whole.edits
        assert [(s.token, s.prob, s.top_ids) for s in run.steps] == [(s.token, s.prob, s.top_ids)
                                                                     for s in whole.steps]


# --------------------------------------------------------------------------- the page


def open_page(model: str, text: str, kind: str, layer: int, head: int, lang: str,
              off: bool = True) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "kind": kind, "layer": str(layer),
                            "head": str(head), "lang": lang})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    if off:
        at.toggle(key="masks_causal_off").set_value(True).run()
        assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array([[np.nan if v is None else v for v in row] for row in value])


def trace(fig: dict, name: str) -> dict:
    found = [tr for tr in fig["data"] if tr.get("name") == name]
    assert found, [tr.get("name") for tr in fig["data"]]
    return found[0]


def title(fig: dict) -> str:
    t = fig.get("layout", {}).get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


PAGE_CASES = [("reverse", "attention", "decoder", 1, 2), ("default", "我吃了一个苹果", "cross", 1, 3),
              ("reverse", "attention", "encoder", 0, 1)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,text,kind,layer,head", PAGE_CASES)
def test_the_page_draws_the_models_numbers(model, text, kind, layer, head, lang):
    at = open_page(model, text, kind, layer, head, lang)
    figs = figures(at)
    assert len(figs) == 8, [title(f) for f in figs]
    causal, mask_a, mask_b, pattern_a, pattern_b, with_mask, without_mask, bars = figs
    batch = batch_of(model, text)  # the page's default second sentence
    batch_one = padded_batch(bundle(model), [text, default_other(bundle(model), text)], with_scores=False,
                             kind=kind, layer=layer)
    assert set(batch_one.patterns) == {kind} and batch_one.patterns[kind].shape[1] == 1
    # the masks, as 0/1 matrices
    np.testing.assert_array_equal(arr(causal["data"][0]["z"]), batch.causal.astype(np.uint8))
    for i, fig in enumerate((mask_a, mask_b)):
        np.testing.assert_array_equal(arr(fig["data"][0]["z"]), batch.masks[kind][i].astype(np.uint8))
    # the recorded weights, exactly, with the grey overlay on the masked cells and the row sums printed
    for i, fig in enumerate((pattern_a, pattern_b)):
        want = batch.patterns[kind][i, layer, head]
        assert np.array_equal(batch_one.head_pattern(kind, i, layer, head), want)
        got = arr(trace(fig, "pattern")["z"])
        np.testing.assert_array_equal(got, want)
        mask = batch.masks[kind][i]
        if mask.any():
            overlay = arr(trace(fig, "masked")["z"])
            np.testing.assert_array_equal(np.isfinite(overlay), mask)
            assert (got[mask] == 0).all()
        sums = [float(re.search(r"[-0-9.]+$", a["text"]).group(0)) for a in fig["layout"]["annotations"]]
        np.testing.assert_allclose(sums, want.astype(np.float64).sum(-1), atol=1e-6)
        np.testing.assert_allclose(sums, 1.0, atol=1e-6)
    # the demonstration: the same head with and without the causal mask
    intact = analyze(bundle(model), text)
    tf = analyze(bundle(model), text, target=intact.output_text)
    off = no_causal(bundle(model), text, intact.output_text)
    dec_layer = min(layer, tf.n_layers("decoder") - 1)
    np.testing.assert_array_equal(arr(trace(with_mask, "pattern")["z"]),
                                  tf.attention("decoder")[dec_layer, head])
    np.testing.assert_array_equal(arr(trace(without_mask, "pattern")["z"]),
                                  off.attention("decoder")[dec_layer, head])
    notes = without_mask["layout"]["annotations"]
    future = [float(re.search(r"[-0-9.]+$", a["text"]).group(0)) for a in notes]
    want_future = viz.future_weight(off.attention("decoder")[dec_layer, head])
    np.testing.assert_allclose(future, want_future, atol=5e-4)
    assert max(future) > 0
    bar_with = [tr for tr in bars["data"] if tr.get("meta") == "with"][0]
    bar_without = [tr for tr in bars["data"] if tr.get("meta") == "without"][0]
    np.testing.assert_allclose(arr(bar_with["y"]), [s.prob for s in tf.steps], rtol=1e-6)
    np.testing.assert_allclose(arr(bar_without["y"]), [s.prob for s in off.steps], rtol=1e-6)
    # the page says it is a demonstration, and that greedy decoding has no future to see
    from app_support.i18n import text as tr_text
    boxes = [str(w.value) for w in at.warning] + [str(m.value) for m in at.markdown]
    assert tr_text(lang, "masks.demo.label") in boxes
    assert tr_text(lang, "masks.demo.greedy") in boxes
    if lang == "zh":
        tokens = (list(intact.source_tokens) + list(intact.target_tokens) + list(off.target_tokens)
                  + [tok for side in (batch.source_tokens, batch.target_tokens)
                     for row in side for tok in row]
                  + [text, intact.output_text, *batch.texts, *batch.outputs])
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_the_page_without_the_switch_shows_the_intact_head_only():
    at = open_page("reverse", "attention", "decoder", 0, 0, "en", off=False)
    figs = figures(at)
    assert len(figs) == 6  # causal, two masks, two patterns, the intact decoder head
    from app_support.i18n import text as tr_text
    assert tr_text("en", "masks.demo.off_hint") in [str(i.value) for i in at.info]
    # the padded batch's outputs are greedy: said under them
    from app_support.strategy import greedy_here
    from model.decoding.strategy import GREEDY
    assert greedy_here("batch", GREEDY, "en") in [c.value for c in at.caption]


def test_a_second_sentence_of_the_same_length_says_there_is_no_padding():
    at = open_page("reverse", "attention", "encoder", 0, 0, "en", off=False)
    at.text_input(key="masks_other").set_value("abcdefghi").run()
    assert not at.exception
    from app_support.i18n import text as tr_text
    infos = [str(i.value) for i in at.info]
    assert tr_text("en", "masks.same_length", side=tr_text("en", "masks.side.source")) in infos


# --------------------------------------------------------------------------- long inputs: pooled figures


def _random_head(n: int, pad_from: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A softmax pattern [n, n] whose keys from ``pad_from`` on are masked (weight 0), and that mask."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n, n))
    mask = np.zeros((n, n), bool)
    mask[:, pad_from:] = True
    scores[mask] = -np.inf
    p = np.exp(scores - scores.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)).astype(np.float32), mask


@pytest.mark.parametrize("n,pad_from", [(512, 300), (130, 97)])
def test_long_masks_and_patterns_are_pooled_blocks_of_the_full_matrices(n, pad_from):
    from viz.pooling import MAX_TILE_CELLS, block_size, pool_blocks, pool_mask

    pattern, mask = _random_head(n, pad_from)
    tokens = [f"t{i}" for i in range(n)]
    block = block_size(n, n, MAX_TILE_CELLS)
    assert block > 1
    mask_fig = viz.mask_matrix(mask, tokens, tokens).to_plotly_json()
    z = arr(mask_fig["data"][0]["z"])
    np.testing.assert_array_equal(z, pool_blocks(mask.astype(np.float32), block, "mean"))
    assert z.shape == ((n + block - 1) // block,) * 2
    assert ((z > 0) & (z < 1)).any()  # a block straddling the first masked key: partly masked
    assert f"{block} × {block}" in json.dumps(mask_fig["layout"], ensure_ascii=False)
    fig = viz.pattern_with_row_sums(pattern, tokens, tokens, mask).to_plotly_json()
    np.testing.assert_array_equal(arr(trace(fig, "pattern")["z"]), pool_blocks(pattern, block, "max"))
    np.testing.assert_array_equal(np.isfinite(arr(trace(fig, "masked")["z"])), pool_mask(mask, block))
    assert f"{block} × {block}" in json.dumps(fig["layout"], ensure_ascii=False)
    notes = fig["layout"]["annotations"]
    assert len(notes) == len(fig["data"][0]["y"]) == z.shape[0]
    sums = pattern.astype(np.float64).sum(-1)
    for i, note in enumerate(notes):
        low, high = (float(v) for v in re.findall(r"[0-9]+\.[0-9]+", note["text"]))
        rows = sums[i * block:(i + 1) * block]
        assert low == pytest.approx(rows.min(), abs=1e-6) and high == pytest.approx(rows.max(), abs=1e-6)
    # at the threshold every position is still drawn
    small, small_mask = _random_head(MAX_TILE_CELLS, MAX_TILE_CELLS // 2)
    toks = tokens[:MAX_TILE_CELLS]
    small_fig = viz.mask_matrix(small_mask, toks, toks).to_plotly_json()
    np.testing.assert_array_equal(arr(small_fig["data"][0]["z"]), small_mask.astype(np.uint8))
    np.testing.assert_array_equal(
        arr(trace(viz.pattern_with_row_sums(small, toks, toks, small_mask).to_plotly_json(), "pattern")["z"]),
        small)


# --------------------------------------------------------------------------- a decoder-only language model

LM_PAGE_CASES = [("induction", "qhzmtvbqhzm", 1, 2),
                 pytest.param("smollm2", "The cat sat on the mat", 5, 3, marks=pytest.mark.slow)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,text,layer,head", LM_PAGE_CASES)
def test_the_page_on_a_language_model_draws_its_right_and_left_padded_batch(model, text, layer, head, lang):
    from app_support.i18n import text as tr_text

    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "kind": "decoder", "layer": str(layer),
                            "head": str(head), "lang": lang, "new": "4"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    at.toggle(key="masks_causal_off").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    figs = figures(at)
    assert len(figs) == 10, [title(f) for f in figs]
    causal, mask_a, mask_b, pattern_a, pattern_b, left_run, left_masked, with_mask, without_mask, _ = figs
    b = bundle(model)
    batch = padded_batch(b, [text, default_other(b, text)], max_new=4)
    np.testing.assert_array_equal(arr(causal["data"][0]["z"]), batch.causal.astype(np.uint8))
    for i, (mask_fig, pattern_fig) in enumerate(((mask_a, pattern_a), (mask_b, pattern_b))):
        want_mask = batch.masks["decoder"][i].astype(np.uint8)
        np.testing.assert_array_equal(arr(mask_fig["data"][0]["z"]), want_mask)
        np.testing.assert_array_equal(arr(trace(pattern_fig, "pattern")["z"]),
                                      batch.patterns["decoder"][i, layer, head])
    short = int(np.argmin(batch.target_lengths))
    for fig, patterns in ((left_run, batch.left.as_run), (left_masked, batch.left.masked)):
        np.testing.assert_array_equal(arr(trace(fig, "pattern")["z"]), patterns[short, layer, head])
    overlay = arr(trace(left_masked, "masked")["z"])
    np.testing.assert_array_equal(np.isfinite(overlay), batch.left.with_padding[short])
    intact = analyze(b, text, max_new=4)
    off = no_causal(b, text, intact.output_text)
    np.testing.assert_array_equal(arr(trace(without_mask, "pattern")["z"]),
                                  off.attention("decoder")[layer, head])
    shown = [str(m.value) for m in at.markdown] + [str(c.value) for c in at.caption]
    assert tr_text(lang, "masks.demo.lm") in shown
    assert tr_text(lang, "masks.lm.right_equal", a=f"{batch.right_diff[0]:.1e}",
                   b=f"{batch.right_diff[1]:.1e}") in shown
    assert any(tr_text(lang, "masks.lm.left_rope") in s for s in shown)  # both models are rotary
    no_mask = tr_text(lang, "masks.kind_caption.lm_no_padding")
    assert any(no_mask in s for s in shown) == (not batch.masks_padding)
    if lang == "zh":
        tokens = [tok for row in batch.target_tokens + batch.left.tokens for tok in row]
        tokens += list(off.target_tokens) + [text, intact.output_text, *batch.texts, *batch.outputs]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def _masks_entry(key: tuple) -> bool:
    return key[0].startswith("model.lab.masks.")


@pytest.mark.parametrize("model,text,layer,head", LM_PAGE_CASES)
def test_a_rerun_computes_nothing_and_keeps_a_few_layers_whatever_the_depth(model, text, layer, head):
    from app_support.byte_cache import nbytes
    from app_support.gateway import RESULTS, get_analysis

    RESULTS.discard(_masks_entry)  # only this page's results are counted below
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "kind": "decoder", "layer": str(layer),
                            "head": str(head), "lang": "en", "new": "4"})
    at.run()
    at.toggle(key="masks_causal_off").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    misses, hits = RESULTS.misses, RESULTS.hits
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert RESULTS.misses == misses and RESULTS.hits > hits, "a rerun with nothing new computes nothing"
    start = get_analysis(model, text, max_new=4)  # the analysis every page shares
    own = sum(nbytes(RESULTS.get(key)[1]) for key in RESULTS.keys() if _masks_entry(key))
    # every layer of the batch's three runs and of the demo's two was 20 layers' worth of the start
    # analysis on induction, 300 on SmolLM2 (thrashing the cache); one layer each is under six
    assert own <= 6 * nbytes(start) / start.n_layers("decoder")
