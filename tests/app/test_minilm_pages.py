"""Every page of the app on the encoder-only MiniLM, in both interface languages (AppTest)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from app_support.models import model_label
from model.embeddings import sentence_embeddings
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from viz.stats import cosine

APP = str(REPO_ROOT / "app.py")
SENTENCE = "The bank raised interest rates."
OTHER = "We sat on the river bank."


def _open(page: page_registry.PageSpec, lang: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "minilm", "text": SENTENCE, "lang": lang})
    at.run()
    if page is not page_registry.START_PAGE:
        at.query_params.update(params)
        at.switch_page(page.file).run()
    return at


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", page_registry.PAGES, ids=lambda p: p.key)
def test_every_page_opens_on_minilm(page, lang):
    at = _open(page, lang)
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    notice = tr(lang, "page.needs_decoder", model=model_label("minilm", lang))
    infos = [i.value for i in at.info]
    if page.needs_decoder:
        # The page says plainly why it shows nothing (escaped markdown: compare without backslashes).
        assert any(i.replace("\\", "") == notice.replace("\\", "") for i in infos), infos
        assert not at.get("plotly_chart")
    else:
        assert not any(i.replace("\\", "") == notice.replace("\\", "") for i in infos)


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
