"""The pitfall lab: faults switched on in the real model (the figures equal a direct run with the fault),
the model left intact, the word-order test, a real NaN, the dimensions lab's real errors, and the page
itself (AppTest) in both languages."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from app_pages.glue import pitfalls as PF
from app_support.i18n.check import untranslated
from model.lab import pitfalls as LP
from model.network.config import ConfigError, ModelConfig
from model.run.analysis import analyze, attention_only
from model.run.interventions import CausalMask, NoScaling, SoftmaxOverQueries
from model.store.registry import load_model
from model.training.presets import PITFALLS
from model.training.train import step_series
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGE = str(REPO_ROOT / "app_pages" / "pitfalls.py")
CASES = [("reverse", "attention"), ("default", "我吃了一个苹果")]
TRAINED_KEYS = ("pitfalls_trained_curves", "pitfalls_trained_map_correct", "pitfalls_trained_map_variant")


@functools.cache
def bundle(name: str):
    return load_model(name)


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array([[np.nan if v is None else v for v in row] for row in value])


def figures(at: AppTest, trained: bool = False) -> list[dict]:
    """The page's figures after the "trained with the bug" section (``trained=True``: that section's)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")
            if el.proto.id.endswith(TRAINED_KEYS) == trained]


def pattern_z(fig: dict) -> np.ndarray:
    return arr([tr for tr in fig["data"] if tr.get("name") == "pattern"][0]["z"])


def open_page(model: str, text: str, lang: str, kind: str = "encoder", layer: int = 0, head: int = 0,
              **params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "lang": lang, "kind": kind, "layer": str(layer),
                            "head": str(head), **params})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def fault_run(b, text: str, fault: str, causal_mode: str = "reversed", kind: str = "cross", layer: int = 0):
    """A fault's four runs computed here, uncached (the page composes the same from the gateway)."""
    return LP.compose_fault_run(lambda target, edits: LP.layer_run(b, text, None, target, edits, kind, layer),
                                LP.fault_edits(fault, causal_mode))


# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize("kind,layer", [("encoder", 1), ("decoder", 0), ("cross", 1)])
def test_a_layer_run_is_that_layer_of_the_whole_analysis(kind, layer):
    b = bundle("reverse")
    greedy = analyze(b, "attention")
    for target, edits in ((None, ()), (greedy.output_text, (NoScaling(),))):
        whole = analyze(b, "attention", target=target, edits=edits)
        one = LP.layer_run(b, "attention", None, target, edits, kind, layer)
        assert np.array_equal(one.pattern, whole.attention(kind)[layer])
        assert np.array_equal(one.masked, ~np.isfinite(whole.attention(kind, "scores")[layer]))
        assert (one.query_tokens, one.key_tokens) == whole.tokens_for(kind)
        assert one.output_text == whole.output_text and one.edits == whole.edits
        assert [s.prob for s in one.steps] == [s.prob for s in whole.steps]


def test_a_fully_masked_row_is_nan_in_torch_softmax_and_zero_in_the_models():
    demo = LP.masked_row_demo()
    assert np.isnan(demo.torch_softmax[1]).all() and np.isnan(demo.nan_after_values[1]).all()
    assert demo.model_softmax[1] == [0.0] * 4
    np.testing.assert_allclose(sum(demo.torch_softmax[0]), 1.0, atol=1e-6)
    assert demo.torch_softmax[0] == demo.model_softmax[0]


@pytest.mark.parametrize("name,text", CASES + [("default", "I like apples very much.")])
def test_without_positions_a_shuffled_token_keeps_its_encoder_output(name, text):
    run = LP.order_run(bundle(name), text, None, 3)
    assert sorted(run.order) == list(range(len(run.source_tokens)))
    assert run.order != sorted(run.order)
    assert [run.source_tokens[i] for i in run.order] == run.shuffled_tokens
    np.testing.assert_allclose(run.cosine["without"], 1.0, atol=1e-5)
    assert run.cosine["with"].min() < 0.99
    # the encoder without positions sees a set: the shuffled sentence translates the same
    assert run.outputs["original/without"] == run.outputs["shuffled/without"]


@pytest.mark.parametrize("name,text", CASES)
def test_truncation_shows_exactly_the_dropped_tokens(name, text):
    b = bundle(name)
    run = LP.truncation_run(b, text, None)
    assert run.dropped and len(run.kept) == b.cfg.max_len
    assert run.kept[:-1] + run.dropped == run.all_tokens
    assert "input_truncated" in [m.code for m in run.notes]


