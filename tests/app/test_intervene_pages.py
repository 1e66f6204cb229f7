"""The 'Intervene & explain' pages (ablation, patching, attribution) run on their own with AppTest: the
numbers they draw equal a direct computation with model/, in both languages, without English left in
the Chinese pages."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support.i18n import message_text
from app_support.i18n import text as tr
from app_support.i18n.check import untranslated
from app_support.strategy import greedy_here
from app_support.ui import escape_md, md_output
from model.decoding.strategy import GREEDY, Strategy
from model.lab.ablation import ablate, effect_matrices, exact_match, head_edits, rank_heads, sample_texts
from model.lab.attribution import agreement, attribute
from model.lab.choices import Site
from model.lab.patching import patch, rank_patches
from model.network.kinds import layer_counts
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.interventions import attention_change, normalise_abs
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGES = REPO_ROOT / "app_pages"


@functools.cache
def bundle(name: str):
    return load_model(name)


def open_page(page: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{page}.py"), default_timeout=300)
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array([np.nan if v is None else v for v in value] if np.ndim(value) == 1 else
                    [[np.nan if v is None else v for v in row] for row in value], dtype=np.float64)


def trace(fig: dict, name: str | None = None, meta: str | None = None) -> dict:
    found = [t for t in fig["data"] if (name is None or t.get("name") == name)
             and (meta is None or t.get("meta") == meta)]
    assert found, [t.get("name") for t in fig["data"]]
    return found[0]


def markdown(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def no_english_left(at: AppTest, data: list[str]) -> None:
    """The page's own area (the shared sidebar is checked by tests/strings/test_strings.py)."""
    left = {s: untranslated(s, data) for s in _visible_texts(at.main)}
    left = {s: found for s, found in left.items() if found}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


# --------------------------------------------------------------------------- head ablation


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ablation_page_draws_the_ablation_and_the_ranking(lang):
    b = bundle("reverse")
    heads = [("cross", 1, h) for h in range(b.cfg.n_heads)]
    at = open_page("ablation", {"model": "reverse", "text": "attention", "lang": lang, "kind": "cross",
                                "layer": "1", "head": "0",
                                "heads": "cross.1.0,cross.1.1,cross.1.2,cross.1.3"})
    figs = figures(at)
    kinds = [k for k, n in layer_counts(b.cfg).items() if n]
    assert len(figs) == 2 + len(kinds) + 2 + len(kinds)
    ab = ablate(b, "attention", None, heads, "zero")
    np.testing.assert_allclose(arr(figs[0]["data"][0]["y"]), [s.kl for s in ab.steps], rtol=1e-9)
    np.testing.assert_allclose(arr(trace(figs[1], meta="before")["y"]), [s.p_intact for s in ab.steps])
    np.testing.assert_allclose(arr(trace(figs[1], meta="after")["y"]), [s.p_ablated for s in ab.steps])
    text = markdown(at)
    assert md_output(ab.output) in text and md_output(ab.intact_output) in text
    assert ab.output != ab.intact_output
    ablated_em = exact_match(b, head_edits(heads), 200)
    assert f"**{ablated_em:.3f}**" in text and ablated_em < 0.05
    # attention of later layers: the change of every head, teacher-forced on the intact output
    intact = analyze(b, "attention", target=ab.intact_output)
    after = analyze(b, "attention", target=ab.intact_output, edits=head_edits(heads))
    for fig, kind in zip(figs[2:2 + len(kinds)], kinds, strict=True):
        want = attention_change(intact.attention(kind), after.attention(kind))
        np.testing.assert_allclose(arr(trace(fig, "values")["z"]), want, atol=1e-6)
        assert len(fig["layout"].get("shapes", [])) == (len(heads) if kind == "cross" else 0)
    assert (attention_change(intact.attention("encoder"), after.attention("encoder")) == 0).all()
    # the ranking of every head alone
    effects = rank_heads(b, "attention")
    mats = effect_matrices(effects, layer_counts(b.cfg), b.cfg.n_heads)
    for fig, kind in zip(figs[-len(kinds):], kinds, strict=True):
        np.testing.assert_allclose(arr(trace(fig, "values")["z"]), mats[kind], rtol=1e-5, atol=1e-7)
    assert f"{effects[0].mean_kl:.4f}" in text
    if lang == "zh":
        no_english_left(at, ["attention", ab.output, ab.intact_output, *[s.token for s in ab.steps]]
                        + [tok for s in ab.steps for tok, _ in s.top_intact + s.top_ablated])


