"""The 'Your own models' page, driven through app.py with AppTest: a zip upload becomes the session's
model on every page, hostile uploads get one line naming the file while the app keeps working, the
folder picker offers only the configured folder, and the session's files go when the session does."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.runtime.caching import clear_session_resource_cache
from streamlit.testing.v1 import AppTest

from app_support import gateway as G
from app_support.i18n.check import untranslated
from model.data.tasks import SyntheticTask
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.formats.own import save_checkpoint
from model.store.registry import UnknownModelError, load_model, user_model, user_model_names
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.conftest import tiny_config
from tests.strings.test_strings import _visible_texts


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


@pytest.fixture
def folder(tmp_path) -> Path:
    torch.manual_seed(1)
    task = SyntheticTask("reverse")
    model = Transformer(tiny_config(vocab_size=task.tokenizer.vocab_size)).eval()
    directory = tmp_path / "models" / "tiny-reverse"
    save_checkpoint(directory, model, task, info={"example": "attention", "description": "my tiny model"})
    return directory


def _zip_of(directory: Path, extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(directory.iterdir()):
            z.writestr(f"{directory.name}/{p.name}", p.read_bytes())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


def _open(lang: str = "en", model: str = "reverse") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": "attention", "lang": lang})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader[0].set_value((name, data, "application/zip")).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _plain(markdown: str) -> str:
    """Markdown with its backslash escapes removed (what the reader sees)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _space_session(name: str) -> str:
    return user_model(name).owner.removeprefix("session-")


def test_an_uploaded_zip_becomes_the_sessions_model_on_every_page(folder):
    at = _upload(_open(), "tiny.zip", _zip_of(folder))
    assert not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    assert name.startswith("user-") and name.endswith("-tiny")
    assert user_model(name).label == "tiny.zip"
    assert "tiny.zip" in _plain(at.success[0].value) and name in at.success[0].value
    assert at.query_params["model"] == [name] or at.query_params["model"] == name
    assert "tiny.zip" in at.sidebar.selectbox(key="model").options  # listed under the name the user knows
    # The single-head page shows the uploaded model's own attention for the sidebar's sentence.
    at.switch_page(PAGES["single"]).run()
    assert not at.exception and not at.error
    expected = analyze(load_model(name), "attention")
    assert expected.source_tokens == analyze(load_model(name), at.session_state["text"]).source_tokens
    figure_text = " ".join(str(c.proto.spec) for c in at.get("plotly_chart"))
    assert expected.source_tokens[1] in figure_text
    # the row for it on the page, with a Remove button; removing it falls back to a shipped model
    at.switch_page(PAGES["mymodels"]).run()
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
    assert user_model(name) is None and at.session_state["model"] != name


def test_the_uploaded_model_answers_like_the_original(folder):
    at = _upload(_open(), "tiny.zip", _zip_of(folder))
    name = at.session_state["model"]
    mine, original = analyze(load_model(name), "attention"), analyze(load_model_from(folder), "attention")
    assert mine.output_text == original.output_text
    for key, value in original.activations.items():
        np.testing.assert_array_equal(mine.activations[key], value)


def load_model_from(directory: Path):
    from model.store.formats.own import load_checkpoint

    return load_checkpoint(directory)


HOSTILE = {
    "zip slip": (lambda f: _zip_of(f, {"../evil.json": b"{}"}), "../evil.json"),
    "pickle only": (lambda f: _pickle_only(), "pytorch_model.bin"),
    "not a zip": (lambda f: b"this is no zip" * 50, "bad.zip"),
    "broken config": (lambda f: _zip_of(f, {"config.json": b"{"}), "bad.zip"),
}


def _pickle_only() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("config.json", b'{"model_type": "bert"}')
        z.writestr("tokenizer.json", b"{}")
        z.writestr("pytorch_model.bin", b"\x80\x04not really a pickle")
    return buf.getvalue()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_refused_upload_says_why_in_one_line_and_the_app_keeps_working(folder, tmp_path, case, lang):
    make, named = HOSTILE[case]
    if case == "broken config":  # the folder's own config.json broken (a second one in the zip is refused)
        (folder / "config.json").write_bytes(b"{")
    at = _upload(_open(lang), "bad.zip", make(folder))
    assert len(at.error) == 1
    message = _plain(at.error[0].value)
    assert named in message, message
    assert "\n" not in message
    if lang == "zh":
        assert not untranslated(message, [named, "bad.zip"]) or case == "broken config", message
    assert at.session_state["model"] == "reverse"
    assert not list((tmp_path / "uploads").rglob("*.json")), "nothing of a refused upload stays"
    at.switch_page(PAGES["single"]).run()
    assert not at.exception and not at.error, "the shipped models stay usable"


