"""The head detectors page in both interface languages (AppTest): its numbers are the lab's, its link
and URL parameters work, and bad input gets a one-line message."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_pages.glue import detectors as DT
from app_support import pages as page_registry
from app_support.i18n import text as tr
from model.lab import detectors as D
from model.store.registry import load_model
from tests.paths import REPO_ROOT

PAGE = page_registry.page("detectors")


def _open(model: str, lang: str, text: str, **params) -> AppTest:
    """The page run on its own, as a link opens it (the router is tested with every page elsewhere)."""
    at = AppTest.from_file(str(REPO_ROOT / PAGE.file), default_timeout=300)
    at.query_params.update({"model": model, "text": text, "lang": lang, **params})
    return at.run()


def _markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def _clean(s: str) -> str:
    return s.replace("\\", "")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_induction_models_heads_on_the_probes(lang):
    at = _open("induction", lang, "abcabc", role="induction", probe="0")
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    scores = D.probe_scores(load_model("induction"), 0)
    layer, head = scores.best("induction")
    assert layer == 1
    table = at.dataframe[0].value
    assert (int(table.iloc[0]["layer"]), int(table.iloc[0]["head"])) == (layer, head)
    assert table.iloc[0]["score"] == pytest.approx(scores.scores["induction"][layer, head])
    assert f"layer={layer}" in table.iloc[0]["link"] and f"lang={lang}" in table.iloc[0]["link"]
    expected = tr(lang, "detectors.threshold", threshold="0.3", mark="●", heads=f"L{layer}H{head}")
    assert _clean(expected) in [_clean(m) for m in _markdown(at)]
    # the induction role needs a repeated sequence: the user's text gets a sentence instead
    needs = tr(lang, "detectors.text_needs_probe", role=tr(lang, "detectors.role.induction"))
    assert needs in [i.value for i in at.info]
    assert at.selectbox(key="det_role").value == "induction" and at.number_input(key="det_seed").value == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_previous_token_on_the_users_text_too(lang):
    text = "the cat sat on the mat"
    at = _open("tiny-gpt", lang, text, role="previous", probe="7")
    assert not at.exception, [e.message for e in at.exception]
    mine = D.text_scores(load_model("tiny-gpt"), text)
    best = mine.best("previous")
    tables = [d.value for d in at.dataframe]
    assert len(tables) == 2 and len(at.get("plotly_chart")) == 2
    row = tables[1].iloc[0]
    assert (int(row["layer"]), int(row["head"])) == best
    assert row["score"] == pytest.approx(mine.scores["previous"][best])
    probe = D.probe_scores(load_model("tiny-gpt"), 7)
    assert tables[0].iloc[0]["score"] == pytest.approx(np.nanmax(probe.scores["previous"]))
    assert at.number_input(key="det_seed").value == 7 and at.selectbox(key="det_role").value == "previous"
    assert all("text=the+cat+sat" in link for link in tables[1]["link"])  # links open the user's text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_encoder_has_no_copying_score_and_says_why(lang):
    at = _open("minilm", lang, "The bank raised interest rates.", role="copying")
    assert not at.exception, [e.message for e in at.exception]
    role = at.selectbox(key="det_role")
    assert tr(lang, "detectors.role.copying") not in role.options and role.value == "induction"
    assert tr(lang, "detectors.role.induction") in role.options
    assert tr(lang, "detectors.copying_none.no_unembed") in [c.value for c in at.caption]


def test_a_bad_url_falls_back_to_the_defaults():
    at = _open("tiny-gpt", "en", "<b>bold</b> <b>bold</b>", role="nonsense", probe="-3")
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error
    assert at.selectbox(key="det_role").value == "induction" and at.number_input(key="det_seed").value == 0


def test_the_link_opens_the_probe_on_the_single_head_page():
    bundle = load_model("induction")
    text = D.probe_texts(bundle)[0]
    link = DT.head_link("induction", text, "decoder", 1, 3, "en")
    at = AppTest.from_file(str(REPO_ROOT / page_registry.START_PAGE.file), default_timeout=300)
    at.query_params.update(dict(parse_qsl(urlsplit(link).query)))
    at.run()
    assert not at.exception
    assert at.query_params["text"] in (text, [text]) and at.query_params["layer"] in ("1", ["1"])
    assert at.session_state["layer"] == 1 and at.session_state["head"] == 3


def _figures(at: AppTest) -> list[dict]:
    import json

    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_detectors_over_a_corpus_run_found_in_runs_atlas(lang, tmp_path, monkeypatch):
    from app_support.i18n.check import untranslated
    from model.lab.atlas import held_out_dataset
    from model.lab.atlas_corpus import read_corpus
    from model.lab.atlas_shards import ModelSpec, run_corpus
    from tests.strings.test_strings import _visible_texts
    from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path / "atlas"))
    bundle = load_model("induction")
    corpus_file = tmp_path / "my_prompts.txt"
    corpus_file.write_text("".join(t + "\n" for t in held_out_dataset(bundle, 30).texts), encoding="utf-8")
    run = run_corpus(bundle, ModelSpec(name="induction"), read_corpus(corpus_file), 20, seed=5, shard_size=8)
    at = _open("induction", lang, "abcabc", role="previous", probe="0")
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="det_data").value == "text", "the user's text stays the default"
    at.selectbox(key="det_data").set_value(0).run()
    assert not at.exception, [e.message for e in at.exception]
    assert tr(lang, "detectors.corpus_header") in [h.value for h in at.subheader]
    shown = " ".join(_markdown(at))
    assert tr(lang, "detectors.corpus_explain", name="my_prompts.txt", n=20, total=30, seed=5) in shown
    src = run.atlas.source
    assert tr(lang, "detectors.corpus_how", engine=tr(lang, "detectors.engine.local"), workers=1, processes=1,
              hosts=1, shards=3, size=8, seconds=f"{run.atlas.seconds:.1f}",
              sha=src["corpus_sha256"][:12]) in [c.value for c in at.caption]
    z = _figures(at)[1]["data"][0]["z"]
    z = np.asarray(decode_plotly_array(z) if is_typed_array_spec(z) else z, dtype=float)
    np.testing.assert_allclose(z, run.detectors.corpus.scores["previous"], atol=1e-6)
    row = at.dataframe[1].value.iloc[0]
    layer, head = int(row["layer"]), int(row["head"])
    assert row["score"] == pytest.approx(np.nanmax(run.detectors.corpus.scores["previous"]))
    top = run.atlas.texts[run.atlas.top_sentences("decoder", layer, head, 1)[0]]
    assert dict(parse_qsl(urlsplit(row["link"]).query))["text"] == top, "each head opens its top prompt"
    if lang == "zh":
        tokens = [bundle.task.example, "my_prompts.txt", "abcabc", *run.atlas.texts]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        assert not {s: f for s, f in left.items() if f}, left
    # a probe-only role says so instead of a corpus map
    at.selectbox(key="det_role").set_value("induction").run()
    needs = tr(lang, "detectors.text_needs_probe", role=tr(lang, "detectors.role.induction"))
    assert needs in [i.value for i in at.info] and len(at.get("plotly_chart")) == 1
