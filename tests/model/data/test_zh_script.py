import re

import pytest
from tokenizers import Regex, pre_tokenizers

from model.data.zh_script import (
    CJK_CHAR_CLASS,
    cjk_ratio,
    detect_language,
    is_cjk_ideograph,
    to_simplified,
)


@pytest.mark.parametrize(
    ("text", "expected", "changed"),
    [
        ("蘋果", "苹果", True),
        ("我們試試看！", "我们试试看！", True),
        ("許多勞動者受困在煤礦場中。", "许多劳动者受困在煤矿场中。", True),
        ("I like 蘋果.", "I like 苹果.", True),
        ("苹果", "苹果", False),
        ("我们试试看！", "我们试试看！", False),
        ("Let's try something.", "Let's try something.", False),
        ("", "", False),
        ("🍕 123 !?", "🍕 123 !?", False),
    ],
)
def test_to_simplified(text, expected, changed):
    assert to_simplified(text) == (expected, changed)


def test_to_simplified_is_idempotent():
    once, _ = to_simplified("這項工作必須在週一前完成。")
    assert to_simplified(once) == (once, False)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("我们试试看！", "zh"),
        ("我們試試看！", "zh"),
        ("Let's try something.", "en"),
        ("我叫Jack。", "zh"),  # 2 ideographs vs 1 word
        ("Tom 和 John 是好朋友。", "zh"),  # 6 vs 2
        ('In "明", what is the character on the left?', "en"),  # 1 vs 8
        ("I love 苹果", "en"),  # 2 vs 2: a tie is not a majority
        ("我很爱 apple", "zh"),  # 3 vs 1
        ("😀 你好 😀", "zh"),
        ("Hello 🍕🍕🍕", "en"),
        ("🍕🍕", "en"),  # no letters at all
        ("", "en"),
        ("12345 !?", "en"),
        ("。？！", "en"),
        ("Café crème", "en"),
    ],
)
def test_detect_language(text, lang):
    assert detect_language(text) == lang


def test_cjk_ratio_counts_units():
    assert cjk_ratio("") == 0.0
    assert cjk_ratio("🍕") == 0.0
    assert cjk_ratio("你好") == 1.0
    assert cjk_ratio("hello world") == 0.0
    assert cjk_ratio("我叫Jack。") == pytest.approx(2 / 3)
    # a decomposed accent does not split a word in two
    assert cjk_ratio("我很好 cafe\u0301") == pytest.approx(3 / 4)


@pytest.mark.parametrize("char", ["一", "龥", "㐀", "𠀀", "𡡡", "豈"])
def test_cjk_ideographs(char):
    assert is_cjk_ideograph(char)
    assert re.fullmatch(CJK_CHAR_CLASS, char)


@pytest.mark.parametrize("char", ["a", "。", "，", "あ", "ア", "한", "1", "🍕", " "])
def test_not_cjk_ideographs(char):
    assert not is_cjk_ideograph(char)
    assert not re.fullmatch(CJK_CHAR_CLASS, char)


def test_cjk_class_works_in_tokenizers_regex_engine():
    # Oniguruma (used by `tokenizers`) must read the class exactly like Python's re,
    # including astral-plane ranges (Extension B).
    split = pre_tokenizers.Split(Regex(CJK_CHAR_CLASS), behavior="isolated")
    pieces = [p for p, _ in split.pre_tokenize_str("ab我們𡡡試cd")]
    assert pieces == ["ab", "我", "們", "𡡡", "試", "cd"]
