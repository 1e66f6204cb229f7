"""A decoder with a vocabulary of its own (ModelConfig.target_vocab_size, a separate-vocabulary Marian): its
token table and the output have that many rows, the encoder keeps vocab_size; None changes nothing."""

from __future__ import annotations

import pytest
import torch

from model.network.config import ConfigError, ModelConfig
from model.network.transformer import Transformer
from model.store.formats.own import expected_shapes, model_from_state, state_dict_for_saving

SMALL = dict(vocab_size=30, d_model=16, n_heads=2, d_ff=32, n_enc_layers=1, n_dec_layers=1, max_len=16,
             dropout=0.0)


def test_the_decoder_reads_its_own_table_and_writes_its_own_logits():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**SMALL, target_vocab_size=12)).eval()
    assert model.token_embed.weight.shape == (30, 16)
    assert model.target_embed.weight.shape == model.unembed.weight.shape == (12, 16)
    assert model.unembed.weight is model.target_embed.weight  # tied: the output is the decoder's table
    assert model.decoder.embed.tokens[0] is model.target_embed
    assert model.encoder.embed.tokens[0] is model.token_embed
    src, tgt = torch.tensor([[25, 29, 3]]), torch.tensor([[1, 11, 4]])  # source ids past the target's size
    logits = model(src, tgt)
    assert logits.shape == (1, 3, 12)
    with pytest.raises(IndexError):
        model(src, torch.tensor([[1, 12]]))  # a target id past the decoder's table
    with torch.no_grad():
        model.token_embed.weight[4] += torch.randn(16)  # the source's row 4: the decoder's token 4 is not it
        same = model(torch.tensor([[25, 29, 3]]), tgt)
        model.target_embed.weight[4] += torch.randn(16)  # the decoder's own row 4 moves its output
        moved = model(src, tgt)
    assert torch.allclose(same, logits) and not torch.allclose(moved[0, 2], logits[0, 2])


def test_shared_vocabulary_is_unchanged():
    cfg = ModelConfig(**SMALL)
    model = Transformer(cfg)
    assert cfg.output_vocab_size == 30 and model.target_embed is None
    assert model.target_table is model.token_embed and model.unembed.weight is model.token_embed.weight
    assert "target_embed.weight" not in expected_shapes(cfg)


def test_a_checkpoint_keeps_both_tables():
    torch.manual_seed(1)
    cfg = ModelConfig(**SMALL, target_vocab_size=12, tie_embeddings=True)
    model = Transformer(cfg).eval()
    state = state_dict_for_saving(model)
    assert state.keys() == expected_shapes(cfg).keys() and state["target_embed.weight"].shape == (12, 16)
    again = model_from_state(cfg, {k: v.clone() for k, v in state.items()}, strict=False)  # as seq2seq.py
    assert again.unembed.weight is again.target_embed.weight
    src, tgt = torch.tensor([[5, 6, 7]]), torch.tensor([[1, 2, 3]])
    assert torch.equal(again(src, tgt), model(src, tgt))


@pytest.mark.parametrize("changes, named", [
    (dict(target_vocab_size=0), "target_vocab_size must be >= 1"),
    (dict(target_vocab_size=2_000_000), "target_vocab_size must be <="),
    (dict(target_vocab_size=12, pad_id=20), "below target_vocab_size"),
    (dict(target_vocab_size=12, decoder_only=True, n_enc_layers=0), "needs an encoder and a decoder"),
    (dict(target_vocab_size=12, encoder_only=True, n_dec_layers=0), "needs an encoder and a decoder"),
    (dict(target_vocab_size=True), "target_vocab_size must be int"),
])
def test_impossible_target_vocabularies_are_refused(changes, named):
    with pytest.raises(ConfigError, match=named):
        ModelConfig(**{**SMALL, **changes})
