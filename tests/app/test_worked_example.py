"""Worked example: attention computed by hand (viz.work_row) equals what the model captured.

The hand computation is numpy float64 from the captured q, k and v; the model computes in float32.
Weights are compared to 1e-6. z is a weighted sum of value vectors, so its float32 rounding grows
with their size: it is compared to 1e-6 x the largest |v| of the head (at least 1e-6). A wrong step
(other head, unrotated q/k, no scaling, softmax over the wrong axis) is off by far more.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import viz
from app_support.i18n import text as i18n_text
from app_support.i18n.check import untranslated
from model.lab.worked import LayerTensors, layer_tensors
from model.network.kinds import KINDS
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.conftest import tiny_config
from tests.figures import title_of
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array

ROOT = REPO_ROOT
PAGE = str(ROOT / "app_pages" / "worked.py")
TIMEOUT = 300
ATOL = 1e-6


@functools.cache
def reference(name: str, text: str):
    return analyze(load_model(name), text)


def z_tolerance(v: np.ndarray) -> float:
    return ATOL * max(1.0, float(np.max(np.abs(v))))


def check_head(data: LayerTensors, head: int) -> int:
    """Every query row of one head, by hand, against the captured tensors; returns the rows checked."""
    n_q = data.q.shape[0]
    for query in range(n_q):
        key = query % data.k.shape[0]
        row = viz.work_row(data.q, data.k, data.v, head, query, key, causal=data.causal, scale=data.divisor,
                           window=data.window)
        # the mask built by hand is where the model put -inf
        np.testing.assert_array_equal(row.mask, ~np.isfinite(data.scores[head, query]))
        np.testing.assert_allclose(row.weights, data.pattern[head, query], rtol=0, atol=ATOL)
        assert np.max(np.abs(row.z - data.z[query, head])) <= z_tolerance(row.v)
        # raw and scaled scores (float32 rounding of a d_head-long sum: relative to the products' size)
        scale = ATOL * max(1.0, float(np.abs(row.k @ np.diag(row.q)).sum(axis=1).max()))
        assert np.max(np.abs(row.dots - data.raw_scores[head, query])) <= 10 * scale
        open_ = ~row.mask
        captured = data.scores[head, query][open_]
        np.testing.assert_allclose(row.masked[open_], captured, rtol=0, atol=10 * scale)
        # the per-dimension products add up to the dot product
        assert row.products.sum() == pytest.approx(row.dots[key], abs=1e-12)
        assert row.weights.sum() == pytest.approx(1.0, abs=1e-12)
    return n_q


# --------------------------------------------------------------------------- the pure computation


def test_kv_head_of():
    assert [viz.kv_head_of(h, 4, 4) for h in range(4)] == [0, 1, 2, 3]
    assert [viz.kv_head_of(h, 4, 2) for h in range(4)] == [0, 0, 1, 1]
    assert [viz.kv_head_of(h, 4, 1) for h in range(4)] == [0, 0, 0, 0]
    with pytest.raises(ValueError):
        viz.kv_head_of(0, 4, 3)
    with pytest.raises(ValueError):
        viz.kv_head_of(4, 4, 2)


def test_a_small_example_by_hand():
    """Two keys, d_head = 4: every intermediate number written out."""
    q = np.array([[[1.0, 0.0, 2.0, 0.0]], [[0.0, 1.0, 0.0, 0.0]]])  # [query_pos=2, head=1, d_head=4]
    k = np.array([[[1.0, 1.0, 1.0, 1.0]], [[0.0, 2.0, 0.0, 2.0]]])
    v = np.array([[[1.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 4.0]]])
    row = viz.work_row(q, k, v, 0, 0, 1)
    np.testing.assert_array_equal(row.products, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(row.dots, [3.0, 0.0])
    np.testing.assert_array_equal(row.scaled, [1.5, 0.0])
    assert row.max_score == 1.5
    np.testing.assert_allclose(row.exps, [1.0, np.exp(-1.5)])
    np.testing.assert_allclose(row.weights, [1 / (1 + np.exp(-1.5)), np.exp(-1.5) / (1 + np.exp(-1.5))])
    np.testing.assert_allclose(row.z, [row.weights[0], 0, 0, 4 * row.weights[1]])
    causal = viz.work_row(q, k, v, 0, 0, 1, causal=True)
    assert causal.mask.tolist() == [False, True] and causal.masked[1] == -np.inf
    assert causal.weights.tolist() == [1.0, 0.0] and causal.exps[1] == 0.0
    np.testing.assert_array_equal(causal.z, v[0, 0])
    # a fully masked row has all weights 0 (the model's masked softmax), not NaN
    none = viz.work_row(q, k, v, 0, 0, 0, mask=np.array([True, True]))
    assert none.weights.tolist() == [0.0, 0.0] and not np.isnan(none.z).any()


@pytest.mark.parametrize("name,text", [("reverse", "attention"), ("default", "我吃了一个苹果")])
def test_the_hand_computation_equals_the_shipped_models(name, text):
    result = reference(name, text)
    checked = 0
    for kind in KINDS:
        n_layers = result.layer_counts[kind]
        for layer in sorted({0, n_layers - 1}):
            data = layer_tensors(result.activations, kind, layer)
            assert not data.rope and data.n_kv_heads == data.n_heads  # the shipped models: MHA, sinusoidal
            for head in sorted({0, data.n_heads // 2, data.n_heads - 1}):
                checked += check_head(data, head)
    assert checked > 0


def _tiny_activations(**config) -> dict[str, np.ndarray]:
    torch.manual_seed(0)
    model = Transformer(tiny_config(**config)).eval()
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 40, (1, 7), generator=g)  # no padding id (0)
    tgt = torch.randint(4, 40, (1, 6), generator=g)
    with torch.no_grad():
        _, cache = model.run_with_cache(src, tgt)
    return cache.to_numpy()


@pytest.mark.parametrize("config", [
    {"pos_encoding": "rope"},
    {"n_kv_heads": 2},
    {"n_kv_heads": 1},
    {"pos_encoding": "rope", "n_kv_heads": 2},
], ids=["rope", "gqa", "mqa", "rope-gqa"])
def test_the_hand_computation_equals_tiny_rope_and_gqa_models(config):
    acts = _tiny_activations(**config)
    for kind in KINDS:
        for layer in (0, 1):
            data = layer_tensors(acts, kind, layer)
            # RoPE rotates self-attention only: cross-attention compares positions of two sequences
            assert data.rope == (config.get("pos_encoding") == "rope" and kind != "cross")
            assert data.n_kv_heads == config.get("n_kv_heads", 4)
            for head in range(data.n_heads):
                check_head(data, head)


def test_the_hand_computation_uses_the_layers_own_scaling_and_sliding_window():
    """Gemma 3-like: a local layer (window 3) and a global one, scores over 3 instead of sqrt(d_head)."""
    cfg = tiny_config(n_enc_layers=0, n_dec_layers=2, decoder_only=True, pos_encoding="rope", norm="rmsnorm",
                      qk_norm="head", branch_norm="both", sliding_window=3, layer_pattern="lg",
                      rope_local_theta=100.0, score_divisor=3.0, dropout=0.0)
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        _, cache = model.run_with_cache(torch.tensor([[5, 6, 7, 8, 9, 10, 11]]))
    acts = cache.to_numpy()
    for layer, window in ((0, 3), (1, 0)):
        data = layer_tensors(acts, "decoder", layer, model)
        assert (data.divisor, data.window) == (3.0, window)
        for head in range(data.n_heads):
            check_head(data, head)
    local = layer_tensors(acts, "decoder", 0, model)
    row = viz.work_row(local.q, local.k, local.v, 0, 6, causal=True, scale=local.divisor, window=3)
    assert row.mask.tolist() == [True] * 4 + [False] * 3 and row.scale == 3.0
    assert "÷ 3" in viz.steps_table(row, list("abcdefg")).columns
    # without the model's own numbers the hand computation would differ from the model
    plain = viz.work_row(local.q, local.k, local.v, 0, 6, causal=True)
    assert not np.allclose(plain.weights, local.pattern[0, 6], atol=1e-4)


def test_rope_uses_the_rotated_vectors_and_gqa_the_shared_head():
    """The checks above can fail: unrotated q/k, or the query head's own index as kv head, do not match."""
    data = layer_tensors(_tiny_activations(pos_encoding="rope", n_kv_heads=2), "encoder", 0)
    assert not np.allclose(data.q, data.q_unrotated)
    unrotated = viz.work_row(data.q_unrotated, data.k_unrotated, data.v, 1, 3)
    assert np.max(np.abs(unrotated.weights - data.pattern[1, 3])) > 1e-3
    # head 1 reads kv head 0; kv head 1 (what head 1 would read without sharing) gives other weights
    assert viz.work_row(data.q, data.k, data.v, 1, 3).kv_head == 0
    wrong = viz.work_row(data.q, data.k[:, ::-1], data.v[:, ::-1], 1, 3)
    assert np.max(np.abs(wrong.weights - data.pattern[1, 3])) > 1e-3


