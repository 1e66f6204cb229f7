"""Byte-level BPE tokens shown as the text they spell, partial characters grouped (苹 1/3 … 3/3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.data.byte_tokens import PART, bytes_to_unicode, group_text, part_of, readable_tokens
from model.store.registry import load_model
from viz.wordpieces import group_pieces, word_starts

#: Characters only the byte alphabet's spelling uses for bytes of Chinese text (mojibake if shown).
MOJIBAKE = set("ĠĊèæåçéäĩĶķ")


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def _groups(labels: list[str]) -> list[str]:
    """One text per group: whole tokens as they are, a group's text once."""
    return [group_text(lab) for lab in labels if (part_of(lab) or (1, 1))[0] == 1]


def test_a_chinese_prompt_reads_as_chinese(smollm2):
    text = "我吃了一个苹果"
    labels = smollm2.task.prepare(text, 300).source_tokens
    assert labels[6:9] == [f"苹{PART}1/3", f"苹{PART}2/3", f"苹{PART}3/3"] and "一个" in labels
    assert "".join(_groups(labels)) == text
    assert not MOJIBAKE & set("".join(labels))


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 苹果我吃了一个😀é\nxyz,.")), min_size=1, max_size=30))
def test_the_groups_spell_the_text_back(smollm2, text):
    ids = smollm2.tokenizer.encode(text)
    labels = smollm2.tokenizer.tokens(ids)
    assert len(labels) == len(ids)
    assert "".join(_groups(labels)) == text
    for lab in labels:  # every part names its place in a group that is whole
        if part_of(lab) is not None:
            k, n = part_of(lab)
            assert 1 <= k <= n >= 2


def test_special_tokens_and_undecodable_bytes():
    spelled = bytes_to_unicode()
    assert readable_tokens(["<|im_start|>", spelled[0x20] + "Hi"]) == ["<|im_start|>", " Hi"]
    lone = spelled[0xE8]  # the first byte of 苹, alone: no character ever ends it
    assert readable_tokens([lone, "a"]) == ["\\xe8", "a"]


def test_merging_joins_a_characters_parts_into_one_unit(smollm2):
    labels = smollm2.task.prepare("我吃了一个苹果", 300).source_tokens
    assert word_starts(labels) == [True, False, True, False, True, True, True, False, False, True]
    grouping = group_pieces(labels, merge=True)
    assert list(grouping.labels) == ["我", "吃", "了", "一个", "苹", "果"]
    assert grouping.positions[4] == (6, 7, 8)
