"""Your own models in a real browser: Chromium uploads a zipped checkpoint to `streamlit run app.py`,
the single-head page then draws the uploaded model, and closing the tab deletes the upload.

Run with ``pytest -m browser -s tests/browser/test_upload_browser.py`` (needs /usr/bin/chromium, as
tests/browser/test_browser.py). Prints the time from choosing the file to the model being loaded.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
from pathlib import Path

import pytest

from tests.browser.test_browser import CHROMIUM_ARGS, ensure_chromium, menu_link, running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _checkpoint_zip(path: Path) -> None:
    """A zip of a tiny reverse model of this project's format (made with its own save_checkpoint)."""
    import torch

    from model.data.tasks import SyntheticTask
    from model.network.transformer import Transformer
    from model.store.formats.own import save_checkpoint
    from tests.conftest import tiny_config

    torch.manual_seed(3)
    task = SyntheticTask("reverse")
    folder = path.parent / "made"
    save_checkpoint(folder, Transformer(tiny_config(vocab_size=task.tokenizer.vocab_size)).eval(), task,
                    info={"example": "attention"})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.iterdir()):
            z.writestr(f"tiny/{p.name}", p.read_bytes())
    path.write_bytes(buf.getvalue())


def _step(what: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {what}", flush=True)


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_upload_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    chromium = ensure_chromium()
    uploads, models = tmp_path / "uploads", tmp_path / "models"
    models.mkdir()
    upload = tmp_path / "tiny.zip"
    _checkpoint_zip(upload)

    env = {**os.environ, "ATTENTION_LENS_UPLOAD_DIR": str(uploads),
           "ATTENTION_LENS_USER_MODELS": str(models)}
    with running_app("streamlit_upload_server.log", env=env) as port:
        _step("server up")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1300, "height": 1000})
                page = context.new_page()
                page_errors: list[str] = []
                page.on("pageerror", lambda e: page_errors.append(str(e)))
                base = f"http://127.0.0.1:{port}"
                page.goto(f"{base}/my-models?model=reverse&text=attention", wait_until="domcontentloaded")
                page.wait_for_function("() => document.querySelector('h1') && "
                                       "document.querySelector('h1').textContent.includes('Your own models')",
                                       timeout=120_000)
                t0 = time.perf_counter()
                page.locator('input[type="file"]').set_input_files(str(upload))
                page.wait_for_function("() => document.body.innerText.includes('is loaded as')",
                                       timeout=120_000)
                loaded_s = time.perf_counter() - t0
                _step(f"uploaded and loaded in {loaded_s:.2f} s")
                page.wait_for_function("() => location.search.includes('model=user-')", timeout=60_000)
                files = _files_under(uploads)
                assert {f.name for f in files} >= {"config.json", "model.safetensors", "tokenizer.json"}
                # In the same session (the menu, not a new page load), the single-head page draws it.
                menu_link(page, "Attention", "Single head").click()
                page.wait_for_function("() => document.querySelector('h1') && "
                                       "document.querySelector('h1').textContent.includes('Single head')",
                                       timeout=120_000)
                _step("single-head page opened")
                heatmap = '[data-testid="stPlotlyChart"] .heatmaplayer image'
                try:
                    page.wait_for_selector(heatmap, timeout=180_000)
                except Exception:
                    raise AssertionError(page.locator("body").inner_text(timeout=10_000)[:3000]) from None
                _step("heatmap drawn")
                assert "model=user-" in page.evaluate("location.search")
                assert not page_errors, f"JavaScript errors: {page_errors}"
                # A hostile upload gets its one line and the page goes on working.
                menu_link(page, "Under the hood", "Your own models").click()
                bad = tmp_path / "bad.zip"
                with zipfile.ZipFile(bad, "w") as z:
                    z.writestr("../evil.json", "{}")
                page.locator('input[type="file"]').set_input_files(str(bad))
                page.wait_for_function("() => document.body.innerText.includes('points outside')",
                                       timeout=120_000)
                assert not (tmp_path / "evil.json").exists()
                _step("hostile upload refused")
                context.close()  # the tab closes: Streamlit releases the session's resources
                deadline = time.time() + 60
                while _files_under(uploads) and time.time() < deadline:
                    time.sleep(0.5)
                assert _files_under(uploads) == [], "the session's uploads outlived it"
                _step("uploads deleted with the session")
                # The Chinese page opens too.
                zh = browser.new_page()
                zh.on("pageerror", lambda e: page_errors.append(str(e)))
                zh.goto(f"{base}/my-models?lang=zh&model=reverse", wait_until="domcontentloaded")
                zh.wait_for_function("() => document.body.innerText.includes('上传 zip 或 .gguf 文件')",
                                     timeout=120_000)
                assert not page_errors, f"JavaScript errors: {page_errors}"
            finally:
                browser.close()
    size_kb = upload.stat().st_size / 1024
    print(f"\nupload of a {size_kb:.0f} KB zip -> model loaded and selected: {loaded_s:.2f} s")