# --------------------------------------------------------------------------- tables and figures


def test_tables_elide_wide_vectors_and_keep_minus_infinity():
    data = layer_tensors(reference("default", "我吃了一个苹果").activations, "decoder", 1)
    tokens = [f"t{i}" for i in range(data.k.shape[0])]
    row = viz.work_row(data.q, data.k, data.v, 2, 1, 0, causal=True)
    wide = viz.vector_table(row.k, tokens, edge=4)
    assert list(wide.columns) == ["0", "1", "2", "3", viz.worked.ELLIPSIS, *map(str, range(28, 32))]
    np.testing.assert_array_equal(wide["29"].to_numpy(), row.k[:, 29])
    assert list(viz.vector_table(row.k, tokens, edge=None).columns) == [str(i) for i in range(32)]
    steps = viz.steps_table(row, tokens)
    masked = steps[steps.attrs["columns"]["masked"]].to_numpy()
    assert np.isneginf(masked[2:]).all() and np.isfinite(masked[:2]).all()
    np.testing.assert_array_equal(steps[steps.attrs["columns"]["weight"]].to_numpy(), row.weights)
    total = viz.weighted_sum_table(row, tokens)
    np.testing.assert_allclose(total.iloc[-1]["0"], row.z[0])
    assert total.iloc[-1, 0] == pytest.approx(1.0)
    for lang in ("en", "zh"):
        fig = viz.products_figure(row, "<b>x</b>", tokens[0], lang=lang)
        np.testing.assert_array_equal(np.asarray(fig.data[0].y), row.products)
        assert "&lt;b&gt;x&lt;/b&gt;" in title_of(fig)
        viz.weights_figure(row, tokens, lang=lang)
    zh_words = [*viz.steps_table(row, tokens, lang="zh").columns, viz.labels.label("zh", "worked.row.z")]
    zh_words += [viz.products_figure(row, "a", "b", lang="zh").layout.title.text,
                 viz.weights_figure(row, tokens, lang="zh").layout.title.text]
    assert not [w for w in zh_words if untranslated(w, ["a", "b"])]


