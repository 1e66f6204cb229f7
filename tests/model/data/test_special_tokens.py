"""Special tokens are decided by id, never by the text of a token."""

import pytest

from model.data.char_tokenizer import CharTokenizer
from model.run.analysis import analyze
from model.store.registry import load_model

STRUCTURAL = {"<pad>", "<bos>", "<eos>", "<2en>", "<2zh>"}


@pytest.fixture(scope="module")
def default():
    return load_model("default")


@pytest.fixture(scope="module")
def reverse():
    return load_model("reverse")


def test_char_tokenizer_specials_are_pad_bos_eos():
    tok = CharTokenizer("abc")
    assert [i for i in range(tok.vocab_size) if tok.is_special(i)] == [tok.pad_id, tok.bos_id, tok.eos_id]
    assert not tok.is_special(tok.unk_id)


def test_translation_tokenizer_specials_are_pad_bos_eos_and_language_tags(default):
    tok = default.tokenizer
    special = [i for i in range(tok.vocab_size) if tok.is_special(i)]
    assert special == [tok.pad_id, tok.bos_id, tok.eos_id, tok.lang_tag_id("en"), tok.lang_tag_id("zh")]
    assert set(tok.tokens(special)) == STRUCTURAL
    assert not tok.is_special(tok.unk_id)


@pytest.mark.parametrize(
    ("name", "text", "direction"),
    [
        ("default", "我吃了一个苹果", "zh->en"),
        ("default", "I like green tea.", "en->zh"),
        ("reverse", "attention", None),
    ],
)
def test_analysis_marks_exactly_the_structural_positions(request, name, text, direction):
    result = analyze(request.getfixturevalue(name), text, direction)
    assert result.source_special == [t in STRUCTURAL for t in result.source_tokens]
    assert result.target_special == [t in STRUCTURAL for t in result.target_tokens]
    # Source: the text then <eos>; target: the start token (<bos> or a language tag), then output.
    assert result.source_special == [False] * (len(result.source_tokens) - 1) + [True]
    assert result.target_special == [True] + [False] * (len(result.target_tokens) - 1)


def test_typing_eos_on_the_translation_model_gives_text_tokens(default):
    result = analyze(default, "I typed <eos> here", "en->zh", target="<eos> <2zh>")
    assert result.source_special == [False] * (len(result.source_tokens) - 1) + [True]
    assert result.target_special == [True] + [False] * (len(result.target_tokens) - 1)
    assert "eos" in "".join(result.source_tokens[:-1])  # the typed text is there, as text


def test_typing_eos_on_a_character_model_gives_text_tokens(reverse):
    result = analyze(reverse, "ab<eos>", target="<eos>")
    # "<" and ">" are unknown to the alphabet: <unk>, which stands for typed text, not a special.
    assert result.source_tokens == ["a", "b", "<unk>", "e", "o", "s", "<unk>", "<eos>"]
    assert result.source_special == [False] * 7 + [True]
    assert result.target_tokens[0] == "<bos>"
    assert result.target_special == [True] + [False] * (len(result.target_tokens) - 1)
