import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.data.tatoeba import load_pairs, split_pairs
from model.data.translation_tokenizer import (
    SPECIAL_TOKENS,
    WORD_START,
    TranslationTokenizer,
    build_default_tokenizer,
    coverage_stats,
)
from model.data.zh_script import is_cjk_ideograph

N_TRAIN_PAIRS = 10_000
N_ROUNDTRIP = 1_000


@pytest.fixture(scope="module")
def splits():
    return split_pairs(load_pairs())


@pytest.fixture(scope="module")
def train_subset(splits):
    return random.Random(0).sample(splits["train"], N_TRAIN_PAIRS)


@pytest.fixture(scope="module")
def tok(train_subset) -> TranslationTokenizer:
    texts = [p.zh for p in train_subset] + [p.en for p in train_subset]
    return TranslationTokenizer.train(texts, vocab_size=8000)


@pytest.fixture(scope="module")
def roundtrip_sample(train_subset):
    sample = random.Random(1).sample(train_subset, N_ROUNDTRIP)
    return {"zh": [p.zh for p in sample], "en": [p.en for p in sample]}


# ------------------------------------------------------------------ specials


def test_special_token_ids(tok):
    assert SPECIAL_TOKENS == ("<pad>", "<bos>", "<eos>", "<unk>", "<2en>", "<2zh>")
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert tok.lang_tag_id("en") == 4 and tok.lang_tag_id("zh") == 5
    assert tok.tokens(range(6)) == list(SPECIAL_TOKENS)
    assert [tok.token_to_id(t) for t in SPECIAL_TOKENS] == list(range(6))
    with pytest.raises(ValueError):
        tok.lang_tag_id("fr")


def test_vocab_size(tok):
    assert 3_000 < tok.vocab_size <= 8_000
    small = TranslationTokenizer.train(["hello world"] * 5 + ["你好世界"] * 5, vocab_size=200)
    assert small.vocab_size <= 200


def test_encode_adds_no_specials_and_decode_drops_them(tok):
    ids = tok.encode("Hello.")
    assert not set(ids) & set(range(6))
    framed = [tok.lang_tag_id("zh"), tok.bos_id, *ids, tok.eos_id, tok.pad_id, tok.pad_id]
    assert tok.decode(framed) == "Hello."
    assert tok.tokens(framed)[:2] == ["<2zh>", "<bos>"]


def test_literal_special_text_is_not_a_special_token(tok):
    ids = tok.encode("<eos> <2zh>")
    assert not set(ids) & set(range(6))
    assert tok.decode(ids) == "<eos> <2zh>"


def test_empty_text(tok):
    assert tok.encode("") == []
    assert tok.encode("   ") == []
    assert tok.decode([]) == ""


# --------------------------------------------------------- pre-tokenisation


def test_chinese_is_one_token_per_character(tok):
    sentence = "我们试试看！"
    assert tok.tokens(tok.encode(sentence)) == list(sentence)


def test_no_token_spans_two_cjk_characters(tok, roundtrip_sample):
    for sentence in roundtrip_sample["zh"]:
        tokens = tok.tokens(tok.encode(sentence))
        cjk_counts = [sum(is_cjk_ideograph(c) for c in t) for t in tokens]
        assert max(cjk_counts) <= 1, (sentence, tokens)
        assert sum(cjk_counts) == sum(is_cjk_ideograph(c) for c in sentence)


def test_repeated_astral_cjk_characters_are_never_merged():
    # frequent pairs would be merged by BPE if the pre-tokenizer did not isolate them
    texts = ["𡡡𡡡𡡡試試", "我們試試看", "試試𡡡"] * 50
    small = TranslationTokenizer.train(texts, vocab_size=500)
    assert small.tokens(small.encode("𡡡𡡡試試")) == ["𡡡", "𡡡", "試", "試"]


def test_english_subwords_are_readable(tok):
    tokens = tok.tokens(tok.encode("Let's try something."))
    assert tokens[0].startswith(WORD_START)
    assert "".join(tokens).replace(WORD_START, " ").strip() == "Let's try something."
    assert tokens[-1] == "."  # punctuation is its own token
    assert f"{WORD_START}something" in tokens


def test_sentence_start_word_matches_mid_sentence_word(tok):
    assert tok.encode("Tom")[0] == tok.encode("I saw Tom")[-1]


def test_case_is_kept(tok):
    assert tok.encode("Tom") != tok.encode("tom")
    assert tok.decode(tok.encode("TOM and Tom")) == "TOM and Tom"


# --------------------------------------------------------------- round trip


