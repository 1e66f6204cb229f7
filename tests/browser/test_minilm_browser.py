"""MiniLM in a real browser: Chromium opens the single-head and all-heads pages on the bank sentence,
with the tokens as they are, with [CLS]/[SEP] hidden and with word pieces merged into words.

Checks the single-head heatmap's x axis holds exactly the shown tokens (words after merging, no
[CLS]/[SEP] once hidden), the all-heads grid paints, and no JavaScript error happens. Prints the
time from opening each view to its heatmap being painted.

Run with ``pytest -m browser -s tests/browser/test_minilm_browser.py`` (needs /usr/bin/chromium, as
tests/browser/test_browser.py).
"""

from __future__ import annotations

import html
import sys
import time
from urllib.parse import urlencode

import pytest

from tests.browser.test_browser import (
    CHROMIUM_ARGS,
    ROOT,
    SCREENSHOTS,
    TICKS_MATCH_JS,
    X_TICKS_JS,
    ensure_chromium,
    running_app,
    save_small_png,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEATMAP = '[data-testid="stPlotlyChart"] .heatmaplayer image'
BANK = "The bank raised interest rates."
PIECES = "Tokenizers split unbelievably long embeddings."  # words cut into ## pieces
# (sentence, URL options): the tokens as they are, specials hidden and renormalised, pieces merged
VIEWS = [
    (BANK, {}),
    (BANK, {"pieces": "words", "special": "renorm"}),
    (PIECES, {"pieces": "words"}),
    (PIECES, {"pieces": "words", "special": "hide"}),
]


def _expected_ticks(sentence: str, options: dict[str, str]) -> list[str]:
    """The x-axis labels the single-head page must draw: from the model's tokens, merged by hand."""
    import viz
    from model.run.analysis import analyze
    from model.store.registry import load_model

    ref = analyze(load_model("minilm"), sentence)
    hide = options.get("special", "show") != "show"
    words: list[str] = []
    for i, (tok, special) in enumerate(zip(ref.source_tokens, ref.source_special, strict=True)):
        if hide and special:
            continue
        continues = tok.startswith("##") and i > 0 and not ref.source_special[i - 1]
        if options.get("pieces") == "words" and continues and words:
            words[-1] += tok.removeprefix("##")
        else:
            words.append(tok)
    return [html.unescape(t) for t in viz.token_labels(words)]


def test_minilm_attention_pages_in_chromium():
    from playwright.sync_api import sync_playwright

    chromium = ensure_chromium()
    sys.path.insert(0, str(ROOT))
    expected = [_expected_ticks(s, o) for s, o in VIEWS]
    assert "[CLS]" in expected[0] and "[CLS]" not in expected[1]
    assert "embeddings" in expected[2] and "##bed" not in expected[2]

    timings: list[str] = []
    with running_app("streamlit_minilm_server.log") as port:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 1100})
                page_errors: list[str] = []
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                base = f"http://127.0.0.1:{port}"
                for (sentence, options), ticks in zip(VIEWS, expected, strict=True):
                    query = urlencode({"model": "minilm", "text": sentence, "layer": 2, "head": 5, **options})
                    t0 = time.perf_counter()
                    page.goto(f"{base}/?{query}", wait_until="domcontentloaded")
                    try:
                        page.wait_for_function(TICKS_MATCH_JS, arg=ticks, timeout=180_000, polling="raf")
                    except Exception:
                        raise AssertionError((page.evaluate(X_TICKS_JS), ticks)) from None
                    what = options or "as tokenized"
                    timings.append(f"single head {what}: {time.perf_counter() - t0:.2f} s")
                    if options.get("pieces"):  # the page says what it shows
                        page.wait_for_function("() => document.body.innerText.includes('Word pieces merged')",
                                               timeout=60_000)
                    t0 = time.perf_counter()
                    page.goto(f"{base}/heads?{query}", wait_until="domcontentloaded")
                    page.wait_for_selector(HEATMAP, timeout=180_000)
                    timings.append(f"all heads {what}: {time.perf_counter() - t0:.2f} s")
                    assert not page_errors, f"JavaScript errors: {page_errors}"
                page.wait_for_timeout(300)
                save_small_png(page, SCREENSHOTS / "minilm_heads_merged.png")
                assert not page_errors, f"JavaScript errors: {page_errors}"
            finally:
                browser.close()
    print("\nMiniLM in Chromium (page load to heatmap painted):\n  " + "\n  ".join(timings))
