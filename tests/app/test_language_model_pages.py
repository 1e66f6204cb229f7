"""Every page of the app on a decoder-only language model (SmolLM2), in both interface languages (AppTest)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from app_support.models import model_label
from model.data.byte_tokens import PART
from tests.app.url_checks import assert_only_declared_url_parameters
from tests.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
MOJIBAKE = set("ĠĊèæåçéäĩĶķ")



def _open(page: page_registry.PageSpec, lang: str, text: str = "The capital of France is") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "smollm2", "text": text, "lang": lang})
    at.run()
    if page is not page_registry.START_PAGE:
        at.switch_page(page.file).run()
    return at


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", page_registry.PAGES, ids=lambda p: p.key)
def test_every_page_opens_on_a_language_model(page, lang):
    at = _open(page, lang)
    assert_only_declared_url_parameters(at, page.key)
    assert not at.error, [e.value for e in at.error]
    notice = tr(lang, "page.not_for_language_models", model=model_label("smollm2", lang)).replace("\\", "")
    said = [i.value.replace("\\", "") for i in at.info]
    if not page.for_language_models:  # says so plainly, draws nothing
        assert notice in said, said
        assert not at.get("plotly_chart")
    else:
        assert notice not in said


def test_a_chinese_prompt_shows_chinese_on_every_axis_and_in_every_hover():
    at = _open(page_registry.START_PAGE, "en", "我吃了一个苹果")
    assert not at.exception, [e.message for e in at.exception]
    figures = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert figures
    heatmap = next(t for f in figures for t in f["data"] if t.get("type") == "heatmap")
    labels = [str(v) for v in heatmap["x"] + heatmap["y"]]
    assert any("苹" in lab for lab in labels) and any("一个" in lab for lab in labels), labels
    hover = json.dumps(heatmap.get("customdata", "")) + json.dumps(heatmap.get("text", ""))
    shown = "".join(labels) + json.loads(json.dumps(hover))
    assert not MOJIBAKE & set(shown), sorted(MOJIBAKE & set(shown))
    assert f"苹{PART}2/3" in "".join(labels)


# slow: whole suite only (quick keeps SmolLM2's Chinese-prompt and positional pages)
@pytest.mark.slow
def test_generation_step_by_step_shows_each_new_tokens_row_over_what_it_read():
    from model.run.analysis import analyze, attention_only
    from model.store.registry import load_model

    at = _open(page_registry.page("decoding"), "en")
    assert not at.exception, [e.message for e in at.exception]
    # the page's own run: greedy, 32 new, attention only (one pass: tests/model/run/test_one_pass.py holds
    # it to the two passes within 1e-5)
    result = analyze(load_model("smollm2"), "The capital of France is", keep=attention_only)
    step = result.steps[0]
    figures = {json.loads(el.proto.spec)["layout"]["title"]["text"]: json.loads(el.proto.spec)
               for el in at.get("plotly_chart")}
    title = next(k for k in figures if "every head&#39;s attention row" in k)  # titles are HTML-escaped
    heat = next(tr_ for tr_ in figures[title]["data"] if tr_.get("type") == "heatmap")
    from tests.app.test_app_pages import arr

    assert len(arr(heat["x"])) == step.position + 1  # the prompt's 5 tokens: what the first new token reads

    rows = arr(heat["z"])
    n = step.position + 1
    expected = result.attention("decoder")[:, :, step.position, :n].reshape(-1, n)
    assert abs(rows - expected).max() < 1e-6
    assert "Paris" in " ".join(str(m.value) for m in at.markdown)


# slow: in the whole suite only (the quick subset keeps the language-model pages' other tests)
@pytest.mark.slow
def test_the_new_token_bound_is_in_the_sidebar_and_the_link():
    from model.decoding.strategy import Strategy
    from model.run.analysis import analyze
    from model.store.registry import load_model

    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "smollm2", "text": "The capital of France is", "new": "6",
                            "decode": "beam3-lp1"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    box = next(n for n in at.sidebar.number_input if n.key == "new")
    assert box.value == 6
    beam = Strategy.make("beam", beam=3)
    model = load_model("smollm2")
    expected = analyze(model, "The capital of France is", strategy=beam, max_new=6).output_text
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert expected.strip() and expected.strip() in said, (expected, said[:500])
    assert at.query_params.get("new") in ("6", ["6"])
    box.set_value(40).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.query_params.get("new") in ("40", ["40"])


def test_the_positional_page_draws_rope_at_the_models_own_base():
    """SmolLM2 rotates with base 100,000: the frequency bars are the model's, not the paper's 10,000."""
    from model.lab import positional
    from model.store.registry import load_model
    from tests.app.test_app_pages import arr

    cfg = load_model("smollm2").cfg
    at = _open(page_registry.page("positional"), "en")
    assert not at.exception, [e.message for e in at.exception]
    bars = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    drawn = next(arr(t["y"]) for f in bars for t in f["data"] if t.get("type") == "bar"
                 and len(arr(t["y"])) == cfg.d_head // 2)
    np.testing.assert_allclose(drawn, positional.rope_frequencies(cfg.d_head, cfg.rope_theta), rtol=1e-5)
    assert cfg.rope_theta == 1e5
    assert not np.allclose(drawn, positional.rope_frequencies(cfg.d_head, 10000.0))


@pytest.mark.slow
@pytest.mark.parametrize("key", ["worked", "deck", "positional", "model"])
def test_pages_that_run_their_own_pass_follow_the_new_token_bound(key):
    """These pages record more hooks in a pass of their own: it must hold the positions the page's
    analysis holds (they raised on a shape mismatch when the sidebar wrote fewer than 32 tokens)."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "smollm2", "text": "The capital of France is", "new": "8"})
    at.run()
    at.switch_page(page_registry.page(key).file).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    if key == "worked":  # 5 prompt tokens + 8 written
        assert "13 query positions × 13 key positions" in " ".join(c.value for c in at.caption)


