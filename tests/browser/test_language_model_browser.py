"""SmolLM2 in a real browser: Chromium opens generation step by step, all heads (a page of layers)
and a Chinese prompt on the single-head page, with no JavaScript error. The Chinese prompt's axis
shows Chinese characters (苹 as its three parts), never the byte alphabet's mojibake. Prints the time
from opening each view to its heatmap being painted.

Run with ``pytest -m browser -s tests/browser/test_language_model_browser.py``.
"""

from __future__ import annotations

import sys
import time
from urllib.parse import urlencode

import pytest

from tests.browser.test_browser import ROOT, X_TICKS_JS, app_in_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEATMAP = '[data-testid="stPlotlyChart"] .heatmaplayer image'
CHART = '[data-testid="stPlotlyChart"] .main-svg'
MOJIBAKE = set("ĠĊèæåçéäĩĶķ")


def test_smollm2_pages_in_chromium():
    sys.path.insert(0, str(ROOT))
    timings: list[str] = []
    with app_in_chromium("streamlit_smollm2_server.log") as (page, base, errors):
        views = [
            ("single head, Chinese prompt", "", {"text": "我吃了一个苹果", "layer": 3, "head": 1}),
            ("generation step by step", "decoding", {"text": "The capital of France is", "new": 8}),
            ("all heads, layers 8-15", "heads", {"text": "The capital of France is", "layers": 8}),
            ("three families, one sentence", "families", {"text": "The capital of France is"}),
        ]
        for what, path, params in views:
            t0 = time.perf_counter()
            query = urlencode({"model": "smollm2", **params})
            page.goto(f"{base}/{path}?{query}", wait_until="domcontentloaded")
            # the families page's figures are bars and masks; every other view has a heatmap
            page.wait_for_selector(CHART if path == "families" else HEATMAP, timeout=180_000)
            timings.append(f"{what}: {time.perf_counter() - t0:.2f} s")
            assert not errors, f"JavaScript errors on {what}: {errors}"
            if path == "":
                page.wait_for_function("() => document.body.innerText.includes('苹')", timeout=60_000)
                ticks = "".join(page.evaluate(X_TICKS_JS))
                assert "苹" in ticks and "一个" in ticks, ticks
                assert not MOJIBAKE & set(ticks), ticks
            if path == "decoding":
                page.wait_for_function("() => document.body.innerText.includes('Paris')", timeout=60_000)
            if path == "families":  # three columns, one per model, each with its figures
                page.wait_for_function("() => document.querySelectorAll("
                                       "'[data-testid=\"stPlotlyChart\"]').length >= 3", timeout=120_000)
            if path == "heads":
                page.wait_for_function("() => document.body.innerText.includes('L8–L15')", timeout=60_000)
        page.wait_for_timeout(300)
        assert not errors, f"JavaScript errors: {errors}"
    print("\nSmolLM2 in Chromium (page load to heatmap painted):\n  " + "\n  ".join(timings))