def test_dimensions_lab_errors_are_the_real_ones():
    bad = LP.dimension_run(8, 3, "batch_first")
    with pytest.raises(ConfigError) as raised:
        ModelConfig(vocab_size=LP.VOCAB, d_model=8, n_heads=3, d_ff=16, n_enc_layers=1, n_dec_layers=1,
                    dropout=0.0, max_len=8)
    assert bad.error == f"ConfigError: {raised.value}"
    good = LP.dimension_run(8, 2, "batch_first")
    assert good.error is None and good.sizes["B"] == 2 and good.sizes["L_src"] == 4 and good.sizes["h"] == 2
    assert good.sizes["d_head"] == 4
    seq = LP.dimension_run(8, 2, "seq_first")
    assert seq.sizes["B"] == 4 and seq.sizes["L_src"] == 2 and seq.logits_gap > 0
    merge = LP.dimension_run(8, 2, "merge_wrong")
    zt = torch.zeros(2, 2, 4, 4)  # [batch, head, position, d_head]
    with pytest.raises(RuntimeError) as raised:
        zt.transpose(1, 2).view(2, 4, 8)
    assert merge.merge_error == f"RuntimeError: {raised.value}"
    assert merge.merge_gap > 0 and merge.out_gap > 0
    assert LP.dimension_run(8, 1, "merge_wrong").merge_gap == 0.0


# --------------------------------------------------------------------------- the page

EDIT_CASES = [("scaling", "encoder", 1, 2, (NoScaling(),), {}),
              ("axis", "cross", 1, 1, (SoftmaxOverQueries(),), {}),
              ("causal", "decoder", 0, 3, (CausalMask("reversed"),), {"causal": "reversed"}),
              ("causal", "decoder", 1, 0, (CausalMask("off"),), {"causal": "off"})]


@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("fault,kind,layer,head,edits,extra", EDIT_CASES)
def test_the_broken_maps_are_a_direct_run_with_the_fault(model, text, fault, kind, layer, head, edits, extra):
    b = bundle(model)
    src = torch.tensor([[5, 6, 7, 8]])
    before = LP.intact_check(b)
    at = open_page(model, text, "en", kind, layer, head, fault=fault, **extra)
    after = LP.intact_check(b)
    assert torch.equal(before, after), "the page must leave the loaded model bit-identical"
    with torch.no_grad():
        assert torch.equal(b.model(src, src), b.model(src, src))
    greedy = analyze(b, text)
    intact = analyze(b, text, target=greedy.output_text)
    broken = analyze(b, text, target=greedy.output_text, edits=edits)
    figs = figures(at)
    np.testing.assert_array_equal(pattern_z(figs[0]), intact.attention(kind)[layer, head])
    np.testing.assert_array_equal(pattern_z(figs[1]), broken.attention(kind)[layer, head])
    assert not np.array_equal(pattern_z(figs[0]), pattern_z(figs[1]))
    texts = " ".join(str(m.value) for m in at.markdown)
    broken_output = analyze(b, text, edits=edits).output_text
    assert broken_output.replace(" ", "")[:3] in texts.replace("\\", "").replace(" ", "")
    if fault == "scaling":
        bars = figs[2]["data"]
        np.testing.assert_allclose(arr(bars[0]["y"]), PF.head_entropy(intact.attention(kind)[layer]))
        np.testing.assert_allclose(arr(bars[1]["y"]), PF.head_entropy(broken.attention(kind)[layer]))
        assert arr(bars[1]["y"]).mean() < arr(bars[0]["y"]).mean()
    if fault == "axis":
        p = broken.attention(kind)[layer, head].astype(np.float64)
        np.testing.assert_allclose(p.sum(-2), 1.0, atol=1e-5)
        assert ", ".join(f"{s:.3f}" for s in p.sum(-1)) in texts


