"""The masks page's batch on decoder-only models (our induction model, SmolLM2, converted Hugging Face
decoders): padding by position, the masks from build_mask, the padded batch's real rows equal to the
unpadded analysis, left padding with and without the padding mask (against transformers), and the
causal mask switched off."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from model.lab.masks import causal_demo_run, default_other, padded_batch
from model.network.attention import build_mask
from model.run.analysis import analyze, attention_only
from model.run.interventions import CausalMask
from model.store.registry import load_model

NEW = 4  # new tokens per prompt: enough for a continuation, few decoding steps on SmolLM2
LM_CASES = [("induction", "qhzmtvbqhzm"), ("smollm2", "The cat sat on the mat")]


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def batch_of(name: str, text: str):
    b = bundle(name)
    return padded_batch(b, [text, default_other(b, text)], max_new=NEW)


def _check_masks(batch) -> None:
    """Padding by position, and every mask exactly what build_mask gives for what the model applies."""
    n = batch.target_ids.shape[1]
    positions = np.arange(n)
    lengths = np.array(batch.target_lengths)
    np.testing.assert_array_equal(batch.target_padding, positions[None, :] >= lengths[:, None])
    np.testing.assert_array_equal(batch.left.padding, positions[None, :] < (n - lengths)[:, None])
    assert batch.target_padding.any() and batch.left.padding.any(), "one prompt is shorter"
    causal = np.triu(np.ones((n, n), bool), 1)
    np.testing.assert_array_equal(batch.causal, causal)
    for i in range(2):
        right_pad = batch.target_padding[i][None, :] if batch.masks_padding else np.zeros((1, n), bool)
        left_pad = batch.left.padding[i][None, :]
        np.testing.assert_array_equal(batch.masks["decoder"][i], causal | right_pad)
        applied = causal | left_pad if batch.masks_padding else causal
        np.testing.assert_array_equal(batch.left.applied[i], applied)
        np.testing.assert_array_equal(batch.left.with_padding[i], causal | left_pad)
        # the same sequence, shifted: left-padded ids end where right-padded ones start
        m = lengths[i]
        np.testing.assert_array_equal(batch.left.ids[i, n - m:], batch.target_ids[i, :m])
    reference = build_mask(torch.from_numpy(batch.left.padding), n, n, True)[:, 0].numpy()
    np.testing.assert_array_equal(batch.left.with_padding, reference)


@pytest.mark.parametrize("name,text", LM_CASES)
def test_a_language_models_batch_is_padded_by_position_and_masked_by_build_mask(name, text):
    batch = batch_of(name, text)
    assert batch.decoder_only and set(batch.masks) == {"decoder"}
    assert batch.source_ids.shape == (2, 0)
    assert batch.masks_padding == bundle(name).cfg.mask_padding
    _check_masks(batch)
    pattern, scores = batch.patterns["decoder"], batch.scores["decoder"]  # [sentence, layer, head, q, k]
    full = np.broadcast_to(batch.masks["decoder"][:, None, None], pattern.shape)
    np.testing.assert_array_equal(~np.isfinite(scores), full)
    assert (pattern[full] == 0).all()
    np.testing.assert_allclose(pattern.astype(np.float64).sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("name,text", LM_CASES)
def test_each_real_row_of_the_padded_batch_is_the_unpadded_analysis(name, text):
    batch = batch_of(name, text)
    n = batch.target_ids.shape[1]
    for i, sentence in enumerate(batch.texts):
        alone = analyze(bundle(name), sentence, max_new=NEW)
        m = batch.target_lengths[i]
        assert batch.outputs[i] == alone.output_text
        assert batch.target_tokens[i][:m] == alone.target_tokens
        want = alone.attention("decoder")  # [layer, head, m, m]
        # right padding: the causal mask already hides the later padding from every real token
        np.testing.assert_allclose(batch.patterns["decoder"][i][..., :m, :m], want, atol=1e-5)
        # left padding with the padding mask: rotary positions make the shift harmless
        np.testing.assert_allclose(batch.left.masked[i][..., n - m:, n - m:], want, atol=1e-4)
        assert batch.right_diff[i] == pytest.approx(
            float(np.abs(batch.patterns["decoder"][i][..., :m, :m] - want).max()), abs=1e-6)
        assert batch.left.diff_masked[i] < 1e-4


def test_smollm2_left_padded_without_the_mask_looks_at_the_padding():
    batch = batch_of(*LM_CASES[1])
    assert not batch.masks_padding and batch.pad_is_eos  # converted: padding id = end-of-text id
    short = int(np.argmin(batch.target_lengths))
    n, m = batch.target_ids.shape[1], batch.target_lengths[short]
    as_run = batch.left.as_run[short]  # [layer, head, pos, pos]
    on_padding = as_run[..., n - m:, : n - m].sum(-1)  # [layer, head, real query]
    assert batch.left.pad_weight[short] == pytest.approx(float(on_padding.max()), abs=1e-6)
    assert on_padding.max() > 0.5, "the real tokens attend to the padding"
    assert batch.left.diff_as_run[short] > 0.1 > 1e-4 > batch.left.diff_masked[short]
    # the padding mask takes exactly the padding keys away from the real rows
    assert (batch.left.masked[short][..., n - m:, : n - m] == 0).all()


def test_induction_masks_padding_itself_so_both_left_runs_are_the_same():
    batch = batch_of(*LM_CASES[0])
    assert batch.masks_padding and not batch.pad_is_eos
    np.testing.assert_array_equal(batch.left.applied, batch.left.with_padding)
    short = int(np.argmin(batch.target_lengths))
    m, n = batch.target_lengths[short], batch.target_ids.shape[1]
    real = slice(n - m, n)
    np.testing.assert_array_equal(batch.left.as_run[short][..., real, :],
                                  batch.left.masked[short][..., real, :])
    assert batch.left.pad_weight[short] == 0.0


def test_the_intact_model_is_bit_identical_after_the_batch():
    b = bundle("induction")
    before = {k: v.clone() for k, v in b.model.state_dict().items()}
    padded_batch(b, ["qhzmtvbqhzm", "cat"], max_new=NEW)
    assert b.model.active_hook_count() == 0
    assert all(torch.equal(before[k], v) for k, v in b.model.state_dict().items())


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_left_padding_matches_transformers_with_and_without_its_attention_mask(kind, tmp_path):
    transformers = pytest.importorskip("transformers")
    from model.store.formats.hf_decoder import HF_DECODER
    from tests.model.store.test_hf_decoder import _save

    hf = _save(kind, tmp_path)
    b = HF_DECODER.load(tmp_path)
    batch = padded_batch(b, ["w5 w6 w7 w8 w9 w10", "w11 w12"], max_new=3)
    _check_masks(batch)
    ids = torch.from_numpy(batch.left.ids)
    keep = torch.from_numpy(~batch.left.padding).long()
    with torch.no_grad():
        plain = hf(ids, output_attentions=True).attentions  # no attention mask: as our model runs it
        masked = hf(ids, attention_mask=keep, position_ids=torch.arange(ids.shape[1])[None].expand_as(ids),
                    output_attentions=True).attentions
    n = ids.shape[1]
    for layer in range(len(plain)):
        np.testing.assert_allclose(batch.left.as_run[:, layer], plain[layer].numpy(), atol=1e-5)
        for i, m in enumerate(batch.target_lengths):
            real = slice(n - m, n)
            np.testing.assert_allclose(batch.left.masked[i, layer][..., real, :],
                                       masked[layer][i][..., real, :].numpy(), atol=1e-5)
    short = int(np.argmin(batch.target_lengths))
    if kind == "llama":  # rotary: only rounding is left
        assert batch.left.diff_masked[short] < 1e-4
    else:  # learned absolute positions: every real token moved, so the weights differ even masked
        assert batch.left.diff_masked[short] > 1e-3
    assert transformers is not None


@pytest.mark.parametrize("name,text", LM_CASES)
def test_causal_mask_off_on_a_language_model_sees_the_future_and_changes_predictions(name, text):
    b = bundle(name)
    greedy = analyze(b, text, max_new=NEW)
    before = analyze(b, text, target=greedy.output_text)
    off = analyze(b, text, target=greedy.output_text, edits=(CausalMask("off"),), keep=attention_only)
    after = analyze(b, text, target=greedy.output_text)
    assert off.target_tokens == before.target_tokens == greedy.target_tokens
    pattern = off.attention("decoder")
    assert np.isfinite(off.attention("decoder", "scores")).all()
    upper = np.triu(np.ones(pattern.shape[-2:], bool), 1)
    assert (pattern[..., upper].sum(-1) > 0).all(), "every head of every layer weighs the future"
    assert (before.attention("decoder")[..., upper] == 0).all()
    for key, value in before.activations.items():
        assert np.array_equal(value, after.activations[key]), key
    # the model's own next tokens get other probabilities once the future is visible
    changes = [abs(a.prob - o.prob) for a, o in zip(before.steps, off.steps, strict=True)]
    assert max(changes) > 1e-3
    layer = off.n_layers("decoder") - 1  # what the page reads: one layer, exactly the whole run's
    one = causal_demo_run(b, text, None, greedy.output_text, layer, causal_off=True)
    assert np.array_equal(one.pattern, pattern[layer]) and not one.masked.any()
    assert [s.prob for s in one.steps] == [s.prob for s in off.steps]


def _array_bytes(value) -> int:
    """Bytes of the numpy arrays inside a result (dataclasses, dicts and lists walked)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return sum(_array_bytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_array_bytes(v) for v in value)
    return sum(_array_bytes(v) for v in getattr(value, "__dict__", {}).values())


