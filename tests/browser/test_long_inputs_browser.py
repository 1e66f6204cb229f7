"""MiniLM at 512 tokens and SmolLM2 at 1,024 in a real browser: the single-head and all-heads pages draw
with no page error.

Prints, for each page, the time from pressing Enter on a new 512-token sentence to the chart
repainted (the server's analysis included), and for a sentence the server has cached (transfer
and paint only; target <= 1.5 s). Uses tests/browser/test_browser.py's server and browser helpers.
"""

from __future__ import annotations

import re
import sys
import time
from urllib.parse import quote

import pytest

from tests.browser.test_browser import (
    CHROMIUM_ARGS,
    HEATMAP_IMAGES_JS,
    IMAGES_CHANGED_JS,
    ROOT,
    TARGET_S,
    ensure_chromium,
    running_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEATMAP = '[data-testid="stPlotlyChart"] .heatmaplayer image'
SOME_IMAGE_CHANGED_JS = IMAGES_CHANGED_JS.replace("now.every(h => !before.includes(h))",
                                                  "now.some(h => !before.includes(h))")
assert SOME_IMAGE_CHANGED_JS != IMAGES_CHANGED_JS


def test_minilm_at_512_tokens_in_chromium():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Python Playwright is missing: `.venv/bin/pip install playwright`")
    chromium = ensure_chromium()
    sys.path.insert(0, str(ROOT))
    from bench.bench_long_inputs import long_text
    from model.store.registry import load_model

    bundle = load_model("minilm")
    first = long_text("minilm", 512)
    texts = [first, "people " + first, "rivers " + first]  # different sentences, still 512 tokens
    for text in texts:
        assert len(bundle.task.prepare(text, 512).source_ids) == 512
    del bundle

    timings: dict[str, float] = {}
    with running_app("streamlit_long_inputs.log") as port:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 1100})
                page_errors: list[str] = []
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                base = f"http://127.0.0.1:{port}"
                for path, name in (("", "single head"), ("heads", "all heads")):
                    page.goto(f"{base}/{path}?model=minilm&kind=encoder&layer=0&head=0&text={quote(texts[0])}",
                              wait_until="domcontentloaded")
                    page.wait_for_selector(HEATMAP, timeout=300_000)
                    page.wait_for_timeout(500)
                    box = page.get_by_role("textbox", name="Input sentence", exact=True)
                    assert box.input_value() == texts[0]  # the whole 512-token sentence, not cut
                    new = texts[1] if path else texts[2]
                    for label, text in ((f"{name}: new 512-token sentence -> painted (s)", new),
                                        (f"{name}: cached 512-token sentence -> painted (s)", texts[0])):
                        before = page.evaluate(HEATMAP_IMAGES_JS)
                        box.fill(text)
                        t0 = time.perf_counter()
                        box.press("Enter")
                        page.wait_for_function(IMAGES_CHANGED_JS, arg=before, timeout=300_000, polling="raf")
                        timings[label] = time.perf_counter() - t0
                        page.wait_for_timeout(300)
                    assert page.locator('[data-testid="stException"]').count() == 0, path
                    assert not page_errors, f"JavaScript errors on /{path}: {page_errors}"
            finally:
                browser.close()
    print()
    for label, seconds in timings.items():
        print(f"{label:<58} {seconds:6.2f}   (target for cached: <= {TARGET_S} s)")


