"""The head atlas page, run on its own with AppTest: what it shows equals the atlas and the model's own
computation, its links reopen a sentence in the single-head page at the same head, the translation model
waits for a click, and the Chinese page has no English left."""

from __future__ import annotations

import functools
import json
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages
from app_support.i18n import text
from app_support.i18n.check import untranslated
from model.lab.atlas import held_out_dataset, load_or_compute
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

ROOT = REPO_ROOT
PAGE = str(ROOT / "app_pages" / "atlas.py")
SINGLE = str(ROOT / "app_pages" / "single.py")


@pytest.fixture(scope="module", autouse=True)
def _atlas_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path_factory.mktemp("atlas")))
    yield
    mp.undo()


@functools.cache
def bundle(name: str):
    return load_model(name)


def open_page(model: str, kind: str, layer: int, head: int, lang: str = "en", **extra: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": bundle(model).task.example, "kind": kind,
                            "layer": str(layer), "head": str(head), "lang": lang, **extra})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=np.float64)


@functools.cache
def reverse_page():
    return open_page("reverse", "cross", 1, 0)


def stored(model: str, n: int | None = None):
    atlas, cached = load_or_compute(bundle(model), n)
    assert cached, "the page stored the atlas it showed"
    return atlas


def test_reverse_page_shows_the_atlas_it_stored():
    at = reverse_page()
    atlas = stored("reverse")
    captions = " ".join(c.value for c in at.caption)
    assert "Computed now" in captions
    assert f"**{sum(atlas.exact)}** of the 500 words" in " ".join(m.value for m in at.markdown)
    head_map, similarity = figures(at)
    # the map: the alignment of every cross-attention head, each cell naming its roles
    np.testing.assert_allclose(arr(head_map["data"][0]["z"]), atlas.stats["alignment"]["cross"], atol=1e-6)
    cells = head_map["data"][0]["text"]
    for layer in range(2):
        for head in range(4):
            names = [text("en", f"atlas.role.{r.name}") for r in atlas.roles("cross", layer, head)]
            assert cells[layer][head] == " · ".join(names)
    assert all(cells[1][h] == "alignment" for h in range(4)), "the measured expectation, on the page"
    # the similarity map: 1 - JS/log 2 in the clustering order
    order = atlas.order["cross"]
    want = atlas.similarity("cross")[np.ix_(order, order)]
    np.testing.assert_allclose(arr(similarity["data"][0]["z"]), want, atol=1e-6)
    assert similarity["layout"]["xaxis"]["ticktext"] == [atlas.head_labels("cross")[i] for i in order]


def test_reverse_page_tables_hold_the_atlas_figures():
    at = reverse_page()
    atlas = stored("reverse")
    frames = [el.value for el in at.dataframe]
    rules, heads, top = frames
    assert list(rules.iloc[:, 2]) == [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.75]
    assert rules.iloc[3, 3] == "L1H0 L1H1 L1H2 L1H3"  # alignment: the layer-1 cross heads
    for _, row in heads.iterrows():
        layer, head = int(row["layer"]), int(row["head"])
        for stat in ("entropy", "max_weight", "sink_share", "alignment"):
            assert row[stat] == pytest.approx(atlas.stat(stat, "cross", layer, head), abs=1e-9)
        assert "diagonal" not in heads.columns, "positional figures are left out for cross-attention"
    assert heads.loc[heads.layer == 1, "roles"].str.startswith("alignment (").all()
    # where does layer 1, head 0 fire: the most concentrated sentences, in order
    values = atlas.per_sentence["cross"][:, 1, 0]
    assert list(top["max_weight"]) == pytest.approx(sorted(values, reverse=True)[:10], abs=1e-6)
    assert list(top["sentence"]) == [atlas.texts[i] for i in atlas.top_sentences("cross", 1, 0)]


def test_a_fire_link_opens_the_sentence_in_the_single_head_page_at_that_head():
    at = reverse_page()
    top = at.dataframe[2].value
    link, sentence, shown = top.loc[0, "link"], top.loc[0, "sentence"], top.loc[0, "max_weight"]
    url = urlsplit(link)
    assert url.path.rstrip("/") in (".", "./" + pages.START_PAGE.url_path.rstrip("/"))
    params = dict(parse_qsl(url.query))
    assert params == {"lang": "en", "model": "reverse", "text": sentence, "kind": "cross", "layer": "1",
                      "head": "0"}
    assert set(params) <= set(pages.APP_PARAMS)
    single = AppTest.from_file(SINGLE, default_timeout=300)
    single.query_params.update(params)
    single.run()
    assert not single.exception, [e.message for e in single.exception]
    heat = figures(single)[0]
    z = arr(heat["data"][0]["z"])
    want = analyze(bundle("reverse"), sentence).attention("cross")[1, 0]
    np.testing.assert_allclose(z, want, atol=1e-6)
    assert want.max(-1).mean() == pytest.approx(shown, abs=1e-5), "the page's figure is this sentence's"


def test_a_second_visit_reads_the_atlas_from_disk():
    reverse_page()
    again = open_page("reverse", "encoder", 0, 2)
    assert "Read from `runs/atlas/`" in " ".join(c.value for c in again.caption)
    heads = again.dataframe[1].value
    assert {"diagonal", "previous", "next", "mean_distance"} <= set(heads.columns)
    assert "alignment" not in heads.columns


