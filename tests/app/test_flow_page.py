"""The information-flow page (app_pages/flow.py) and the weight × ‖value‖ option of the attention pages, in
both interface languages (AppTest): the graph drawn is the one model/lab/flow.py builds, the knock-out table
is there, models whose residual stream does not add up are told so in one line, and the option changes the
single head's heatmap to α · ‖f(x_j)‖ row-normalised."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages
from app_support.i18n import text as tr
from model.lab.flow import build_flow, flow_graph, layer_value_norms, reweight_rows
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.app.encoder_pages import infos, open_page
from viz.typed_arrays import decode_plotly_array

PROMPT = "the cat sat on the mat"


def _open(page: str, model: str, lang: str, **params) -> AppTest:
    params = {k: str(v) for k, v in params.items()}
    if page == "single":  # the start page: the first link holds its parameters
        at = open_page(pages.page(page), lang, model, PROMPT, link=params)
    else:
        at = open_page(pages.page(page), lang, model, PROMPT, **params)
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _array(value) -> np.ndarray:
    if isinstance(value, dict):
        return decode_plotly_array(value).astype(np.float64)
    return np.asarray(value, dtype=np.float64)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_flow_page_draws_the_graph_the_lab_builds(lang):
    at = _open("flow", "tiny-gpt", lang, thr=5)
    graph = flow_graph(load_model("tiny-gpt"), PROMPT, None, 0.05)
    figure = _figures(at)[0]
    edges = next(t for t in figure["data"] if t.get("name") == "edges")
    assert len(_array(edges["x"])) == len(graph.layer) > 0
    assert tr(lang, "page.flow.title") in at.title[0].value or at.title
    assert any(
        tr(lang, "flow.spearman", rho="", n="", seconds="").split("**")[0] in m.value
        or tr(lang, "flow.spearman_nan") in m.value
        for m in [*at.markdown, *at.caption]
    )
    assert at.query_params["thr"] == "5"
    assert len(at.dataframe) >= 1  # the knock-out table


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,reason", [("minilm", "encoder"), ("variant-post-ln", "post_ln")])
def test_models_it_does_not_fit_get_one_line(model, reason, lang):
    at = _open("flow", model, lang)
    assert tr(lang, f"flow.not_applicable.{reason}").replace("\\", "") in infos(at)
    assert not _figures(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_flow_page_draws_a_translation_models_graph_with_its_cross_attention_edges(lang):
    at = _open("flow", "default", lang, thr=5)
    graph = flow_graph(load_model("default"), PROMPT, None, 0.05, None)
    figure = _figures(at)[0]
    edges = next(t for t in figure["data"] if t.get("name") == "edges")
    assert len(_array(edges["x"])) == len(graph.layer) > 0
    assert {4, 5} <= set(graph.kind.tolist()) and 1 in set(graph.stack.tolist())
    note = tr(lang, "flow.seq2seq_note", n_source=len(graph.source_tokens), n_enc=graph.n_enc_layers)
    assert note.replace("\\", "") in [c.value.replace("\\", "") for c in at.caption]
    texts = [a["text"] for a in figure["layout"].get("annotations", [])]
    assert any(tr(lang, "flow.side.source") in x for x in texts)  # the source's own column group
    assert len(at.dataframe) >= 1  # the knock-out table, cross-attention edges among the checked ones


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_single_head_shows_weight_times_value_norm(lang):
    at = _open("single", "tiny-gpt", lang, weigh="norm", layer=1, head=0)
    bundle = load_model("tiny-gpt")
    result = analyze(bundle, PROMPT, max_new=None)
    heatmap = [t for t in _figures(at)[0]["data"] if t["type"] == "heatmap"][-1]  # the weights: last
    layer, head = int(at.query_params.get("layer", 1)), int(at.query_params.get("head", 0))
    pattern = np.asarray(result.attention("decoder")[layer, head])
    want = reweight_rows(pattern, layer_value_norms(result, "decoder")[layer][head])
    got = np.nan_to_num(_array(heatmap["z"]))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert at.query_params["weigh"] == "norm"
    assert len(_figures(at)) >= 2  # the disagreement figure


@pytest.mark.parametrize("page", ["heads", "focus"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_all_heads_and_focus_take_the_option(page, lang):
    at = _open(page, "tiny-gpt", lang, weigh="norm")
    assert at.query_params["weigh"] == "norm"
    radio = next(r for r in at.radio if r.key == f"{page}_weigh")
    assert radio.value == "norm"


def test_build_flow_of_the_page_model_is_quick_and_explains_the_last_token():
    bundle = load_model("tiny-gpt")
    ids = bundle.task.prepare(PROMPT, 64, None).prefix
    graph = build_flow(bundle.model, ids, bundle.tokenizer.tokens(ids), len(ids) - 1, 0.04)
    assert graph.position == len(ids) - 1 and graph.seconds < 5
    assert set(graph.target[graph.layer == graph.n_layers - 1]) == {graph.position}
