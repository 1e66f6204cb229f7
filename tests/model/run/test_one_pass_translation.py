"""One pass for a translation model's analysis (model/run/one_pass.py) equals the two passes it replaces, and
decoding that keeps cross-attention's keys and values of the encoder output equals recomputing them.

The two passes (decode, then one hooked pass over source + prefix + output: ``whole_trace=True``) are the
reference: for our own translation models and tiny random Marian, BART, mBART and T5 (v1.0, v1.1) folders,
greedy decoding, beam search and sampling, intact and under edits that keep the cache exact, the one pass
gives the same tokens and steps, every recorded tensor (encoder, decoder and cross-attention queries, keys,
value norms) within 1e-5 x max(1, |largest|) and every head's pattern of the three kinds within 1e-5. Edits
under which the cache is stale keep the two passes. Decoding reads cross-attention's keys and values from the
first step's cache: under an ablation or a hook function on cross-attention it writes what recomputing the
whole prefix at every step (``Decoder.recompute``, which recomputes them from the encoder output) writes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from model.decoding.beam import beam_search  # noqa: E402
from model.decoding.decoders import greedy_decode, sample_decode  # noqa: E402
from model.decoding.strategy import Strategy  # noqa: E402
from model.network.kinds import hook_name  # noqa: E402
from model.run import one_pass  # noqa: E402
from model.run.analysis import analyze, attention_only  # noqa: E402
from model.run.interventions import (  # noqa: E402
    HeadOutput,
    HookFunction,
    NoScaling,
    SoftmaxOverQueries,
    intervene,
)
from model.store.registry import load_model  # noqa: E402
from model.store.user_folders import load_user_model  # noqa: E402
from tests.model.run.test_one_pass import STRATEGIES, _close, assert_equal_analyses  # noqa: E402
from tests.model.store.seq2seq_folders import EN, ZH, bart_folder, marian_folder, t5_folder  # noqa: E402

FOLDERS = ["marian", "bart", "mbart", "t5-1.0", "t5-1.1"]
OWN = {"default": "我吃了一个苹果", "reverse": "attention"}
NEW = 10  # output tokens at most: the random folders rarely say </s>


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("one_pass_seq2seq")
    out = {}
    for family in FOLDERS:
        if family == "marian":
            folder, _, _ = marian_folder(root / family)
        elif family.startswith("t5"):
            folder, _, _ = t5_folder(root / family, family.split("-")[1])
        else:
            folder, _, _ = bart_folder(root / family, family)
        out[family] = load_user_model(folder)
    return out


def _bundle(name, bundles):
    return load_model(name) if name in OWN else bundles[name]


def _text(name: str) -> str:
    return OWN.get(name) or (ZH[2] if name == "marian" else EN[2])


def _pair(bundle, text: str, strategy: Strategy, edits=()):
    one = analyze(bundle, text, strategy=strategy, edits=edits, keep=attention_only, max_new=NEW)
    two = analyze(bundle, text, strategy=strategy, edits=edits, keep=attention_only, max_new=NEW,
                  whole_trace=True)
    return one, two


def assert_equal_translations(one, two) -> None:
    """``assert_equal_analyses`` (tokens, steps, every recorded tensor, decoder patterns), and every head's
    encoder and cross-attention pattern too."""
    assert_equal_analyses(one, two)
    assert one.source_tokens == two.source_tokens
    for kind in ("encoder", "cross"):
        for layer in range(two.n_layers(kind)):
            _close(np.asarray(one.attention(kind)[layer]), np.asarray(two.attention(kind)[layer]),
                   f"{kind} {layer} patterns", relative=False)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.kind)
@pytest.mark.parametrize("name", [*OWN, *FOLDERS])
def test_one_pass_equals_the_two_passes_on_every_translation_family(name, strategy, bundles):
    bundle = _bundle(name, bundles)
    one, two = _pair(bundle, _text(name), strategy)
    assert "two_passes" not in [n.code for n in one.notes]
    assert len(one.target_tokens) > len(one.prepared.prefix)  # something was decoded
    assert_equal_translations(one, two)
    # the one pass's trace: the encoder's pass, the decoder's first call, then the step saying the rest came
    # a token at a time; cross-attention's keys are the source's, read once
    assert one.trace[0]["name"].startswith("encoder") and one.trace[-1]["name"] == "decoding"
    assert one.trace_sizes["L_src"] == len(one.source_tokens)
    assert one.trace_sizes["L_tgt"] == len(one.prepared.prefix)
    assert two.trace[-1]["name"] == "unembed" and two.trace_sizes["L_tgt"] == len(two.target_tokens)
    cross = one.attention_inputs[hook_name("cross", 0, "q").rsplit(".", 1)[0]]
    assert (cross.n_queries, cross.n_keys) == (len(one.target_tokens), len(one.source_tokens))


#: Edits under which decoding from the first call's cache is exact (cross-attention's included).
EXACT_EDITS = [(NoScaling(),), (HeadOutput("cross", 0, 1, "zero"),), (HeadOutput("encoder", 1, 0, "mean"),),
               (HeadOutput("decoder", 0, 2, "zero"), NoScaling("cross"))]


@pytest.mark.parametrize("edits", EXACT_EDITS, ids=lambda e: " + ".join(x.label for x in e))
@pytest.mark.parametrize("name", ["default", "marian", "t5-1.1"])
def test_one_pass_under_edits_that_keep_the_cache_exact(name, edits, bundles):
    bundle = _bundle(name, bundles)
    for strategy in STRATEGIES[:2]:
        one, two = _pair(bundle, _text(name), strategy, edits)
        assert "two_passes" not in [n.code for n in one.notes]
        assert one.edits == two.edits and one.edits
        assert_equal_translations(one, two)


def _half(t: torch.Tensor) -> torch.Tensor:
    return t * 0.5


#: Edits under which the cache is stale, with the reason stale_reason names: these keep two passes.
STALE_EDITS = {
    "softmax over queries in cross-attention": ((SoftmaxOverQueries("cross"),), "recompute"),
    "a cross-attention head's mean over positions": ((HeadOutput("cross", 1, 0, "mean"),), "recompute"),
    "a hook function on cross-attention's keys": (
        (HookFunction(hook_name("cross", 0, "k"), _half),), "hook_function"),
}


@pytest.mark.parametrize("name", list(STALE_EDITS))
def test_edits_that_make_the_cache_stale_keep_the_two_passes(name, bundles):
    edits, reason = STALE_EDITS[name]
    bundle = _bundle("marian", bundles)
    prefix = torch.tensor([bundle.task.prepare(_text("marian"), bundle.cfg.max_len).prefix])
    with intervene(bundle.model, *edits):
        assert one_pass.stale_reason(bundle.model, prefix) == reason
    one, two = _pair(bundle, _text("marian"), Strategy(), edits)
    assert "two_passes" in [n.code for n in one.notes]
    assert one.trace[-1]["name"] == "unembed"
    assert_equal_translations(one, two)


def test_an_encoder_only_model_is_not_read_as_one_pass():
    bundle = load_model("minilm")
    assert not one_pass.fits(bundle.model, attention_only)
    assert one_pass.fits(load_model("default").model, attention_only)
    assert not one_pass.fits(load_model("default").model, {hook_name("cross", 0, "pattern")}.__contains__)


# --------------------------------------------------------------------------- cross-attention's kept keys


#: Changes of cross-attention's keys and values that decoding must apply as recomputing them would.
CROSS_CHANGES = {
    "hook function on keys": (HookFunction(hook_name("cross", 0, "k"), lambda k: k * 8.0),),
    "hook function on values": (HookFunction(hook_name("cross", 1, "v"), lambda v: v + 0.3),),
    "head zeroed": (HeadOutput("cross", 1, 2, "zero"),),
    "no scaling": (NoScaling("cross"),),
}


def _outputs(bundle, text: str) -> tuple:
    model, cfg = bundle.model, bundle.model.cfg
    prepared = bundle.task.prepare(text, cfg.max_len)
    eos = bundle.target_tokenizer.eos_id
    args = (model, [prepared.source_ids, prepared.source_ids[: max(2, len(prepared.source_ids) // 2)]],
            [prepared.prefix] * 2, eos)
    beams = beam_search(*args, width=3, max_new=NEW)
    sampled = sample_decode(model, prepared.source_ids, prepared.prefix, eos, STRATEGIES[2], NEW)
    return (greedy_decode(*args, NEW), [[h.ids for h in r.finished] for r in beams],
            [[h.logp for h in r.finished] for r in beams], sampled.ids, [s.raw_prob for s in sampled.steps])


# (T5 does not scale its scores: no scaling is its intact computation)
@pytest.mark.parametrize("name,change", [(n, c) for n in ("default", "marian", "t5-1.0")
                                         for c in CROSS_CHANGES if (n, c) != ("t5-1.0", "no scaling")])
def test_kept_cross_attention_keys_decode_as_recomputing_them(name, change, bundles):
    bundle = _bundle(name, bundles)
    text = _text(name)
    with intervene(bundle.model, *CROSS_CHANGES[change]):
        assert not bundle.model.decoder.recompute  # these edits decode from the cache
        kept = _outputs(bundle, text)
        bundle.model.decoder.recompute = True  # every step from scratch: cross K/V from the encoder output
        try:
            recomputed = _outputs(bundle, text)
        finally:
            bundle.model.decoder.recompute = False
    intact = _outputs(bundle, text)
    greedy, beam_ids, beam_logp, sample_ids, sample_probs = kept
    assert greedy == recomputed[0] and beam_ids == recomputed[1] and sample_ids == recomputed[3]
    np.testing.assert_allclose(np.concatenate(beam_logp), np.concatenate(recomputed[2]), atol=1e-5)
    np.testing.assert_allclose(sample_probs, recomputed[4], atol=1e-6)
    # the change reached the decoding at all: some output or probability moved from the intact model's
    moved = greedy != intact[0] or beam_ids != intact[1] or sample_ids != intact[3]
    moved = moved or not np.allclose(sample_probs, intact[4], rtol=0.0, atol=1e-7)
    assert moved, change


def test_no_new_tokens_reads_the_source_and_the_prefix_alone():
    bundle = load_model("default")
    one = analyze(bundle, OWN["default"], keep=attention_only, max_new=0)
    two = analyze(bundle, OWN["default"], keep=attention_only, max_new=0, whole_trace=True)
    assert one.output_text == "" and len(one.target_tokens) == len(one.prepared.prefix)
    assert len(one.steps) == 1 and one.trace[-1]["name"] == "unembed"  # no continuation step
    assert_equal_translations(one, two)


def test_a_translation_reports_the_source_pass_then_each_step():
    from model.network import progress

    told = []
    with progress.reporting(lambda fraction, stage: told.append((fraction, stage))):
        analyze(load_model("reverse"), "attention", keep=attention_only)
    fractions = [f for f, _ in told]
    assert fractions == sorted(fractions) and len(set(fractions)) == len(fractions) and fractions[-1] == 1.0
    stages = [s for _, s in told]
    assert set(stages) == {"read", "decode"} and stages.index("decode") > stages.index("read")
    assert all(f <= one_pass.SOURCE_SHARE for f, s in told if s == "read")
    assert sum(one_pass.SOURCE_SHARE < f < 1.0 for f, s in told if s == "decode") >= 2


def test_beam_search_over_one_source_never_copies_cross_attention_keys():
    from model.decoding.beam import plain_step

    bundle = load_model("default")
    model = bundle.model
    prepared = bundle.task.prepare(OWN["default"], model.cfg.max_len)
    plain = plain_step(model)
    seen = []  # (rows, cross keys' batch, their storage) after each decoder call

    def step(step_in, memory, src_pad, caches, position):
        logits = plain(step_in, memory, src_pad, caches, position)
        seen.append((step_in.shape[0], caches[0]["cross_k"].shape[0], caches[0]["cross_k"].data_ptr()))
        return logits

    found = beam_search(model, [prepared.source_ids], [prepared.prefix],
                        bundle.target_tokenizer.eos_id, width=4,
                        step=step)[0]
    assert max(rows for rows, _, _ in seen) == 4  # the beam filled up
    assert {(batch, ptr) for _, batch, ptr in seen} == {(1, seen[0][2])}  # one source's, the same storage
    plain_found = beam_search(model, [prepared.source_ids], [prepared.prefix],
                              bundle.target_tokenizer.eos_id, 4)[0]
    assert [(h.ids, h.logp) for h in found.finished] == [(h.ids, h.logp) for h in plain_found.finished]