def test_the_folder_picker_opens_only_folders_of_the_models_folder(folder, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "models" / "link-out").symlink_to(outside)
    at = _open()
    picker = at.selectbox(key="mymodels_folder")
    assert picker.options == ["tiny-reverse"]
    at.button(key="mymodels_open").click().run()
    assert not at.exception and not at.error
    name = at.session_state["model"]
    entry = user_model(name)
    assert entry.directory == folder and entry.size == 0
    clear_session_resource_cache(_space_session(name))
    assert user_model(name) is None
    assert (folder / "model.safetensors").is_file(), "a folder read in place is never deleted"


def test_the_session_ending_deletes_its_uploads(folder, tmp_path):
    at = _upload(_open(), "tiny.zip", _zip_of(folder))
    name = at.session_state["model"]
    directory = user_model(name).directory
    assert directory.is_dir() and directory.is_relative_to(tmp_path / "uploads")
    at.switch_page(PAGES["single"]).run()  # the page loads it into the app's model cache
    assert not at.exception
    stamp = G.stamp(name)
    cached = G._load(name, stamp)
    assert G._load(name, stamp) is cached
    assert G.holds(name)  # the page's analysis is cached
    clear_session_resource_cache(_space_session(name))  # what Streamlit does when the session disconnects
    assert not directory.exists() and not directory.parent.exists()
    assert not G.holds(name)  # and its analyses went too
    assert user_model(name) is None
    with pytest.raises(UnknownModelError):  # not served from the cache any more: loading it again fails
        G._load(name, stamp)


def test_a_session_holds_at_most_three_models(folder):
    at = _open()
    for i in range(3):
        at = _upload(at, f"m{i}.zip", _zip_of(folder))
        assert not at.error
    at = _upload(at, "m3.zip", _zip_of(folder))
    assert len(at.error) == 1 and "3" in at.error[0].value
    owner = user_model(at.session_state["model"]).owner
    assert len(user_model_names(owner)) == 3
    labels = at.sidebar.selectbox(key="model").options
    uploaded = ("m0.zip", "m1.zip", "m2.zip", "m3.zip")
    assert [x for x in labels if x in uploaded] == ["m0.zip", "m1.zip", "m2.zip"]
    clear_session_resource_cache(owner.removeprefix("session-"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_in_both_languages(folder, lang):
    at = _upload(_open(lang), "tiny.zip", _zip_of(folder))
    assert not at.error
    if lang == "zh":
        name = at.session_state["model"]
        # what this page adds to what every page shows (the shared sidebar is checked by the i18n tests)
        at.switch_page(PAGES["single"]).run()
        shared = set(_visible_texts(at))
        at.switch_page(PAGES["mymodels"]).run()
        own = [s for s in _visible_texts(at) if s not in shared]
        assert any("上传" in s for s in own)
        left = {s: untranslated(s, [name, "tiny.zip", "tiny-reverse", "attention"]) for s in own}
        assert not {s: f for s, f in left.items() if f}, left
    clear_session_resource_cache(_space_session(at.session_state["model"]))


def test_a_bert_style_upload_opens_as_an_encoder_only_model(tmp_path):
    from tests.model.store.test_user_models import tiny_bert_folder

    bert = tiny_bert_folder(tmp_path / "bert")
    at = _upload(_open(), "bert.zip", _zip_of(bert))
    assert not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    assert user_model(name).fmt == "bert"
    assert at.session_state["text"] == "The bank raised interest rates."
    assert len(at.sidebar.radio(key="kind").options) == 1  # encoder self-attention only: no decoder
    at.switch_page(PAGES["single"]).run()
    assert not at.exception and not at.error
    expected = analyze(load_model(name), "The bank raised interest rates.")
    figure_text = " ".join(str(c.proto.spec) for c in at.get("plotly_chart"))
    assert "[CLS]" in expected.source_tokens[0] and "bank" in expected.source_tokens
    assert "bank" in figure_text
    clear_session_resource_cache(_space_session(name))


def test_a_bare_gguf_file_is_taken_by_the_uploader_and_becomes_the_sessions_model(tmp_path):
    from tests.model.store.test_smollm2 import write_tiny

    write_tiny(tmp_path / "tiny.gguf")
    at = _open()
    accepted = [str(t).lower() for t in at.file_uploader[0].proto.type]
    assert any("gguf" in t for t in accepted) and any("zip" in t for t in accepted), accepted
    assert ".gguf" in at.file_uploader[0].proto.label  # the widget names what it takes
    at.file_uploader[0].set_value(("tiny.gguf", (tmp_path / "tiny.gguf").read_bytes(),
                                   "application/octet-stream")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    assert name.startswith("user-") and user_model(name).label == "tiny.gguf"
    assert user_model(name).size == (tmp_path / "tiny.gguf").stat().st_size  # counted like a zip
    assert load_model(name).cfg.n_dec_layers == 2
    at.button(key=f"mymodels_remove_{name}").click().run()  # a test process's AppTests share one session
    assert not at.exception and user_model(name) is None