# --------------------------------------------------------------------------- the page, standalone


def open_page(model: str, text: str, kind: str, layer: int, head: int, lang: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": text, "kind": kind, "layer": str(layer),
                            "head": str(head), "lang": lang})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


PAGE_CASES = [("reverse", "attention", "decoder", 1, 1), ("default", "我吃了一个苹果", "cross", 2, 5)]


@pytest.mark.parametrize("model,text,kind,layer,head", PAGE_CASES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_models_numbers(model, text, kind, layer, head, lang):
    at = open_page(model, text, kind, layer, head, lang)
    result = reference(model, text)
    data = layer_tensors(result.activations, kind, layer)
    query = at.selectbox(key="worked_query").value
    key = at.selectbox(key="worked_key").value
    assert query == 1 and key == int(np.argmax(data.pattern[head, query]))  # the defaults
    row = viz.work_row(data.q, data.k, data.v, head, query, key, causal=data.causal)

    # the printed check: largest absolute differences from the captured rows, all tiny
    shown = {m.label: float(m.value) for m in at.metric}
    expected = {
        "raw": np.max(np.abs(row.dots - data.raw_scores[head, query])),
        "pattern": np.max(np.abs(row.weights - data.pattern[head, query])),
        "z": np.max(np.abs(row.z - data.z[query, head])),
    }
    for name, diff in expected.items():
        printed = shown[i18n_text(lang, f"worked.check_{name}")]
        assert printed == pytest.approx(diff, rel=0.02, abs=1e-9)
    assert shown[i18n_text(lang, "worked.check_pattern")] <= ATOL
    assert at.success and not at.warning

    # the steps table holds the model's numbers
    names = {c: viz.labels.label(lang, f"worked.col.{c}", d=data.d_head) for c in ("dot", "masked", "weight")}
    steps = next(df.value for df in at.dataframe if names["weight"] in df.value.columns and names["dot"]
                 in df.value.columns)
    np.testing.assert_allclose(steps[names["dot"]].to_numpy(), data.raw_scores[head, query], atol=1e-4)
    np.testing.assert_allclose(steps[names["weight"]].to_numpy(), data.pattern[head, query], atol=ATOL)
    np.testing.assert_array_equal(np.isneginf(steps[names["masked"]].to_numpy()),
                                  ~np.isfinite(data.scores[head, query]))
    # the query vector table: the first dimensions of the captured q
    q_table = at.dataframe[0].value
    first = q_table[["0", "1", "2", "3"]].to_numpy()[0]
    np.testing.assert_allclose(first, data.q[query, head, :4], atol=1e-6)

    # the bar chart of q_i * k_i: the products, summing to the captured raw score
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    bars = decode_plotly_array(spec["data"][0]["y"])
    np.testing.assert_allclose(bars, data.q[query, head].astype(np.float64) * data.k[key, head], atol=1e-6)
    assert bars.sum() == pytest.approx(float(data.raw_scores[head, query, key]), abs=1e-4)

    if lang == "zh":
        tokens = [text, result.prepared.text, result.output_text]
        tokens += [*result.source_tokens, *result.target_tokens]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)
        assert at.title[0].value == i18n_text("zh", "worked.title")


def test_the_page_follows_the_chosen_query_and_key():
    at = open_page("reverse", "attention", "decoder", 0, 2, "en")
    at.selectbox(key="worked_query").set_value(4).run()
    at.selectbox(key="worked_key").set_value(7).run()  # after the query: masked
    assert not at.exception
    assert any(re.search(r"comes after the query", str(i.value)) for i in at.info)
    data = layer_tensors(reference("reverse", "attention").activations, "decoder", 0)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    bars = decode_plotly_array(spec["data"][0]["y"])
    np.testing.assert_allclose(bars, data.q[4, 2].astype(np.float64) * data.k[7, 2], atol=1e-6)
    assert float(at.metric[1].value) <= ATOL and at.success


@pytest.mark.parametrize("text", ["", "   ", "x" * 1000])
def test_empty_and_long_input_behave_as_on_the_other_pages(text):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": "reverse", "text": text, "kind": "encoder", "lang": "en"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    if not text.strip():
        assert [i.value for i in at.info] == [i18n_text("en", "analysis.empty")]
        assert not at.dataframe
    else:  # cut to the model's length, said in a note; the tables scroll
        assert at.warning and at.success
        assert len(at.dataframe[1].value) == len(reference("reverse", text).source_tokens)
