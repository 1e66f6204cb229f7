"""The talk deck: its figures from arrays (viz.deck) and the page itself (AppTest), whose figures must
equal the model's own tensors, slide by slide, in both languages."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_pages.glue import deck as DK
from app_support.i18n import text as tr
from model.export.archive import inspect_meta
from model.lab.pitfalls import order_run
from model.network.kinds import hook_name
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.figures import title_of
from tests.paths import REPO_ROOT
from viz import deck as VD
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGE = str(REPO_ROOT / "app_pages" / "deck.py")


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def full(name: str, text: str):
    return analyze(bundle(name), text)


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array([np.nan if v is None else v for v in value], dtype=np.float64) \
        if value and not isinstance(value[0], list) else \
        np.array([[np.nan if v is None else v for v in row] for row in value], dtype=np.float64)


def resid_norm(acts: dict, hook: str) -> np.ndarray:
    x = acts[hook][0].astype(np.float64)  # [pos, d_model]
    return np.sqrt((x * x).sum(-1))


# --------------------------------------------------------------------------- viz.deck, from arrays


def test_residual_norms_are_the_norms_of_the_recorded_stream():
    result = full("default", "我吃了一个苹果")
    acts = result.activations
    enc = VD.residual_norms(acts, "encoder")
    n_layers = result.n_layers("encoder")
    # embedding + position, then (attention, FFN) per block, then the final output
    assert len(enc.points) == 1 + 2 * n_layers + 1
    assert enc.points[0] == "encoder.embed.hook_resid_in" and enc.points[-1] == "encoder.hook_out"
    for i, hook in enumerate(enc.points):
        np.testing.assert_allclose(enc.norms[i], resid_norm(acts, hook), rtol=1e-12)
    dec = VD.residual_norms(acts, "decoder")
    assert len(dec.points) == 1 + 3 * result.n_layers("cross") + 1  # + cross-attention's add per block
    with pytest.raises(KeyError):
        VD.residual_norms({}, "encoder")
    with pytest.raises(ValueError):
        VD.residual_norms(acts, "middle")


def test_residual_figure_draws_the_mean_and_the_band():
    acts = full("reverse", "attention").activations
    stacks = [VD.residual_norms(acts, s) for s in ("encoder", "decoder")]
    fig = VD.residual_norm_figure(stacks, norm_first=True, lang="en")
    for s in stacks:
        line = next(tr_ for tr_ in fig.data if tr_.meta == s.stack)
        np.testing.assert_allclose(np.asarray(line.y), s.norms.mean(axis=1))
        band = next(tr_ for tr_ in fig.data if tr_.meta == f"{s.stack}/band")
        n = len(s.points)
        np.testing.assert_allclose(np.asarray(band.y)[:n], s.norms.max(axis=1))
        np.testing.assert_allclose(np.asarray(band.y)[n:], s.norms.min(axis=1)[::-1])
    assert "Pre-LN" in title_of(fig)
    assert "Post-LN" in VD.residual_norm_figure(stacks, norm_first=False).layout.title.text
    with pytest.raises(ValueError):
        VD.residual_norm_figure([], norm_first=True)


@pytest.mark.parametrize("kind,layer,head", [("encoder", 0, 1), ("cross", 1, 3), ("decoder", 1, 0)])
def test_deck_figures_from_an_inspect_cache_are_the_models_numbers(kind, layer, head):
    b, text = bundle("reverse"), "attention"
    result = full("reverse", text)
    meta = json.loads(json.dumps(inspect_meta(b, result, text)))  # as read back from meta.json
    figs = VD.deck_figures(result.activations, meta, kind=kind, layer=layer, head=head, lang="en")
    assert len(figs) == 6
    pattern = result.attention(kind)[layer, head]
    # 1: the weights of query 1 (worked out from q, k, v) are the recorded pattern's row
    np.testing.assert_allclose(np.asarray(figs[0].data[0].y), pattern[1], atol=1e-6)
    # 2: the split/merge shapes are the traced ones of this attention
    path = hook_name(kind, layer, "q").rsplit(".", 1)[0]
    stages = viz.split_merge_stages(result.trace, path)
    assert figs[1].layout.meta["shapes"] == [list(s.shape) for s in stages]
    # 3: token embedding norms per position (the inspect folder holds no second run)
    np.testing.assert_allclose(np.asarray(figs[2].data[0].y),
                               resid_norm(result.activations, "encoder.embed.hook_embed"), rtol=1e-6)
    # 4: residual stream means
    enc = next(tr_ for tr_ in figs[3].data if tr_.meta == "encoder")
    want = np.mean([resid_norm(result.activations, h) for h in VD.residual_norms(result.activations,
                                                                                  "encoder").points], axis=1)
    np.testing.assert_allclose(np.asarray(enc.y), want, rtol=1e-9)
    # 5: the architecture boxes carry the traced shapes
    shapes = viz.architecture_shapes(result.trace)
    texts = "\n".join(a.text for a in figs[4].layout.annotations)
    for key in figs[4].layout.meta["boxes"]:
        assert "(" + ", ".join(map(str, shapes[key])) + ")" in texts, key
    # 6: the heatmap is the head's pattern (masked cells are gaps)
    weights = next(tr_ for tr_ in figs[5].data if tr_.type == "heatmap" and tr_.name != "masked")
    z = np.asarray(weights.z, dtype=np.float64)
    masked = ~np.isfinite(result.attention(kind, "scores")[layer, head])
    np.testing.assert_array_equal(np.isnan(z), masked)
    np.testing.assert_array_equal(z[~masked], pattern[~masked])


def test_projector_fonts_reach_the_minimum_and_keep_larger_ones():
    result = full("default", "我吃了一个苹果")
    b = bundle("default")
    figs = VD.deck_figures(result.activations, json.loads(json.dumps(inspect_meta(b, result, "x"))))
    for fig in figs:
        height = fig.layout.height
        VD.for_projector(fig)
        sizes = font_sizes(json.loads(fig.to_json())["layout"]) + [
            s for trace in json.loads(fig.to_json())["data"] for s in font_sizes(trace)]
        assert sizes and min(sizes) >= VD.PROJECTOR_MIN_FONT, sizes
        assert fig.layout.title.font.size >= VD.PROJECTOR_MIN_FONT + 4
        if height and any(a.font.size for a in fig.layout.annotations or ()):
            assert fig.layout.height >= height
    arch = viz.architecture_figure(dataclasses.asdict(b.cfg), viz.architecture_shapes(result.trace))
    before = arch.layout.height
    VD.for_projector(arch)
    assert arch.layout.height == int(before * 1.6)  # its box labels were 10 px: it grows (capped)


def test_long_labels_wrap_and_shapes_stay_whole():
    result = full("default", "我吃了一个苹果")
    fig = viz.split_merge_figure(viz.split_merge_stages(result.trace, "encoder.blocks.0.attn"))
    before = [a.text for a in fig.layout.annotations]
    VD.wrap_labels(fig, 12)
    after = [a.text for a in fig.layout.annotations]
    for old, new in zip(before, after, strict=True):
        assert new.replace("<br>", " ") == old.replace("<br>", " ")
        if VD._REAL_SHAPE.match(old) or len(old) <= 12:
            assert new == old
    assert any("<br>" in a and "<br>" not in b for a, b in zip(after, before, strict=True))
    assert "(1, 8, 256)" in after


def font_sizes(node) -> list[float]:
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("font") and isinstance(value, dict) and "size" in value:
                out.append(float(value["size"]))
            out += font_sizes(value)
    elif isinstance(node, list):
        for item in node:
            out += font_sizes(item)
    return out


def test_every_colour_scale_is_colour_blind_safe():
    allowed = VD.allowed_colorscales()
    result = full("default", "我吃了一个苹果")
    meta = json.loads(json.dumps(inspect_meta(bundle("default"), result, "x")))
    figs = VD.deck_figures(result.activations, meta, kind="cross", layer=1, head=2)
    figs.append(viz.pe_heatmap(np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32)))
    from viz.export import vector_heatmap

    figs.append(vector_heatmap(result.attention("encoder")[0, 0], result.source_tokens, result.source_tokens))
    scales = [s for fig in figs for s in VD.colorscales_of(fig)]
    assert scales, "the deck draws at least one colour scale"
    assert all(s in allowed for s in scales)
    # every scale named in viz/ (the theme's and any literal one) is on the list
    from viz import theme

    assert theme.SEQUENTIAL in VD.COLORBLIND_SAFE and theme.DIVERGING_REVERSED in VD.COLORBLIND_SAFE
    import re

    named = set()
    for source in Path(viz.__file__).parent.glob("*.py"):
        named |= set(re.findall(r"colorscale[\"']?\s*[:=]\s*[\"']([A-Za-z_]+)[\"']", source.read_text()))
    assert named <= set(VD.COLORBLIND_SAFE), named - set(VD.COLORBLIND_SAFE)
    # and the check can fail: a rainbow scale is not on the list
    from plotly import graph_objects as go

    assert not set(VD.colorscales_of(go.Figure(go.Heatmap(z=[[0, 1]], colorscale="Jet")))) <= allowed


# --------------------------------------------------------------------------- the page


def open_deck(slide: int, model: str = "default", text: str = "我吃了一个苹果", kind: str = "encoder",
              layer: int = 1, head: int = 2, lang: str = "en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": model, "text": text, "kind": kind, "layer": str(layer),
                            "head": str(head), "lang": lang, "slide": str(slide)})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


CASES = [("default", "我吃了一个苹果", "encoder", 1, 2), ("reverse", "attention", "cross", 1, 3)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,text,kind,layer,head", CASES)
def test_each_slide_draws_the_models_tensors(model, text, kind, layer, head, lang):
    result = full(model, text)
    queries, keys = result.tokens_for(kind)
    pattern = result.attention(kind)[layer, head]  # [query, key]
    scores = result.attention(kind, "scores")[layer, head]
    seen_titles = []
    for n in range(1, DK.N_SLIDES + 1):
        at = open_deck(n, model, text, kind, layer, head, lang)
        assert at.session_state[DK.SLIDE_KEY] == n
        seen_titles.append(at.title[0].value)
        figs = figures(at)
        assert len(figs) == 1, (n, len(figs))
        fig = figs[0]
        slide = DK.slide_key(n)
        if slide in ("attention", "exercise"):
            # one query's weights: softmax(q·k/√d) from the recorded q and k equals the recorded pattern
            y = arr(fig["data"][0]["y"])
            np.testing.assert_allclose(y, pattern[min(1, len(queries) - 1)], atol=1e-6)
        elif slide == "heads":
            path = hook_name(kind, layer, "q").rsplit(".", 1)[0]
            want = [list(s.shape) for s in viz.split_merge_stages(result.trace, path)]
            assert fig["layout"]["meta"]["shapes"] == want
        elif slide == "position":
            run = order_run(bundle(model), text, None, 0)
            intact = next(tr_ for tr_ in fig["data"] if tr_.get("meta") == "intact")
            broken = next(tr_ for tr_ in fig["data"] if tr_.get("meta") == "broken")
            np.testing.assert_allclose(arr(intact["y"]), run.cosine["with"], rtol=1e-6)
            np.testing.assert_allclose(arr(broken["y"]), run.cosine["without"], rtol=1e-6)
            np.testing.assert_allclose(run.cosine["without"], 1.0, atol=1e-5)  # order is invisible without it
            table = at.dataframe[0].value
            assert list(table.iloc[:, 1]) == [run.outputs["original/with"], run.outputs["shuffled/with"]]
        elif slide == "residual":
            for stack in ("encoder", "decoder"):
                line = next(tr_ for tr_ in fig["data"] if tr_.get("meta") == stack)
                hooks = VD.residual_norms(result.activations, stack).points
                want = [resid_norm(result.activations, h).mean() for h in hooks]
                np.testing.assert_allclose(arr(line["y"]), want, rtol=1e-9)
        elif slide == "architecture":
            shapes = viz.architecture_shapes(result.trace)
            texts = "\n".join(a["text"] for a in fig["layout"]["annotations"])
            for key in fig["layout"]["meta"]["boxes"]:
                assert "(" + ", ".join(map(str, shapes[key])) + ")" in texts, key
            assert f"(1, {len(result.source_tokens)}, {bundle(model).cfg.d_model})" in texts
        elif slide == "live":
            weights = next(tr_ for tr_ in fig["data"]
                           if tr_.get("type") == "heatmap" and tr_.get("name") != "masked")
            z = arr(weights["z"])
            masked = ~np.isfinite(scores)
            np.testing.assert_array_equal(np.isnan(z), masked)
            np.testing.assert_array_equal(z[~masked], pattern[~masked])
        # projector sizes: no font in the slide's figure below 16 px
        sizes = font_sizes(fig["layout"]) + [s for trace in fig["data"] for s in font_sizes(trace)]
        assert min(sizes) >= VD.PROJECTOR_MIN_FONT, (slide, min(sizes))
        # speaker notes with the timing, and a link to the page behind the slide
        assert at.expander[0].label == tr(lang, "deck.notes", minutes=VD.MINUTES[slide])
        target = DK.EXPLORER[slide][0]
        assert tr(lang, "deck.open", page=tr(lang, f"page.{target}.title")) in [c.value for c in at.caption]
    assert len(set(seen_titles)) == DK.N_SLIDES


def test_the_exercise_tables_are_the_hand_calculation():
    at = open_deck(7, "reverse", "attention", "encoder", 0, 1)
    result = full("reverse", "attention")
    acts = analyze(bundle("reverse"), "attention").activations
    q = acts[hook_name("encoder", 0, "q")][0][:, 1].astype(np.float64)  # [pos, d_head]
    k = acts[hook_name("encoder", 0, "k")][0][:, 1].astype(np.float64)
    d = q.shape[-1]
    tables = [df.value for df in at.dataframe]
    assert len(tables) == 2
    for query, table in enumerate(tables):
        scores = k @ q[query]
        weights = np.exp(scores / math.sqrt(d) - (scores / math.sqrt(d)).max())
        weights /= weights.sum()
        np.testing.assert_allclose(table.iloc[:, 0].to_numpy(dtype=float), scores, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(table.iloc[:, -1].to_numpy(dtype=float), weights, atol=1e-9)
        np.testing.assert_allclose(table.iloc[:, -1].to_numpy(dtype=float),
                                   result.attention("encoder")[0, 1, query], atol=1e-6)


APP = str(REPO_ROOT / "app.py")


def open_in_app(slide: int, model: str, text: str, **params) -> AppTest:
    """The deck inside the whole app (the sidebar runs every time, as in the browser)."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": model, "text": text, **{k: str(v) for k, v in params.items()}})
    at.run()
    at.query_params["slide"] = str(slide)
    at.switch_page("app_pages/deck.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_next_and_previous_buttons_step_through_keep_the_link_and_the_explorer_leads_back():
    at = open_in_app(1, "reverse", "attention")
    assert at.query_params["slide"] == "1"
    assert at.button(key="deck_prev").disabled
    for n in range(2, DK.N_SLIDES + 1):
        at.button(key="deck_next").click().run()
        assert not at.exception
        assert at.query_params["slide"] == str(n)  # the link holds the slide
        assert at.query_params["model"] == "reverse" and at.query_params["text"] == "attention"
    assert at.button(key="deck_next").disabled
    at.button(key="deck_prev").click().run()
    assert at.query_params["slide"] == str(DK.N_SLIDES - 1)
    # another page now offers the way back to that slide
    at.switch_page("app_pages/single.py").run()
    assert not at.exception
    assert "slide" not in at.query_params
    links = at.get("page_link")
    back = tr("en", "deck.back", n=DK.N_SLIDES - 1)
    assert [link for link in links if link.proto.label == back], [link.proto.label for link in links]


@pytest.mark.parametrize("bad", ["0", "99", "-1", "abc", "²"])
def test_a_bad_slide_number_opens_the_first_slide(bad):
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": "reverse", "text": "attention", "slide": bad})
    at.run()
    assert not at.exception
    assert at.session_state[DK.SLIDE_KEY] == 1
    assert at.title[0].value == "1 · " + tr("en", "deck.1.title")


def test_the_sentence_typed_on_the_deck_is_every_pages_sentence():
    at = open_in_app(6, "reverse", "attention", kind="encoder", layer=0, head=0)
    at.text_input(key="deck_text").set_value("transformer").run()
    assert not at.exception
    assert at.text_input(key="text").value == "transformer"  # the sidebar's sentence
    assert at.query_params["text"] == "transformer" and at.query_params["slide"] == "6"
    weights = next(tr_ for tr_ in figures(at)[0]["data"] if tr_.get("type") == "heatmap")
    want = full("reverse", "transformer").attention("encoder")[0, 0]
    np.testing.assert_array_equal(arr(weights["z"]), want)


def test_the_apple_pair_is_one_click_away():
    at = open_in_app(6, "default", "我吃了一个苹果", kind="encoder", layer=1, head=2)
    at.button(key="deck_pair_0").click().run()
    assert not at.exception
    assert at.query_params["text"] == DK.APPLE_PAIR[0]
    at.button(key="deck_pair_1").click().run()
    assert at.query_params["text"] == DK.APPLE_PAIR[1]
    weights = next(tr_ for tr_ in figures(at)[0]["data"] if tr_.get("type") == "heatmap")
    want = full("default", DK.APPLE_PAIR[1]).attention("encoder")[1, 2]
    np.testing.assert_array_equal(arr(weights["z"]), want)


def test_slide_problems_name_what_the_model_lacks():
    assert DK.slide_problems("default", "position") == []
    assert DK.slide_problems("pitfall-no-positional-encoding", "position") == ["position"]
    assert DK.slide_problems("pitfall-no-positional-encoding", "architecture") == []
    for slide in DK.TALK:
        assert DK.slide_problems("reverse", slide) == []


def _listed_model_without_decoder() -> str:
    from app_support.models import list_models

    found = [n for n in list_models() if load_model(n).cfg.n_dec_layers == 0]
    assert found, "the registry lists an encoder-only model (MiniLM)"
    return found[0]


# slow: in the whole suite only (the quick subset keeps every slide drawn on the models that can show it)
@pytest.mark.slow
@pytest.mark.parametrize("slide", [3, 5])
def test_a_slide_the_model_cannot_show_says_so_and_offers_the_translation_model(slide):
    name = _listed_model_without_decoder()
    assert DK.slide_problems(name, DK.slide_key(slide)) == ["decoder"]
    at = open_in_app(slide, name, "The bank of the river.", kind="encoder", layer=0, head=0)
    assert not figures(at)
    assert at.info[0].value.startswith(tr("en", "deck.needs.decoder", model="")[:20])
    at.button(key="deck_switch").click().run()
    assert not at.exception
    assert at.query_params["model"] == "default"
    assert len(figures(at)) == 1  # the slide runs on the translation model


def test_a_didactic_model_has_no_apple_pair():
    at = open_deck(6, "reverse", "attention")
    assert tr("en", "deck.6.no_pair") in [c.value for c in at.caption]
    assert not [b for b in at.button if b.key and b.key.startswith("deck_pair")]


def test_the_whole_deck_downloads_as_offline_html():
    at = open_deck(2, "reverse", "attention")
    assert [d for d in at.get("download_button") if d.proto.id and "deck_html" in d.proto.id]
    # what the button serves: the same six figures, built by the page's own code
    from viz.export import deck_html, external_urls

    result = full("reverse", "attention")
    meta = json.loads(json.dumps(inspect_meta(bundle("reverse"), result, "attention")))
    html = deck_html([(str(i), [], f) for i, f in enumerate(VD.deck_figures(result.activations, meta))],
                     title="t")
    assert html.count("<section") == 7 and not external_urls(html)


@pytest.mark.parametrize("model,six", [("default", "The cat sat on the mat"), ("reverse", "python")])
def test_the_exercise_offers_a_six_word_sentence(model, six):
    at = open_in_app(7, model, "attention" if model == "reverse" else SENTENCE_EN)
    at.button(key="deck_six").click().run()
    assert not at.exception
    assert at.query_params["text"] == six and at.query_params["slide"] == "7"
    result = full(model, six)
    assert len(result.source_tokens) == 7  # six words (or letters) and <eos>
    assert len(at.dataframe) == 2 and len(at.dataframe[0].value) == 7
    assert not [b for b in at.button if b.key == "deck_six"]  # already the six-word sentence


SENTENCE_EN = "I like green tea"