def test_ablation_page_with_no_heads_and_a_bad_link():
    at = open_page("ablation", {"model": "reverse", "text": "attention", "lang": "en", "heads": "cross.7.0"})
    assert tr("en", "ablation.none") in [str(i.value) for i in at.info]
    assert any(escape_md("cross.7.0") in str(w.value) for w in at.warning)
    assert len(figures(at)) == 3  # only the ranking
    at.button(key="abl_add_group").click().run()  # the sidebar's kind and layer: encoder layer 0
    assert at.multiselect(key="abl_heads").value == [f"encoder.0.{h}" for h in range(4)]
    assert len(figures(at)) > 3


def test_ablation_page_on_the_translation_model():
    heads = [("cross", 2, 3), ("decoder", 0, 1)]
    at = open_page("ablation", {"model": "default", "text": "我吃了一个苹果", "lang": "en", "mode": "mean",
                                "heads": "cross.2.3,decoder.0.1", "decode": "beam4-lp1"})
    ab = ablate(bundle("default"), "我吃了一个苹果", None, heads, "mean")
    np.testing.assert_allclose(arr(figures(at)[0]["data"][0]["y"]), [s.kl for s in ab.steps], rtol=1e-9)
    assert md_output(ab.output) in markdown(at)
    # the outputs are greedy whatever the sidebar's beam search: the page says so and names the beam
    note = greedy_here("intervention", Strategy.parse("beam4-lp1"), "en")
    assert "beam search, width 4" in note
    assert note in [c.value for c in at.caption]


# --------------------------------------------------------------------------- activation patching


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_patching_page_draws_the_patch_and_the_ranking(lang):
    b = bundle("reverse")
    at = open_page("patching", {"model": "reverse", "text": "attention", "lang": lang, "a": "listen",
                                "b": "silent", "kind": "cross", "layer": "1", "head": "1"})
    figs = figures(at)
    result = patch(b, "listen", "silent", Site("head", "cross", 1, 1))
    np.testing.assert_allclose(arr(figs[0]["data"][0]["y"]), [s.kl for s in result.steps], rtol=1e-9)
    np.testing.assert_allclose(arr(trace(figs[1], meta="after")["y"]), [s.p_patched for s in result.steps])
    text = markdown(at)
    for output in (result.output_a, result.output_b, result.output):
        assert md_output(output) in text
    assert f"**{result.toward_a:.3f}**" in text
    effects = rank_patches(b, "listen", "silent")
    kinds = [k for k, n in layer_counts(b.cfg).items() if n]
    for fig, kind in zip(figs[2:], kinds, strict=True):
        want = np.full((layer_counts(b.cfg)[kind], b.cfg.n_heads), np.nan)
        for e in effects:
            if e.kind == kind:
                want[e.layer, e.head] = e.mean_kl
        np.testing.assert_allclose(arr(trace(fig, "values")["z"]), want, rtol=1e-5, atol=1e-7)
    if lang == "zh":
        data = ["attention", "listen", "silent", result.output_a, result.output_b, result.output]
        no_english_left(at, data)


def test_patching_page_residual_and_unaligned_positions_on_the_translation_model():
    at = open_page("patching", {"model": "default", "text": "我吃了一个苹果", "lang": "en",
                                "a": "苹果公司发布新品", "b": "我吃了一个苹果", "token": "苹",
                                "site": "resid", "kind": "encoder", "layer": "2"})
    result = patch(bundle("default"), "苹果公司发布新品", "我吃了一个苹果", Site("resid", "encoder", 2), "苹")
    assert result.alignment.pairs == ((5, 0),)
    np.testing.assert_allclose(arr(figures(at)[0]["data"][0]["y"]), [s.kl for s in result.steps], rtol=1e-9)
    assert md_output(result.output) in markdown(at)
    assert greedy_here("intervention", GREEDY, "en") in [c.value for c in at.caption]
    # the decoder inputs differ in length and share no chosen token: said, not guessed
    infos = [str(i.value) for i in at.info]
    assert any(tr("en", "patching.side.target") in i for i in infos), infos


