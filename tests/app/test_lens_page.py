"""The logit-lens page (app_pages/lens.py) in both interface languages (AppTest): the grid is the lens
computed directly from the model, the chosen position and colour come from the URL, and models without an
output embedding for next tokens are told so in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_pages.glue import lens as LL
from app_support import pages
from app_support.i18n import text as tr
from model.lab import lens as lens_lab
from model.lab.lens import logit_lens
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.app.encoder_pages import open_page
from viz.labels import label
from viz.typed_arrays import decode_plotly_array

PROMPT = "The capital of France is"
NEW = 6


def _open(model: str, text: str, lang: str, **params) -> AppTest:
    at = open_page(pages.page("lens"), lang, model, text, link={"new": str(NEW)},
                   **{k: str(v) for k, v in params.items()})
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _reference(model: str, text: str, **kw):
    bundle = load_model(model)
    a = analyze(bundle, text, **kw)
    decoder = tuple(a.prepared.prefix) + tuple(s.token_id for s in a.steps[:-1])
    source = () if bundle.cfg.decoder_only else tuple(a.prepared.source_ids)
    return logit_lens(bundle, source, decoder, len(a.prepared.prefix)), bundle


def _array(value) -> np.ndarray:
    """A plotly JSON array (a typed-array spec or nested lists) as float numpy."""
    if isinstance(value, dict):
        return decode_plotly_array(value).astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def _z(fig: dict) -> np.ndarray:
    return _array(next(t for t in fig["data"] if t["type"] == "heatmap")["z"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_language_model_grid_is_the_lens_and_pos_comes_from_the_url(lang):
    at = _open("smollm2", PROMPT, lang, pos=4, lens_view="top")
    assert at.title[0].value == tr(lang, "page.lens.title")
    assert tr(lang, "lens.caveat") in [w.value for w in at.warning]
    lens, _ = _reference("smollm2", PROMPT, max_new=NEW)
    grid, path = _figures(at)
    np.testing.assert_allclose(_z(grid), lens.top_probs[:, :, 0], atol=1e-6)
    heat = next(t for t in grid["data"] if t["type"] == "heatmap")
    assert heat["text"][-1][4] == "␣Paris"
    assert at.query_params["pos"] == "4"
    # the position's path: the final choice's probability and rank + 1 by layer
    np.testing.assert_allclose(_array(path["data"][0]["y"]), lens.final_prob[:, 4], atol=1e-6)
    np.testing.assert_allclose(_array(path["data"][1]["y"]), lens.final_rank[:, 4] + 1)
    rows = [label(lang, "lens.row_embed")] + [str(r) for r in range(1, lens.n_rows)]
    expected = tr(lang, "lens.at_pos", pos=4, token="␣is", final="␣Paris",
                  prob=f"{float(lens.final_prob[-1, 4]):.3f}", first=rows[lens.first_top(4)],
                  stays=rows[lens.stays_top(4)])
    assert expected.replace("\\", "") in [m.value.replace("\\", "") for m in at.markdown]


def test_the_colour_choice_comes_from_the_url():
    at = _open("tiny-gpt", "the cat sat", "en", lens_view="entropy")
    lens, _ = _reference("tiny-gpt", "the cat sat", max_new=NEW)
    np.testing.assert_allclose(_z(_figures(at)[0]), lens.entropy, atol=1e-5)
    assert at.query_params["lens_view"] == "entropy"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_translation_model_on_the_decoder_side(lang):
    at = _open("default", "我吃了一个苹果", lang, lens_view="final")
    lens, _ = _reference("default", "我吃了一个苹果")
    np.testing.assert_allclose(_z(_figures(at)[0]), lens.final_prob, atol=1e-6)
    n_out = len(lens.tokens) - lens.prompt_len
    assert tr(lang, "lens.side_decoder", output=n_out) in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_encoder_only_model_says_why_in_one_line(lang):
    at = _open("minilm", "The bank raised interest rates.", lang)
    assert tr(lang, "lens.encoder_only") in [i.value for i in at.info]
    assert not at.get("plotly_chart")


def test_html_in_the_input_is_shown_as_text():
    text = "<img src=x onerror=alert(1)> is"
    at = _open("smollm2", text, "en", pos=0)
    shown = json.dumps(_figures(at))
    assert "<img" not in shown
    # markdown holds it escaped (\\<img), which Streamlit shows as the characters typed
    assert not any("<img" in m.value.replace("\\<", "") for m in at.markdown)
    assert any("\\<img" in m.value for m in at.markdown)


def test_a_position_outside_the_input_falls_back_to_the_last():
    at = _open("tiny-gpt", "the cat sat", "en", pos=999)
    lens, _ = _reference("tiny-gpt", "the cat sat", max_new=NEW)
    assert at.selectbox(key="lens_pos").value == int(lens.positions[-1])


def test_a_click_names_the_position_of_its_cell():
    assert LL.clicked_position({"selection": {"points": [{"customdata": [3, 17], "x": 17, "y": 3}]}}) == 17
    assert LL.clicked_position({"selection": {"points": [{"customdata": {"0": 2, "1": 9}}]}}) == 9
    assert LL.clicked_position({"selection": {"points": []}}) is None
    assert LL.clicked_position(None) is None


def test_the_page_reads_the_ids_the_analysis_decoded_and_checks_its_top_row():
    bundle = load_model("tiny-gpt")
    a = analyze(bundle, "the cat sat", max_new=NEW)
    source, decoder, prompt_len = lens_lab.lens_input(a, True)
    assert source == () and prompt_len == len(a.prepared.prefix)
    assert bundle.tokenizer.tokens(list(decoder)) == a.target_tokens
    lens = logit_lens(bundle, source, decoder, prompt_len)
    assert LL.last_row_difference(lens, a.steps) < 1e-5
    assert lens_lab.window_start(300) == 300 - lens_lab.MAX_POSITIONS and lens_lab.window_start(5) == 0


def test_the_gateway_gives_the_lens_of_the_views_analysis():
    from app_support.gateway import get_analysis, get_lens

    a = get_analysis("tiny-gpt", "the cat sat", max_new=NEW)
    lens = get_lens("tiny-gpt", "the cat sat", max_new=NEW)
    bundle = load_model("tiny-gpt")
    source, decoder, prompt_len = lens_lab.lens_input(a, True)
    direct = logit_lens(bundle, source, decoder, prompt_len)
    np.testing.assert_array_equal(lens.top_ids, direct.top_ids)
    np.testing.assert_allclose(lens.top_probs, direct.top_probs, atol=1e-6)
    assert lens.prompt_len == prompt_len and int(lens.positions[-1]) == len(decoder) - 1
    assert get_lens("tiny-gpt", "the cat sat", max_new=NEW) is lens  # asked again: the cached result


def test_a_long_input_draws_a_readable_window_of_the_grid_that_follows_the_position():
    text = " ".join(["the cat sat on the mat"] * 8)
    lens, _ = _reference("tiny-gpt", text, max_new=NEW)
    positions = [int(p) for p in lens.positions]
    assert len(positions) > LL.GRID_POSITIONS
    at = _open("tiny-gpt", text, "en", pos=positions[1])
    heat = next(t for t in _figures(at)[0]["data"] if t["type"] == "heatmap")
    first = positions[0]
    assert _array(heat["x"]).tolist() == positions[:LL.GRID_POSITIONS]
    np.testing.assert_allclose(_z(_figures(at)[0]), lens.top_probs[:, :LL.GRID_POSITIONS, 0], atol=1e-6)
    assert tr("en", "lens.grid_window", first=first, last=positions[LL.GRID_POSITIONS - 1],
              n=len(positions)) in [c.value for c in at.caption]
    at.selectbox(key="lens_pos").set_value(positions[-1]).run()  # the window follows the position
    a, b = LL.grid_window(len(positions), len(positions) - 1)
    heat = next(t for t in _figures(at)[0]["data"] if t["type"] == "heatmap")
    assert _array(heat["x"]).tolist() == positions[a:b] and b == len(positions)
    assert len(heat["text"][-1]) == b - a


def test_every_grid_window_is_full_and_holds_its_column():
    for n in (1, 15, 16, 17, 34, 128):
        for column in range(n):
            a, b = LL.grid_window(n, column)
            assert a <= column < b and b - a == min(n, LL.GRID_POSITIONS) and 0 <= a and b <= n
