"""The information-flow page and the weight × ‖value‖ option in a real browser at a laptop's 1366 x 768:
the graph of SmolLM2's next token is painted, its knock-out table is there, the single head shows
weight × ‖value‖ with its disagreement figure, with no JavaScript error and no Python exception shown.
Screenshots go to test-artifacts/screenshots/ (ignored by git).

Run with ``pytest -m browser -s tests/browser/test_flow_browser.py``.
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


def test_flow_page_and_norm_option_in_chromium():
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with running_app("streamlit_flow_server.log") as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=ensure_chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            base = f"http://127.0.0.1:{port}"
            visits = [
                (
                    "flow",
                    {"model": "smollm2", "text": "The capital of France is", "lang": "en"},
                    2,
                    "flow_smollm2.png",
                ),
                (
                    "",
                    {
                        "model": "smollm2",
                        "text": "The capital of France is",
                        "lang": "zh",
                        "weigh": "norm",
                        "layer": "5",
                        "head": "2",
                    },
                    2,
                    "single_norm_zh.png",
                ),
            ]
            for path, params, charts, shot in visits:
                page.goto(f"{base}/{path}?{urlencode(params)}", wait_until="domcontentloaded")
                page.wait_for_function(CHARTS_AT_LEAST, arg=charts, timeout=300_000)
                page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
                page.wait_for_timeout(1500)
                assert page.locator(EXCEPTION).count() == 0
                page.screenshot(path=str(SCREENSHOTS / shot), full_page=False)
            assert not errors, errors
        finally:
            browser.close()