# --------------------------------------------------------------------------- attribution


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attribution_page_draws_the_attributions_and_the_agreement(lang):
    b = bundle("reverse")
    at = open_page("attribution", {"model": "reverse", "text": "attention", "lang": lang, "kind": "cross",
                                   "layer": "1", "head": "2", "step": "3", "steps": "16"})
    figs = figures(at)
    r = attribute(b, "attention", None, 16)
    np.testing.assert_allclose(arr(trace(figs[0], "attribution")["z"]), r.integrated, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(trace(figs[1], "attribution")["z"]), r.grad_x_input, rtol=1e-5, atol=1e-6)
    assert f"**{r.completeness_error.max():.4f}**" in markdown(at)
    bars = figs[2]["data"]
    want = [r.integrated[3], r.grad_x_input[3], r.cross[1, 2, 3], r.mean_attention[3], r.rollout[3]]
    assert len(bars) == len(want)
    for bar, values in zip(bars, want, strict=True):
        np.testing.assert_allclose(arr(bar["y"]), normalise_abs(values), atol=1e-9)
    np.testing.assert_allclose(arr(figs[3]["data"][0]["z"]), r.cross[:, :, 3].reshape(-1, r.cross.shape[-1]),
                               atol=1e-6)
    at.button(key="attr_agree").click().run()
    assert not at.exception, [e.message for e in at.exception]
    ag = agreement(b, sample_texts(b, 12), 16)
    np.testing.assert_allclose(arr(trace(figures(at)[-1], "values")["z"]), ag.heads, atol=1e-6)
    assert f"**{ag.grad_x_input:.2f}**" in markdown(at)
    if lang == "zh":
        output = analyze(b, "attention").output_text
        no_english_left(at, ["attention", output, *r.source_tokens, *r.output_tokens, *sample_texts(b, 12)])


def test_attribution_page_on_the_translation_model():
    at = open_page("attribution", {"model": "default", "text": "我吃了一个苹果", "lang": "en", "steps": "8"})
    r = attribute(bundle("default"), "我吃了一个苹果", None, 8)
    np.testing.assert_allclose(arr(trace(figures(at)[0], "attribution")["z"]), r.integrated, rtol=1e-5,
                               atol=1e-6)


# --------------------------------------------------------------------------- a translation's new-token cap

CAP_A, CAP_B = "苹果公司发布新品", "我吃了一个苹果"  # the page's preset pair on the translation model
CAP = 3


