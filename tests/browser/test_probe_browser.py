"""The "What the model knows" pages in a real browser: the logit lens on SmolLM2 (" Paris" shows up,
a click on the grid picks that position), the head detectors on the induction model (a click on the map
opens that head on the single-head page), model vs model on the reverse task (a click on the map picks
the pair), the representation projector ("bank" on MiniLM, 苹果 on e5) and the Chinese lens, with no
JavaScript error and no Python exception shown. Prints the time from opening each view to its figure
being painted.

Run with ``pytest -m browser -s tests/browser/test_probe_browser.py``.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest

from tests.browser.test_browser import (
    CHARTS_AT_LEAST,
    MATRIX_TARGET_JS,
    SCREENSHOTS,
    app_in_chromium,
    save_small_png,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXCEPTION = '[data-testid="stException"]'


def test_probe_pages_in_chromium():
    from app_support.i18n import text

    timings: list[str] = []
    with app_in_chromium("streamlit_probe_server.log") as (page, base, errors):
        def visit(what: str, path: str, params: dict, charts: int) -> None:
            t0 = time.perf_counter()
            page.goto(f"{base}/{path}?{urlencode(params)}", wait_until="domcontentloaded")
            page.wait_for_function(CHARTS_AT_LEAST, arg=charts, timeout=240_000)
            page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
            timings.append(f"{what}: {time.perf_counter() - t0:.2f} s")
            assert page.locator(EXCEPTION).count() == 0, what
            assert not errors, f"JavaScript errors on {what}: {errors}"

        def click_cell(chart: int, row: int, column: int) -> None:
            """Click a map's cell: (layer, head), or on the lens grid (row, position)."""
            target = page.evaluate(MATRIX_TARGET_JS, [chart, row, column])
            assert target is not None, f"no click target ({row}, {column}) in chart {chart}"
            page.mouse.move(target[0], target[1])
            page.wait_for_timeout(300)
            page.mouse.click(target[0], target[1])

        # 1) the logit lens: the grid, then a click on the prompt's second position picks it
        prompt = "The capital of France is"
        visit("logit lens, SmolLM2", "lens", {"model": "smollm2", "text": prompt, "new": 1}, 2)
        page.wait_for_function("() => document.body.innerText.includes('Paris')", timeout=60_000)
        click_cell(0, 28, 1)  # a row near the top: the grid runs past the window
        page.wait_for_function("() => new URLSearchParams(location.search).get('pos') === '1'",
                               timeout=60_000)
        page.wait_for_function(CHARTS_AT_LEAST, arg=2, timeout=60_000)
        assert page.locator(EXCEPTION).count() == 0
        save_small_png(page, SCREENSHOTS / "lens.png")

        # 2) head detectors: the induction map; a click opens L1H3 on the single-head page
        visit("head detectors, induction", "detectors", {"model": "induction", "role": "induction"}, 1)
        page.wait_for_function("() => document.body.innerText.includes('L1H3')", timeout=60_000)
        save_small_png(page, SCREENSHOTS / "detectors.png")
        click_cell(0, 1, 3)
        page.wait_for_function(
            "(title) => location.search.includes('layer=1') && location.search.includes('head=3')"
            " && (document.querySelector('h1') || {textContent: ''}).textContent.includes(title)",
            arg=text("en", "page.single.title"), timeout=120_000)

        # 3) model vs model: the reverse model against the correctly trained pitfall model; a click on
        # the map's cell (0, 1) picks that head of A and its nearest head of B
        visit("model vs model, reverse", "versus",
              {"model": "reverse", "text": "attention", "kind": "encoder"}, 3)
        click_cell(0, 0, 1)
        page.wait_for_function("() => (new URLSearchParams(location.search).get('pair') || '')"
                               ".startsWith('0.1-')", timeout=60_000)
        assert page.locator(EXCEPTION).count() == 0
        save_small_png(page, SCREENSHOTS / "versus.png")

        # 4) the representation projector: "bank" on MiniLM, 苹果 on e5 in the Chinese interface (the
        #    layer's scatter and the ratio by layer)
        visit("projector, bank on MiniLM", "projector", {"model": "minilm", "preset": "bank"}, 2)
        save_small_png(page, SCREENSHOTS / "projector_bank.png")
        visit("projector, 苹果 on e5", "projector", {"model": "e5", "preset": "apple", "lang": "zh"}, 2)
        save_small_png(page, SCREENSHOTS / "projector_apple_e5.png")

        # 5) the lens in Chinese
        visit("logit lens, Chinese interface", "lens",
              {"model": "smollm2", "text": prompt, "lang": "zh"}, 2)
        page.wait_for_function("(title) => document.querySelector('h1')"
                               " && document.querySelector('h1').textContent.includes(title)",
                               arg=text("zh", "page.lens.title"), timeout=60_000)
        page.wait_for_timeout(300)
        assert not errors, f"JavaScript errors: {errors}"
    print("\n'What the model knows' in Chromium (page load to figure painted):\n  " + "\n  ".join(timings))
