"""The attention pages on MiniLM with word pieces merged and [CLS]/[SEP] hidden (AppTest, EN + ZH).

What a page draws must equal a direct computation from the model's own patterns: the loops below
restate the definition (to a word = sum over its pieces, from a word = mean; hidden rows and columns
dropped, rows renormalised or not) and never call the code under test.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import LANG_KEY
from app_support.i18n import text as tr
from app_support.i18n.check import untranslated
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.app.test_masks_page import arr, figures
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts

APP = str(REPO_ROOT / "app.py")
PIECES = "Tokenizers split unbelievably long embeddings."  # several words cut into ## pieces
LAYER, HEAD = 2, 5

pytestmark = pytest.mark.slow


@functools.cache
def reference(text: str):
    return analyze(load_model("minilm"), text)


def _units(tokens: list[str], special: list[bool], merge: bool, hide: bool) -> list[list[int]]:
    """Each shown row/column's original positions, from the tokens themselves."""
    units: list[list[int]] = []
    for i, tok in enumerate(tokens):
        if hide and special[i]:
            continue
        piece = tok.startswith("##") and not special[i - 1] if i else False
        if merge and piece and units and units[-1][-1] == i - 1:
            units[-1].append(i)
        else:
            units.append([i])
    return units


def expected(text: str, merge: bool, special: str) -> tuple[np.ndarray, list[list[int]]]:
    """[layer, head, units, units] by the definition, and the units."""
    ref = reference(text)
    pattern = ref.attention("encoder").astype(np.float64)  # [layer, head, q, k]
    units = _units(ref.source_tokens, ref.source_special, merge, special != "show")
    shown = [p for u in units for p in u]
    out = np.zeros(pattern.shape[:2] + (len(units), len(units)))
    for a, rows in enumerate(units):
        for b, cols in enumerate(units):
            per_row = pattern[:, :, rows][:, :, :, cols].sum(-1)  # [layer, head, rows]
            if special == "renorm":
                per_row = per_row / pattern[:, :, rows][:, :, :, shown].sum(-1)
            out[:, :, a, b] = per_row.mean(-1)
    return out, units


def open_page(key: str, lang: str, merge: bool, special: str, text: str = PIECES) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    # Another page is reached from the start page, opened in English and switched to ``lang`` before
    # leaving it: AppTest reads the start page's widgets outside the script when switching, where a
    # format function that reads the session's language (the download scope's) sees English.
    first = lang if key == "single" else "en"
    at.query_params.update({"model": "minilm", "text": text, "lang": first, "layer": str(LAYER),
                            "head": str(HEAD), "special": special})
    if merge:
        at.query_params["pieces"] = "words"
    at.run()
    if key != "single":
        at.session_state[LANG_KEY] = lang
        at.switch_page(page_registry.page(key).file).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def weights(fig: dict) -> np.ndarray:
    return arr(fig["data"][-1]["z"]).astype(np.float64)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("merge,special", [(True, "show"), (True, "renorm"), (False, "hide"), (True, "hide")])
def test_single_head_draws_the_merged_pattern(merge, special, lang):
    at = open_page("single", lang, merge, special)
    want, units = expected(PIECES, merge, special)
    got = weights(figures(at)[0])
    np.testing.assert_allclose(got, want[LAYER, HEAD], atol=2e-6)
    # rows sum to 1 unless [CLS]/[SEP] are hidden without renormalising (then to less)
    sums = got.sum(-1)
    if special == "hide":
        assert (sums < 1 - 1e-3).all()
    else:
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    # the page says what it shows, in the interface language
    captions = " ".join(c.value for c in at.caption)
    if merge:
        assert tr(lang, "tokens.note.merged") in captions
    if special != "show":
        assert tr(lang, f"tokens.note.{special}") in captions
    # the numbers table names each row by the model's positions
    table = at.dataframe[0].value
    ref = reference(PIECES)
    assert len(table.index) == len(units)
    for label, u in zip(table.index, units, strict=True):
        where = str(u[0]) if len(u) == 1 else f"{u[0]}–{u[-1]}"
        assert label.startswith(f"{where}: ")
        assert label.endswith("".join(ref.source_tokens[p].removeprefix("##") if k else ref.source_tokens[p]
                                      for k, p in enumerate(u)))


def test_as_tokenized_is_the_models_own_pattern():
    at = open_page("single", "en", False, "show")
    own = reference(PIECES).attention("encoder")[LAYER, HEAD]
    np.testing.assert_array_equal(weights(figures(at)[0]), own)
    assert not any(tr("en", "tokens.note.merged") in c.value for c in at.caption)
    assert at.toggle(key="pieces").value is False


def test_all_heads_draws_every_merged_head():
    at = open_page("heads", "en", True, "renorm")
    want, units = expected(PIECES, True, "renorm")
    fig = figures(at)[0]
    tiles = arr([tr_ for tr_ in fig["data"] if tr_.get("name") == "attention"][0]["z"]).astype(np.float64)
    n = len(units)
    gutter = (tiles.shape[1] - want.shape[1] * n) // (want.shape[1] - 1)
    for layer in range(want.shape[0]):
        for head in range(want.shape[1]):
            r, c = layer * (n + gutter), head * (n + gutter)
            np.testing.assert_allclose(tiles[r:r + n, c:c + n], want[layer, head], atol=2e-6)


