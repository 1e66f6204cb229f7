"""RoBERTa, XLM-RoBERTa and DistilBERT folders, read by our BERT-style loader and held to ``transformers``.

Each test builds a tiny random model from a ``transformers`` config (seeded, no hub) and a tokenizer
trained here with ``tokenizers`` (byte-level BPE for RoBERTa, SentencePiece unigram for XLM-R, WordPiece
for DistilBERT), saves them as a folder, opens it through the user-model loader and compares every
attention pattern and the encoder's output with ``transformers``' eager pass on the same ids.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from model.run.analysis import analyze
from model.store.formats.bert import PretrainedError, load_bert_folder
from model.store.user_folders import load_user_model

SENTENCES = ["The bank raised interest rates.", "We sat on the river bank.", "我吃了一个苹果。",
             "Attention is all you need.", "The cat sat on the mat, then it slept."]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # ids 0..4: pad 1, as RoBERTa's
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _byte_level_bpe():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(SENTENCES * 3, trainers.BpeTrainer(
        vocab_size=300, special_tokens=ROBERTA_SPECIALS, initial_alphabet=alphabet))
    return tok


def _unigram():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(SENTENCES * 3, trainers.UnigramTrainer(
        vocab_size=120, special_tokens=ROBERTA_SPECIALS, unk_token="<unk>"))
    return tok


def _wordpiece():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(SENTENCES * 3, trainers.WordPieceTrainer(vocab_size=150,
                                                                      special_tokens=WORDPIECE_SPECIALS))
    return tok


def _folder(tmp_path, family: str):
    """(folder, transformers model) of a tiny random ``family`` encoder with its tokenizer."""
    import transformers

    torch.manual_seed(0)
    tok = {"roberta": _byte_level_bpe, "xlm-roberta": _unigram, "distilbert": _wordpiece}[family]()
    vocab = tok.get_vocab_size()
    if family == "distilbert":
        cfg = transformers.DistilBertConfig(vocab_size=vocab, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                            max_position_embeddings=48, pad_token_id=0)
        hf_model = transformers.DistilBertModel(cfg)
    else:
        kind = transformers.RobertaConfig if family == "roberta" else transformers.XLMRobertaConfig
        cfg = kind(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, max_position_embeddings=50, pad_token_id=1, bos_token_id=0,
                   eos_token_id=2, type_vocab_size=1)
        hf_model = (transformers.RobertaModel if family == "roberta" else transformers.XLMRobertaModel)(cfg)
    hf_model.config._attn_implementation = "eager"
    hf_model.eval()
    with torch.no_grad():  # random, not zero, LayerNorms and biases: a mapping mistake cannot hide
        for name, p in hf_model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    folder = tmp_path / family
    hf_model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder, hf_model


@pytest.mark.parametrize("family", ["roberta", "xlm-roberta", "distilbert"])
def test_every_attention_pattern_and_the_output_equal_transformers(tmp_path, family):
    folder, hf_model = _folder(tmp_path, family)
    bundle = load_user_model(folder)
    assert bundle.cfg.encoder_only and bundle.info["source"] == f"huggingface-{family}"
    for text in SENTENCES:
        a = analyze(bundle, text)
        ids = torch.tensor([a.prepared.source_ids])  # [1, pos]: <s>/[CLS] ... </s>/[SEP]
        with torch.no_grad():
            theirs = hf_model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
            ours = bundle.model(ids)  # [1, pos, d_model]
        for layer, pattern in enumerate(theirs.attentions):  # [1, heads, q, k]
            ours_layer = np.asarray(a.attention("encoder")[layer])  # [heads, q, k]
            np.testing.assert_allclose(ours_layer, pattern[0].numpy(), atol=1e-5)
        np.testing.assert_allclose(ours[0].numpy(), theirs.last_hidden_state[0].numpy(), atol=1e-4)


def test_roberta_reads_positions_from_padding_idx_plus_one(tmp_path):
    folder, hf_model = _folder(tmp_path, "roberta")
    bundle = load_bert_folder(folder)
    table = hf_model.embeddings.position_embeddings.weight.detach()
    assert bundle.cfg.max_len == table.shape[0] - 2  # rows 0 and 1 are never read (pad id 1)
    ours = bundle.model.encoder.embed.positions.table.detach().numpy()
    np.testing.assert_array_equal(ours, table[2:].numpy())


def test_byte_level_tokens_show_as_text_and_unigram_marks_word_starts(tmp_path):
    roberta = load_bert_folder(_folder(tmp_path, "roberta")[0])
    a = analyze(roberta, "We sat on the river bank.")
    assert not any("Ġ" in t for t in a.source_tokens) and a.source_tokens[0] == "<s>"
    assert roberta.tokenizer.word_marker is None
    xlmr = load_bert_folder(_folder(tmp_path, "xlm-roberta")[0])
    assert xlmr.tokenizer.word_marker == "\u2581"
    assert analyze(xlmr, "我吃了一个苹果。").source_tokens[-1] == "</s>"


def test_a_roberta_table_shorter_than_its_offset_is_one_line(tmp_path):
    folder, _ = _folder(tmp_path, "roberta")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 2}))
    with pytest.raises(PretrainedError, match="leaves no position") as e:
        load_bert_folder(folder)
    assert "\n" not in str(e.value)


def test_a_wordpiece_file_given_to_roberta_is_one_line(tmp_path):
    folder, _ = _folder(tmp_path, "roberta")
    _wordpiece().save(str(folder / "tokenizer.json"))
    with pytest.raises(PretrainedError, match="tokenizer.json") as e:
        load_bert_folder(folder)
    assert "\n" not in str(e.value)


@pytest.mark.slow  # slow: whole suite only (every page, ~40 s); quick keeps the parity tests above
def test_every_page_opens_on_an_uploaded_xlm_roberta_folder(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from app_support import pages as page_registry
    from tests.app.test_app_pages import APP, PAGES, TIMEOUT
    from tests.app.test_upload_page import _zip_of

    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("ATTENTION_LENS_USER_MODELS", str(tmp_path / "models"))
    folder, _ = _folder(tmp_path, "xlm-roberta")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": "default", "text": "attention", "lang": "zh"})
    at.run()
    at.switch_page(PAGES["mymodels"]).run()
    at.file_uploader[0].set_value(("tiny-xlmr.zip", _zip_of(folder), "application/zip")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    name = at.session_state["model"]
    at.session_state["text"] = "我吃了一个苹果。"
    drawn = []
    for page in page_registry.PAGES:
        at.switch_page(page.file).run()
        assert not at.exception, (page.key, [e.message for e in at.exception])
        assert not at.error, (page.key, [e.value for e in at.error])
        if at.get("plotly_chart"):
            drawn.append(page.key)
    assert {"single", "heads", "focus", "stats"} <= set(drawn), drawn
    at.switch_page(PAGES["mymodels"]).run()  # a test process's AppTests share one session, which keeps 3
    at.button(key=f"mymodels_remove_{name}").click().run()
    assert not at.exception
