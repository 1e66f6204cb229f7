"""Words drawn inside figures come from viz.labels: English unchanged, Chinese complete.

The figures' tables themselves (strings/figures/) are checked with every other table in
tests/strings/test_strings.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import viz
from strings.check import untranslated
from tests.figures import title_of

ZH = ["我", "吃", "了", "<eos>"]
EN = ["<s>", "▁I", "▁ate", "<eos>"]
#: Parameter counts per module: module names are data too (code identifiers, never translated).
COUNTS = {"encoder.embed": 1280, "encoder.layers.0.self_attn": 4096, "decoder.layers.0.cross_attn": 4096}
TOKENS = ZH + EN + sorted({part for name in COUNTS for part in name.split(".")})


def _rows(rng: np.random.Generator, shape: tuple[int, ...], causal: bool = False) -> np.ndarray:
    """Random attention patterns whose rows sum to 1 (causal: zero above the diagonal)."""
    p = rng.random(shape).astype(np.float32) + 0.05
    if causal:
        p = p * np.tril(np.ones(shape[-2:], dtype=np.float32))
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def _causal_scores(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    scores = rng.normal(size=(n, n)).astype(np.float32)
    scores[np.triu(np.ones((n, n), bool), 1)] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32), scores


def _pe(n_pos: int = 12, d: int = 8) -> np.ndarray:
    pos = np.arange(n_pos)[:, None]
    i = np.arange(d // 2)[None, :]
    angle = pos / (10000 ** (2 * i / d))
    pe = np.zeros((n_pos, d), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def figure_cases(**lang: str) -> dict[str, object]:
    """name -> figure, covering every public figure function and its branches (``lang`` passed through)."""
    rng = np.random.default_rng(0)
    enc = _rows(rng, (2, 3, 4, 4))  # encoder self-attention over ZH
    dec = _rows(rng, (2, 3, 4, 4), causal=True)  # decoder self-attention over EN
    cross = _rows(rng, (2, 3, 4, 4))  # EN queries over ZH keys
    p, s = _causal_scores(4, rng)
    causal_mask = np.triu(np.ones((4, 4), bool), 1)
    df = viz.head_stats(enc, special_tokens=np.array([False, False, False, True]))
    sim = viz.head_similarity(enc)
    div = viz.head_divergence(enc)
    _, head_names = viz.flatten_heads(enc)
    rd = viz.shared_token_row_diff(enc[0, 0], ZH, _rows(rng, (4, 4)), ["我", "了", "吃", "<eos>"], "吃")
    cases = {
        "attention_heatmap": viz.attention_heatmap(enc[0, 0], ZH, ZH, **lang),
        "attention_heatmap_scores": viz.attention_heatmap(p, EN, EN, s, title="", subtitle="L0 H1", **lang),
        "attention_heatmap_mask": viz.attention_heatmap(dec[1, 2], EN, EN, mask_2d=causal_mask, **lang),
        "all_heads_grid": viz.all_heads_grid(enc, ZH, ZH, **lang),
        "all_heads_grid_full_mask": viz.all_heads_grid(dec, EN, EN, mask=causal_mask, hover="full", **lang),
        "all_heads_grid_none": viz.all_heads_grid(cross, EN, ZH, hover="none", click_targets=False, **lang),
        "token_focus_from": viz.token_focus_grid(enc, 1, "from", query_tokens=ZH, **lang),
        "token_focus_to": viz.token_focus_grid(cross, 2, "to", query_tokens=EN, key_tokens=ZH, **lang),
        "token_focus_other": viz.token_focus_grid(
            cross, 1, "from", query_tokens=EN, key_tokens=ZH, other_index=0, **lang
        ),
        "token_focus_to_other": viz.token_focus_grid(enc, 1, "to", query_tokens=ZH, other_index=2, **lang),
        "attention_arcs": viz.attention_arcs(enc[0, 1], ZH, **lang),
        "attention_arcs_token": viz.attention_arcs(cross[1, 0], EN, 1, key_tokens=ZH, **lang),
        "mean_over_heads": viz.mean_over_heads_figure(dec, EN, EN, 1, mask_2d=causal_mask, **lang),
        "rollout": viz.attention_rollout_figure(enc, ZH, **lang),
        "rollout_no_residual": viz.attention_rollout_figure(enc, ZH, add_residual=False, **lang),
        "cross_step_1d": viz.cross_attention_step(cross[0, 0, 1], ZH, step=1, step_token="▁I", **lang),
        "cross_step_2d": viz.cross_attention_step(cross[1, :, 2], ZH, step=2, **lang),
        "cross_step_3d": viz.cross_attention_step(cross[:, :, 3], ZH, step_token="<eos>", **lang),
        "topk_bar": viz.topk_bar(EN, np.array([0.1, 0.6, 0.2, 0.1]), k=3, **lang),
        "compare_heatmaps": viz.compare_heatmaps(enc[0, 0], ZH, dec[0, 0], EN, mask_b=causal_mask, **lang),
        "compare_heatmaps_cross": viz.compare_heatmaps(
            cross[0, 0], EN, cross[1, 0], EN, key_tokens_a=ZH, key_tokens_b=ZH, **lang
        ),
        "row_diff": viz.row_diff_figure(rd, **lang),
        "head_stats_scatter": viz.head_stats_scatter(df, **lang),
        "head_stats_scatter_other": viz.head_stats_scatter(df, "special_tokens", "previous_token", **lang),
        "head_stats_bar": viz.head_stats_bar(df, **lang),
        "head_stats_bar_first": viz.head_stats_bar(df, "first_token", **lang),
        "head_similarity": viz.head_similarity_heatmap(sim, head_names, **lang),
        "head_divergence": viz.head_similarity_heatmap(div, head_names, kind="divergence", **lang),
        "parameters_treemap": viz.parameter_breakdown_chart(COUNTS, **lang),
        "parameters_bar": viz.parameter_breakdown_chart(COUNTS, kind="bar", **lang),
        "pe_heatmap": viz.pe_heatmap(_pe(), **lang),
        "pe_cosine": viz.pe_cosine_similarity(_pe(), **lang),
        "pe_curves": viz.pe_dimension_curves(_pe(), [0, 1, 6], **lang),
    }
    return cases


def _trace_steps() -> list[dict[str, object]]:
    return [
        {
            "name": "src_embed",
            "op": "embedding",
            "hook": None,
            "in_shapes": [(1, 4)],
            "out_shape": (1, 4, 32),
            "in_symbols": ["B × L_src"],
            "out_symbol": ("B", "L_src", "d_model"),
        },
        {
            "name": "encoder.blocks.0.attn",
            "op": "attention",
            "hook": "encoder.blocks.0.attn.hook_pattern",
            "in_shapes": [(1, 4, 32), ()],
            "out_shape": (1, 4, 4, 4),
            "in_symbols": [("B", "L_src", "d_model"), ()],
            "out_symbol": "B × H × L_src × L_src",
        },
    ]


def table_cases(**lang: str) -> dict[str, object]:
    rng = np.random.default_rng(1)
    enc = _rows(rng, (2, 3, 4, 4))
    other = _rows(rng, (2, 3, 4, 4))
    return {
        "head_stats": viz.head_stats(enc, **lang),
        "rank_heads_by_change": viz.rank_heads_by_change(enc, ZH, other, ["我", "了", "吃", "<eos>"], **lang),
        "rank_heads_by_change_token": viz.rank_heads_by_change(
            enc, ZH, other, ["我", "了", "吃", "<eos>"], "吃", **lang
        ),
        "shape_trace_table": viz.shape_trace_table(_trace_steps(), **lang),
    }


# --------------------------------------------------------------------------- English stays as it was


def test_english_is_the_default_and_unchanged():
    default, english = figure_cases(), EN_FIGURES
    assert default.keys() == english.keys()
    for name in default:
        assert default[name].to_json() == english[name].to_json(), name
    default_t, english_t = table_cases(), table_cases(lang="en")
    for name in default_t:
        assert default_t[name].to_json() == english_t[name].to_json(), name
        assert default_t[name].attrs == english_t[name].attrs, name


def test_unknown_language_falls_back_to_english():
    assert viz.attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"], lang="fr").to_json() == (
        viz.attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"]).to_json()
    )


def test_english_spot_checks():
    figs = figure_cases()
    hm = figs["attention_heatmap_scores"]
    assert title_of(hm).startswith("Attention pattern (rows: query attends → columns: key)")
    assert "grey = masked (cannot attend)" in title_of(hm)
    assert hm.layout.xaxis.title.text == "key (attended to)"
    assert hm.layout.yaxis.title.text == "query (attending)"
    main = hm.data[-1]  # one hover template: labels from the category x/y, masked cells from the fallback
    assert main.hovertemplate == (
        "query <b>%{y}</b> → key <b>%{x}</b><br>attention weight: %{z:.3f}<br>"
        "score (pre-softmax): %{customdata:.3f}<extra></extra>"
    )
    assert (main.y[0], main.x[0], main.x[1]) == ("&lt;s&gt;", "&lt;s&gt;", "▁I")
    assert main.hovertemplatefallback == "<i>masked</i> (cannot attend)"
    assert hm.data[-1].colorbar.title.text == "attention weight"
    grid = figs["all_heads_grid_full_mask"]
    assert title_of(grid).startswith("All heads: attention pattern of every layer × head")
    assert "2 layers × 3 heads · rows: query → columns: key · click a tile to open it · grey = masked" in (
        title_of(grid)
    )
    assert grid.data[-1].hovertemplate == (
        "layer %{customdata[0]} · head %{customdata[1]}<br><b>click to open</b><extra></extra>"
    )
    assert grid.data[-1].name == viz.CLICK_TRACE_NAME == "click targets"
    assert title_of(figs["mean_over_heads"]).startswith(
        "Layer 1: mean over heads — not a head of the model"
    )
    assert title_of(figs["rollout"]).startswith(
        "Attention rollout (with residual) — an estimate of flow through residual paths"
    )
    assert title_of(figs["cross_step_1d"]) == (
        "Cross-attention at step 1 (producing <b>▁I</b>) over the source"
    )
    assert title_of(figs["topk_bar"]) == "Top-3 next-token probabilities"
    assert figs["pe_curves"].data[0].name == "dim 0"
    assert title_of(figs["parameters_bar"]) == "Parameters per module (total 9,472)"
    assert list(table_cases()["rank_heads_by_change"].columns) == [
        "rank",
        "layer",
        "head",
        "js_divergence",
        "n_queries",
    ]
    assert list(table_cases()["shape_trace_table"].columns) == [
        "step",
        "name",
        "op",
        "hook",
        "input shapes",
        "input symbols",
        "output shape",
        "output symbol",
    ]


# --------------------------------------------------------------------------- Chinese is complete


def _visible_words(fig) -> list[str]:
    """What a reader sees of a figure: titles, axis and colour-bar titles, annotations, legend names,
    hover templates, the first per-cell hover texts and the text drawn in cells."""
    out: list[str] = []
    layout = fig.to_plotly_json()["layout"]
    out.append((layout.get("title") or {}).get("text", ""))
    for key, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*|coloraxis|legend", key) and isinstance(value, dict):
            out.append((value.get("title") or {}).get("text", ""))
            out.append(((value.get("colorbar") or {}).get("title") or {}).get("text", ""))
    out += [a.get("text", "") for a in layout.get("annotations", [])]
    for tr in fig.data:
        # scatter and bar traces with a name appear in the legend unless showlegend is False
        if tr.type in ("scatter", "bar") and tr.showlegend is not False and tr.name:
            out.append(tr.name)
        out.append(tr.hovertemplate or "")
        if tr.type == "heatmap" and tr.colorbar is not None and tr.colorbar.title is not None:
            out.append(tr.colorbar.title.text or "")
        marker = getattr(tr, "marker", None)
        if marker is not None and getattr(marker, "colorbar", None) is not None and marker.colorbar.title:
            out.append(marker.colorbar.title.text or "")
        for attr in ("text", "customdata"):
            values = getattr(tr, attr, None)
            if values is None or isinstance(values, str):
                continue
            flat = np.asarray(values, dtype=object).ravel()[:12]
            out += [v for v in flat if isinstance(v, str)]
        if getattr(tr, "texttemplate", None):
            out.append(tr.texttemplate)
    return [s for s in out if s]


def _subplot_titles_and_ticks(fig) -> list[str]:
    layout = fig.to_plotly_json()["layout"]
    out = []
    for key, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(value, dict) and value.get("ticktext"):
            out += [str(t) for t in value["ticktext"]]
    return out


ZH_FIGURES = figure_cases(lang="zh")
EN_FIGURES = figure_cases(lang="en")


@pytest.mark.parametrize("name", list(ZH_FIGURES))
def test_chinese_figure_has_no_english_left(name):
    fig = ZH_FIGURES[name]
    texts = _visible_words(fig) + _subplot_titles_and_ticks(fig)
    assert texts, name
    left = {t: untranslated(t, TOKENS) for t in texts}
    assert not {t: v for t, v in left.items() if v}, name


@pytest.mark.parametrize("name", list(ZH_FIGURES))
def test_chinese_figure_keeps_the_data(name):
    """Only words change: the data of every trace is the same in both languages."""
    en = json.loads(EN_FIGURES[name].to_json())
    zh = json.loads(ZH_FIGURES[name].to_json())
    assert len(en["data"]) == len(zh["data"])
    for a, b in zip(en["data"], zh["data"], strict=True):
        for attr in ("x", "y", "z", "values", "ids", "parents"):
            assert a.get(attr) == b.get(attr), attr
    assert en["layout"].get("meta") == zh["layout"].get("meta")


def test_chinese_figures_use_the_glossary_words():
    figs = ZH_FIGURES
    hm = figs["attention_heatmap_scores"]
    assert "查询" in hm.layout.yaxis.title.text and "键" in hm.layout.xaxis.title.text
    assert "掩码" in title_of(hm)
    assert "softmax" in hm.data[-1].hovertemplate and "掩码" in hm.data[-1].hovertemplatefallback
    assert "注意力头" in title_of(figs["all_heads_grid"])
    assert "注意力展开" in title_of(figs["rollout"])
    assert "交叉注意力" in title_of(figs["cross_step_2d"])
    assert "位置编码" in title_of(figs["pe_heatmap"])
    assert "熵" in title_of(figs["head_stats_bar"])
    # tokens are data: drawn as given (escaped), never translated
    assert list(figs["attention_heatmap"].layout.xaxis.ticktext) == ["我", "吃", "了", "&lt;eos&gt;"]
    assert figs["all_heads_grid"].data[-1].name == viz.CLICK_TRACE_NAME


@pytest.mark.parametrize("kind", ["head_stats", "rank_heads_by_change", "shape_trace_table"])
def test_table_columns_keep_their_names_and_have_labels_in_both_languages(kind):
    en, zh = table_cases(lang="en"), table_cases(lang="zh")
    assert list(en[kind].columns) == list(zh[kind].columns)
    names_en = viz.column_labels(kind, "en")
    names_zh = viz.column_labels(kind, "zh")
    assert set(names_en) == set(names_zh) == set(en[kind].columns)
    for col, text in names_zh.items():
        assert text and not untranslated(text), (col, text)
    helps = viz.column_help(kind, "zh")
    assert set(helps) <= set(en[kind].columns)
    for col, text in helps.items():
        assert not untranslated(text), (col, text)


def test_table_labels_in_english_are_what_the_pages_show_today():
    assert viz.column_labels("head_stats", "en")["entropy_norm"] == "entropy norm"
    assert viz.column_labels("head_stats", "en")["n_rows"] == "rows"
    assert viz.column_labels("rank_heads_by_change", "en")["js_divergence"] == "change (JS, nats)"
    assert viz.column_labels("shape_trace_table", "en")["input shapes"] == "input shapes"
    assert viz.column_help("head_stats", "en") == viz.HEAD_STATS_COLUMNS
    with pytest.raises(ValueError):
        viz.column_labels("nope", "en")


def test_chinese_table_cells_have_no_english_words():
    zh = table_cases(lang="zh")
    assert zh["head_stats"].attrs["units"].keys() == viz.HEAD_STATS_COLUMNS.keys()
    for text in zh["head_stats"].attrs["units"].values():
        assert not untranslated(text), text
    trace = zh["shape_trace_table"]
    assert trace.loc[1, "input shapes"].endswith("标量")
    assert table_cases()["shape_trace_table"].loc[1, "input shapes"].endswith("scalar")


def test_font_family_has_cjk_fallbacks_after_the_latin_fonts():
    fonts = [f.strip(" '") for f in viz.theme.FONT_FAMILY.split(",")]
    assert fonts[0] == "Inter" and fonts[-1] == "sans-serif"
    for cjk in ("Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei"):
        assert fonts.index("Arial") < fonts.index(cjk) < fonts.index("sans-serif")
    fig = ZH_FIGURES["attention_heatmap"]
    assert fig.layout.font.family == fig.layout.hoverlabel.font.family == viz.theme.FONT_FAMILY
