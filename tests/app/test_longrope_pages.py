"""The positional-encoding and worked-example pages on a Phi-3 with longrope (a tiny random folder
uploaded in "Your own models"), in both interface languages: each says which factors the sentence is
rotated with, short below the switch (16 positions) and long past it (AppTest)."""

from __future__ import annotations

import re

import pytest

from app_support.i18n import text as tr
from app_support.sidebar import NEW_TOKENS_PARAM
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.app.test_upload_page import _zip_of
from tests.model.store.test_phi3_longrope import SWITCH, _save

SHORT_PROMPT = "w5 w17 w3"
LONG_PROMPT = " ".join(f"w{i}" for i in range(5, 5 + SWITCH + 2))


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


def _page_text(at) -> str:
    parts = [e.value for e in (*at.markdown, *at.subheader, *at.caption, *at.info)]
    return " ".join(str(p) for p in parts).replace("\\", "")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_say_which_longrope_factors_apply(tmp_path, lang):
    from streamlit.testing.v1 import AppTest

    folder = tmp_path / "tiny-phi3-longrope"
    folder.mkdir()
    _save(folder)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": lang})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value(("tiny-phi3-longrope.zip", _zip_of(folder), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    try:
        for prompt, which in ((SHORT_PROMPT, "short"), (LONG_PROMPT, "long")):
            at.session_state["text"] = prompt
            at.session_state[NEW_TOKENS_PARAM] = 2
            for page, key in (("positional", f"positional.rope.longrope_{which}"),
                              ("worked", f"worked.rotate.longrope_{which}")):
                at.switch_page(PAGES[page]).run()
                assert not at.exception, (page, [e.message for e in at.exception])
                assert not at.error, (page, [e.value for e in at.error])
                head = tr(lang, key).split("{")[0][:20]
                assert head in _page_text(at), (page, which, head)
                if page == "worked":  # the rotation by hand is the model's hook_rot_q
                    check = [c.value for c in at.caption if "hook_rot_q" in str(c.value)]
                    found = re.search(r"\d\.\d+e[-+]\d+", check[0]) if check else None
                    assert found and float(found.group()) <= 1e-5, check
    finally:
        at.switch_page(PAGES["mymodels"]).run()
        at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