@pytest.mark.parametrize("name,text", LM_CASES)
def test_one_layer_of_the_batch_is_that_layer_of_the_whole_and_its_bytes_do_not_grow_with_depth(name, text):
    whole = batch_of(name, text)
    n_layers = whole.patterns["decoder"].shape[1]
    layer = n_layers - 1
    b = bundle(name)
    one = padded_batch(b, [text, default_other(b, text)], max_new=NEW, kind="decoder", layer=layer)
    for got, want in ((one.patterns, whole.patterns), (one.scores, whole.scores)):
        assert got["decoder"].shape[1] == 1
        np.testing.assert_array_equal(got["decoder"][:, 0], want["decoder"][:, layer])
    for run in ("as_run", "masked"):
        np.testing.assert_array_equal(getattr(one.left, run)[:, 0], getattr(whole.left, run)[:, layer])
        for i in range(2):
            np.testing.assert_array_equal(one.left.head_pattern(run, i, layer, 1),
                                          whole.left.head_pattern(run, i, layer, 1))
    # the figures over every layer are the whole batch's, to the bit
    assert one.right_diff == whole.right_diff and one.left.pad_weight == whole.left.pad_weight
    assert (one.left.diff_as_run, one.left.diff_masked) == (whole.left.diff_as_run, whole.left.diff_masked)
    assert one.outputs == whole.outputs
    np.testing.assert_array_equal(one.masks["decoder"], whole.masks["decoder"])
    with pytest.raises(ValueError):
        one.head_pattern("decoder", 0, layer - 1, 0)
    # one layer's worth (plus the masks), whatever the depth: 30 layers on SmolLM2 were ~420 MB at 256 tokens
    assert _array_bytes(one) <= 1.2 * _array_bytes(whole) / n_layers
