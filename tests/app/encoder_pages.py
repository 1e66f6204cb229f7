"""Opening every page of the app on a pretrained encoder-only model (MiniLM, e5), shared by their
page tests: the page opens through the router as a link would, and a page that follows a decoder's
output says plainly that the model has none."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from app_support.models import model_label
from tests.app.url_checks import assert_only_declared_url_parameters
from tests.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def open_page(page: page_registry.PageSpec, lang: str, model: str, text: str, link: dict | None = None,
              **params) -> AppTest:
    """``page`` opened from the start page; ``link``: parameters the start page's link already holds
    (the sidebar's, which the switch keeps), ``params``: the ones the switch brings."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "lang": lang, **(link or {})})
    at.run()
    if page is not page_registry.START_PAGE:
        at.query_params.update(params)
        at.switch_page(page.file).run()
    return at


def infos(at: AppTest) -> list[str]:
    """The page's info boxes, markdown escapes removed."""
    return [i.value.replace("\\", "") for i in at.info]


def assert_encoder_page(at: AppTest, page: page_registry.PageSpec, lang: str, model: str) -> None:
    """The page ran without an error and set only its declared URL parameters; a decoder page says why
    it shows nothing, any other does not."""
    assert_only_declared_url_parameters(at, page.key)
    assert not at.error, [e.value for e in at.error]
    notice = tr(lang, "page.needs_decoder", model=model_label(model, lang)).replace("\\", "")
    if page.needs_decoder:
        assert notice in infos(at), infos(at)
        assert not at.get("plotly_chart")
    else:
        assert notice not in infos(at)