def test_translation_model_waits_for_a_click_above_the_budget_and_computes_a_small_sample_at_once():
    at = open_page("default", "encoder", 0, 0, n="200")
    assert not figures(at), "200 sentences: nothing computed before the click"
    assert at.button(key="atlas_compute").label == text("en", "atlas.compute", n=200)
    data = held_out_dataset(bundle("default"), 200)
    assert f"**200** of the **{data.total}** sentences" in " ".join(m.value for m in at.markdown)
    at.selectbox(key="atlas_n").set_value(50).run()  # 50 x 64 positions: within the page's budget
    assert not at.exception, [e.message for e in at.exception]
    atlas = stored("default", 50)
    assert len(atlas.texts) == 50
    head_map = figures(at)[0]
    np.testing.assert_allclose(arr(head_map["data"][0]["z"]), atlas.stats["max_weight"]["encoder"], atol=1e-6)
    top = at.dataframe[2].value
    assert set(top["sentence"]) <= set(atlas.texts)
    dirs = dict(zip(atlas.texts, atlas.directions, strict=True))
    for link, sentence in zip(top["link"], top["sentence"], strict=True):
        assert dict(parse_qsl(urlsplit(link).query))["dir"] == dirs[sentence]
    assert text("en", "atlas.no_truth") in " ".join(c.value for c in at.caption)


def test_the_button_computes_the_atlas(monkeypatch):
    monkeypatch.setattr("app_pages.glue.atlas.AUTO_COMPUTE_TOKENS", 0)  # every atlas waits for the click
    at = open_page("copy", "cross", 0, 0)
    assert not figures(at)
    at.button(key="atlas_compute").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Computed now" in " ".join(c.value for c in at.caption)
    atlas = stored("copy")
    shown = arr(figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(shown, atlas.stats["alignment"]["cross"], atol=1e-6)


@pytest.mark.parametrize("kind", ["cross", "decoder"])
def test_chinese_page_has_no_english_left(kind):
    at = open_page("reverse", kind, 1, 0, lang="zh")
    assert at.title[0].value == text("zh", "page.atlas.title")
    tokens = [bundle("reverse").task.example]
    left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
    left = {s: found for s, found in left.items() if found and "MiniLM" not in s}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_language_model_atlas_runs_over_its_prompt_set(lang):
    at = open_page("induction", "decoder", 0, 0, lang, stat="first_share")
    atlas = stored("induction", 50)
    shown = " ".join(m.value for m in at.markdown)
    what = text(lang, "atlas.prompts.induction")
    assert text(lang, "atlas.dataset_prompts", n=50, what=what, new=16) in shown
    z = arr(figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z, atlas.stats["first_share"]["decoder"], atol=1e-6)
    rules = at.dataframe[0].value
    assert rules.iloc[0, 3].split() == [f"L{li}H{h}" for li in range(2) for h in range(4)
                                        if any(r.name == "previous" for r in atlas.roles("decoder", li, h))]
    assert "L0H0" in rules.iloc[0, 3], "the induction model's previous-token head (measured 0.70)"
    if lang == "zh":
        tokens = [bundle("induction").task.example] + atlas.texts + atlas.outputs
        left = {s: found for s in _visible_texts(at) if (found := untranslated(s, tokens))}
        assert not left, json.dumps(left, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_corpus_atlas_computed_elsewhere_opens_with_its_name_size_and_how(lang, tmp_path, monkeypatch):
    import os
    import shutil

    from model.lab.atlas import atlas_dir
    from model.lab.atlas_corpus import read_corpus
    from model.lab.atlas_shards import ModelSpec, run_corpus

    here = atlas_dir()
    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path / "elsewhere"))
    corpus_file = tmp_path / "my_prompts.txt"
    corpus_file.write_text("".join(t + "\n" for t in held_out_dataset(bundle("induction"), 30).texts))
    run = run_corpus(bundle("induction"), ModelSpec(name="induction"), read_corpus(corpus_file), 20, seed=5,
                     shard_size=8)
    copied = here / "induction" / run.folder.name
    shutil.copytree(run.folder, copied)  # the run folder, copied in from the machine that computed it
    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(here))
    try:
        at = open_page("induction", "decoder", 0, 0, lang, stat="previous")
        assert at.selectbox(key="atlas_data").value == "held-out", "the held-out data stays the default"
        at.selectbox(key="atlas_data").set_value(0).run()
        assert not at.exception, [e.message for e in at.exception]
        shown = " ".join(m.value for m in at.markdown)
        assert text(lang, "atlas.corpus_dataset", name="my_prompts.txt", n=20, total=30, seed=5) in shown
        how = " ".join(c.value for c in at.caption)
        assert text(lang, "atlas.corpus_how", engine=text(lang, "atlas.engine.local"), workers=1, processes=1,
                    hosts=1, shards=3, size=8, seconds=f"{run.atlas.seconds:.1f}",
                    sha=run.atlas.source["corpus_sha256"][:12]) in how
        z = arr(figures(at)[0]["data"][0]["z"])
        np.testing.assert_allclose(z, run.atlas.stats["previous"]["decoder"], atol=1e-6)
        top = at.dataframe[2].value
        assert set(top["sentence"]) <= set(run.atlas.texts)
        if lang == "zh":
            tokens = [bundle("induction").task.example, "my_prompts.txt", *run.atlas.texts]
            left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
            assert not {s: f for s, f in left.items() if f}, left
    finally:
        shutil.rmtree(copied)
        os.sync()
