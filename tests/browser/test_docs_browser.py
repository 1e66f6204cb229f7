"""The documentation's pictures, taken in a real browser at a laptop's size: one page of each menu
section (the guide's six pages) at 1366 x 768, scrolled to the page's first figure, each drawn with no
JavaScript error and no Python exception shown. The screenshots go to test-artifacts/screenshots/docs/; with
ATTENTION_LENS_UPDATE_SCREENSHOTS=1 they are also copied to docs/images/, where the docs site shows them.

Run with ``pytest -m browser -s tests/browser/test_docs_browser.py``.
"""

from __future__ import annotations

import shutil
from urllib.parse import urlencode

import pytest

from tests.browser.test_browser import (
    CHARTS_AT_LEAST,
    CHROMIUM_ARGS,
    README_SCREENSHOTS,
    SCREENSHOTS,
    UPDATE_README_SCREENSHOTS,
    ensure_chromium,
    running_app,
    save_small_png,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP = {"width": 1366, "height": 768}
CHART_DRAWN = '[data-testid="stPlotlyChart"] .main-svg'
SENTENCE = "我吃了一个苹果"

#: (picture in docs/images/, page path, link parameters, charts the page draws at least)
VIEWS = (
    ("attention.png", "", {"model": "default", "text": SENTENCE, "kind": "cross", "layer": "1",
                           "head": "2"}, 1),
    ("decoding.png", "decoding", {"model": "default", "text": SENTENCE, "decode": "beam4-lp1", "step": "1",
                                  "ref": "I ate an apple."}, 4),
    ("probing.png", "lens", {"model": "smollm2", "text": "The capital of France is"}, 1),
    ("how-it-works.png", "worked", {"model": "default", "text": SENTENCE}, 1),
    ("intervene.png", "ablation", {"model": "reverse", "text": "attention",
                                   "heads": "cross.1.0,cross.1.1"}, 1),
    ("under-the-hood.png", "model", {"model": "default", "text": SENTENCE}, 1),
)


def test_guide_pictures_at_laptop_size():
    from playwright.sync_api import sync_playwright

    out = SCREENSHOTS / "docs"
    with running_app("streamlit_docs_server.log") as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=LAPTOP)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            for png, path, params, charts in VIEWS:
                address = f"http://127.0.0.1:{port}/{path}?{urlencode(params)}"
                page.goto(address, wait_until="domcontentloaded")
                page.wait_for_function(CHARTS_AT_LEAST, arg=charts, timeout=240_000, polling=500)
                page.wait_for_selector(CHART_DRAWN, state="attached", timeout=60_000)
                # The picture shows the page's first figure, not only its introduction.
                page.locator('[data-testid="stPlotlyChart"]').first.evaluate(
                    "el => el.scrollIntoView({block: 'center'})")
                page.wait_for_timeout(800)  # let the figure finish its first paint
                assert page.locator('[data-testid="stException"]').count() == 0, path
                assert not errors, f"JavaScript errors on /{path}: {errors}"
                size = save_small_png(page, out / png)
                assert 10_000 < size < 400_000, (png, size)  # a drawn page, small enough for git
        finally:
            browser.close()
    if UPDATE_README_SCREENSHOTS:
        README_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for png, *_ in VIEWS:
            shutil.copyfile(out / png, README_SCREENSHOTS / png)
