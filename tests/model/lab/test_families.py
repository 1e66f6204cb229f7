"""Three families, one sentence: each column's masks are what the model applied, its word is found in
its own tokens, its outputs and shapes are those of the real run."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

import model.lab.families as families_lab
from model.lab.choices import FAMILY_MAX_TOKENS, FAMILY_MODELS, sentence_words
from model.lab.families import FAMILY_NEW_TOKENS, REFERENCE_SENTENCES, family_column, token_spans
from model.run.analysis import analyze, attention_only
from model.run.embeddings import sentence_embeddings
from model.store.registry import load_model

SENTENCES = ["The cat sat on the mat.", "猫坐在垫子上。"]
# The quick subset reads each family on the English sentence; the whole suite on both.
CASES = [pytest.param(family, sentence, marks=[pytest.mark.slow] if i else [])
         for family in FAMILY_MODELS for i, sentence in enumerate(SENTENCES)]


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def column_of(family: str, sentence: str):
    return family_column(bundle(FAMILY_MODELS[family]), sentence)


@functools.cache
def analysis_of(family: str, sentence: str):
    b = bundle(FAMILY_MODELS[family])
    new = FAMILY_NEW_TOKENS if b.cfg.decoder_only else None
    return analyze(b, sentence, max_new=new, keep=attention_only)


def test_sentence_words_split_letters_and_single_chinese_characters():
    assert sentence_words("The cat sat on the mat.") == [("The", 0), ("cat", 0), ("sat", 0), ("on", 0),
                                                        ("the", 1), ("mat", 0)]
    assert [w for w, _ in sentence_words("猫坐在 mat 上。")] == ["猫", "坐", "在", "mat", "上"]


@pytest.mark.parametrize("family,sentence", CASES)
def test_each_mask_is_exactly_where_the_model_put_minus_infinity(family, sentence):
    column, analysis = column_of(family, sentence), analysis_of(family, sentence)
    expected = {"encoder_only": {"encoder"}, "encoder_decoder": {"encoder", "decoder", "cross"},
                "decoder_only": {"decoder"}}[family]
    assert set(column.masks) == expected
    for kind, mask in column.masks.items():
        scores = analysis.attention(kind, "scores")  # [layer, head, query, key]
        np.testing.assert_array_equal(~np.isfinite(scores), np.broadcast_to(mask, scores.shape))
        queries, keys = column.mask_tokens[kind]
        assert mask.shape == (len(queries), len(keys))
        if kind == "decoder":  # causal: strictly above the diagonal
            np.testing.assert_array_equal(mask, np.triu(np.ones(mask.shape, bool), 1))
        else:  # bidirectional, and cross-attention sees the whole source
            assert not mask.any()


@pytest.mark.parametrize("family,sentence", CASES)
def test_the_words_tokens_decode_to_the_word(family, sentence):
    column = column_of(family, sentence)
    b = bundle(FAMILY_MODELS[family])
    prepared = b.task.prepare(sentence, b.cfg.max_len)
    ids = list(prepared.prefix if b.cfg.decoder_only else prepared.source_ids)
    assert column.tokens[: len(ids)] == b.tokenizer.tokens(ids)
    for word, before in sentence_words(sentence):
        positions = column.word_positions(word, before)
        if not positions:  # only where the model's tokens lose the word
            assert "[UNK]" in column.tokens and not sentence.isascii(), (family, word)
            continue
        assert positions == list(range(positions[0], positions[-1] + 1)), "a word's pieces are adjacent"
        assert b.tokenizer.decode([ids[p] for p in positions]).strip().lower() == word.lower(), (family, word)
    if sentence.isascii():  # two "the": the second one is found after the first
        first, second = column.word_positions("the", 0), column.word_positions("the", 1)
        assert first and second and first[-1] < second[0]


def test_byte_pieces_of_a_chinese_character_all_map_to_it():
    b = bundle("smollm2")
    ids = b.task.prepare("猫坐", b.cfg.max_len).prefix
    decoded, spans = token_spans(b.tokenizer, ids)
    assert decoded == "猫坐" and len(ids) > 2  # each character is several byte tokens
    assert {spans[i] for i in range(len(ids))} == {(0, 1), (1, 2)}


@pytest.mark.parametrize("family,sentence", CASES)
def test_the_word_row_is_the_models_mean_attention_and_causal_only_for_the_decoder(family, sentence):
    column, analysis = column_of(family, sentence), analysis_of(family, sentence)
    mean = analysis.attention(column.self_kind).astype(np.float64).mean(axis=(0, 1))
    np.testing.assert_allclose(column.mean_attention, mean, atol=1e-6)
    word = next((w, n) for w, n in sentence_words(sentence) if column.word_positions(w, n))
    positions = column.word_positions(*word)
    row = column.word_row(positions)
    np.testing.assert_allclose(row, mean[positions].mean(0), atol=1e-6)
    assert row.sum() == pytest.approx(1.0, abs=1e-5)
    after = row[positions[-1] + 1:]
    if family == "decoder_only":
        assert (after == 0).all(), "a causal row has no weight on later tokens"
    else:
        assert after.sum() > 0, "a bidirectional row reads later tokens too"
    if family == "encoder_decoder":
        cross = np.asarray(analysis.attention("cross")).mean(axis=(0, 1))
        np.testing.assert_allclose(column.cross_mean, cross, atol=1e-6)
    else:
        assert column.cross_mean is None


@pytest.mark.parametrize("family,sentence", CASES)
def test_outputs_and_shape_trace_come_from_the_real_run(family, sentence):
    column, analysis = column_of(family, sentence), analysis_of(family, sentence)
    cfg = bundle(FAMILY_MODELS[family]).cfg
    trace = dict(column.trace)
    n_src, n_tgt = len(analysis.source_tokens), len(analysis.target_tokens)
    assert column.output == analysis.output_text
    if family == "encoder_only":
        assert [s for s, _ in column.trace] == ["ids", "embedded", "encoder_out", "embedding"]
        assert trace["ids"] == (1, n_src) and trace["encoder_out"] == (1, n_src, cfg.d_model)
        assert trace["embedding"] == (1, cfg.d_model) and column.embedding_dim == cfg.d_model
        return
    assert column.output.strip()
    assert trace["logits"] == (1, n_tgt, cfg.vocab_size) and trace["decoder_out"] == (1, n_tgt, cfg.d_model)
    if family == "encoder_decoder":
        assert trace["source_ids"] == (1, n_src) and trace["target_ids"] == (1, n_tgt)
        assert trace["encoder_out"] == (1, n_src, cfg.d_model)
    else:
        assert trace["ids"] == (1, n_tgt) and column.tokens == analysis.target_tokens
        assert len(analysis.steps) <= FAMILY_NEW_TOKENS + 1


def test_the_embedding_is_the_sentence_vector_and_its_nearest_sentence_is_about_a_cat():
    column = column_of("encoder_only", SENTENCES[0])
    b = bundle(FAMILY_MODELS["encoder_only"])
    vectors = sentence_embeddings(b, [SENTENCES[0], *REFERENCE_SENTENCES]).astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    want = unit[1:] @ unit[0]
    np.testing.assert_allclose([c for _, c in column.similarities], want, atol=1e-5)
    assert [s for s, _ in column.similarities] == list(REFERENCE_SENTENCES)
    assert int(np.argmax(want)) == 0 and want[0] > 0.5 > want[1:].max()
    ids = torch.tensor([b.task.prepare(SENTENCES[0], b.cfg.max_len).source_ids])
    with torch.no_grad():
        hidden = b.model(ids)[0].double()  # [pos, d_model]
    assert column.embedding_norm == pytest.approx(float(hidden.mean(0).norm()), rel=1e-5)


LONG = "The river bank was steep, so we walked along it slowly. " * 300  # ~17,000 characters


def _check_read_to(column, b, bound: int) -> None:
    """The column read the sentence's first ``bound`` tokens (the model's own cut at that length), and
    says from how many it was cut."""
    read = min(bound, b.cfg.max_len)
    own = b.task.prepare(LONG, read)
    assert column.read_tokens == read and column.model_max_len == b.cfg.max_len
    assert column.cut_from == own.truncated_from == b.task.prepare(LONG, b.cfg.max_len).truncated_from
    ids = list(own.prefix if b.cfg.decoder_only else own.source_ids)
    assert column.tokens[:read] == b.tokenizer.tokens(ids)
    if b.cfg.decoder_only:  # the continuation still has its room after the cut prompt
        assert column.output.strip() and len(column.tokens) <= read + FAMILY_NEW_TOKENS
        assert column.mean_attention.shape == (len(column.tokens),) * 2
    else:
        assert column.mean_attention.shape == (read, read)


@pytest.mark.parametrize("family", FAMILY_MODELS)
def test_a_long_sentence_is_read_to_the_pages_bound_in_every_family(family, monkeypatch):
    monkeypatch.setattr(families_lab, "FAMILY_MAX_TOKENS", 24)  # the same code path, cheaply
    b = bundle(FAMILY_MODELS[family])
    _check_read_to(family_column(b, LONG), b, 24)


@pytest.mark.slow  # slow: whole suite only (quick keeps the same path at a bound of 24 tokens)
@pytest.mark.parametrize("family", FAMILY_MODELS)
def test_a_long_sentence_is_read_to_at_most_the_pages_bound_of_256_tokens(family):
    b = bundle(FAMILY_MODELS[family])
    _check_read_to(family_column(b, LONG), b, FAMILY_MAX_TOKENS)


def test_max_input_cuts_the_input_only_and_a_larger_bound_changes_nothing():
    b = bundle("smollm2")
    short = analyze(b, LONG, max_new=3, keep=attention_only, max_input=20)
    assert len(short.prepared.prefix) == 20 and short.prepared.truncated_from > 20
    assert len(short.target_tokens) == 23 and short.output_text.strip()
    mini = bundle("minilm")
    whole = analyze(mini, "The cat sat on the mat.", keep=attention_only)
    same = analyze(mini, "The cat sat on the mat.", keep=attention_only, max_input=10**6)
    assert same.source_tokens == whole.source_tokens
    np.testing.assert_array_equal(same.attention("encoder"), whole.attention("encoder"))