def test_the_masked_row_position_and_truncation_views():
    at = open_page("reverse", "attention", "en", fault="masked_row")
    frames = [el.value for el in at.dataframe]
    assert np.isnan(frames[1].iloc[:, 1]).all() and (frames[1].iloc[:, 2] == 0).all()
    at = open_page("reverse", "attention", "en", fault="position", shuffle="5")
    run = LP.order_run(bundle("reverse"), "attention", None, 5)
    bars = figures(at)[0]["data"]
    np.testing.assert_allclose(arr(bars[0]["y"]), run.cosine["with"])
    np.testing.assert_allclose(arr(bars[1]["y"]), run.cosine["without"])
    at.button[0].click().run()
    assert at.number_input(key="pitfalls_seed").value == 6
    # what the page hands to the link (app.py writes it into the URL)
    assert at.session_state["_url_page_params"]["shuffle"] == "6"
    at = open_page("reverse", "attention", "en", fault="truncation")
    trunc = LP.truncation_run(bundle("reverse"), "attention", None)
    assert any(" · ".join(trunc.dropped) in str(m.value).replace("\\", "") for m in at.markdown)
    assert at.warning


def test_the_dimensions_lab_shows_the_real_exception_text():
    at = open_page("reverse", "attention", "en", dmodel="8", heads="3")
    try:
        ModelConfig(vocab_size=LP.VOCAB, d_model=8, n_heads=3, d_ff=16, n_enc_layers=1, n_dec_layers=1,
                    dropout=0.0, max_len=8)
    except ConfigError as e:
        message = str(e)
    assert any(message in str(el.value) for el in at.error)
    at = open_page("reverse", "attention", "en", dmodel="8", heads="2", order="merge_wrong")
    merge = LP.dimension_run(8, 2, "merge_wrong")
    assert any(merge.merge_error in str(el.value) for el in at.error)
    assert len(at.dataframe[-1].value) == len(merge.steps)