def test_token_focus_keeps_the_position_across_merging():
    """The focus page's token is a model position: merging pieces keeps the same word chosen."""
    ref = reference(PIECES)
    position = ref.source_tokens.index("##bed")  # inside "embeddings"
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "minilm", "text": PIECES, "pieces": "words", "special": "hide",
                            "layer": str(LAYER), "head": str(HEAD)})
    at.run()
    at.query_params.update({"token": str(position), "side": "from"})
    at.switch_page(page_registry.page("focus").file).run()
    assert not at.exception, [e.message for e in at.exception]
    units = _units(ref.source_tokens, ref.source_special, True, True)
    unit = next(i for i, u in enumerate(units) if position in u)
    assert at.selectbox(key="focus_token").value == units[unit][0]  # the word's first piece
    assert at.query_params["token"] == str(units[unit][0])
    want, _ = expected(PIECES, True, "hide")
    grid, arcs = figures(at)[:2]
    assert "embeddings" in str(arcs)
    # the grid: per layer x head, the strongest weight in this word's merged row
    drawn = [arr(t["z"]).astype(np.float64) for t in grid["data"] if "z" in t]
    assert drawn and drawn[0].shape == want.shape[:2]
    np.testing.assert_allclose(drawn[0], want[:, :, unit, :].max(-1), atol=2e-6)


def test_compare_page_compares_words():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "minilm", "text": PIECES, "pieces": "words", "special": "renorm",
                            "layer": str(LAYER), "head": str(HEAD)})
    at.run()
    other = "Long embeddings split tokenizers."
    at.query_params.update({"a": PIECES, "b": other, "token": "embeddings"})
    at.switch_page(page_registry.page("compare").file).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="cmp_token").value == "embeddings"
    fig = figures(at)[0]
    want_a, _ = expected(PIECES, True, "renorm")
    want_b, _ = expected(other, True, "renorm")
    drawn = [arr(t["z"]).astype(np.float64) for t in fig["data"] if "z" in t]  # A's weights, then B's
    assert len(drawn) == 2, [t.get("name") for t in fig["data"]]
    for got, want in zip(drawn, (want_a, want_b), strict=True):
        np.testing.assert_allclose(got, want[LAYER, HEAD], atol=2e-6)


def _merge_by_definition(matrix: np.ndarray, units: list[list[int]], renormalise: bool) -> np.ndarray:
    shown = [p for u in units for p in u]
    out = np.zeros((len(units), len(units)))
    for a, rows in enumerate(units):
        for b, cols in enumerate(units):
            per_row = matrix[rows][:, cols].sum(-1)
            if renormalise:
                per_row = per_row / matrix[rows][:, shown].sum(-1)
            out[a, b] = per_row.mean()
    return out


@pytest.mark.parametrize("special", ["hide", "renorm"])
def test_aggregates_merge_the_mean_and_roll_out_over_tokens_first(special):
    at = open_page("aggregates", "en", True, special)
    want, units = expected(PIECES, True, special)
    mean_fig, roll_fig = figures(at)[:2]
    np.testing.assert_allclose(weights(mean_fig), want[LAYER].mean(0), atol=2e-6)
    # rollout over the model's tokens (mean of heads + identity, rows renormalised, layers multiplied)
    pattern = reference(PIECES).attention("encoder").astype(np.float64)
    roll = np.eye(pattern.shape[-1])
    for layer in pattern:
        a = layer.mean(0) + np.eye(pattern.shape[-1])
        roll = (a / a.sum(-1, keepdims=True)) @ roll
    np.testing.assert_allclose(weights(roll_fig), _merge_by_definition(roll, units, special == "renorm"),
                               atol=2e-6)
    captions = " ".join(c.value for c in at.caption)
    assert tr("en", "tokens.note.merged") in captions and tr("en", "aggregates.rollout_units") in captions


@pytest.mark.parametrize("key", ["single", "heads", "focus", "aggregates"])
def test_the_options_leave_no_english_on_the_chinese_page(key):
    """Every text the options bring (sidebar controls, help, the page's note) is Chinese.

    Measured against the same page with the options off: English that page already shows is not
    this feature's (the model's description names WordPiece / Transformer; the single-head page's
    download help says "hook") and is left to the test of every page in tests/strings/test_strings.py.
    """
    ref = reference(PIECES)
    units = _units(ref.source_tokens, ref.source_special, True, True)
    words = ["".join(ref.source_tokens[p].removeprefix("##") for p in u) for u in units]
    tokens = [PIECES, *PIECES.split(), *ref.source_tokens, *words]

    def left(at: AppTest) -> set[str]:
        return {w for s in _visible_texts(at) for w in untranslated(s, tokens)}

    plain = open_page(key, "zh", False, "show")
    on = open_page(key, "zh", True, "renorm")
    assert tr("zh", "tokens.note.merged") in " ".join(c.value for c in on.caption)
    assert tr("zh", "tokens.merge") == on.toggle(key="pieces").label
    assert not left(on) - left(plain), left(on) - left(plain)
