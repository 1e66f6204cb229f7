"""A Marian (opus-mt) folder in a real browser: Chromium uploads a zipped tiny random Marian folder (its
SentencePiece models and vocab.json, no tokenizer.json) to `streamlit run app.py`, then the step-by-step
decoding page draws its cross-attention.

Run with ``pytest -m browser -s tests/browser/test_marian_browser.py`` (needs /usr/bin/chromium, as
tests/browser/test_browser.py).
"""

from __future__ import annotations

import os
import time

import pytest

from tests.browser.test_browser import CHROMIUM_ARGS, ensure_chromium, menu_link, running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_decoding_page_on_an_uploaded_marian_folder(tmp_path):
    pytest.importorskip("transformers")
    from playwright.sync_api import sync_playwright

    from tests.app.test_upload_page import _zip_of
    from tests.model.store.seq2seq_folders import marian_folder

    chromium = ensure_chromium()
    folder = marian_folder(tmp_path / "built")[0]
    upload = tmp_path / "marian.zip"
    upload.write_bytes(_zip_of(folder))
    uploads, models = tmp_path / "uploads", tmp_path / "models"
    models.mkdir()
    env = {**os.environ, "ATTENTION_LENS_UPLOAD_DIR": str(uploads), "ATTENTION_LENS_USER_MODELS": str(models)}
    with running_app("streamlit_marian_server.log", env=env) as port:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1300, "height": 1000})
                page_errors: list[str] = []
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{port}/my-models?model=reverse&text=attention",
                          wait_until="domcontentloaded")
                page.wait_for_function("() => document.querySelector('h1') && "
                                       "document.querySelector('h1').textContent.includes('Your own models')",
                                       timeout=120_000)
                t0 = time.perf_counter()
                page.locator('input[type="file"]').set_input_files(str(upload))
                page.wait_for_function("() => document.body.innerText.includes('is loaded as')",
                                       timeout=120_000)
                print(f"\nMarian folder uploaded and loaded in {time.perf_counter() - t0:.2f} s")
                menu_link(page, "Decode & compare", "Step-by-step decoding").click()
                page.wait_for_function("() => document.querySelector('h1') && "
                                       "document.querySelector('h1').textContent"
                                       ".includes('Step-by-step decoding')",
                                       timeout=120_000)
                try:
                    page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=180_000)
                except Exception:
                    raise AssertionError(page.locator("body").inner_text(timeout=10_000)[:3000]) from None
                body = page.locator("body").inner_text(timeout=10_000)
                assert "model=user-" in page.evaluate("location.search")
                assert "Traceback" not in body and "Error" not in body[:2000], body[:2000]
                assert not page_errors, f"JavaScript errors: {page_errors}"
            finally:
                browser.close()