FAULT_PARAMS = [{"fault": f} for f in PF.FAULTS] + [
    {"fault": "causal", "causal": "off", "order": "seq_first"},
    {"fault": "scaling", "heads": "3", "order": "merge_wrong"},
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,text", CASES)
def test_the_page_runs_in_both_languages_and_chinese_has_no_english(model, text, lang):
    b = bundle(model)
    greedy = analyze(b, text)
    for params in FAULT_PARAMS:
        at = open_page(model, text, lang, "cross", 0, 1, **params)
        assert not at.error or params.get("heads") == "3", [e.value for e in at.error]
        if lang != "zh":
            continue
        tokens = list(greedy.source_tokens) + list(greedy.target_tokens) + [text, greedy.output_text]
        fault = params["fault"]
        if fault in PF.EDIT_FAULTS:
            run = fault_run(b, text, fault, params.get("causal", "reversed"))
            tokens += [run.broken_output, *run.broken.query_tokens, *run.broken.key_tokens]
        if fault == "position":
            run = LP.order_run(b, text, None, 0)
            tokens += run.shuffled_tokens + list(run.outputs.values())
        if fault == "truncation":
            trunc = LP.truncation_run(b, text, None)
            tokens += trunc.all_tokens + trunc.kept + [trunc.output, trunc.text]
        tokens += [w for s in list(tokens) for w in s.split()]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


# --------------------------------------------------------------------------- trained with the bug

TRAINED_CASES = [("reverse", "level", "no-causal-mask", "level"),
                 ("default", "我吃了一个苹果", "one-head", "attention"),
                 ("reverse", "attention", "no-positional-encoding", "attention")]


@pytest.mark.parametrize("model,text,variant,word", TRAINED_CASES)
def test_the_trained_section_shows_the_models_own_figures(model, text, variant, word):
    at = open_page(model, text, "en", variant=variant)
    name = f"pitfall-{variant}"
    correct, broken = bundle(PF.TRAINED_CORRECT), bundle(name)
    assert at.session_state["_url_page_params"]["variant"] == variant
    assert at.selectbox(key="pitfalls_variant").value == name
    metrics = {n: json.loads((REPO_ROOT / "assets" / "models" / n
                              / "metrics.json").read_text())["results"]["task"]["exact_match"]
               for n in (PF.TRAINED_CORRECT, name)}
    assert [m.value for m in at.metric] == [f"{metrics[PF.TRAINED_CORRECT]:.3f}", f"{metrics[name]:.3f}"]
    assert LP.test_exact_match(broken.metrics) == metrics[name]
    assert at.code[0].value == broken.info["fault_line"] and broken.info["fault_line"]
    curves, *maps = figures(at, trained=True)
    for i, b in enumerate((correct, broken)):
        series = step_series(b.history)
        for j, key in enumerate(("loss", "grad_norm")):
            trace = curves["data"][2 * j + i]
            assert trace["meta"] == ("intact", "broken")[i]
            np.testing.assert_array_equal(arr([trace["x"]])[0], series["step"])
            np.testing.assert_allclose(arr([trace["y"]])[0], np.array(series[key], dtype=float))
    assert len(maps) == 2
    for fig, b in zip(maps, (correct, broken), strict=True):
        layer, head = LP.trained_head(b)
        assert (layer, head) == (1, 0)
        # the run the section draws (attention only: one pass, equal to the whole hooked pass within 1e-5,
        # tests/model/run/test_one_pass_translation.py)
        expected = analyze(b, word, keep=attention_only).attention("cross")[layer, head]
        heat = [tr for tr in fig["data"] if tr["type"] == "heatmap"][0]
        np.testing.assert_array_equal(arr(heat["z"]), expected)


def test_trained_word_and_head_clamp():
    ref = bundle(PF.TRAINED_CORRECT)
    assert LP.trained_word(bundle("reverse"), ref, "level") == "level"
    assert LP.trained_word(bundle("default"), ref, "level") == LP.TRAINED_WORD
    assert LP.trained_word(bundle("reverse"), ref, "x" * 40) == LP.TRAINED_WORD
    assert LP.trained_head(bundle("pitfall-one-head"), 1, 3) == (1, 0)
    assert LP.trained_head(ref, 5, 3) == (1, 3)
    assert PF.TRAINED_VARIANTS == tuple(PITFALLS[1:])


@pytest.mark.parametrize("variant", ["no-causal-mask", "lr-postln-nowarmup", "one-head"])
def test_the_trained_section_in_chinese_has_no_english(variant):
    at = open_page("reverse", "attention", "zh", variant=variant)
    assert not at.error
    tokens = []
    for n in (PF.TRAINED_CORRECT, f"pitfall-{variant}"):
        run = analyze(bundle(n), "attention")
        tokens += list(run.source_tokens) + list(run.target_tokens) + [run.output_text]
    fault = fault_run(bundle("reverse"), "attention", PF.FAULTS[0])  # section 1
    tokens += [fault.broken_output, *fault.broken.query_tokens, *fault.broken.key_tokens, "attention"]
    left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
    left = {s: found for s, found in left.items() if found}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_head_entropy_is_the_mean_row_entropy_in_nats():
    rng = np.random.default_rng(3)
    p = rng.random((3, 7, 9)) ** 4
    p[:, :, :2] = 0.0  # masked keys carry weight 0 and add nothing
    p /= p.sum(-1, keepdims=True)
    rows = [[-sum(w * np.log(w) for w in row if w > 0) for row in head] for head in p]
    np.testing.assert_allclose(PF.head_entropy(p), np.mean(rows, axis=1), rtol=1e-6)
    one_hot = np.zeros((1, 4, 4))
    one_hot[0, np.arange(4), np.arange(4)] = 1.0
    uniform = np.full((1, 4, 4), 0.25)
    assert PF.head_entropy(one_hot)[0] == 0.0
    np.testing.assert_allclose(PF.head_entropy(uniform), [np.log(4)], rtol=1e-6)


def _pitfalls_entry(key: tuple) -> bool:
    return key[0].startswith("model.lab.pitfalls.layer_run")


@pytest.mark.parametrize("model,text,kind,layer", [
    ("reverse", "attention", "cross", 1),
    pytest.param("smollm2", "The cat sat on the mat", "decoder", 5, marks=pytest.mark.slow)])
def test_a_rerun_computes_nothing_and_each_fault_run_keeps_one_layer(model, text, kind, layer):
    from app_support.byte_cache import nbytes
    from app_support.gateway import RESULTS, get_analysis

    RESULTS.discard(_pitfalls_entry)  # only this page's runs are counted below
    at = open_page(model, text, "en", kind, layer, 0, fault="scaling", new="4")
    misses, hits = RESULTS.misses, RESULTS.hits
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert RESULTS.misses == misses and RESULTS.hits > hits, "a rerun with nothing new computes nothing"
    runs = [RESULTS.get(key)[1] for key in RESULTS.keys() if _pitfalls_entry(key)]
    assert len(runs) == 4  # greedy, intact and broken teacher-forced, broken greedy
    whole = get_analysis(model, text)
    # each run holds one layer of the kind: four full analyses (~140 MB each on SmolLM2 at 256 tokens)
    # thrashed the cache
    assert max(nbytes(run) for run in runs) <= 1.5 * nbytes(whole) / sum(whole.layer_counts.values())