def _decoding_page_output(at: AppTest) -> list[str]:
    """The same session on the decoding page (same sentence, same cap): what it says."""
    from tests.app.test_app_pages import PAGES as APP_PAGES

    at.switch_page(APP_PAGES["decoding"]).run()
    assert not at.exception, [e.message for e in at.exception]
    return [str(el.value) for kind in ("markdown", "caption") for el in getattr(at, kind)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_patching_page_stops_a_translation_at_the_sidebars_cap(lang):
    """new=3 in the link: A's, B's and the patched outputs stop after 3 new tokens (or at the end token),
    B's equal to what the decoding page shows for B in the same session; the steps, the chart and the
    ranking are those of the capped outputs."""
    from tests.app.test_app_pages import open_app

    b = bundle("default")
    at = open_app("default", CAP_B, "patching", lang=lang, new=CAP, a=CAP_A, b=CAP_B, token="苹",
                  kind="cross", layer=1, head=2)
    assert not at.error, [e.value for e in at.error]
    capped = patch(b, CAP_A, CAP_B, Site("head", "cross", 1, 2), "苹", None, CAP)
    shown, whole = analyze(b, CAP_B, max_new=CAP), analyze(b, CAP_B)
    assert capped.output_b == shown.output_text != whole.output_text
    assert [s.token for s in capped.steps] == shown.target_tokens[len(shown.prepared.prefix):]
    assert len(capped.steps) == CAP
    figs = figures(at)
    np.testing.assert_allclose(arr(figs[0]["data"][0]["y"]), [s.kl for s in capped.steps], rtol=1e-9)
    text = markdown(at)
    for output in (capped.output_a, capped.output_b, capped.output):
        assert md_output(output) in text
    assert md_output(whole.output_text) not in text
    stopped = next(m for m in shown.notes if m.code == "output_max_new")  # the decoding page's note
    assert message_text(lang, stopped) in [c.value for c in at.caption]
    effects = rank_patches(b, CAP_A, CAP_B, "苹", max_new=CAP)
    counts = {k: n for k, n in layer_counts(b.cfg).items() if n}
    for fig, kind in zip(figs[2:], counts, strict=True):
        want = np.full((counts[kind], b.cfg.n_heads), np.nan)
        for e in effects:
            if e.kind == kind:
                want[e.layer, e.head] = e.mean_kl
        np.testing.assert_allclose(arr(trace(fig, "values")["z"]), want, rtol=1e-5, atol=1e-7)
    if lang == "zh":
        a_tokens = analyze(b, CAP_A, max_new=CAP).target_tokens
        no_english_left(at, [CAP_A, CAP_B, capped.output_a, capped.output_b, capped.output, *a_tokens,
                             *shown.source_tokens, *shown.target_tokens, *[s.token for s in capped.steps]])
    assert md_output(shown.output_text) in _decoding_page_output(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attribution_page_stops_a_translation_at_the_sidebars_cap(lang):
    """new=3 in the link: the output attributed has 3 tokens (fewer when the end token comes first), those
    the decoding page shows for the sentence in the same session, and every row drawn is theirs."""
    from tests.app.test_app_pages import open_app

    b = bundle("default")
    at = open_app("default", CAP_B, "attribution", lang=lang, new=CAP, steps=8)
    assert not at.error, [e.value for e in at.error]
    capped = attribute(b, CAP_B, None, 8, CAP)
    shown, whole = analyze(b, CAP_B, max_new=CAP), analyze(b, CAP_B)
    assert capped.output_tokens == shown.target_tokens[len(shown.prepared.prefix):]
    assert len(capped.output_tokens) == CAP and shown.output_text != whole.output_text
    figs = figures(at)
    np.testing.assert_allclose(arr(trace(figs[0], "attribution")["z"]), capped.integrated, rtol=1e-5,
                               atol=1e-6)
    text = markdown(at)
    assert md_output(shown.output_text) in text and md_output(whole.output_text) not in text
    if lang == "zh":
        no_english_left(at, [CAP_B, shown.output_text, *capped.source_tokens, *capped.output_tokens])
    assert md_output(shown.output_text) in _decoding_page_output(at)


@pytest.mark.parametrize("page,lang", [("patching", "en"), ("attribution", "zh"), ("patching", "zh")])
def test_a_translation_capped_at_zero_says_so_and_offers_the_whole_translation(page, lang):
    """new=0: nothing is decoded, so there is nothing to patch or attribute: the page says so in one line
    (the decoding page's), draws nothing, and its button brings the whole translation back."""
    from tests.app.test_app_pages import open_app

    at = open_app("default", CAP_B, page, lang=lang, new=0)
    assert not at.error, [e.value for e in at.error]
    said = [str(i.value) for i in at.info]
    assert said == [tr(lang, "analysis.no_output_translation")], said
    assert not at.get("plotly_chart")
    button = at.button(key="write_output")
    assert button.label == tr(lang, "analysis.translate_to_end")
    button.click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["new"] is None and "new" not in at.query_params
    assert tr(lang, "analysis.no_output_translation") not in [str(i.value) for i in at.info]
    assert at.get("plotly_chart")
    assert md_output(analyze(bundle("default"), CAP_B).output_text) in markdown(at)


# --------------------------------------------------------------------------- in the app: links, odd input


@pytest.mark.parametrize("page", ["ablation", "patching", "attribution"])
def test_the_pages_keep_their_choices_in_the_link_and_survive_odd_values(page):
    from app_support import pages as registry
    from app_support.url_state import UNDECLARED
    from tests.app.test_app_pages import open_app

    odd = {"heads": "cross.1.0,,x.y.z,cross.99.0", "mode": "sideways", "a": "listen", "b": "", "token": "<b>",
           "site": "nowhere", "step": "²", "steps": "999"}
    own = registry.page(page).params
    at = open_app("reverse", "attention", page, **{k: v for k, v in odd.items() if k in own})
    assert not at.exception and not at.error, [e.value for e in at.error]
    undeclared = at.session_state[UNDECLARED] if UNDECLARED in at.session_state else set()
    assert not undeclared
    assert set(at.query_params.keys()) <= set(registry.params_of(registry.page(page).url_path))
    if page == "ablation":
        assert at.query_params["heads"] == "cross.1.0" and at.query_params["mode"] == "zero"
    if page == "patching":  # sentence B empty: said, nothing run
        assert any("B" in str(i.value) for i in at.info)
    if page == "attribution":
        assert at.query_params["steps"] == "32" and at.query_params["step"] == "0"


@pytest.mark.parametrize("page", ["ablation", "attribution"])
def test_empty_input_says_so(page):
    from tests.app.test_app_pages import open_app

    at = open_app("reverse", "  ", page)
    assert not at.exception and not at.error
    assert tr("en", "analysis.empty") in [str(i.value) for i in at.info]
    assert not at.get("plotly_chart")


def test_a_click_on_a_head_matrix_names_the_head():
    from app_support.selection import clicked_head

    # what the browser sends: customdata from a typed array arrives as {"0": layer, "1": head}
    sent = {"selection": {"points": [{"curve_number": 1, "x": 2, "y": 1, "customdata": {"0": 1, "1": 2}}]}}
    assert clicked_head(sent) == (1, 2)
    assert clicked_head({"selection": {"points": [{"customdata": [0, 3]}]}}) == (0, 3)
    assert clicked_head({"selection": {"points": [{"x": 3.0, "y": 1.0}]}}) == (1, 3)
    assert clicked_head({"selection": {"points": []}}) is None and clicked_head(None) is None


# --------------------------------------------------------------------------- a decoder-only language model

LM_PROMPT = "The capital of France is"
CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ablation_page_continues_a_language_models_prompt_and_ranks_every_head(lang):
    from app_support.interventions import LM_DEFAULT_NEW

    b = bundle("smollm2")
    at = open_page("ablation", {"model": "smollm2", "text": LM_PROMPT, "lang": lang, "heads": "decoder.3.4"})
    figs = figures(at)
    ab = ablate(b, LM_PROMPT, None, [("decoder", 3, 4)], "zero", max_new=LM_DEFAULT_NEW)
    assert len(ab.steps) == LM_DEFAULT_NEW
    np.testing.assert_allclose(arr(figs[0]["data"][0]["y"]), [s.kl for s in ab.steps], rtol=1e-6, atol=1e-9)
    text = markdown(at)
    assert md_output(ab.intact_output) in text and md_output(ab.output) in text
    assert tr(lang, "ablation.exact_match", n=200, intact="", ablated="")[:20] not in text  # no test words
    captions = [c.value for c in at.caption]
    assert tr(lang, "ablation.lm_bound", n=LM_DEFAULT_NEW, heads=270) in captions
    effects = rank_heads(b, LM_PROMPT, max_new=LM_DEFAULT_NEW)
    want = effect_matrices(effects, layer_counts(b.cfg), b.cfg.n_heads)["decoder"]
    np.testing.assert_allclose(arr(trace(figs[-1], "values")["z"]), want, rtol=1e-4, atol=1e-6)
    assert f"{effects[0].mean_kl:.4f}" in text
    if lang == "zh":
        no_english_left(at, [LM_PROMPT, ab.output, ab.intact_output, *[s.token for s in ab.steps]]
                        + [tok for s in ab.steps for tok, _ in s.top_intact + s.top_ablated])


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_patching_page_patches_a_clean_prompt_into_a_corrupted_one(lang):
    from model.lab import patching_lm

    b = bundle("smollm2")
    at = open_page("patching", {"model": "smollm2", "text": LM_PROMPT, "lang": lang, "kind": "decoder",
                                "layer": "3", "head": "4"})
    result = patch(b, CLEAN, CORRUPT, Site("head", "decoder", 3, 4), None, None, 6)
    text = markdown(at)
    for output in (result.output_a, result.output_b, result.output):
        assert md_output(output) in text
    assert f"**{result.recovered:.3f}**" in text and result.answers == (" Paris", " Rome")
    figs = figures(at)
    np.testing.assert_allclose(arr(figs[0]["data"][0]["y"]), [s.kl for s in result.steps], atol=1e-9)
    effects = patching_lm.rank_heads(b, CLEAN, CORRUPT)
    want = np.full((30, 9), np.nan)
    for e in effects:
        want[e.layer, e.head] = e.recovered
    np.testing.assert_allclose(arr(trace(figs[-1], "values")["z"]), want, rtol=1e-4, atol=1e-5)
    if lang == "zh":
        no_english_left(at, [LM_PROMPT, CLEAN, CORRUPT, result.output_a, result.output_b, result.output,
                             *result.answers, *[s.token for s in result.steps]]
                        + b.tokenizer.tokens(b.task.prepare(CLEAN, 300).prefix)
                        + b.tokenizer.tokens(b.task.prepare(CORRUPT, 300).prefix))


@pytest.mark.slow
def test_patching_page_on_a_language_model_residual_grid_and_unequal_prompts():
    from model.lab import patching_lm

    b = bundle("smollm2")
    at = open_page("patching", {"model": "smollm2", "text": LM_PROMPT, "lang": "en", "site": "resid",
                                "kind": "decoder", "layer": "20"})
    grid = patching_lm.rank_residual(b, CLEAN, CORRUPT)
    want = np.array([[e.recovered for e in grid if e.layer == i] for i in range(30)], dtype=np.float64)
    fig = figures(at)[-1]
    np.testing.assert_allclose(arr(trace(fig, "values")["z"]), want, rtol=1e-4, atol=1e-5)
    assert [t.replace("\\", "") for t in fig["layout"]["xaxis"]["ticktext"]][2] == "osse"
    at = open_page("patching", {"model": "smollm2", "text": LM_PROMPT, "lang": "en", "a": CLEAN,
                                "b": "Rome is a city"})
    assert tr("en", "patching.lm.unequal", len_a=9, len_b=4) in [str(i.value) for i in at.info]
    assert not figures(at)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attribution_page_attributes_a_continuation_to_its_prompt(lang):
    from app_pages.glue import attribution as AT

    b = bundle("smollm2")
    at = open_page("attribution", {"model": "smollm2", "text": LM_PROMPT, "lang": lang, "layer": "5",
                                   "head": "2"})
    r = attribute(b, LM_PROMPT, None, AT.LM_DEFAULT_STEPS, 6, AT.LM_DEFAULT_OUTPUTS)
    figs = figures(at)
    np.testing.assert_allclose(arr(trace(figs[0], "attribution")["z"]), r.integrated, rtol=1e-4, atol=1e-5)
    bars = figs[2]["data"]
    np.testing.assert_allclose(arr(bars[2]["y"]), normalise_abs(r.cross[5, 2, 0]), atol=1e-6)
    assert tr(lang, "attribution.lm_bound", outputs=AT.LM_DEFAULT_OUTPUTS, m=AT.LM_DEFAULT_STEPS, n=6) in [
        c.value for c in at.caption]
    assert tr(lang, "attribution.agree.lm_skipped") in [str(i.value) for i in at.info]
    if lang == "zh":
        shown = analyze(b, LM_PROMPT, max_new=6).output_text
        no_english_left(at, [LM_PROMPT, *r.source_tokens, *r.output_tokens, shown, *shown.split()])