@pytest.mark.parametrize(
    "text",
    [
        "我们试试看！",
        "Let's try something.",
        "Tom 和 John 是好朋友。",
        "我叫Jack。",
        '"How long does it take?" she asked.',
        "It's 2000 years old, isn't it?",
        "他说他会在一天内跑 200 公里，而真的做到了。",
        "“到维也纳步行要多久？” “对不起。”",
    ],
)
def test_examples_round_trip(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_chinese_decodes_without_spaces(tok, roundtrip_sample):
    for sentence in roundtrip_sample["zh"]:
        if not any(c.isspace() for c in sentence):
            assert " " not in tok.decode(tok.encode(sentence))


@pytest.mark.parametrize("side", ["zh", "en"])
def test_round_trip_rate_on_training_sentences(tok, roundtrip_sample, side):
    texts = roundtrip_sample[side]
    exact = sum(tok.decode(tok.encode(t)) == t for t in texts) / len(texts)
    assert exact >= 0.97
    # the only allowed differences are the documented normalisations
    normalised = sum(tok.decode(tok.encode(t)) == tok.normalize(t) for t in texts) / len(texts)
    assert normalised == 1.0


@pytest.mark.slow
def test_default_tokenizer_on_valid_split(tmp_path, splits):
    """The real build: full train split, default vocab; coverage measured on valid."""
    start = time.perf_counter()
    full = build_default_tokenizer(tmp_path / "tokenizer.json")
    assert time.perf_counter() - start < 60
    assert full.vocab_size == 8000
    assert TranslationTokenizer.load(tmp_path / "tokenizer.json").vocab_size == 8000
    for lang, max_mean_tokens in (("zh", 14), ("en", 12)):
        stats = coverage_stats(full, [getattr(p, lang) for p in splits["valid"]])
        assert stats["roundtrip"] >= 0.98, (lang, stats)
        assert stats["unk_rate"] < 0.002, (lang, stats)
        assert 5 < stats["mean_tokens"] < max_mean_tokens, (lang, stats)


def test_whitespace_normalisation(tok):
    assert tok.normalize("  Hello   world\u3000!\n") == "Hello world !"
    assert tok.decode(tok.encode("  Hello   world\u3000!\n")) == "Hello world !"
    assert tok.decode(tok.encode("请\u200b\u200b借我你的书。")) == "请借我你的书。"


_KNOWN_CHARS = "abcXYZ019.,!?'\"-()@#<>" + "我们你好试看是的。，！？“”"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=_KNOWN_CHARS + " \t\u3000", max_size=40))
def test_round_trip_property(tok, text):
    assert tok.unknown_characters(text) == []
    assert tok.decode(tok.encode(text)) == tok.normalize(text)


# ------------------------------------------------------------------- unknowns


def test_unknown_characters(tok):
    text = "I ❤ 🍕 and 龘."
    ids = tok.encode(text)
    assert ids.count(tok.unk_id) == 3
    assert tok.unknown_characters(text) == ["❤", "🍕", "龘"]
    assert tok.decode(ids) == "I   and ."
    assert tok.unknown_characters("Hello 你好") == []


def test_printable_ascii_is_always_known(tok):
    text = "".join(chr(c) for c in range(0x21, 0x7F))
    assert tok.unknown_characters(text) == []


@pytest.mark.parametrize("text", ["🙂", "👨\u200d👩\u200d👧", "❤️❤️", "x🍕y", "你🍕好", "\x00\x01"])
def test_emoji_and_odd_input_do_not_crash(tok, text):
    ids = tok.encode(text)
    assert ids and tok.unk_id in ids
    assert isinstance(tok.decode(ids), str)
    assert len(tok.tokens(ids)) == len(ids)
    assert tok.unknown_characters(text)


def test_id_to_token_out_of_range(tok):
    with pytest.raises(IndexError):
        tok.id_to_token(tok.vocab_size)


# ---------------------------------------------------------------- save / load


def test_save_load_round_trip(tok, tmp_path, roundtrip_sample):
    path = tmp_path / "sub" / "tokenizer.json"
    tok.save(path)
    assert [p.name for p in path.parent.iterdir()] == ["tokenizer.json"]
    loaded = TranslationTokenizer.load(path)
    assert loaded.vocab_size == tok.vocab_size
    for text in roundtrip_sample["zh"][:50] + roundtrip_sample["en"][:50] + ["<eos>"]:
        assert loaded.encode(text) == tok.encode(text)
    assert loaded.decode(tok.encode("Hello 你好")) == "Hello 你好"


@pytest.mark.parametrize(
    "content",
    [
        "not json at all",
        '{"version": "1.0", "model": ',  # truncated
        json.dumps({"hello": "world"}),
        "",
    ],
)
def test_load_corrupt_file_raises_value_error(tmp_path, content):
    path = tmp_path / "tokenizer.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="tokenizer"):
        TranslationTokenizer.load(path)


def test_load_binary_garbage_raises_value_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError):
        TranslationTokenizer.load(path)


def test_load_foreign_tokenizer_raises_value_error(tmp_path):
    from tokenizers import Tokenizer, models

    foreign = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
    path = tmp_path / "tokenizer.json"
    foreign.save(str(path))
    with pytest.raises(ValueError, match="special token"):
        TranslationTokenizer.load(path)


def test_load_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        TranslationTokenizer.load(tmp_path / "missing.json")
