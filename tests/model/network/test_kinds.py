"""The attention-kinds registry agrees with what the network actually records."""

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from model.data.tasks import SyntheticTask
from model.network import hooks
from model.network.kinds import ATTENTION_KINDS, KINDS, get_kind, hook_name, kinds_present, layer_counts
from model.network.transformer import Transformer
from model.run.analysis import Analysis, KindAttention, analyze
from model.store.bundle import Bundle
from tests.conftest import tiny_config

ATTENTION_HOOKS = ("q", "k", "v", "scores", "pattern", "z", "out")
CONFIGS = {
    "tiny": tiny_config(),
    "uneven": tiny_config(n_enc_layers=3, n_dec_layers=1),
    "encoder_only": tiny_config(n_dec_layers=0),
    "no_encoder_blocks": tiny_config(n_enc_layers=0),
}


def _cache(cfg):
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    _, cache = model.run_with_cache(torch.tensor([[5, 6, 7, 8, 2]]), torch.tensor([[1, 9, 10, 11]]))
    return model, cache


def _bundle(cfg) -> Bundle:
    torch.manual_seed(0)
    task = SyntheticTask("reverse")
    model = Transformer(cfg).eval()
    return Bundle(name="tiny", model=model, task=task, directory=Path("."))


@pytest.fixture(scope="module")
def result() -> Analysis:
    cfg = tiny_config(vocab_size=SyntheticTask("reverse").tokenizer.vocab_size)
    return analyze(_bundle(cfg), "abcdef", target="fedcba")


def test_kinds_are_listed_in_menu_order_with_unique_names():
    assert KINDS == ("encoder", "decoder", "cross")
    assert [k.name for k in ATTENTION_KINDS] == list(KINDS)
    assert [get_kind(name) for name in KINDS] == list(ATTENTION_KINDS)


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(KeyError, match="encoder.*decoder.*cross"):
        get_kind("self")
    with pytest.raises(KeyError, match="unknown attention kind"):
        hook_name("self", 0, "pattern")


def test_old_hook_name_import_is_the_registry_function():
    assert hooks.attention_hook_name is hook_name


@pytest.mark.parametrize("name", list(CONFIGS))
def test_registry_hook_names_are_the_recorded_ones(name):
    cfg = CONFIGS[name]
    _, cache = _cache(cfg)
    counts = layer_counts(cfg)
    expected = {hook_name(k, i, what) for k in KINDS for i in range(counts[k]) for what in ATTENTION_HOOKS}
    assert expected <= set(cache)
    # Every attention tensor the model records is one the registry can name: no kind is missing.
    recorded = {
        n
        for n in cache
        if re.search(r"\.(attn|self_attn|cross_attn)\.hook_(" + "|".join(ATTENTION_HOOKS) + ")$", n)
    }
    assert recorded == expected


@pytest.mark.parametrize("name", list(CONFIGS))
def test_layer_counts_equal_the_recorded_pattern_hooks(name):
    cfg = CONFIGS[name]
    model, cache = _cache(cfg)
    counts = layer_counts(cfg)
    for kind in ATTENTION_KINDS:
        suffix = f".{kind.module}.hook_pattern"
        recorded = [n for n in cache if n.startswith(f"{kind.stack}.blocks.") and n.endswith(suffix)]
        assert counts[kind.name] == len(recorded), kind.name
    assert model.attention_layer_counts() == counts
    assert cache.n_layers == counts


def test_a_model_without_decoder_blocks_has_no_decoder_kinds():
    cfg = CONFIGS["encoder_only"]
    assert kinds_present(cfg) == ["encoder"]
    assert layer_counts(cfg) == {"encoder": 2, "decoder": 0, "cross": 0}
    assert kinds_present(CONFIGS["no_encoder_blocks"]) == ["decoder", "cross"]
    assert kinds_present(CONFIGS["tiny"]) == list(KINDS)


def test_encoder_only_model_analyses_its_encoder_attention():
    cfg = tiny_config(vocab_size=SyntheticTask("reverse").tokenizer.vocab_size, n_dec_layers=0)
    r = analyze(_bundle(cfg), "abc", target="cba")
    assert r.layer_counts == {"encoder": 2, "decoder": 0, "cross": 0}
    assert r.n_layers("cross") == 0
    assert r.kind_attention("encoder").pattern.shape == (2, 4, 4, 4)
    assert not any(n.startswith("decoder.blocks.") for n in r.activations)


def test_analysis_layer_counts_come_from_the_config(result):
    assert result.layer_counts == layer_counts(tiny_config())
    for kind in KINDS:
        assert result.n_layers(kind) == 2
        assert result.attention(kind).shape[0] == 2


@pytest.mark.parametrize("kind", KINDS)
def test_kind_attention_matches_attention_and_tokens_for(result, kind):
    ka = result.kind_attention(kind)
    assert isinstance(ka, KindAttention)
    assert ka.kind is get_kind(kind)
    np.testing.assert_array_equal(ka.pattern, result.attention(kind))
    np.testing.assert_array_equal(ka.scores, result.attention(kind, "scores"))
    assert (ka.query_tokens, ka.key_tokens) == result.tokens_for(kind)
    assert ka.pattern.shape == ka.scores.shape == ka.mask.shape
    assert ka.pattern.shape[2:] == (len(ka.query_tokens), len(ka.key_tokens))


def test_tokens_follow_the_kinds_sides(result):
    src, tgt = result.source_tokens, result.target_tokens
    assert result.tokens_for("encoder") == (src, src)
    assert result.tokens_for("decoder") == (tgt, tgt)
    assert result.tokens_for("cross") == (tgt, src)
    assert src != tgt  # otherwise the checks above could not tell the sides apart


@pytest.mark.parametrize("kind", KINDS)
def test_mask_is_exactly_the_minus_inf_cells(result, kind):
    ka = result.kind_attention(kind)
    assert ka.mask.dtype == bool
    np.testing.assert_array_equal(ka.mask, np.isneginf(ka.scores))
    assert not np.isnan(ka.scores).any() and not np.isposinf(ka.scores).any()
    assert (ka.pattern[ka.mask] == 0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_causal_flag_agrees_with_the_recorded_pattern(result, kind):
    ka = result.kind_attention(kind)
    n_q, n_k = ka.pattern.shape[2:]
    upper = np.triu(np.ones((n_q, n_k), dtype=bool), 1)
    if ka.kind.causal:
        assert (ka.pattern[..., upper] == 0).all()
        assert ka.mask[..., upper].all()
    else:
        # One unpadded sentence: nothing is masked, so softmax gives every future key some weight.
        assert not ka.mask.any()
        assert (ka.pattern[..., upper] > 0).all()


def test_analysis_with_only_attention_activations_pickles_and_still_works(result):
    kept = {k: v for k, v in result.activations.items() if k.endswith((".hook_pattern", ".hook_scores"))}
    slim = pickle.loads(pickle.dumps(Analysis(**{**result.__dict__, "activations": kept})))
    for kind in KINDS:
        np.testing.assert_array_equal(slim.kind_attention(kind).pattern, result.attention(kind))
