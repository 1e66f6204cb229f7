"""Attention computed by transformers, TransformerLens-style mappings and BertViz's inputs, drawn by our
figures: the figure's z is the attention given. Tiny random models built here from a config (seeded,
eager attention), no download."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers

import attention_lens as al
from viz.tokens import token_labels


def _weights(fig) -> np.ndarray:
    """The weight trace's z (NaN where drawn masked)."""
    return np.asarray(fig.data[-1].z, dtype=np.float32)


@pytest.fixture(scope="module")
def bert():
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=32,
        attn_implementation="eager",
    )
    model = transformers.BertModel(cfg).eval()
    ids = torch.tensor([[2, 11, 12, 13, 14, 3]])
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    return out.attentions, ["[CLS]", "the", "bank", "raised", "rates", "[SEP]"]


@pytest.fixture(scope="module")
def gpt2():
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        vocab_size=50, n_embd=32, n_layer=2, n_head=4, n_positions=16, attn_implementation="eager"
    )
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        out = model(torch.tensor([[5, 6, 7, 8, 9]]), output_attentions=True)
    return out.attentions, ["The", "Ġcat", "Ġsat", "Ġon", "Ċ"]


def test_a_bert_models_attentions_are_drawn_as_given(bert):
    attentions, tokens = bert
    fig = al.head_view(attentions, tokens, layer=1, head=3)
    np.testing.assert_array_equal(_weights(fig), attentions[1][0, 3].numpy())
    assert list(fig.data[-1].y) == tokens and fig.data[-1].x == fig.data[-1].y
    grid = al.attention_heads(attentions, tokens)
    assert (
        grid.layout.meta["attention_grid"]["n_layers"] == 2
        and grid.layout.meta["attention_grid"]["n_heads"] == 4
    )
    att = al.as_attention(attentions, tokens)
    assert att.kinds == ("encoder",)  # bidirectional: nothing masked
    np.testing.assert_array_equal(att.attention(), torch.stack(attentions)[:, 0].numpy())
    focus = al.token_focus(attentions, "bank", tokens)
    np.testing.assert_allclose(
        np.asarray(focus.data[0].z, dtype=np.float32),
        torch.stack(attentions)[:, 0, :, 2].max(-1).values.numpy(),
    )


def test_numpy_arrays_and_a_stacked_array_read_the_same(bert):
    attentions, tokens = bert
    as_numpy = tuple(a.numpy() for a in attentions)
    stacked = np.stack([a[0].numpy() for a in attentions])  # [layer, head, q, k]
    for given in (as_numpy, stacked, np.stack(as_numpy)):
        np.testing.assert_array_equal(
            _weights(al.head_view(given, tokens, layer=0, head=1)), attentions[0][0, 1].numpy()
        )


def test_a_gpt2_models_causal_attention_is_drawn_masked_and_its_tokens_readable(gpt2):
    attentions, tokens = gpt2
    att = al.as_attention(attentions, tokens)
    assert att.kinds == ("decoder",)  # every head puts exactly 0 on the future
    assert att.tokens_for()[0] == ["The", " cat", " sat", " on", "\n"]  # byte-level BPE spelled out
    z = _weights(al.head_view(attentions, tokens, layer=1, head=2))
    want = attentions[1][0, 2].numpy()
    future = np.triu(np.ones_like(want, dtype=bool), 1)
    assert np.isnan(z[future]).all()  # drawn grey, as the app draws a causal mask
    np.testing.assert_array_equal(z[~future], want[~future])
    assert al.as_attention(attentions, tokens, kind="encoder", byte_tokens=False).tokens_for()[0] == tokens


def test_a_transformerlens_style_mapping(gpt2):
    attentions, tokens = gpt2
    cache = {f"blocks.{i}.attn.hook_pattern": a for i, a in enumerate(attentions)}
    cache["blocks.0.hook_resid_post"] = torch.zeros(1, 5, 32)  # other hooks are left alone
    np.testing.assert_array_equal(
        al.as_attention(cache, tokens).attention(), torch.stack(attentions)[:, 0].numpy()
    )


def test_bertviz_inputs_of_an_encoder_decoder():
    """The per-layer lists of [1, heads, q, k] tensors bertviz.head_view / model_view take, with its
    keyword names (bertviz is installed; nothing is rendered by it)."""
    import bertviz

    assert {
        "encoder_attention",
        "decoder_attention",
        "cross_attention",
        "encoder_tokens",
        "decoder_tokens",
    } <= set(__import__("inspect").signature(bertviz.head_view).parameters)
    g = torch.Generator().manual_seed(0)

    def softmax(*shape, causal=False):
        x = torch.randn(*shape, generator=g)
        if causal:
            x = x.masked_fill(torch.triu(torch.ones(shape[-2:], dtype=torch.bool), 1), float("-inf"))
        return x.softmax(-1)

    enc = [softmax(1, 4, 5, 5) for _ in range(2)]
    dec = [softmax(1, 4, 3, 3, causal=True) for _ in range(2)]
    cross = [softmax(1, 4, 3, 5) for _ in range(2)]
    src, tgt = ["<s>", "je", "suis", "là", "</s>"], ["<s>", "I", "am"]
    att = al.as_attention(
        encoder_attention=enc,
        decoder_attention=dec,
        cross_attention=cross,
        encoder_tokens=src,
        decoder_tokens=tgt,
    )
    assert att.kinds == ("encoder", "decoder", "cross")
    assert att.tokens_for("cross") == (tgt, src)
    fig = al.head_view(att, kind="cross", layer=1, head=2)
    np.testing.assert_allclose(_weights(fig), cross[1][0, 2].numpy(), rtol=0, atol=0)
    assert list(fig.data[-1].y) == token_labels(tgt) and list(fig.data[-1].x) == token_labels(src)  # escaped
    np.testing.assert_array_equal(att.attention("encoder"), torch.cat(enc).numpy())
    grid = al.attention_heads(att, kind="decoder")  # the causal future drawn grey (a mask trace first)
    assert grid.data[0].name != "attention" and len(grid.data) == 3
    assert al.compare(att, att, kind="cross", layer=0, head=0).data[0].z.shape == (3, 5)


def test_a_bfloat16_tensor_is_read_without_numpy_knowing_its_type():
    quarter = torch.full((1, 2, 4, 4), 0.25, dtype=torch.bfloat16)  # exact in bfloat16: rows sum to 1
    att = al.as_attention([quarter, quarter], list("abcd"))
    assert att.attention().dtype == np.float32 and (att.attention() == 0.25).all()
