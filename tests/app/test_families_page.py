"""The "three families, one sentence" page (AppTest) in both languages: each column draws its model's
own masks, word row and shapes; a missing model leaves one line and the other columns."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support.i18n import text as tr
from app_support.i18n.check import untranslated
from app_support.models import MAX_INPUT_CHARS, model_label
from app_support.ui import escape_md
from model.lab.choices import FAMILY_MAX_TOKENS, FAMILY_MODELS, sentence_words
from model.lab.families import REFERENCE_SENTENCES, family_column
from model.store.registry import load_model
from tests.app.test_app_pages import arr
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.families import MAX_BARS

PAGE = str(REPO_ROOT / "app_pages" / "families.py")
EXAMPLES = {"en": "The cat sat on the mat.", "zh": "猫坐在垫子上。"}


def open_page(lang: str, **params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"lang": lang, **params})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def bar_values(fig: dict) -> tuple[dict[int, float], set[int], set[int]]:
    """(key position -> bar height, the word's positions, the hidden positions) of a word's row."""
    heights, groups = {}, {"word": set(), "hidden": set(), "other": set()}
    for trace in fig["data"]:
        xs, ys = arr(trace["x"]).astype(int).tolist(), arr(trace["y"]).tolist()
        heights.update(zip(xs, ys, strict=True))
        groups[trace["meta"]].update(xs)
    return heights, groups["word"], groups["hidden"]


def check_columns(at: AppTest, lang: str, sentence: str, word: tuple[str, int], present: dict[str, str]):
    figs = iter(figures(at))
    shown = [str(m.value) for m in at.markdown]
    codes = [str(c.value) for c in at.code]
    for family, name in present.items():
        column = family_column(load_model(name), sentence)
        masks = []
        for mask in column.masks.values():
            if family == "decoder_only":  # drawn over the sentence alone, as the other columns
                mask = mask[:column.read_tokens, :column.read_tokens]
            fig = next(figs)
            np.testing.assert_array_equal(arr(fig["data"][0]["z"]), mask.astype(np.uint8))
            masks.append(fig)
        for fig in masks:  # one width, the height its square cells need: no blank band under the title
            margin = fig["layout"]["margin"]
            n_q, n_k = np.asarray(arr(fig["data"][0]["z"])).shape
            cell = (fig["layout"]["width"] - margin["l"] - margin["r"]) / n_k
            assert fig["layout"]["width"] == 290
            assert abs(fig["layout"]["height"] - (cell * n_q + margin["t"] + margin["b"])) <= 1
        positions = column.word_positions(*word)
        if positions:
            heights, own, hidden = bar_values(next(figs))
            want = column.word_row(positions)
            np.testing.assert_allclose([heights[i] for i in range(len(want))], want, rtol=1e-6, atol=1e-9)
            assert own == set(positions) - hidden
            assert hidden == set(np.flatnonzero(column.masks[column.self_kind][positions].all(0)).tolist())
            if family == "decoder_only":  # causal: every key after the word is hidden
                assert hidden == set(range(positions[-1] + 1, len(column.tokens)))
            if column.cross_mean is not None:
                heights, _, _ = bar_values(next(figs))
                want = column.cross_mean[:, positions].sum(1)
                np.testing.assert_allclose([heights[i] for i in range(len(want))], want, rtol=1e-6)
        else:
            assert tr(lang, "families.word_lost", word=word[0]) in [str(i.value) for i in at.info]
        steps = " → ".join(f"`{list(shape)}` {tr(lang, f'families.step.{step}')}"
                           for step, shape in column.trace)
        assert f"**{tr(lang, 'families.trace_header')}** {steps}" in shown
        if family != "encoder_only":  # the translation or the continuation, as the model wrote it
            assert column.output.replace("\n", "↵\n").strip() in [c.strip() for c in codes]
    assert next(figs, None) is None, "no figure beyond the columns'"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_three_columns_draw_each_models_own_numbers(lang):
    at = open_page(lang)
    sentence = EXAMPLES[lang]
    assert at.text_input(key="families_sentence").value == sentence
    word = sentence_words(sentence)[1]  # the default word: the sentence's second
    assert at.selectbox(key="families_word").value == word[0]
    check_columns(at, lang, sentence, word, FAMILY_MODELS)
    started = time.perf_counter()
    at.run()  # a rerun reads every result from the gateway's cache
    assert time.perf_counter() - started < 5.0
    assert not at.exception
    if lang == "zh":
        tokens = [sentence, word[0], *REFERENCE_SENTENCES]  # data: shown as the model reads it
        for name in FAMILY_MODELS.values():
            column = family_column(load_model(name), sentence)
            tokens += list(column.tokens) + list(column.target_tokens) + [column.output, column.text]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        left = {s: found for s, found in left.items() if found}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


@pytest.mark.slow
def test_picking_another_word_redraws_its_rows_in_every_model():
    at = open_page("en")
    at.selectbox(key="families_word").set_value("the (occurrence 2)").run()
    assert not at.exception
    check_columns(at, "en", EXAMPLES["en"], ("the", 1), FAMILY_MODELS)
    # its link (the URL holds "the~2", see test_every_page_sets_only_declared_url_parameters) opens the
    # same word, in either language
    again = open_page("zh", sentence=EXAMPLES["en"], word="the~2")
    assert again.selectbox(key="families_word").value == tr("zh", "families.word_again", word="the", n=2)


@pytest.mark.slow
def test_a_missing_model_says_so_in_its_column_and_the_others_still_draw(monkeypatch):
    monkeypatch.setitem(FAMILY_MODELS, "encoder_only", "no-such-model")
    at = open_page("en")
    assert tr("en", "families.missing", model=escape_md("no-such-model")) in [str(i.value) for i in at.info]
    present = {k: v for k, v in FAMILY_MODELS.items() if k != "encoder_only"}
    check_columns(at, "en", EXAMPLES["en"], ("cat", 0), present)


@pytest.mark.slow  # slow: whole suite only (three models read 256 tokens each; quick keeps the lab's bound)
def test_a_link_of_100000_characters_is_cut_said_so_and_read_to_the_pages_bound():
    at = open_page("en", sentence="bank " * 20_000)
    sentence = at.text_input(key="families_sentence").value
    assert sentence == ("bank " * 20_000)[:MAX_INPUT_CHARS]
    warnings = [str(w.value) for w in at.warning]
    assert tr("en", "note.clipped", what=tr("en", "note.clipped.sentence"), cut_from=100_000,
              limit=MAX_INPUT_CHARS) in warnings
    n_words = len(sentence_words(sentence))
    captions = [str(c.value) for c in at.caption]
    assert tr("en", "families.words_cut", bound=FAMILY_MAX_TOKENS, n=n_words) in captions
    assert len(at.selectbox(key="families_word").options) == FAMILY_MAX_TOKENS
    for family, name in FAMILY_MODELS.items():
        column = family_column(load_model(name), sentence)
        assert column.read_tokens == min(FAMILY_MAX_TOKENS, column.model_max_len) and column.cut_from
        which = "page" if column.model_max_len > FAMILY_MAX_TOKENS else "model"
        assert tr("en", f"families.read_cut_{which}", model=escape_md(model_label(name, "en")),
                  read=column.read_tokens, total=column.cut_from, bound=FAMILY_MAX_TOKENS,
                  max_len=column.model_max_len) in warnings, family
    # every figure within the screen-sized rule: masks pooled to 64 a side, bars a page of MAX_BARS
    for fig in figures(at):
        for trace in fig["data"]:
            if trace["type"] == "bar":
                assert len(arr(trace["x"])) <= MAX_BARS
            else:
                assert np.asarray(arr(trace["z"])).size <= 64 * 64
    pages = [s for s in at.selectbox if s.key and s.key.endswith("_page")]
    assert {s.key for s in pages} == {f"families_row_{f}_page" for f in ("encoder_only", "decoder_only")}
    # another page of the decoder's row draws those positions
    at.selectbox(key="families_row_decoder_only_page").set_value(2).run()
    assert not at.exception
    (decoder_row,) = [f for f in figures(at) if f["layout"]["xaxis"]["range"][0] == 2 * MAX_BARS - 0.5]
    assert {int(x) for trace in decoder_row["data"] for x in arr(trace["x"])} == set(
        range(2 * MAX_BARS, 3 * MAX_BARS))
