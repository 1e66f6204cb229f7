"""The decoding page with each strategy, driven through a link as a user opens it (AppTest): every
number it shows is the model's own, recomputed here directly (beam search, the sampled distributions,
the teacher-forced losses), and the sidebar's strategy controls write the link."""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

from app_support import strategy as strategy_ui
from app_support.i18n import text
from app_support.i18n.check import untranslated
from app_support.ui import escape_md, md_output
from model.decoding.beam import beam_search
from model.decoding.decoders import filtered_distribution
from model.decoding.strategy import Strategy
from model.run.analysis import analyze
from model.store.registry import load_model
from model.training.train import collate, loss_fn
from tests.app.test_app_pages import APP, PAGES, TIMEOUT, arr, figure
from tests.strings.test_strings import _visible_texts
from viz import theme as viz_theme

BEAM = Strategy.make("beam", beam=4, length_penalty=1.0)
SAMPLE = Strategy.make("sample", temperature=1.5, top_k=10, top_p=0.9, seed=7)


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def analysis(name: str, text_: str, strategy: Strategy):
    return analyze(bundle(name), text_, strategy=strategy)


def open_decoding(model: str, text_: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    params = {k: str(v) for k, v in params.items()}
    at.query_params.update({"model": model, "text": text_, **params})
    at.run()
    at.query_params.update({k: v for k, v in params.items() if k in ("step", "ref")})
    at.switch_page(PAGES["decoding"]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def frames(at: AppTest) -> list[pd.DataFrame]:
    return [el.value for el in at.dataframe]


def all_texts(at: AppTest) -> list[str]:
    return [str(el.value) for kind in ("markdown", "caption", "info") for el in getattr(at, kind)]


# --------------------------------------------------------------------------- beam search


@pytest.mark.parametrize("step", [0, 2])
def test_beam_search_page_shows_the_searchs_own_numbers(step):
    text_ = "We sat on the river bank."  # greedy: 我们坐在河上。 beam 4: 我们坐在河边。
    at = open_decoding("default", text_, decode=BEAM.param, step=step)
    ref = analysis("default", text_, BEAM)
    b = bundle("default")
    p = ref.prepared
    direct = beam_search(b.model, [p.source_ids], [p.prefix], b.tokenizer.eos_id, 4, 1.0, trace=True)[0]
    # The output shown is the beam's, named with its strategy, and the link holds the strategy.
    assert direct.best.ids == ref.search.best.ids
    assert md_output(ref.output_text) in all_texts(at)
    assert ref.output_text != analyze(b, text_).output_text  # the beam output differs from greedy here
    assert text("en", "strategy.output_by", strategy=strategy_ui.name(BEAM, "en")) in all_texts(at)
    assert at.query_params["decode"] == BEAM.param
    # The tree: one marker per candidate of every step (+ the start), at the model's log-probabilities.
    tree = figure(at, "Beam search")
    markers = [tr for tr in tree["data"] if tr.get("mode") == "markers+text"]
    logps = np.concatenate([[float(c[1]) for c in tr["customdata"]] for tr in markers])
    want = [0.0] + [c.logp for s in direct.steps for c in s.candidates]
    np.testing.assert_allclose(np.sort(logps), np.sort(want), atol=1e-3)
    chosen = [tr for tr in tree["data"] if tr.get("mode") == "lines" and tr.get("name")]
    assert len(arr(chosen[0]["x"])) == len(direct.best.ids) + 1 + int(direct.best.ended)
    # The step's table: every candidate, its cumulative log p and score, best first.
    table = frames(at)[0]
    cands = direct.steps[step].candidates
    np.testing.assert_allclose(table.iloc[:, 3].to_numpy(float), [c.logp for c in cands], atol=1e-3)
    np.testing.assert_allclose(table.iloc[:, 4].to_numpy(float), [c.score for c in cands], atol=1e-3)
    assert list(table.iloc[:, 2]) == [b.tokenizer.id_to_token(c.token_id) for c in cands]
    # Cross-attention of the chosen path at this step.
    cross = figure(at, f"Step {step}: cross-attention of every head")
    pos = ref.steps[step].position
    z = arr([t for t in cross["data"] if t["type"] == "heatmap"][-1]["z"])
    np.testing.assert_allclose(z, ref.attention("cross")[:, :, pos, :].reshape(-1, z.shape[-1]), atol=1e-6)


# --------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("step", [0, 3])
def test_sampling_page_shows_the_distribution_sampled_from_and_the_drawn_token(step):
    text_ = "苹果公司今天发布了一款新手机"
    at = open_decoding("default", text_, decode=SAMPLE.param, step=step)
    ref = analysis("default", text_, SAMPLE)
    b = bundle("default")
    assert md_output(ref.output_text) in all_texts(at)  # the same sample from the same link
    drawn = ref.search.steps[step]
    p = ref.prepared
    ids = p.prefix + ref.search.ids[:step]
    with torch.no_grad():
        logits = b.model(torch.tensor([p.source_ids]), torch.tensor([ids]))[0, -1]  # [vocab]
    probs = filtered_distribution(logits, SAMPLE.temperature, SAMPLE.top_k, SAMPLE.top_p).numpy()
    raw = torch.softmax(logits, -1).numpy()
    fig = figure(at, "the distribution sampled from")
    bars = [t for t in fig["data"] if t["type"] == "bar"]
    shown_raw, shown_filtered = arr(bars[0]["x"]), arr(bars[1]["x"])
    kept = np.sort(probs[probs > 0])[::-1]
    np.testing.assert_allclose(shown_filtered[: len(kept)], kept[: len(shown_filtered)], atol=1e-5)
    order = np.argsort(-probs, kind="stable")[: len(shown_raw)]
    np.testing.assert_allclose(shown_raw, raw[order], atol=1e-5)
    assert int((probs > 0).sum()) == drawn.n_kept <= SAMPLE.top_k
    # The drawn token is the one marked, and it lies inside the kept set.
    mark = [t for t in fig["data"] if t["type"] == "scatter"]
    assert len(mark) == 1 and mark[0]["marker"]["color"] == viz_theme.NEGATIVE
    marked = int(arr(mark[0]["y"])[0])
    assert probs[drawn.token_id] > 0
    assert order[marked] == drawn.token_id


# --------------------------------------------------------------------------- teacher forcing


@pytest.mark.parametrize("model,text_,reference", [
    ("default", "我吃了一个苹果", "I ate an apple."),
    ("reverse", "attention", "noitnettb"),
])
def test_teacher_forcing_losses_are_the_training_loss_on_the_pair(model, text_, reference):
    at = open_decoding(model, text_, ref=reference)
    b = bundle(model)
    forced = analyze(b, text_, target=reference)
    target_ids, _ = b.task.target_ids(reference, forced.prepared.direction)
    example = [(forced.prepared.source_ids, forced.prepared.prefix + target_ids + [b.tokenizer.eos_id])]
    src, tgt_in, tgt_out = collate(example, [0], b.cfg.pad_id)
    with torch.no_grad():
        logits = b.model(src, tgt_in)  # [1, pos, vocab]
    eps = b.info["train"]["label_smoothing"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[text("en", "decoding.tf.mean_smoothed", eps=f"{eps:g}")] == \
        f"{float(loss_fn(logits, tgt_out, b.cfg.pad_id, eps)):.3f}"
    plain = float(loss_fn(logits, tgt_out, b.cfg.pad_id, 0.0))
    assert metrics[text("en", "decoding.tf.mean_nll")] == f"{plain:.3f}"
    differs = (logits[0].argmax(-1) != tgt_out[0]).numpy()
    assert metrics[text("en", "decoding.tf.n_differ")] == f"{int(differs.sum())} / {len(differs)}"
    table = frames(at)[-1]
    nll = -torch.log_softmax(logits[0].double(), -1).gather(-1, tgt_out[0][:, None])[:, 0].numpy()
    np.testing.assert_allclose(table.iloc[:, 2].to_numpy(float), nll, atol=2e-4)
    assert table.iloc[:, 6].tolist() == differs.tolist()
    assert list(table.iloc[:, 4]) == b.tokenizer.tokens(logits[0].argmax(-1).tolist())
    assert at.query_params["ref"] == reference
    assert any(text("en", "decoding.tf.smoothing", eps=f"{eps:g}") == c for c in all_texts(at))


def test_an_empty_reference_asks_for_one_and_leaves_the_link_without_it():
    at = open_decoding("reverse", "attention")
    assert text("en", "decoding.tf.empty") in all_texts(at)
    assert "ref" not in at.query_params


# --------------------------------------------------------------------------- controls, links, languages


def test_the_sidebar_controls_write_the_strategy_into_the_link_and_every_page_names_it():
    at = open_decoding("reverse", "attention")
    assert "decode" not in at.query_params  # greedy: the default, not in the link
    at.radio(key="strategy_kind").set_value("beam").run()
    assert at.query_params["decode"] == "beam4-lp1"
    at.number_input(key="strategy_beam").set_value(2).run()
    at.number_input(key="strategy_lp").set_value(0.5).run()
    assert at.query_params["decode"] == "beam2-lp0.5"
    at.radio(key="strategy_kind").set_value("sample").run()
    at.number_input(key="strategy_seed").set_value(9).run()
    assert at.query_params["decode"] == "sample-t1-k0-p1-s9"
    at.radio(key="strategy_kind").set_value("beam").run()  # the beam's values were kept meanwhile
    assert at.query_params["decode"] == "beam2-lp0.5"
    assert not at.exception
    # Another page shows the same output and names the strategy under it.
    at.switch_page(PAGES["single"]).run()
    name = strategy_ui.name(Strategy.parse("beam2-lp0.5"), "en")
    assert text("en", "strategy.output_by", strategy=name) in all_texts(at)


def test_a_bad_strategy_in_a_link_says_so_and_decodes_greedily():
    at = open_decoding("reverse", "attention", decode="beam99-lp1")
    assert any("beam99" in w.value for w in at.warning)
    assert "decode" not in at.query_params
    assert md_output(analyze(bundle('reverse'), 'attention').output_text) in all_texts(at)


@pytest.mark.parametrize("params", [
    dict(decode=BEAM.param, step=1, ref="I ate an apple."),
    dict(decode=SAMPLE.param, step=2),
])
def test_the_chinese_page_has_no_english_left_with_each_strategy(params):
    text_ = "我吃了一个苹果"
    at = open_decoding("default", text_, lang="zh", **params)
    strategy = Strategy.parse(params["decode"])
    ref = analysis("default", text_, strategy)
    b = bundle("default")
    tokens = [text_, ref.output_text, *ref.output_text.split(), *ref.source_tokens, *ref.target_tokens,
              *[tok for s in ref.steps for tok in s.top_tokens]]
    if ref.search is not None and hasattr(ref.search, "steps"):
        for s in ref.search.steps:
            ids = [c.token_id for c in getattr(s, "candidates", [])] + list(getattr(s, "kept_ids", []))
            ids += [t for beam in getattr(s, "beams", []) for t in beam]
            tokens += b.tokenizer.tokens(ids)
    if "ref" in params:
        forced = analyze(b, text_, target=params["ref"])
        tokens += [params["ref"], *params["ref"].split(), *forced.target_tokens,
                   *[tok for s in forced.steps for tok in s.top_tokens]]
    # The model picker's labels belong to the models (tests/strings/test_strings.py checks every page).
    tokens += [str(o) for o in at.selectbox(key="model").options]
    left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
    left = {s: found for s, found in left.items() if found}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_the_compare_page_decodes_both_sentences_with_the_chosen_strategy():
    a, b = "We sat on the river bank.", "苹果公司发布新品"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": a, "decode": str(BEAM)})
    at.run()
    at.query_params.update({"a": a, "b": b})
    at.switch_page(PAGES["compare"]).run()
    assert not at.exception, [e.message for e in at.exception]
    shown = " ".join(all_texts(at))
    for sentence in (a, b):
        output = analysis("default", sentence, BEAM).output_text
        assert escape_md(output) in shown, output
    greedy = analysis("default", a, Strategy.parse("greedy")).output_text
    assert greedy != analysis("default", a, BEAM).output_text  # the test can tell the two apart
    assert text("en", "strategy.output_by", strategy=strategy_ui.name(BEAM, "en")) in all_texts(at)


# --------------------------------------------------------------------------- the output's length


def test_a_translation_decodes_to_its_end_unless_the_sidebar_bounds_it():
    """A translation model's box in the sidebar is empty by default (decoded until the end token, no `new`
    in the link); a number bounds the output on every page and goes into the link; emptied, the whole
    translation is back."""
    at = open_decoding("reverse", "attention")
    box = at.number_input(key="new")
    assert box.value is None and box.label == text("en", "sidebar.new_tokens_translation")
    assert "new" not in at.query_params
    assert md_output("noitnetta") in all_texts(at)
    box.set_value(4).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.query_params["new"] == "4"
    bounded = analyze(bundle("reverse"), "attention", max_new=4)
    assert bounded.output_text == "noit" and len(bounded.target_tokens) == 5
    said = all_texts(at)
    assert md_output("noit") in said and md_output("noitnetta") not in said
    assert any("4 new tokens" in s for s in said), said  # the analysis' note: stopped at the bound
    at.switch_page(PAGES["single"]).run()  # another page reads the same bounded output
    assert md_output("noit") in all_texts(at) and at.query_params["new"] == "4"
    at.number_input(key="new").set_value(None).run()
    assert not at.exception and "new" not in at.query_params
    assert md_output("noitnetta") in all_texts(at)


def test_a_link_bounding_a_translation_at_zero_says_so_and_offers_the_whole_translation():
    at = open_decoding("default", "我吃了一个苹果", new=0)
    said = [i.value for i in at.info]
    assert text("en", "analysis.no_output_translation") in said, said
    assert at.number_input(key="new").value == 0
    at.button(key="write_output").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["new"] is None and "new" not in at.query_params
    assert text("en", "analysis.no_output_translation") not in [i.value for i in at.info]
    whole = analyze(bundle("default"), "我吃了一个苹果")
    assert md_output(whole.output_text) in all_texts(at)


def test_the_ablation_page_decodes_a_bounded_translation_as_far_as_the_sidebar_says():
    """The ablation page's own decoding (intact and with the heads removed) stops where the sidebar's bound
    stops the output the page shows."""
    from model.lab.ablation import ablate

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "reverse", "text": "attention", "new": "4", "heads": "cross.0.1"})
    at.run()
    at.switch_page(PAGES["ablation"]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    heads = (("cross", 0, 1),)
    bounded, whole = ablate(bundle("reverse"), "attention", None, heads, "zero", 5, 4), \
        ablate(bundle("reverse"), "attention", None, heads, "zero", 5)
    assert bounded.intact_output == "noit" and whole.intact_output == "noitnetta"
    said = all_texts(at)
    assert md_output(bounded.intact_output) in said and md_output(bounded.output) in said
    assert md_output(whole.intact_output) not in said


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_page_opens_on_a_translation_bounded_at_zero(page):
    """new=0 on a translation model: the source alone is read (the decoder its start token), every page
    opens without an error, and only the pages that need an output (decoding, patching, attribution) say
    there is none."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "reverse", "text": "attention", "new": "0"})
    at.run()
    at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    said = [i.value for i in at.info]
    needs_output = page in ("decoding", "patching", "attribution")
    assert (text("en", "analysis.no_output_translation") in said) == needs_output, said
