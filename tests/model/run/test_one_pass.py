"""One pass for a language model's analysis (model/run/one_pass.py) equals the two passes it replaces.

The two passes (decode, then one hooked pass over prompt + output: ``whole_trace=True``) are the reference.
For every decoder-only family (tiny random transformers models saved here, and our own tiny-gpt and
induction), greedy decoding, beam search and sampling, intact and under edits that keep the cache exact:
the same tokens and steps, every head's pattern within 1e-5, every recorded tensor (queries, keys, value
norms) and score within 1e-5 x max(1, |largest|). Edits under which the cached prefix is stale keep the two
passes, say so in a note, and still give the reference's numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from model.decoding.strategy import Strategy  # noqa: E402
from model.network.kinds import hook_name  # noqa: E402
from model.run import one_pass  # noqa: E402
from model.run.analysis import analyze, attention_only  # noqa: E402
from model.run.interventions import (  # noqa: E402
    CausalMask,
    HeadOutput,
    HookFunction,
    NoPositionalEncoding,
    NoScaling,
    SoftmaxOverQueries,
)
from model.store.formats.hf_decoder import HF_DECODER  # noqa: E402
from model.store.registry import load_model  # noqa: E402
from tests.model.store.test_hf_decoder import _save  # noqa: E402

FAMILIES = ["gpt2", "llama", "qwen2", "qwen3", "mistral", "gemma3_text", "olmo2", "gpt_neox", "phi3"]
STRATEGIES = [Strategy(), Strategy.make("beam", beam=3), Strategy.make("sample", seed=5, temperature=1.5)]
#: Edits under which decoding from the prompt pass's cache is exact: these run in one pass.
EXACT_EDITS = [(), (NoScaling(),), (HeadOutput("decoder", 0, 1, "zero"),), (NoPositionalEncoding(),)]
#: Edits under which the cached prefix is stale (the reason stale_reason names): these keep two passes.
STALE_EDITS = {
    "reversed causal mask": ((CausalMask("reversed"),), "reversed_causal"),
    "causal mask off": ((CausalMask("off"),), "recompute"),
    "softmax over queries": ((SoftmaxOverQueries("decoder"),), "recompute"),
    "a head's mean over positions": ((HeadOutput("decoder", 0, 1, "mean"),), "recompute"),
    "a pattern edit (hook function)": (
        (HookFunction(hook_name("decoder", 0, "pattern"), lambda p: p * 0.5),), "hook_function"),
    "a score edit (hook function)": (
        (HookFunction(hook_name("decoder", 1, "scores"), lambda s: s + 0.25),), "hook_function"),
}
HF_PROMPT = "w9 w30 w12 w50 w9 w30"  # every family's tiny model continues it
NEW = 9


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    out = {}
    for kind in FAMILIES:
        folder = tmp_path_factory.mktemp(kind)
        _save(kind, folder)
        out[kind] = folder
    return out


def _bundle(kind, folders):
    if kind in ("tiny-gpt", "induction"):
        return load_model(kind)
    return HF_DECODER.load(folders[kind])


def _prompt(kind: str) -> str:
    return {"tiny-gpt": "我们学习中文。We learn", "induction": "abcdefabcd"}.get(kind, HF_PROMPT)


def _close(a, b, what: str, relative: bool = True) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    finite = np.isfinite(b)
    assert np.array_equal(np.isfinite(a), finite), what  # the same cells masked (-inf)
    if not finite.any():
        return
    scale = max(1.0, float(np.abs(b[finite]).max())) if relative else 1.0
    worst = float(np.abs(a[finite] - b[finite]).max())
    assert worst <= 1e-5 * scale, f"{what}: {worst:.3g} > {1e-5 * scale:.3g}"


def assert_equal_analyses(one, two) -> None:
    """The one-pass analysis ``one`` equals the two-pass ``two`` (tokens, steps, every recorded tensor)."""
    assert one.target_tokens == two.target_tokens and one.output_text == two.output_text
    assert one.stopped == two.stopped
    assert [s.token_id for s in one.steps] == [s.token_id for s in two.steps]
    assert [s.top_ids for s in one.steps] == [s.top_ids for s in two.steps]
    _close([s.prob for s in one.steps], [s.prob for s in two.steps], "step probabilities", relative=False)
    _close([s.top_probs for s in one.steps], [s.top_probs for s in two.steps], "top-k probabilities", False)
    assert set(one.attention_inputs) == set(two.attention_inputs)
    for path, b in two.attention_inputs.items():
        a = one.attention_inputs[path]
        for field in ("divisor", "causal", "offset", "softmax_dim", "window"):
            assert getattr(a, field) == getattr(b, field), (path, field)
        assert a.key_padding is None and b.key_padding is None
        _close(a.q, b.q, f"{path} q")
        _close(a.k, b.k, f"{path} k")
        _close(a.value_norms, b.value_norms, f"{path} value norms")
    n_layers = two.n_layers("decoder")
    for layer in range(n_layers):
        for head in range(one.attention_inputs[hook_name("decoder", layer, "q").rsplit(".", 1)[0]].n_heads):
            s1, p1 = one.head_attention("decoder", layer, head)
            s2, p2 = two.head_attention("decoder", layer, head)
            _close(p1, p2, f"pattern {layer}.{head}", relative=False)
            _close(s1, s2, f"scores {layer}.{head}")
    if one.search is not None:
        assert type(one.search) is type(two.search)


def _pair(bundle, text: str, strategy: Strategy, edits=(), max_new: int = NEW):
    one = analyze(bundle, text, strategy=strategy, edits=edits, keep=attention_only, max_new=max_new)
    two = analyze(bundle, text, strategy=strategy, edits=edits, keep=attention_only, max_new=max_new,
                  whole_trace=True)
    return one, two


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.kind)
@pytest.mark.parametrize("kind", [*FAMILIES, "tiny-gpt", "induction"])
def test_one_pass_equals_the_two_passes_on_every_decoder_only_family(kind, strategy, folders):
    bundle = _bundle(kind, folders)
    one, two = _pair(bundle, _prompt(kind), strategy)
    assert "two_passes" not in [n.code for n in one.notes]
    assert len(one.target_tokens) > len(bundle.task.prepare(_prompt(kind), bundle.cfg.max_len).prefix)
    assert_equal_analyses(one, two)
    # the one pass's trace is the prompt pass, then the step saying the continuation came a token at a time
    assert one.trace[-1]["name"] == "decoding" and one.trace[-1]["out_shape"][:2] == [1, 1]
    assert two.trace[-1]["name"] == "unembed"


@pytest.mark.parametrize("edits", EXACT_EDITS, ids=lambda e: e[0].label if e else "intact")
@pytest.mark.parametrize("kind", ["llama", "gemma3_text", "gpt2", "tiny-gpt"])
def test_one_pass_under_edits_that_keep_the_cache_exact(kind, edits, folders):
    bundle = _bundle(kind, folders)
    if edits and isinstance(edits[0], NoPositionalEncoding) and bundle.cfg.pos_encoding == "none":
        edits = ()
    for strategy in STRATEGIES[:2]:
        one, two = _pair(bundle, _prompt(kind), strategy, edits)
        assert "two_passes" not in [n.code for n in one.notes]
        assert one.edits == two.edits
        assert_equal_analyses(one, two)


@pytest.mark.parametrize("name", list(STALE_EDITS))
def test_edits_that_make_the_cache_stale_keep_the_two_passes(name, folders):
    edits, reason = STALE_EDITS[name]
    bundle = _bundle("llama", folders)
    prompt = torch.tensor([bundle.task.prepare(HF_PROMPT, bundle.cfg.max_len).prefix])
    from model.run.interventions import intervene

    with intervene(bundle.model, *edits):
        assert one_pass.stale_reason(bundle.model, prompt) == reason
    assert one_pass.stale_reason(bundle.model, prompt) == ""
    one, two = _pair(bundle, HF_PROMPT, Strategy(), edits)
    assert "two_passes" in [n.code for n in one.notes]
    assert one.trace[-1]["name"] == "unembed"  # the whole sequence's pass
    assert_equal_analyses(one, two)


def test_padding_in_the_prompt_keeps_the_two_passes():
    # Typed text never holds our models' padding (a typed "<pad>" is text), so the check is on ids: the full
    # pass masks the prompt's padding keys, while decoding steps mask none.
    bundle = load_model("tiny-gpt")
    pad = bundle.cfg.pad_id
    assert bundle.cfg.mask_padding
    assert one_pass.stale_reason(bundle.model, torch.tensor([[1, pad, 40, 41]])) == "padding"
    assert one_pass.stale_reason(bundle.model, torch.tensor([[1, 39, 40, 41]])) == ""


def test_no_new_tokens_reads_the_prompt_alone(folders):
    bundle = _bundle("llama", folders)
    one, two = _pair(bundle, HF_PROMPT, Strategy(), max_new=0)
    prefix = bundle.task.prepare(HF_PROMPT, bundle.cfg.max_len).prefix
    assert one.output_text == "" and len(one.target_tokens) == len(prefix)
    # the prompt is both sides: labels and special marks read once, the tokenizer's own
    tok = bundle.tokenizer
    assert one.target_tokens == one.source_tokens == tok.tokens(prefix)
    assert one.target_special == one.source_special == [tok.is_special(i) for i in prefix]
    assert len(one.steps) == 1  # what follows the prompt
    assert one.trace[-1]["name"] == "unembed"  # no continuation step
    assert_equal_analyses(one, two)


def test_an_analysis_keeping_hook_tensors_reads_the_whole_sequence(folders):
    bundle = _bundle("llama", folders)
    keep = {hook_name("decoder", 0, "pattern")}.__contains__
    assert not one_pass.fits(bundle.model, keep) and one_pass.fits(bundle.model, attention_only)
    result = analyze(bundle, HF_PROMPT, keep=keep, max_new=4)
    assert result.activations[hook_name("decoder", 0, "pattern")].shape[-1] == len(result.target_tokens)
    assert bundle.model.active_hook_count() == 0
