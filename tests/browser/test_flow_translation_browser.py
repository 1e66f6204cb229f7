"""The information-flow page on the translation model in a real browser at a laptop's 1366 x 768: the
decoder's graph with its cross-attention edges into the source and the encoder's graph beside it is
painted, with no JavaScript error and no Python exception shown. The screenshot goes to
test-artifacts/screenshots/ (ignored by git).

Run with ``pytest -m browser -s tests/browser/test_flow_translation_browser.py``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser.test_browser import (
    CHARTS_AT_LEAST,
    CHROMIUM_ARGS,
    SCREENSHOTS,
    ensure_chromium,
    running_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXCEPTION = '[data-testid="stException"]'


def test_flow_page_of_the_translation_model_in_chromium():
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with running_app("streamlit_flow_translation_server.log") as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            params = {"model": "default", "text": "The cat sat on the mat.", "lang": "en"}
            page.goto(f"http://127.0.0.1:{port}/flow?{urlencode(params)}", wait_until="domcontentloaded")
            page.wait_for_function(CHARTS_AT_LEAST, arg=1, timeout=300_000)
            page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
            page.wait_for_timeout(1500)
            assert page.locator(EXCEPTION).count() == 0
            chart = page.locator('[data-testid="stPlotlyChart"]').first
            chart.scroll_into_view_if_needed()
            page.mouse.wheel(0, 250)  # the whole figure, legend included, in the 768-pixel-high window
            page.wait_for_timeout(500)
            assert page.get_by_text("source (encoder)").count() >= 1  # the source's own column group
            page.screenshot(path=str(SCREENSHOTS / "flow_translation.png"), full_page=False)
            assert not errors, errors
        finally:
            browser.close()
