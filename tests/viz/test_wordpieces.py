"""viz.wordpieces: attention between words (pieces merged) and without special tokens, as properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.wordpieces import (
    HIDDEN,
    group_pieces,
    grouping_from_word_of_piece,
    merge_mask,
    merge_pieces,
    word_starts,
)


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@st.composite
def _case(draw):
    """A random softmax pattern [layer, head, n, n] and a random contiguous grouping of its n positions."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=7))  # pieces per unit
    hide = [draw(st.booleans()) for _ in sizes]
    if all(hide):
        hide[draw(st.integers(0, len(sizes) - 1))] = False
    word_of: list[int] = []
    unit = 0
    for size, hidden in zip(sizes, hide, strict=True):
        word_of += [HIDDEN] * size if hidden else [unit] * size
        unit += 0 if hidden else 1
    n = len(word_of)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    layers, heads = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    pattern = _softmax_rows(rng.normal(size=(layers, heads, n, n)) * 3).astype(np.float32)
    return pattern, word_of


def _direct(pattern: np.ndarray, word_of: list[int], renormalise: bool) -> np.ndarray:
    """The definition, written as loops: to a unit = sum over its pieces, from a unit = mean."""
    units = sorted({w for w in word_of if w != HIDDEN})
    out = np.zeros(pattern.shape[:-2] + (len(units), len(units)))
    for a in units:
        rows = [i for i, w in enumerate(word_of) if w == a]
        for b in units:
            cols = [j for j, w in enumerate(word_of) if w == b]
            total = 0.0
            for i in rows:
                row = pattern[..., i, :].astype(np.float64)
                if renormalise:
                    kept = sum(row[..., j] for j, w in enumerate(word_of) if w != HIDDEN)
                    row = row / kept[..., None]
                total = total + sum(row[..., j] for j in cols)
            out[..., a, b] = total / len(rows)
    return out


@settings(max_examples=60, deadline=None)
@given(_case(), st.booleans())
def test_merge_equals_the_definition(case, renormalise):
    pattern, word_of = case
    got = merge_pieces(pattern, word_of, renormalise=renormalise)
    np.testing.assert_allclose(got, _direct(pattern, word_of, renormalise), rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(_case())
def test_rows_still_sum_to_one_when_nothing_is_hidden_or_when_renormalised(case):
    pattern, word_of = case
    if HIDDEN not in word_of:
        np.testing.assert_allclose(merge_pieces(pattern, word_of).sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(merge_pieces(pattern, word_of, renormalise=True).sum(-1), 1.0, atol=1e-5)


@settings(max_examples=60, deadline=None)
@given(_case())
def test_hiding_without_renormalising_keeps_the_shown_weight_only(case):
    """Without renormalising, a shown row sums to the mean weight its pieces put on shown keys (≤ 1)."""
    pattern, word_of = case
    shown = np.array([w != HIDDEN for w in word_of])
    got = merge_pieces(pattern, word_of).sum(-1)  # [..., units]
    grouping = grouping_from_word_of_piece(word_of)
    kept = pattern[..., :, shown].sum(-1)  # [..., n]
    expected = np.stack([kept[..., list(ps)].mean(-1) for ps in grouping.positions], axis=-1)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert (got <= 1 + 1e-5).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_one_piece_per_word_is_the_identity(n, seed):
    pattern = _softmax_rows(np.random.default_rng(seed).normal(size=(2, 3, n, n))).astype(np.float32)
    tokens = [f"w{i}" for i in range(n)]
    grouping = group_pieces(tokens)
    assert grouping.is_identity and grouping.labels == tuple(tokens)
    np.testing.assert_array_equal(merge_pieces(pattern, grouping), pattern)
    np.testing.assert_array_equal(merge_pieces(pattern, list(range(n))), pattern)


@settings(max_examples=40, deadline=None)
@given(_case())
def test_every_shown_position_maps_back_to_its_unit(case):
    """The grouping's positions are how a clicked row or column finds the tokens it stands for."""
    _, word_of = case
    grouping = grouping_from_word_of_piece(word_of)
    for unit, ps in enumerate(grouping.positions):
        assert all(word_of[p] == unit for p in ps)
    shown = sorted(p for ps in grouping.positions for p in ps)
    assert shown == [i for i, w in enumerate(word_of) if w != HIDDEN]


def test_group_pieces_merges_wordpieces_and_hides_specials():
    tokens = ["[CLS]", "the", "em", "##bed", "##ding", "##s", "rise", ".", "[SEP]"]
    special = [True, False, False, False, False, False, False, False, True]
    g = group_pieces(tokens, hidden=special)
    assert g.labels == ("the", "embeddings", "rise", ".")
    assert g.positions == ((1,), (2, 3, 4, 5), (6,), (7,))
    assert g.word_of_piece == (HIDDEN, 0, 1, 1, 1, 1, 2, 3, HIDDEN)
    assert g.position_label(1) == "2–5: embeddings"
    kept = group_pieces(tokens)
    assert kept.labels[0] == "[CLS]" and kept.labels[-1] == "[SEP]" and kept.n_units == 6
    split = group_pieces(tokens, merge=False, hidden=special)
    assert split.labels == tuple(tokens[1:-1])


def test_a_piece_after_a_hidden_token_starts_its_own_unit():
    g = group_pieces(["[CLS]", "##x", "y"], hidden=[True, False, False])
    assert g.positions == ((1,), (2,)) and g.labels == ("##x", "y")


def test_word_starts():
    assert word_starts(["[CLS]", "play", "##ing", "##", "x"]) == [True, True, False, True, True]


def test_merged_mask_is_masked_only_where_every_cell_is():
    n = 5
    causal = np.triu(np.ones((n, n), dtype=bool), k=1)  # True = masked (future)
    word_of = [0, 1, 1, 2, 2]
    got = merge_mask(causal, word_of)
    expected = np.array([[False, True, True], [False, False, True], [False, False, False]])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "word_of, message",
    [([0, 2], "contiguous"), ([1, 1], "contiguous"), ([0, 1, 0], "contiguous"), ([0, -1, 0], "contiguous"),
     ([-1, -1], "hidden"), ([], "empty")],
)
def test_bad_groupings_are_refused_clearly(word_of, message):
    with pytest.raises(ValueError, match=message):
        grouping_from_word_of_piece(word_of)


def test_shape_mismatch_is_refused_clearly():
    with pytest.raises(ValueError, match="covers 3 positions but the pattern has 4"):
        merge_pieces(np.full((4, 4), 0.25), [0, 1, 2])
    with pytest.raises(ValueError, match="one entry per token"):
        group_pieces(["a", "b"], hidden=[True])
    with pytest.raises(ValueError, match="every token is hidden"):
        group_pieces(["[CLS]"], hidden=[True])
