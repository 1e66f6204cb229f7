"""The logit lens (model/lab/lens.py): the last row is the model's own next-token distribution,
every row equals a direct computation from the hooked residual stream, on decoder-only and encoder-decoder
models."""

import numpy as np
import pytest
import torch

from model.lab import lens as LL
from model.run.analysis import analyze
from model.store.registry import load_model

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def _ids(bundle, text):
    p = bundle.task.prepare(text, bundle.cfg.max_len, None)
    return p, tuple(p.prefix)


def _direct(bundle, source, decoder, row):
    """float64 softmax of ``final_norm`` + ``unembed`` of one row of the residual stream, from a hooked run
    of its own (hook names written out here, not taken from the module under test)."""
    model = bundle.model
    name = "decoder.embed.hook_resid_in" if row == 0 else f"decoder.blocks.{row - 1}.hook_resid_post"
    inputs = [torch.tensor([list(decoder)])]
    if not model.cfg.decoder_only:
        inputs.insert(0, torch.tensor([list(source)]))
    with torch.no_grad():
        _, cache = model.run_with_cache(*inputs, names_filter=lambda n: n == name)
        logits = model.unembed(model.decoder.final_norm(cache[name][0]))
    return torch.softmax(logits.double(), -1).numpy()  # [pos, vocab]


def _model_probs(bundle, source, decoder):
    model = bundle.model
    with torch.no_grad():
        logits = model(torch.tensor([list(decoder)])) if model.cfg.decoder_only else model(
            torch.tensor([list(source)]), torch.tensor([list(decoder)]))
    return torch.softmax(logits[0].double(), -1).numpy()


def _check_row(lens, probs, row):
    """Every kept number of ``row`` against the full distribution ``probs`` [pos, vocab]."""
    order = np.argsort(-probs, axis=-1, kind="stable")
    k = lens.top_ids.shape[-1]
    np.testing.assert_array_equal(lens.top_ids[row], order[:, :k])
    np.testing.assert_allclose(lens.top_probs[row], np.take_along_axis(probs, order[:, :k], -1), atol=1e-5)
    final = lens.final_ids.astype(np.int64)
    p_final = probs[np.arange(len(final)), final]
    np.testing.assert_allclose(lens.final_prob[row], p_final, atol=1e-5)
    np.testing.assert_array_equal(lens.final_rank[row], (probs > p_final[:, None]).sum(-1))
    entropy = -(probs * np.log(np.clip(probs, 1e-300, None))).sum(-1)
    np.testing.assert_allclose(lens.entropy[row], entropy, atol=1e-4)


def test_last_row_is_the_models_own_next_token_distribution(smollm2):
    _, ids = _ids(smollm2, PROMPT)
    lens = LL.logit_lens(smollm2, (), ids, len(ids))
    probs = _model_probs(smollm2, (), ids)
    assert lens.n_rows == smollm2.cfg.n_dec_layers + 1
    _check_row(lens, probs, -1)
    np.testing.assert_array_equal(lens.final_ids, probs.argmax(-1))
    assert (lens.final_rank[-1] == 0).all()


@pytest.mark.parametrize("row", [0, 1, 12, 29])
def test_every_row_equals_a_direct_computation(smollm2, row):
    _, ids = _ids(smollm2, PROMPT)
    lens = LL.logit_lens(smollm2, (), ids, len(ids))
    _check_row(lens, _direct(smollm2, (), ids, row), row)


def test_paris_becomes_the_top_token_late(smollm2):
    _, ids = _ids(smollm2, PROMPT)
    lens = LL.logit_lens(smollm2, (), ids, len(ids))
    assert lens.words[int(lens.final_ids[-1])] == " Paris"
    first, stays = lens.first_top(-1), lens.stays_top(-1)
    ranks = lens.final_rank[:, -1]
    assert ranks[first] == 0 and (ranks[:first] > 0).all()
    assert (ranks[stays:] == 0).all() and (stays == 0 or ranks[stays - 1] > 0)
    assert first <= stays


