"""Every page on a local Hugging Face decoder checkpoint (a tiny random Llama folder, uploaded as a zip
in "Your own models"), in both interface languages: nothing raises, nothing errors, and a page drawn
for language models draws (AppTest)."""

from __future__ import annotations

import pytest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from app_support.models import model_label
from model.store.registry import load_model
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.app.test_upload_page import _zip_of
from tests.model.store.test_hf_decoder import _save

PROMPT = "w5 w17 w3 w9"


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_opens_on_an_uploaded_llama_folder(tmp_path, lang):
    from streamlit.testing.v1 import AppTest

    folder = tmp_path / "tiny-llama"
    folder.mkdir()
    _save("llama", folder)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": lang})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value(("tiny-llama.zip", _zip_of(folder), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    assert load_model(name).cfg.decoder_only
    notice = tr(lang, "page.not_for_language_models", model=model_label(name, lang)).replace("\\", "")
    at.session_state["text"] = PROMPT
    drawn = []
    for page in page_registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (page.key, [e.message for e in at.exception])
        assert not at.error, (page.key, [e.value for e in at.error])
        said = [i.value.replace("\\", "") for i in at.info]
        assert (notice in said) == (not page.for_language_models), (page.key, said)
        if at.get("plotly_chart"):
            drawn.append(page.key)
    assert {"single", "heads", "decoding", "positional", "cost"} <= set(drawn), drawn
    at.switch_page(PAGES["mymodels"]).run()  # a test process's AppTests share one session, which keeps 3
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception


def test_an_uploaded_gguf_is_listed_with_its_format_and_opens(tmp_path):
    import io
    import zipfile

    from streamlit.testing.v1 import AppTest

    from tests.model.store.test_smollm2 import write_tiny

    write_tiny(tmp_path / "tiny.gguf")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.write(tmp_path / "tiny.gguf", "tiny.gguf")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": "en"})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value(("tiny.zip", buf.getvalue(), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert load_model(at.session_state["model"]).cfg.decoder_only
    shown = " ".join(m.value for m in at.markdown)
    assert tr("en", "mymodels.fmt.gguf") in shown
    at.switch_page(PAGES["single"]).run()
    assert not at.exception and not at.error and at.get("plotly_chart")
    name = at.session_state["model"]
    at.switch_page(PAGES["mymodels"]).run()  # a test process's AppTests share one session, which keeps 3
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
