"""Architecture page: the diagram follows the config (norm placement, stacks, tied output), every box and
every stage of the multi-head split and merge shows the real shape the shape trace recorded."""

from __future__ import annotations

import functools
import json

import pytest
from streamlit.testing.v1 import AppTest

import viz
from app_support.i18n import text as i18n_text
from app_support.i18n.check import untranslated
from model.network.kinds import hook_name
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
from tests.figures import title_of
from tests.paths import REPO_ROOT
from tests.strings.test_strings import _visible_texts
from viz.architecture import architecture_layout

ROOT = REPO_ROOT
PAGE = str(ROOT / "app_pages" / "architecture.py")
TIMEOUT = 300

BASE = {
    "n_enc_layers": 2,
    "n_dec_layers": 3,
    "n_heads": 4,
    "d_model": 64,
    "d_ff": 256,
    "norm": "layernorm",
    "pos_encoding": "sinusoidal",
    "tie_embeddings": True,
    "norm_first": True,
}
PAGES = {
    "single": "Single head",
    "heads": "All heads",
    "model": "The model",
    "positional": "Positional encoding",
}


@functools.cache
def reference(name: str, text: str):
    return analyze(load_model(name), text)


def page_reference(name: str, text: str):
    """The analysis the page reads (attention only: a language model's is one pass over its prompt, a
    translation model's traced over the whole sequence)."""
    bundle = load_model(name)
    return analyze(bundle, text, keep=attention_only, whole_trace=not bundle.cfg.decoder_only)


# --------------------------------------------------------------------------- the pure layout


def _order(layout, stack: str) -> list[str]:
    return [b.key for b in sorted(layout.boxes, key=lambda b: b.row) if b.stack == stack]


def test_pre_ln_puts_the_norm_before_each_sublayer_and_a_final_norm():
    layout = architecture_layout(BASE)
    enc = _order(layout, "encoder")
    assert enc == [
        "enc.embed",
        "enc.pos",
        "enc.norm1",
        "enc.attn",
        "enc.add1",
        "enc.norm2",
        "enc.ffn",
        "enc.add2",
        "enc.final_norm",
        "enc.out",
    ]
    dec = _order(layout, "decoder")
    for norm, sub, add in (("norm1", "self", "add1"), ("norm2", "cross", "add2"), ("norm3", "ffn", "add3")):
        assert dec.index(f"dec.{norm}") + 1 == dec.index(f"dec.{sub}") == dec.index(f"dec.{add}") - 1
    assert "dec.final_norm" in dec and dec[-1] == "out"
    # the residual branch starts at the norm (the norm is inside it)
    assert ("enc.norm1", "enc.add1") in layout.residuals and ("dec.norm2", "dec.add2") in layout.residuals


def test_post_ln_puts_the_norm_after_the_residual_add_and_no_final_norm():
    layout = architecture_layout({**BASE, "norm_first": False})
    enc = _order(layout, "encoder")
    assert enc == [
        "enc.embed",
        "enc.pos",
        "enc.attn",
        "enc.add1",
        "enc.norm1",
        "enc.ffn",
        "enc.add2",
        "enc.norm2",
        "enc.out",
    ]
    assert not any(k.endswith("final_norm") for k in layout.keys())
    assert ("enc.attn", "enc.add1") in layout.residuals
    pre = architecture_layout(BASE)
    assert pre.box("enc.norm1").row < pre.box("enc.attn").row
    assert layout.box("enc.norm1").row > layout.box("enc.add1").row


def test_blocks_say_how_often_they_repeat_and_cross_attention_reads_the_encoder():
    layout = architecture_layout(BASE)
    assert layout.blocks["encoder"][2] == 2 and layout.blocks["decoder"][2] == 3
    assert ("enc.out", "dec.cross") in layout.arrows
    fig = viz.architecture_figure(BASE, lang="en")
    texts = [a.text for a in fig.layout.annotations]
    assert any("× 2" in s for s in texts) and any("× 3" in s for s in texts)
    assert viz.labels.label("en", "architecture.kv_from_encoder") in texts


def test_encoder_only_config_has_no_decoder_boxes():
    layout = architecture_layout({**BASE, "n_dec_layers": 0})
    assert not [b for b in layout.boxes if b.stack == "decoder" or b.key.startswith("dec.")]
    assert "decoder" not in layout.blocks and ("enc.out", "out") in layout.arrows
    assert not [a for a in layout.arrows if "dec.cross" in a]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_decoder_only_config_has_no_encoder_and_no_cross_attention(lang):
    config = {**BASE, "n_enc_layers": 0}
    layout = architecture_layout(config)
    assert not [b for b in layout.boxes if b.stack == "encoder" or b.kind == "cross"]
    assert [b.key for b in layout.boxes if b.kind in ("attention", "ffn")] == ["dec.self", "dec.ffn"]
    assert layout.blocks["decoder"][2] == 3 and ("dec.final_norm", "out") in layout.arrows
    title = title_of(viz.architecture_figure(config, lang=lang))
    assert i18n_text(lang, "architecture.diagram_title.decoder_only") in title
    assert i18n_text(lang, "architecture.diagram_title.encoder_decoder") in title_of(
        viz.architecture_figure(BASE, lang=lang))


