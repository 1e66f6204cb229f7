"""The positional-encoding and worked-example pages on a Phi-3 with longrope (a tiny random folder
uploaded in "Your own models"), in both interface languages: each says which factors the sentence is
rotated with, short below the switch (16 positions) and long past it; and the attention page's notes say
which factors its numbers come from, also when the output took the sequence past the switch (AppTest)."""

from __future__ import annotations

import re

import pytest

from app_support.i18n import text as tr
from app_support.sidebar import NEW_TOKENS_PARAM
from model.core.messages import Message
from strings import message_text
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.app.test_upload_page import _zip_of
from tests.model.store.test_phi3_longrope import SWITCH, _save

SHORT_PROMPT = "w5 w17 w3"
LONG_PROMPT = " ".join(f"w{i}" for i in range(5, 5 + SWITCH + 2))
CROSSING_PROMPT = " ".join(f"w{i}" for i in range(5, 15))  # 10 words (+ <s>): 12 new tokens pass 16


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


def _page_text(at) -> str:
    parts = [e.value for e in (*at.markdown, *at.subheader, *at.caption, *at.info)]
    return " ".join(str(p) for p in parts).replace("\\", "")


def _uploaded(tmp_path, lang):
    """The app with the tiny longrope folder uploaded and chosen."""
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
    return at, at.session_state["model"], folder


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_say_which_longrope_factors_apply(tmp_path, lang):
    at, name, _ = _uploaded(tmp_path, lang)
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


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_attention_page_says_which_rope_factors_its_numbers_come_from(tmp_path, lang):
    """Below the switch: short; a prompt past it: long; a prompt below it whose output passes it: long, with
    the words that the first tokens were chosen with the short factors (one note each, nothing else)."""
    from model.run.analysis import analyze, attention_only
    from model.store.formats.hf_decoder import HF_DECODER

    at, name, folder = _uploaded(tmp_path, lang)
    bundle = HF_DECODER.load(folder)  # the same folder, read here for the lengths the notes name
    codes = ("rope_factors_short", "rope_factors_long", "rope_factors_switched")
    try:
        for prompt, new, code in ((SHORT_PROMPT, 2, "rope_factors_short"),
                                  (LONG_PROMPT, 2, "rope_factors_long"),
                                  (CROSSING_PROMPT, 12, "rope_factors_switched")):
            n = len(analyze(bundle, prompt, max_new=new, keep=attention_only).target_tokens)
            at.session_state["text"] = prompt
            at.session_state[NEW_TOKENS_PARAM] = new
            at.switch_page(PAGES["single"]).run()
            assert not at.exception, [e.message for e in at.exception]
            shown = [str(i.value).replace("\\", "") for i in at.info]
            want = {c: message_text(lang, Message(c, {"n": n, "switch": SWITCH}, "info")) for c in codes}
            assert want[code] in shown, (code, shown)
            assert not any(want[c] in shown for c in codes if c != code), shown
    finally:
        at.switch_page(PAGES["mymodels"]).run()
        at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
