"""The representation projector page (app_pages/projector.py) in both interface languages (AppTest): the
points drawn are the PCA of the word's hidden states taken directly from the model, the ratio curve is the
definition's, the view comes from the link, and input the page cannot use gets one line each."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from app_pages.glue import projector as PJ
from app_support import pages
from app_support.i18n import text as tr
from model.store.registry import load_model
from tests.app.encoder_pages import open_page
from viz.labels import label
from viz.typed_arrays import decode_plotly_array


def _open(model: str, lang: str, **params) -> AppTest:
    at = open_page(pages.page("projector"), lang, model, "hello", **{k: str(v) for k, v in params.items()})
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _array(value) -> np.ndarray:
    if isinstance(value, dict):
        return decode_plotly_array(value).astype(np.float64)
    return np.asarray([np.nan if v is None else v for v in value], dtype=np.float64)


def _direct_states(model: str, word: str, sentences) -> np.ndarray:
    """[row, sentence, d_model]: each sentence run alone, the word's tokens found by hand (the token
    ids of the word spelled alone, with a leading space where the tokenizer marks one, looked up in the
    sentence's ids), their mean state at each row's hook."""
    bundle = load_model(model)
    model_, cfg, tok = bundle.model, bundle.cfg, bundle.tokenizer
    stack, n = ("decoder", cfg.n_dec_layers) if cfg.decoder_only else ("encoder", cfg.n_enc_layers)
    names = [f"{stack}.embed.hook_resid_in"] + [f"{stack}.blocks.{i}.hook_resid_post" for i in range(n)]
    out = []
    for sentence in sentences:
        p = bundle.task.prepare(sentence, cfg.max_len)
        ids = list(p.prefix if cfg.decoder_only else p.source_ids)
        for form in (word, " " + word):
            piece = tok.encode(form)
            starts = [i for i in range(len(ids)) if ids[i: i + len(piece)] == piece]
            if starts:
                break
        span = list(range(starts[0], starts[0] + len(piece)))
        args = [torch.tensor([ids])] if cfg.decoder_only or cfg.encoder_only else [
            torch.tensor([ids]), torch.tensor([p.prefix])]
        with torch.no_grad():
            _, cache = model_.run_with_cache(*args, names_filter=set(names).__contains__)
        out.append([cache[name][0, span].double().mean(0).numpy() for name in names])
    return np.asarray(out).transpose(1, 0, 2)


def _pca(x: np.ndarray) -> np.ndarray:
    centred = x - x.mean(0)
    values, vectors = np.linalg.eigh(centred.T @ centred)
    return centred @ vectors[:, np.argsort(values)[::-1][:2]]


def _ratio(x: np.ndarray, labels) -> float:
    between, within = [], []
    for i, j in itertools.combinations(range(len(x)), 2):
        cos = x[i] @ x[j] / (np.linalg.norm(x[i]) * np.linalg.norm(x[j]))
        (within if labels[i] == labels[j] else between).append(1 - cos)
    return float(np.mean(between) / np.mean(within))


def _points(fig: dict) -> tuple[np.ndarray, list[str]]:
    """Every point of the scatter in sentence-number order, and the legend name of each."""
    rows = []
    for trace in fig["data"]:
        for x, y, data in zip(_array(trace["x"]), _array(trace["y"]), trace["customdata"], strict=True):
            rows.append((int(data[0]), x, y, trace["name"]))
    rows.sort()
    return np.array([[x, y] for _, x, y, _ in rows]), [name for *_, name in rows]


@pytest.mark.parametrize("model,lang,preset", [("minilm", "en", "bank"), ("default", "zh", "apple")])
def test_points_and_ratio_are_the_models_hidden_states_projected(model, lang, preset):
    at = _open(model, lang, row=2)
    assert at.title[0].value == tr(lang, "page.projector.title")
    assert at.selectbox(key="proj_preset").value == preset == PJ.default_preset(lang)
    pairs = PJ.PRESETS[preset].sentences
    sentences = [s for _, s in pairs]
    senses = [tr(lang, f"projector.sense.{k}") for k, _ in pairs]
    states = _direct_states(model, PJ.PRESETS[preset].word, sentences)
    scatter, ratio_fig = _figures(at)
    points, names = _points(scatter)
    assert names == senses
    reference = _pca(states[2])
    for c in range(2):  # a component's sign is a convention
        sign = np.sign(points[:, c] @ reference[:, c])
        np.testing.assert_allclose(points[:, c], sign * reference[:, c], atol=2e-4 * np.abs(reference).max())
    ratio = _array(ratio_fig["data"][0]["y"])
    expected = [_ratio(states[r], senses) for r in range(states.shape[0])]
    np.testing.assert_allclose(ratio, expected, rtol=1e-4)
    peak = int(np.argmax(expected))
    where = tr(lang, "projector.where.embed") if peak == 0 else tr(lang, "projector.where.block", row=peak)
    summary = tr(lang, "projector.summary", where=where, ratio=f"{expected[peak]:.2f}",
                 first=f"{expected[0]:.2f}", last=f"{expected[-1]:.2f}")
    assert summary in [m.value for m in at.markdown]
    assert at.query_params["row"] == "2" and at.query_params["preset"] == preset


def test_own_sentences_labels_colour_and_row_come_from_the_link():
    lines = ("river: We sat on the river bank.\nmoney: The bank raised rates.\n"
             "river: Ducks sat on the bank.\nmoney: My bank sent a card.\nThe bank is closed.")
    at = _open("default", "en", preset="own", sentences=lines, word="bank", row=1, color="sentence")
    assert at.text_area(key="proj_sentences").value == lines
    assert at.select_slider(key="proj_row").value == 1
    (trace,) = _figures(at)[0]["data"]  # by sentence: one trace, numbered points
    assert trace["text"] == ["1", "2", "3", "4", "5"]
    assert {k: at.query_params[k] for k in ("preset", "word", "row", "color")} == {
        "preset": "own", "word": "bank", "row": "1", "color": "sentence"}
    assert at.query_params["sentences"] == lines
    at.segmented_control(key="proj_color").set_value("sense").run()
    names = [t["name"] for t in _figures(at)[0]["data"]]
    assert names == ["river", "money", label("en", "projector.fig.no_label")]
    assert at.query_params["color"] == "sense"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_without_the_word_gets_one_line(lang):
    lines = "a: The bank is open.\nb: We sat by the river.\na: The bank raised rates.\nb: Ducks on the bank."
    at = _open("minilm", lang, preset="own", sentences=lines, word="bank")
    line = tr(lang, "projector.skip.absent", number=2, sentence="We sat by the river\\.", word="bank")
    warning = next(w.value for w in at.warning if tr(lang, "projector.skipped", n=1, total=4) in w.value)
    assert f"- {line}" in warning.splitlines()
    assert len(_figures(at)) == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_model_whose_tokens_lose_the_word_says_so_per_sentence(lang):
    at = _open("minilm", lang, preset="apple")  # MiniLM's vocabulary has neither 苹 nor 果
    warning = next(w.value for w in at.warning if tr(lang, "projector.skipped", n=24, total=24) in w.value)
    assert warning.count("- ") == 24
    assert tr(lang, "projector.too_few", n=0) in [i.value for i in at.info]
    assert not at.get("plotly_chart")


# slow: whole suite only (quick keeps the projector page on MiniLM and the translation model)
@pytest.mark.slow
def test_a_language_model_says_where_the_word_begins_a_sentence():
    lines = "a: Bank rates rose.\na: The bank raised rates.\nb: We sat on the bank.\nb: Ducks on the bank."
    at = _open("smollm2", "en", preset="own", sentences=lines, word="bank")
    assert tr("en", "projector.at_start", n=1, which="1") in [w.value for w in at.warning]
    assert tr("en", "projector.reads.decoder_only") in [c.value for c in at.caption]


def test_a_letter_model_says_why_in_one_line():
    at = _open("reverse", "en")
    assert tr("en", "projector.letters") in [i.value for i in at.info]
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_empty_word_and_too_many_sentences_get_one_line_each(lang):
    at = _open("default", lang, preset="own", word=" ", sentences="x: the bank")
    assert tr(lang, "projector.no_word") in [i.value for i in at.info]
    many = "\n".join(f"a: the bank number {i}" for i in range(PJ.MAX_SENTENCES + 6))
    at = _open("default", lang, preset="own", word="bank", sentences=many)
    assert tr(lang, "projector.cap", limit=PJ.MAX_SENTENCES, dropped=6) in [w.value for w in at.warning]
    assert len(_points(_figures(at)[0])[0]) == PJ.MAX_SENTENCES


def test_html_in_the_sentences_and_the_word_is_shown_as_text():
    lines = "<b>x</b>: <img src=x onerror=alert(1)> bank\n<b>x</b>: the bank\ny: a bank\ny: <i>bank</i>"
    at = _open("default", "en", preset="own", word="bank", sentences=lines)
    shown = json.dumps(_figures(at), ensure_ascii=False)
    assert "<img" not in shown and "<b>x" not in shown and "&lt;img" in shown
    skipped = _open("default", "en", preset="own", word="<b>", sentences="a: <img src=x> no\nb: <i>y</i>")
    texts = [w.value for w in skipped.warning]
    assert texts and not any("<img" in s.replace("\\<", "") for s in texts)
    assert any("\\<img" in s for s in texts)


def test_switching_to_a_preset_brings_its_word_and_to_own_sentences_its_lines():
    at = _open("default", "en")
    at.selectbox(key="proj_preset").set_value("apple").run()
    assert at.text_input(key="proj_word").value == "苹果"
    at.selectbox(key="proj_preset").set_value("own").run()
    assert at.text_area(key="proj_sentences").value == PJ.preset_lines(
        "apple", lambda key: tr("en", f"projector.sense.{key}"))
    assert not at.exception and len(_figures(at)) == 2


def test_typed_lines_are_read_with_their_labels():
    typed = PJ.parse_lines("fruit: I ate an apple.\n\n  水果：我吃了一个苹果  \nno label here\n"
                           "Note: this label is far too long to be a label: so it is a sentence", limit=3)
    assert typed.sentences == ("I ate an apple.", "我吃了一个苹果", "no label here")
    assert typed.labels == ("fruit", "水果", "")
    assert typed.dropped == 1
    long = PJ.parse_lines("a label that is longer than twenty-four: sentence")
    assert long.labels == ("",)


@pytest.mark.parametrize("row,color,preset", [("²", "purple", "nonsense"), ("9" * 5000, "", "apple2"),
                                              ("-1", "sense", "")])
def test_odd_values_in_the_link_fall_back_to_defaults(row, color, preset):
    at = _open("default", "en", row=row, color=color, preset=preset)
    assert at.selectbox(key="proj_preset").value == "bank"
    assert at.segmented_control(key="proj_color").value == "sense"
    ratio = _array(_figures(at)[1]["data"][0]["y"])
    assert at.select_slider(key="proj_row").value == int(np.nanargmax(ratio))  # opens at the peak


def test_sentences_from_the_link_are_cut_to_the_box_limit_and_say_so():
    lines = "a: the bank\nb: a bank\n" + "x" * (PJ.MAX_CHARS + 100)
    at = _open("default", "en", preset="own", word="bank", sentences=lines)
    assert len(at.text_area(key="proj_sentences").value) == PJ.MAX_CHARS
    expected = tr("en", "projector.clipped", cut_from=f"{len(lines):,}", limit=f"{PJ.MAX_CHARS:,}")
    assert expected in [w.value for w in at.warning]
