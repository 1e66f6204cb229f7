"""Cost page: the quadratic fit, the doubling ratios, the score memory formula, the bounded measurements
(no assertion on absolute times) and the page, standalone, in both languages."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_support.i18n import text as i18n_text
from app_support.i18n.check import untranslated
from model.lab import choices, cost
from model.store.registry import load_model
from tests.figures import title_of
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts

ROOT = REPO_ROOT
PAGE = str(ROOT / "app_pages" / "cost.py")
TIMEOUT = 300


# --------------------------------------------------------------------------- the pure part


@pytest.mark.parametrize("a,b,c", [(3.0, 2.0, 7.5), (2.5e-9, 4e-7, 3e-5), (0.0, 1.0, 0.0), (1e-6, 0.0, 2e-3)])
def test_the_fit_recovers_known_coefficients(a, b, c):
    lengths = np.array(choices.COST_LENGTHS, dtype=np.float64)
    fit = viz.fit_quadratic(lengths, a * lengths**2 + b * lengths + c)
    scale = max(abs(a), abs(b), abs(c))
    assert (
        abs(fit.a - a) <= 1e-9 * scale and abs(fit.b - b) <= 1e-9 * scale and abs(fit.c - c) <= 1e-9 * scale
    )
    np.testing.assert_allclose(fit(lengths), a * lengths**2 + b * lengths + c, rtol=1e-9, atol=1e-9 * scale)


def test_the_fit_never_has_a_negative_part_and_stays_positive_between_points():
    """Timings like those measured here (overhead-bound short lengths, then growth): an unconstrained
    fit took b < 0 and dipped below zero between 64 and 256."""
    lengths = np.array([16, 32, 64, 128, 256, 512, 1024], dtype=np.float64)
    ms = np.array([0.033, 0.054, 0.111, 0.343, 2.874, 6.262, 89.06])
    fit = viz.fit_quadratic(lengths, ms)
    assert fit.a >= 0 and fit.b >= 0 and fit.c >= 0
    grid = np.linspace(16, 1024, 500)
    assert np.all(fit(grid) > 0)


def test_the_fit_needs_three_points():
    with pytest.raises(ValueError):
        viz.fit_quadratic([16, 32], [1.0, 2.0])


def test_doubling_ratios_say_where_doubling_quadruples():
    lengths = [16, 32, 64, 100, 128]
    quadratic = [n**2 for n in lengths]
    ratios = viz.doubling_ratios(lengths, quadratic)
    assert [(d.short, d.long) for d in ratios] == [(16, 32), (32, 64), (64, 128)]  # 100 has no double
    assert all(d.ratio == pytest.approx(4.0) and d.verdict == "quadratic" for d in ratios)
    overhead = viz.doubling_ratios(lengths, [1.0 + 1e-6 * n**2 for n in lengths])
    assert overhead[0].verdict == "overhead" and overhead[0].ratio < 2
    assert viz.doubling_ratios([16, 32], [1.0, 9.0])[0].verdict == "above"


def test_score_memory_is_b_h_l_squared_times_four_bytes():
    assert viz.score_memory_bytes(1, 8, 64) == 8 * 64 * 64 * 4 == 131072
    assert viz.score_memory_bytes(2, 4, 2048) == 2 * 4 * 2048**2 * 4
    table = viz.memory_table([16, 2048], batch=1, heads=8, layers=9, lang="en")
    column = viz.labels.label("en", "cost.col.bytes")
    assert list(table[column]) == [8 * 16**2 * 4, 8 * 2048**2 * 4]
    assert list(table[viz.labels.label("en", "cost.col.all_layers", layers=9)])[-1] == "1.1 GiB"
    # doubling L quadruples it
    assert viz.score_memory_bytes(1, 8, 128) == 4 * viz.score_memory_bytes(1, 8, 64)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figure_and_tables_are_in_the_language(lang):
    lengths, secs = [16, 32, 64, 128], [1e-5, 2e-5, 6e-5, 2.2e-4]
    fig = viz.cost_figure(lengths, secs, viz.fit_quadratic(lengths, secs), lang=lang)
    assert fig.layout.meta["lengths"] == lengths
    np.testing.assert_allclose(fig.layout.meta["ms"], np.array(secs) * 1e3)
    words = [
        title_of(fig),
        fig.layout.xaxis.title.text,
        fig.layout.yaxis.title.text,
        *(tr.name for tr in fig.data),
        fig.data[0].hovertemplate,
    ]
    tables = [
        viz.doubling_table(viz.doubling_ratios(lengths, secs), lengths, secs, lang=lang),
        viz.memory_table(lengths, batch=1, heads=4, layers=6, lang=lang),
        viz.model_table(lengths, secs, secs, [0.1] * 4, layers=6, lang=lang),
    ]
    for table in tables:
        words += [str(c) for c in table.columns]
    words += list(tables[0][viz.labels.label(lang, "cost.col.verdict")])
    if lang == "zh":
        assert not {w: untranslated(w) for w in words if untranslated(w)}


# --------------------------------------------------------------------------- the measurements


def test_measuring_attention_gives_one_median_per_length():
    timing = cost.measure_attention(2, 8, budget_s=30, lengths=(16, 32, 64), repeats=3)
    assert timing.lengths == [16, 32, 64] and len(timing.seconds) == 3 and not timing.stopped_early
    assert all(s > 0 for s in timing.seconds) and timing.repeats == 3


def test_a_tiny_budget_measures_fewer_lengths_and_says_it_stopped():
    timing = cost.measure_attention(8, 32, budget_s=0.002)
    assert len(timing.lengths) < len(choices.COST_LENGTHS) and timing.stopped_early
    assert timing.lengths + timing.skipped == list(choices.COST_LENGTHS)
    assert len(timing.seconds) == len(timing.lengths)
    nothing = cost.measure_attention(8, 32, budget_s=0)
    assert nothing.lengths == [] and nothing.skipped == list(choices.COST_LENGTHS)


def test_measuring_the_model_covers_the_lengths_it_accepts():
    assert cost.model_lengths(64) == [8, 16, 32, 64] and cost.model_lengths(20) == [8, 16, 20]
    model = load_model("reverse").model
    timing = cost.measure_model(model, budget_s=30, repeats=2)
    assert timing.lengths == cost.model_lengths(model.cfg.max_len)
    assert len(timing.seconds) == len(timing.core_seconds) == len(timing.shares) == len(timing.lengths)
    assert all(0 <= s <= 1 for s in timing.shares)
    assert timing.n_attention_layers == model.cfg.n_enc_layers + 2 * model.cfg.n_dec_layers
    assert not model.training
    stopped = cost.measure_model(model, budget_s=0)
    assert stopped.lengths == [] and stopped.stopped_early


def test_measuring_a_decoder_only_model_runs_its_one_sequence():
    model = load_model("induction").model  # 2 decoder layers, no encoder, no cross-attention
    timing = cost.measure_model(model, budget_s=30, repeats=2)
    assert timing.lengths == cost.model_lengths(model.cfg.max_len) and all(s > 0 for s in timing.seconds)
    assert timing.n_attention_layers == 2


# --------------------------------------------------------------------------- the page, standalone


def open_page(lang: str, monkeypatch, budget: float, model: str = "default") -> AppTest:
    monkeypatch.setenv("ATTENTION_LENS_COST_BUDGET", str(budget))  # read by the page on every run
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": "我吃了一个苹果", "lang": lang})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_runs_in_both_languages(lang, monkeypatch):
    at = open_page(lang, monkeypatch, 0.6)
    assert at.title[0].value == i18n_text(lang, "cost.title")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    shown = spec["layout"]["meta"]["lengths"]
    assert 3 <= len(shown) and shown == list(choices.COST_LENGTHS[: len(shown)])  # growing lengths, from 16
    assert viz.labels.label(lang, "cost.col.bytes") in {
        str(c) for df in at.dataframe for c in df.value.columns
    }
    if lang == "zh":
        left = {s: untranslated(s, ["我吃了一个苹果"]) for s in _visible_texts(at)}
        assert not {s: v for s, v in left.items() if v}, json.dumps(left, ensure_ascii=False)


def test_the_page_says_when_the_budget_ran_out(monkeypatch):
    at = open_page("en", monkeypatch, 0.0, model="reverse")
    infos = [i.value for i in at.info]
    assert i18n_text("en", "cost.none") in infos and i18n_text("en", "cost.model.none") in infos
    assert not at.get("plotly_chart")
    # the memory table needs no measurement
    bytes_col = viz.labels.label("en", "cost.col.bytes")
    table = next(df.value for df in at.dataframe if bytes_col in df.value.columns)
    heads = load_model("reverse").cfg.n_heads
    assert list(table[bytes_col]) == [heads * n * n * 4 for n in choices.COST_LENGTHS]
