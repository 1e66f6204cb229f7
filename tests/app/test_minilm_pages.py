"""Every page of the app on the encoder-only MiniLM, in both interface languages (AppTest)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from model.run.embeddings import sentence_embeddings
from model.store.registry import load_model
from tests.app.encoder_pages import assert_encoder_page, open_page
from viz.stats import cosine

SENTENCE = "The bank raised interest rates."
OTHER = "We sat on the river bank."


def _open(page: page_registry.PageSpec, lang: str, **params) -> AppTest:
    return open_page(page, lang, "minilm", SENTENCE, **params)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", page_registry.PAGES, ids=lambda p: p.key)
def test_every_page_opens_on_minilm(page, lang):
    assert_encoder_page(_open(page, lang), page, lang, "minilm")


def test_only_output_pages_need_a_decoder():
    needing = {p.key for p in page_registry.PAGES if p.needs_decoder}
    assert {"decoding"} <= needing
    assert not needing & {"single", "heads", "focus", "aggregates", "compare", "stats", "model"}


@pytest.mark.slow
def test_compare_page_shows_the_cosine_of_the_sentence_embeddings():
    at = _open(page_registry.page("compare"), "en", a=SENTENCE, b=OTHER)
    assert not at.exception
    e = sentence_embeddings(load_model("minilm"), [SENTENCE, OTHER])
    expected = tr("en", "compare.embedding", cos=f"{cosine(e[0], e[1]):.3f}")
    assert expected in [m.value for m in at.markdown]