def test_smollm2_at_1024_tokens_in_chromium():
    """SmolLM2 reads a 1,024-token prompt: single head and all heads draw with no page error. Prints the
    all-heads page's paint once the analysis and its pooled tiles are cached (target <= 2 s): a reload
    of the page's link, and a switch to another page of layers."""
    from playwright.sync_api import sync_playwright

    chromium = ensure_chromium()
    sys.path.insert(0, str(ROOT))
    from tests.app.test_long_context_pages import long_prompt

    text = long_prompt(1024)
    timings: dict[str, float] = {}
    with running_app("streamlit_long_smollm2.log") as port, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1100})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            base = f"http://127.0.0.1:{port}"
            for path, name in (("", "single head"), ("heads", "all heads")):
                t0 = time.perf_counter()
                page.goto(f"{base}/{path}?model=smollm2&layer=17&head=4&text={quote(text)}",
                          wait_until="domcontentloaded")
                page.wait_for_selector(HEATMAP, timeout=600_000)
                timings[f"{name}: first visit -> painted (s)"] = time.perf_counter() - t0
                page.wait_for_timeout(500)
                box = page.get_by_role("textbox", name="Input sentence", exact=True)
                assert box.input_value() == text  # the whole 1,024-token prompt, not cut
                assert page.locator('[data-testid="stException"]').count() == 0, path
                assert not errors, f"JavaScript errors on /{path}: {errors}"
            t0 = time.perf_counter()
            page.reload(wait_until="domcontentloaded")
            page.wait_for_selector(HEATMAP, timeout=120_000)
            timings["all heads: cached, the link reloaded -> painted (s)"] = time.perf_counter() - t0
            # the second page of layers (7 a page at this length: the figure's pooled-cell bound)
            second = page.get_by_text(re.compile(r"^L[1-9][0-9]*–L[0-9]+$")).first
            second.wait_for(timeout=60_000)
            label = second.inner_text()
            before = page.evaluate(HEATMAP_IMAGES_JS)
            t0 = time.perf_counter()
            second.click()
            # the grey mask layer is the same causal mask on every page of layers: the weights' image changes
            page.wait_for_function(SOME_IMAGE_CHANGED_JS, arg=before, timeout=120_000, polling="raf")
            timings[f"all heads: cached, layers {label} -> painted (s)"] = time.perf_counter() - t0
            page.wait_for_timeout(300)
            assert page.locator('[data-testid="stException"]').count() == 0
            assert not errors, f"JavaScript errors: {errors}"
            timings.update(_families_at_16384_characters(page, base, errors))
        finally:
            browser.close()
    print("\nSmolLM2 at 1,024 tokens in Chromium:")
    for label, seconds in timings.items():
        target = f"<= {FAMILIES_TARGET_S} s" if label.startswith("three families") else "for cached: <= 2 s"
        print(f"  {label:<56} {seconds:6.2f}   (target {target})")


#: The families page on a sentence at the text box's limit, from the link to the page settled.
FAMILIES_TARGET_S = 15
#: The page settled: its run over, and all three columns said what they read of the sentence.
FAMILIES_SETTLED_JS = """() => {
  const text = document.body.innerText;
  const running = document.querySelector('[data-testid="stStatusWidgetRunningIcon"]');
  return !running && (text.match(/this page reads at most 256 per model/g) || []).length === 2
    && text.includes('it reads at most 64')
    && document.querySelectorAll('[data-testid="stPlotlyChart"]').length >= 6;
}"""


def _families_at_16384_characters(page, base: str, errors: list[str]) -> dict[str, float]:
    """The families page on a sentence at the box's limit of 16,384 characters: each model reads at most
    256 tokens (said in its column), and the page settles within a few seconds (222 s before these
    bounds). The three models are loaded by a short sentence first. (A link of 100,000 characters is
    cut with its note in tests/app/test_families_page.py: no HTTP server here takes a request that long.)"""
    page.goto(f"{base}/families?model=smollm2&lang=en&sentence=The+cat+sat", wait_until="domcontentloaded")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length >= 6"
                           " && !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')",
                           timeout=300_000)
    box = page.get_by_role("textbox", name="The sentence", exact=True)
    sentence = ("bank " * 4_000)[:16_384]
    box.fill(sentence)
    t0 = time.perf_counter()
    box.press("Enter")
    page.wait_for_function(FAMILIES_SETTLED_JS, timeout=300_000, polling=200)
    seconds = time.perf_counter() - t0
    assert box.input_value() == sentence
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not errors, f"JavaScript errors on the families page: {errors}"
    # a regression guard at three times the target (the figure is printed; bench speed is not a test)
    assert seconds < 3 * FAMILIES_TARGET_S, f"the families page took {seconds:.1f} s at 16,384 characters"
    return {"three families: 16,384 characters -> settled (s)": seconds}