def _open_new(page: page_registry.PageSpec, new: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "tiny-gpt", "text": "我们学习中文。", "lang": "en", "new": new})
    at.run()
    if page is not page_registry.START_PAGE:
        at.switch_page(page.file).run()
    return at


LM_PAGES = [p for p in page_registry.PAGES if p.for_language_models]


@pytest.mark.parametrize("page", LM_PAGES, ids=lambda p: p.key)
def test_no_new_tokens_reads_the_prompt_alone_on_every_page(page):
    """new=0 (the sidebar's control and links accept it): the prompt alone is read, every page opens, and a
    page that shows the output says there is none and offers to write the default number of tokens."""
    at = _open_new(page, "0")
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["new"] == 0
    said = [i.value for i in at.info]
    offers = [b for b in at.button if b.key == "write_output"]
    if page.key == "decoding":
        assert tr("en", "analysis.no_output") in said and offers
        offers[0].click().run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.session_state["new"] == 32
        assert tr("en", "analysis.no_output") not in [i.value for i in at.info]
    else:
        assert tr("en", "analysis.no_output") not in said and not offers


def test_a_link_with_no_new_tokens_keeps_it_and_an_analysis_reads_the_prompt_alone():
    from app_support import gateway as G

    at = _open_new(page_registry.START_PAGE, "0")
    assert not at.exception and at.session_state["new"] == 0
    result = G.get_analysis("tiny-gpt", "我们学习中文。", max_new=0)
    assert result.output_text == "" and len(result.target_tokens) == len(result.prepared.prefix)
    assert _open_new(page_registry.START_PAGE, "-1").session_state["new"] == 32  # out of range: the default


def test_the_time_caption_counts_each_token_read_once():
    """"This analysis of N tokens took …": a language model's prompt is the start of its decoder input and
    counts once (1,024 + 32 tokens were said to be 2,080); a translation reads source and decoder input."""
    from app_support import gateway as G
    from app_support.messages import tokens_read

    lm = G.get_analysis("smollm2", "The capital of France is", max_new=3)
    assert len(lm.target_tokens) == len(lm.source_tokens) + 3  # the prompt, then what was written
    assert tokens_read(lm) == len(lm.target_tokens)
    prompt_only = G.get_analysis("smollm2", "The capital of France is", max_new=0)
    assert tokens_read(prompt_only) == len(prompt_only.source_tokens)
    translation = G.get_analysis("default", "我们学习中文。", None)
    assert translation.source_tokens and translation.target_tokens
    assert tokens_read(translation) == len(translation.source_tokens) + len(translation.target_tokens)
    encoder = G.get_analysis("minilm", "The bank raised its rates.", None)
    assert not encoder.target_tokens
    assert tokens_read(encoder) == len(encoder.source_tokens)
