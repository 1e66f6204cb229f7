"""Every page on Hugging Face translation folders (a tiny random Marian, BART and T5 v1.1, built in
tests/model/store/seq2seq_folders.py and uploaded as zips in "Your own models"), in both interface languages:
nothing raises, nothing errors, the decoder pages draw, and the decoding page runs beam search, sampling and
a typed reference (AppTest). On the T5 folder the positional page draws its relative position bias and the
worked example its '+ position bias' column."""

from __future__ import annotations

import pytest

from app_support import pages as page_registry
from model.store.registry import load_model
from tests.app.test_app_pages import APP, PAGES, TIMEOUT
from tests.app.test_upload_page import _zip_of
from tests.model.store.seq2seq_folders import (
    EN,
    ZH,
    bart_folder,
    marian_folder,
    separate_marian_folder,
    t5_folder,
)

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

#: Pages that draw a figure on every encoder-decoder (the others may draw one only for some input).
DRAWING = {"single", "heads", "decoding", "positional", "cost"}


@pytest.fixture(autouse=True)
def _private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))


def _upload(at, folder):
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value((f"{folder.name}.zip", _zip_of(folder), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at.session_state["model"]


def _clean(at):
    for page in ("exception", "error"):
        assert not getattr(at, page), [getattr(e, "message", getattr(e, "value", e))
                                       for e in getattr(at, page)]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["marian", "bart", "t5", "marian-separate"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_opens_on_an_uploaded_translation_folder(tmp_path, family, lang):
    from streamlit.testing.v1 import AppTest

    build = {"marian": marian_folder, "bart": bart_folder, "t5": t5_folder,
             "marian-separate": separate_marian_folder}[family]
    folder = build(tmp_path)[0]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": lang})
    at.run()
    name = _upload(at, folder)
    bundle = load_model(name)
    assert bundle.cfg.n_enc_layers and bundle.cfg.n_dec_layers
    at.session_state["text"] = ZH[0] if family.startswith("marian") else EN[0]
    drawn = []
    for page in page_registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (page.key, [e.message for e in at.exception])
        assert not at.error, (page.key, [e.value for e in at.error])
        if at.get("plotly_chart"):
            drawn.append(page.key)
        if family == "t5" and page.key == "positional":  # the bias per head, encoder and decoder
            shown = [c.proto.spec for c in at.get("plotly_chart")]
            assert sum(('"hv"' in s) for s in shown) >= 2, page.key
        if family == "t5" and page.key == "worked":
            columns = " ".join(str(df.value.columns.tolist()) for df in at.dataframe)
            assert ("+ position bias" if lang == "en" else "+ 位置偏置") in columns, columns
    assert DRAWING <= set(drawn), drawn
    # the decoding page: a typed reference (teacher forcing), beam search, sampling
    at.switch_page(PAGES["decoding"]).run()
    at.text_input(key="decode_ref").set_value(EN[0] if family.startswith("marian") else EN[1]).run()
    _clean(at)
    for kind in ("beam", "sample"):
        at.session_state["strategy_kind"] = kind
        at.switch_page(PAGES["decoding"]).run()
        _clean(at)
        assert at.get("plotly_chart"), kind
    at.switch_page(PAGES["mymodels"]).run()  # a test process's AppTests share one session, which keeps 3
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoding_page_names_separate_vocabulary_outputs_from_the_target_vocabulary(tmp_path, lang):
    """A Marian with separate vocabularies, uploaded: the decoding page's teacher-forcing table lists the
    reference's tokens as target_vocab.json names them (MarianTokenizer's target ids), not as vocab.json names
    the same ids, and every token the model would pick is a target-vocabulary token."""
    from streamlit.testing.v1 import AppTest

    from app_support.i18n import text

    folder, tok, _ = separate_marian_folder(tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": lang})
    at.run()
    name = _upload(at, folder)
    at.session_state["text"] = ZH[0]
    at.switch_page(PAGES["decoding"]).run()
    _clean(at)
    at.text_input(key="decode_ref").set_value(EN[0]).run()
    _clean(at)
    ids = tok(text_target=EN[0]).input_ids
    target = {i: t for t, i in tok.target_encoder.items()}
    source = {i: t for t, i in tok.encoder.items()}
    token_col, model_col = text(lang, "decoding.tf.col.token"), text(lang, "decoding.tf.col.model")
    (table,) = [df.value for df in at.dataframe if token_col in df.value.columns]
    assert table[token_col].tolist() == [target[i] for i in ids]
    assert table[token_col].tolist() != [source.get(i) for i in ids]
    assert set(table[model_col]) <= set(tok.target_encoder)
    at.switch_page(PAGES["mymodels"]).run()
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception


def test_a_direction_the_tables_do_not_name_is_shown_by_its_codes():
    from app_support.i18n import text
    from app_support.sidebar import direction_label

    assert direction_label("en", "zh->fra") == "zh → fra" == direction_label("zh", "zh->fra")
    assert direction_label("zh", "zh->en") == text("zh", "direction.zh->en")