def test_on_the_prompt_and_the_continuation_the_analysis_wrote(smollm2):
    a = analyze(smollm2, PROMPT, max_new=6)
    decoder = tuple(a.prepared.prefix) + tuple(s.token_id for s in a.steps[:-1])
    lens = LL.logit_lens(smollm2, (), decoder, len(a.prepared.prefix))
    assert lens.tokens == a.target_tokens
    for step in a.steps:  # greedy: the final choice at each position is the token the analysis chose next
        assert lens.top_ids[-1, step.position, 0] == step.top_ids[0]
        np.testing.assert_allclose(lens.top_probs[-1, step.position], step.top_probs, atol=2e-5)


def test_a_window_of_positions_is_the_same_as_the_whole_lens_cut(smollm2):
    _, ids = _ids(smollm2, PROMPT)
    whole = LL.logit_lens(smollm2, (), ids, len(ids))
    part = LL.logit_lens(smollm2, (), ids, len(ids), 2, 4)
    np.testing.assert_array_equal(part.positions, [2, 3])
    np.testing.assert_array_equal(part.top_ids, whole.top_ids[:, 2:4])
    np.testing.assert_allclose(part.entropy, whole.entropy[:, 2:4], atol=1e-5)
    assert part.tokens == whole.tokens[2:4]


def test_small_blocks_give_the_same_numbers(smollm2, monkeypatch):
    _, ids = _ids(smollm2, PROMPT)
    whole = LL.logit_lens(smollm2, (), ids, len(ids))
    monkeypatch.setattr(LL, "CHUNK_FLOATS", 1)  # one block of SUB_ROWS rows at a time
    monkeypatch.setattr(LL, "SUB_ROWS", 3)
    small = LL.logit_lens(smollm2, (), ids, len(ids))
    np.testing.assert_array_equal(small.top_ids, whole.top_ids)
    np.testing.assert_array_equal(small.final_rank, whole.final_rank)
    # The projection's float32 sums run in another order: logits move by ~1e-6, entropies by ~1e-5.
    np.testing.assert_allclose(small.entropy, whole.entropy, atol=1e-4)
    np.testing.assert_allclose(small.top_probs, whole.top_probs, atol=1e-5)


@pytest.mark.parametrize("name", ["tiny-gpt", "induction"])
def test_our_decoder_only_models(name):
    bundle = load_model(name)
    a = analyze(bundle, "abcabc" if name == "induction" else "the cat sat", max_new=4)
    decoder = tuple(a.prepared.prefix) + tuple(s.token_id for s in a.steps[:-1])
    lens = LL.logit_lens(bundle, (), decoder, len(a.prepared.prefix))
    _check_row(lens, _model_probs(bundle, (), decoder), -1)
    _check_row(lens, _direct(bundle, (), decoder, 1), 1)


def test_translation_model_on_the_decoder_side_teacher_forced_on_its_output():
    bundle = load_model("default")
    a = analyze(bundle, "我吃了一个苹果")
    source = tuple(a.prepared.source_ids)
    decoder = tuple(a.prepared.prefix) + tuple(s.token_id for s in a.steps[:-1])
    lens = LL.logit_lens(bundle, source, decoder, len(a.prepared.prefix))
    assert lens.stack == "decoder" and lens.n_rows == bundle.cfg.n_dec_layers + 1
    _check_row(lens, _model_probs(bundle, source, decoder), -1)
    _check_row(lens, _direct(bundle, source, decoder, 0), 0)
    # its own output: each position's final choice is the token the decoder reads next
    np.testing.assert_array_equal(lens.final_ids[:-1], decoder[1:])


def test_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="encoder-only"):
        LL.logit_lens(load_model("minilm"), (101, 102), (101,), 1)
    bundle = load_model("tiny-gpt")
    with pytest.raises(ValueError, match="no token"):
        LL.logit_lens(bundle, (), (), 0)
    with pytest.raises(ValueError, match="empty span"):
        LL.logit_lens(bundle, (), (1, 2, 3), 3, 3)
