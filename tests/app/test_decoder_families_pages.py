"""Every page on each new decoder family (Qwen3, Gemma 3, Pythia / GPT-NeoX, Phi-3, OLMo 2), a tiny random
folder uploaded as a zip in "Your own models", in both interface languages: nothing raises, nothing errors,
and the pages drawn for language models show what the family brings (AppTest). The uploaded model is
removed afterwards: a test process's AppTests share one session, which keeps three."""

from __future__ import annotations

import pytest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from model.store.registry import load_model
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.app.test_upload_page import _zip_of
from tests.model.store.test_hf_decoder import _save

#: Longer than the tiny models' sliding window of 4, so the window cuts on the masks page.
PROMPT = "w5 w17 w3 w9 w40 w8"
FAMILIES = ("qwen3", "gemma3_text", "gpt_neox", "phi3", "olmo2")
#: What a page must show for a family: (page, string key) in the page's text.
SHOWN = {
    "qwen3": [("worked", "worked.norm.header"), ("architecture", "architecture.block.how.pre")],
    "gemma3_text": [("masks", "masks.window.header"), ("worked", "worked.norm.header"),
                    ("architecture", "architecture.block.how.both"),
                    ("positional", "positional.rope.bases_header")],
    "gpt_neox": [("worked", "worked.rotate.header"), ("positional", "positional.rope.partial_header")],
    "phi3": [("masks", "masks.window.header"), ("positional", "positional.rope.partial_header")],
    "olmo2": [("worked", "worked.norm.header")],
}


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


def _page_text(at) -> str:
    parts = [e.value for e in (*at.markdown, *at.subheader, *at.caption, *at.info)]
    return " ".join(str(p) for p in parts).replace("\\", "")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", FAMILIES)
def test_every_page_opens_on_each_new_family(tmp_path, kind, lang):
    from streamlit.testing.v1 import AppTest

    folder = tmp_path / f"tiny-{kind}"
    folder.mkdir()
    _save(kind, folder)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": lang})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value((f"tiny-{kind}.zip", _zip_of(folder), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    assert load_model(name).cfg.decoder_only
    at.session_state["text"] = PROMPT
    wanted = dict.fromkeys(page for page, _ in SHOWN[kind])
    try:
        for page in page_registry.PAGES:
            at.switch_page(page.file).run()
            assert not at.exception, (kind, page.key, [e.message for e in at.exception])
            assert not at.error, (kind, page.key, [e.value for e in at.error])
            shown = _page_text(at)
            for key in [k for p, k in SHOWN[kind] if p == page.key]:
                head = tr(lang, key).split("{")[0].replace("\\", "")[:30]
                assert head in shown, (kind, page.key, key)
                wanted.pop(page.key, None)
        assert not wanted, wanted
    finally:
        at.switch_page(PAGES["mymodels"]).run()
        at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
