"""The model-vs-model page through the app, opened by link in both languages: its map holds the lab's
distances (themselves tied to the models by tests/model/lab/test_versus.py), the two heatmaps hold the
two models' own patterns of the heads the link names, models of other tokenizers are refused in one
sentence, and the Chinese page shows no English."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n.check import untranslated
from model.lab import versus as V
from model.network.kinds import hook_name
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

APP = str(REPO_ROOT / "app.py")
PAGE = page_registry.page("versus").file


@functools.cache
def bundle(name: str):
    return load_model(name)


def open_versus(model: str, text: str, lang: str, kind: str, **params: str) -> AppTest:
    """As a shared link would: the app first, then the page with its own parameters put back."""
    at = AppTest.from_file(APP, default_timeout=300)
    base = {"model": model, "text": text, "lang": lang, "kind": kind, "layer": "0", "head": "0"}
    at.query_params.update(base)
    at.run()
    at.query_params.update(params)
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> dict[str, dict]:
    return {el.proto.id.rsplit("-", 1)[-1]: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value).astype(np.float64)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=np.float64)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_shows_the_lab_distances_and_the_heads_the_link_names(lang):
    a, b, text, kind = "reverse", "pitfall-no-scaling", "attention", "cross"
    at = open_versus(a, text, lang, kind, other=b, pair="1.2-0.3")
    assert at.query_params["other"] == b and at.query_params["pair"] == "1.2-0.3"
    want = V.compare(bundle(a), bundle(b), text, None, kind)
    figs = figures(at)
    same, nearest = (arr(figs[f"versus_map_{m}"]["data"][0]["z"]) for m in ("same", "nearest"))
    np.testing.assert_allclose(same, want.match.same_position, atol=1e-6)
    np.testing.assert_allclose(nearest, want.match.nearest_distance, atol=1e-6)
    pattern_a = analyze(bundle(a), text).activations[hook_name(kind, 1, "pattern")][0][2]
    pattern_b = analyze(bundle(b), text).activations[hook_name(kind, 0, "pattern")][0][3]
    weights = [tr for tr in figs["versus_head_a"]["data"] if tr.get("type") == "heatmap"][-1]
    np.testing.assert_allclose(arr(weights["z"]), pattern_a, atol=1e-6)
    weights = [tr for tr in figs["versus_head_b"]["data"] if tr.get("type") == "heatmap"][-1]
    np.testing.assert_allclose(arr(weights["z"]), pattern_b, atol=1e-6)
    assert [s.value for s in at.selectbox if s.key in ("versus_a", "versus_b")] == ["L1H2", "L0H3"]
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 8  # one row per head of A
    if lang == "zh":
        # B's menu labels start with the model's name (a name, not words to translate)
        names = [str(o).split(" · ")[0] for o in at.selectbox(key="versus_other").options]
        tokens = [text, want.output_a, want.output_b, *want.query_tokens, *want.key_tokens, *names,
                  *[w for n in names for w in n.replace("-", " ").split()]]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_choosing_another_head_of_a_opens_it_next_to_its_nearest():
    at = open_versus("reverse", "attention", "en", "encoder", other="pitfall-correct")
    want = V.compare(bundle("reverse"), bundle("pitfall-correct"), "attention", None, "encoder")
    lb, hb = want.match.nearest[0, 0]
    assert at.query_params["pair"] == f"0.0-{lb}.{hb}"  # B's head starts at A's head's nearest
    at.selectbox(key="versus_a").set_value("L1H3").run()
    assert not at.exception
    assert at.query_params["pair"].startswith("1.3-")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_models_of_other_tokenizers_are_refused_in_one_sentence(lang):
    at = open_versus("default", "我吃了一个苹果", lang, "encoder", other="minilm")
    assert len(at.warning) == 1 and not at.get("plotly_chart")
    said = str(at.warning[0].value)
    assert "8,000" in said and "30,522" in said
    assert ("tokenizer" in said) if lang == "en" else ("分词器" in said)


def test_other_shapes_show_the_nearest_map_only():
    at = open_versus("reverse", "attention", "en", "encoder", other="pitfall-one-head")
    figs = figures(at)
    assert "versus_map_same" not in figs and "versus_map_nearest" in figs
    assert any("2 × 4" in str(c.value) and "2 × 1" in str(c.value) for c in at.caption)


def test_a_hidden_model_named_by_the_link_is_model_a():
    """The pitfall and variant models are not in the picker, but a link naming one opens it as model A
    (here the broken no-scaling model against the correct one), and the picker lists it while chosen."""
    a, b = "pitfall-no-scaling", "pitfall-correct"
    at = open_versus(a, "attention", "en", "encoder", other=b)
    from app_support.models import model_label

    assert at.selectbox(key="model").value == a and model_label(a) in at.selectbox(key="model").options
    assert at.query_params["model"] == a and at.query_params["other"] == b
    want = V.compare(bundle(a), bundle(b), "attention", None, "encoder")
    np.testing.assert_allclose(arr(figures(at)["versus_map_nearest"]["data"][0]["z"]),
                               want.match.nearest_distance, atol=1e-6)
    at.selectbox(key="model").set_value("reverse").run()  # choosing a listed model: the hidden one leaves
    assert not at.exception and model_label(a) not in at.selectbox(key="model").options