def test_positional_encoding_box_follows_the_config():
    assert "enc.pos" in architecture_layout(BASE).keys()
    for pos in ("rope", "none"):
        assert not [
            k for k in architecture_layout({**BASE, "pos_encoding": pos}).keys() if k.endswith(".pos")
        ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tied_flag_shows(lang):
    def out_text(tied: bool) -> str:
        fig = viz.architecture_figure({**BASE, "tie_embeddings": tied}, {"out": (1, 5, 30)}, lang=lang)
        return next(a.text for a in fig.layout.annotations if "(1, 5, 30)" in a.text)

    assert viz.labels.label(lang, "architecture.output_tied") in out_text(True)
    assert viz.labels.label(lang, "architecture.output_untied") in out_text(False)


def test_boxes_show_their_shape_and_page():
    shapes = {"enc.attn": (1, 7, 64), "dec.ffn": (1, 9, 64)}
    fig = viz.architecture_figure(BASE, shapes, page_titles=PAGES, lang="en")
    texts = [a.text for a in fig.layout.annotations]
    attn = next(
        s for s in texts if s.startswith("<b>" + viz.labels.label("en", "architecture.self_attention"))
    )
    assert "(1, 7, 64)" in attn and "Single head" in attn and "All heads" in attn
    ffn = [s for s in texts if s.startswith("<b>" + viz.labels.label("en", "architecture.ffn"))]
    assert len(ffn) == 2 and all("The model" in s for s in ffn)  # encoder, decoder
    assert "(1, 9, 64)" in ffn[1] and "(1, 9, 64)" not in ffn[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chinese_figures_have_no_english_left(lang):
    result = reference("reverse", "attention")
    figs = [
        viz.architecture_figure(
            load_model("reverse").cfg.to_dict(), viz.architecture_shapes(result.trace), lang=lang
        ),
        viz.architecture_figure(
            {
                **BASE,
                "norm_first": False,
                "norm": "rmsnorm",
                "tie_embeddings": False,
                "pos_encoding": "learned",
            },
            lang=lang,
        ),
        viz.split_merge_figure(
            viz.split_merge_stages(result.trace, "decoder.blocks.0.cross_attn"), lang=lang
        ),
    ]
    if lang == "zh":
        for fig in figs:
            texts = [title_of(fig), *(a.text for a in fig.layout.annotations)]
            left = {s: untranslated(s) for s in texts}
            assert not {s: v for s, v in left.items() if v}


# --------------------------------------------------------------------------- shapes from the trace


def _step(trace, name: str, op: str) -> dict:
    return next(s for s in trace if s["name"] == name and s["op"] == op)


def test_box_shapes_are_the_traced_shapes():
    result = reference("default", "我吃了一个苹果")
    trace = result.trace
    shapes = viz.architecture_shapes(trace)
    assert shapes["enc.attn"] == tuple(
        _step(trace, "encoder.blocks.0.attn", "output projection W_o")["out_shape"]
    )
    assert shapes["dec.cross"] == tuple(
        _step(trace, "decoder.blocks.0.cross_attn", "output projection W_o")["out_shape"]
    )
    assert shapes["dec.ffn"] == tuple(_step(trace, "decoder.blocks.0.mlp", "FFN down")["out_shape"])
    assert shapes["enc.embed"] == tuple(
        _step(trace, "encoder.embed", "embedding lookup * sqrt(d_model)")["out_shape"]
    )
    assert shapes["out"] == tuple(_step(trace, "unembed", "project to vocabulary")["out_shape"])
    sizes = result.trace_sizes
    assert shapes["out"] == (1, sizes["L_tgt"], sizes["V"])
    assert shapes["enc.out"] == (1, sizes["L_src"], sizes["d_model"])
    # every box of the shipped model gets a shape
    assert set(architecture_layout(load_model("default").cfg.to_dict()).keys()) <= set(shapes)


EXPECTED_STEPS = [  # (stage, op, in/out): the steps the split-and-merge stages must come from
    ("input", "linear Q = x W_q", "in"),
    ("split", "split heads: view Q", "out"),
    ("heads_first", "transpose Q to heads-first", "out"),
    ("scores", "scores = Q K^T", "out"),
    ("weighted", "weighted sum: pattern @ V", "out"),
    ("positions_first", "transpose back to positions-first", "out"),
    ("merge", "merge heads: view", "out"),
    ("project", "output projection W_o", "out"),
]


def _expected_shapes(trace, path: str) -> list[tuple[int, ...]]:
    out = []
    for _, op, which in EXPECTED_STEPS:
        s = _step(trace, path, op)
        out.append(tuple(s["in_shapes"][0] if which == "in" else s["out_shape"]))
    return out


@pytest.mark.parametrize("kind,layer", [("encoder", 1), ("decoder", 0), ("cross", 1)])
def test_split_and_merge_shapes_are_the_traced_shapes(kind, layer):
    result = reference("reverse", "attention!")
    path = hook_name(kind, layer, "q").rsplit(".", 1)[0]
    stages = viz.split_merge_stages(result.trace, path)
    assert [s.key for s in stages] == [k for k, _, _ in EXPECTED_STEPS]
    assert [s.shape for s in stages] == _expected_shapes(result.trace, path)
    sz = result.trace_sizes
    lq = sz["L_src"] if kind == "encoder" else sz["L_tgt"]
    lk = sz["L_tgt"] if kind == "decoder" else sz["L_src"]
    assert [s.shape for s in stages] == [
        (1, lq, sz["d_model"]),
        (1, lq, sz["h"], sz["d_head"]),
        (1, sz["h"], lq, sz["d_head"]),
        (1, sz["h"], lq, lk),
        (1, sz["h"], lq, sz["d_head"]),
        (1, lq, sz["h"], sz["d_head"]),
        (1, lq, sz["h"] * sz["d_head"]),
        (1, lq, sz["d_model"]),
    ]
    assert stages[6].symbol[-1] == "h·d_head"
    fig = viz.split_merge_figure(stages)
    assert fig.layout.meta["shapes"] == [list(s.shape) for s in stages]
    with pytest.raises(KeyError):
        viz.split_merge_stages(result.trace, "decoder.blocks.9.cross_attn")


# --------------------------------------------------------------------------- the page, standalone


def open_page(model: str, text: str, kind: str, layer: int, lang: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": text, "kind": kind, "layer": str(layer), "lang": lang})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize(
    "model,text,kind,layer",
    [("reverse", "attention", "cross", 1), ("default", "我吃了一个苹果", "decoder", 2),
     ("induction", "qhzmtvbqhzm", "decoder", 1)],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_the_traced_shapes(model, text, kind, layer, lang):
    at = open_page(model, text, kind, layer, lang)
    result = page_reference(model, text)
    path = hook_name(kind, layer, "q").rsplit(".", 1)[0]
    # a language model's shapes are its prompt pass's, and the page says the output came a token at a time
    prompt_len = len(result.prepared.prefix)
    one_pass = i18n_text(lang, "architecture.one_pass", L=prompt_len,
                         new=len(result.target_tokens) - prompt_len)
    assert (one_pass in [c.value for c in at.caption]) == (model == "induction")
    expected = _expected_shapes(result.trace, path)
    # the split-and-merge figure and table show exactly the traced shapes of the chosen attention
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    assert [tuple(s) for s in charts[1]["layout"]["meta"]["shapes"]] == expected
    shape_col = i18n_text(lang, "architecture.col.shape")
    table = at.dataframe[0].value
    assert list(table[shape_col]) == [viz.format_shape(s) for s in expected]
    shown = "\n".join(a["text"] for a in charts[1]["layout"]["annotations"])
    for s in expected:
        assert "(" + ", ".join(map(str, s)) + ")" in shown
    # the diagram: every box has the shape the trace recorded for it
    diagram = charts[0]["layout"]
    shapes = viz.architecture_shapes(result.trace)
    assert set(diagram["meta"]["boxes"]) <= set(shapes)
    texts = "\n".join(a["text"] for a in diagram["annotations"])
    for key in diagram["meta"]["boxes"]:
        assert "(" + ", ".join(map(str, shapes[key])) + ")" in texts, key
    if lang == "zh":
        tokens = [
            text,
            result.prepared.text,
            result.output_text,
            *result.source_tokens,
            *result.target_tokens,
        ]
        left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
        assert not {s: v for s, v in left.items() if v}, json.dumps(left, ensure_ascii=False)
        assert at.title[0].value == i18n_text("zh", "architecture.title")


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_input_behaves_as_on_the_other_pages(text):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": "reverse", "text": text, "lang": "en"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert [i.value for i in at.info] == [i18n_text("en", "analysis.empty")]
    assert not at.get("plotly_chart")


def test_long_input_is_cut_with_a_note():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update({"model": "reverse", "text": "x" * 1000, "lang": "en"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.warning and len(at.get("plotly_chart")) == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("style", ["after", "both", "parallel"])
def test_the_diagram_says_when_the_block_is_wired_otherwise_than_its_boxes(style, lang):
    """OLMo 2, Gemma 3 and GPT-NeoX blocks are drawn in the Pre-LN order: the subtitle names their own
    wiring (it once said "Pre-LN" for all three) and points to the block drawn below."""
    title = title_of(viz.architecture_figure({**BASE, "n_enc_layers": 0, "norm_style": style}, lang=lang))
    assert i18n_text(lang, f"architecture.norm_style.{style}") in title
    assert i18n_text(lang, "architecture.pre_ln") not in title
    plain = title_of(viz.architecture_figure({**BASE, "n_enc_layers": 0, "norm_style": "pre"}, lang=lang))
    assert i18n_text(lang, "architecture.pre_ln") in plain
