"""Attention between words instead of word pieces, and without the special tokens.

A WordPiece tokenizer cuts "embeddings" into ``em ##bed ##ding ##s``, a SentencePiece one (e5) into
``▁`` ``embe`` ``dding`` ``s``, and a byte-level BPE one cuts 苹 into three tokens shown as
``苹 1/3 … 苹 3/3`` (model/data/byte_tokens.py). Where a word starts is :func:`word_starts`, the one
rule every page uses. To read attention per word or character, the pieces of each are merged along
both axes of a pattern ``[..., query, key]``:

* attention **to** a word (a column) is the **sum** over its pieces: the weight a query puts on the
  word, so a row that summed to 1 still sums to 1;
* attention **from** a word (a row) is the **mean** over its pieces: the average distribution of the
  word's pieces, again summing to 1.

Special tokens ([CLS], [SEP]) can be hidden: their rows and columns are dropped. The remaining rows
then sum to less than 1 (the weight that went to the hidden keys is gone) unless ``renormalise`` is
set, which divides each piece's row by the weight it keeps *before* pieces are averaged, so every
shown row sums to 1 again.

A grouping is given as ``word_of_piece``: for each position, the index of the shown unit (word) it
belongs to, or ``-1`` to hide it. Units must be contiguous runs of positions numbered 0, 1, 2, ...
in order (word pieces of one word are always adjacent). Every shown row and column keeps the
positions it came from (:attr:`Grouping.positions`), so a click or a label can be mapped back.

Pure numpy: no torch, no streamlit.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.data.byte_tokens import group_text, part_of
from viz._validate import as_array, check_tokens

HIDDEN = -1  # word_of_piece value of a position that is not shown
CONTINUATION = "##"  # WordPiece's mark of a piece that continues the previous one
METASPACE = "\u2581"  # SentencePiece's mark of a piece that begins a word (it stands for the space)


@dataclass(frozen=True)
class Grouping:
    """How one axis of a pattern is shown: which positions make each shown row or column."""

    word_of_piece: tuple[int, ...]  # [position] the shown unit each position belongs to, -1 = hidden
    positions: tuple[tuple[int, ...], ...]  # [unit] the original positions of each unit, ascending
    labels: tuple[str, ...]  # [unit] the unit's text (pieces joined, "##" dropped from continuations)

    @property
    def n_units(self) -> int:
        return len(self.positions)

    @property
    def n_positions(self) -> int:
        return len(self.word_of_piece)

    @property
    def is_identity(self) -> bool:
        """True when every position is shown on its own (nothing merged, nothing hidden)."""
        return self.word_of_piece == tuple(range(self.n_positions))

    def position_label(self, unit: int) -> str:
        """``"3: bank"`` or ``"4–5: interest"``: the unit's original positions and its text."""
        ps = self.positions[unit]
        where = str(ps[0]) if len(ps) == 1 else f"{ps[0]}–{ps[-1]}"
        return f"{where}: {self.labels[unit]}"


#: Scripts written without spaces between words (Han as BERT's tokenizer counts it, kana, Thai, Lao,
#: Myanmar, Khmer): SentencePiece puts no ``▁`` inside a run of them, so a whole clause would be one
#: "word" (``▁我 喜欢 吃 苹果``). A piece of these scripts is a unit of its own instead: the vocabulary's
#: pieces there are mostly words (喜欢, 苹果), and MiniLM splits Chinese at least as finely.
UNSPACED = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x3400, 0x4DBF),
            (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))


def _stands_alone(ch: str) -> bool:
    """A character that is never inside a word: punctuation (Unicode's, or ASCII's non-alphanumeric
    signs, as BERT's tokenizer splits them off) or a character of an unspaced script."""
    c = ord(ch)
    if 33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126:
        return True
    return unicodedata.category(ch).startswith("P") or any(a <= c <= b for a, b in UNSPACED)


def _metaspace_start(token: str, previous: str) -> bool:
    if previous == METASPACE:  # a lone space mark belongs to the word after it
        return False
    if token.startswith(METASPACE):
        return True
    return _stands_alone(token[:1] or " ") or _stands_alone(previous[-1:] or " ")


def word_starts(
    tokens: Sequence[str], special: Sequence[bool] | None = None, *, marker: str = CONTINUATION
) -> list[bool]:
    """True where a token begins a unit (a word) that merging pieces keeps together.

    ``marker`` is how the tokenizer marks word pieces. WordPiece (``"##"``, MiniLM): every token
    starts a word except a ``##`` continuation piece and a byte group's later parts (``苹 2/3``).
    SentencePiece (``"▁"``, e5): a piece starting with ``▁`` starts a word, one without it continues
    the word before (``▁que`` ``ry`` → ``▁query``), except that punctuation and a piece of a script
    written without spaces (:data:`UNSPACED`: ``▁我`` ``喜欢`` ``吃`` ``苹果`` are four units) start a
    unit and end it; a lone ``▁`` joins the piece after it (``▁`` ``苹果`` → ``▁苹果``).
    A ``special`` token (``[CLS]``, ``<s>``) is a unit of its own under either marker: it starts
    one and the token after it starts the next.
    """
    tokens = list(tokens)
    if marker == METASPACE:
        starts = [i == 0 or _metaspace_start(t, tokens[i - 1]) for i, t in enumerate(tokens)]
    elif marker == CONTINUATION:
        starts = [(not t.startswith(CONTINUATION) or len(t) == len(CONTINUATION))
                  and (part_of(t) or (1,))[0] == 1 for t in tokens]
    else:
        raise ValueError(f"marker must be {CONTINUATION!r} or {METASPACE!r}, got {marker!r}")
    if special is not None:
        special = [bool(x) for x in special]
        if len(special) != len(tokens):
            raise ValueError(f"special ({len(special)}) must have one entry per token ({len(tokens)})")
        starts = [s or special[i] or (i > 0 and special[i - 1]) for i, s in enumerate(starts)]
    return starts


def _joined(label: str, piece: str, marker: str = CONTINUATION) -> str:
    """A unit's label with one more piece: a ``##`` piece's text appended (a SentencePiece piece's
    whole text: its unit keeps the leading ``▁`` the tokens are shown with); a byte group's later
    part adds nothing (its first part's label, the group's text, already holds the character)."""
    if marker == METASPACE:
        return label + piece
    if part_of(piece) is not None:
        return group_text(label)
    return label + piece.removeprefix(CONTINUATION)


def group_pieces(
    tokens: Sequence[str],
    *,
    merge: bool = True,
    hidden: Sequence[bool] | None = None,
    starts: Sequence[bool] | None = None,
    marker: str = CONTINUATION,
) -> Grouping:
    """The grouping of ``tokens``: word pieces merged into words (``merge``), ``hidden`` ones dropped.

    ``starts`` (default :func:`word_starts` under ``marker``) says where a word begins; a hidden token
    always ends the word before it, and a continuation piece right after a hidden token starts a word
    of its own. A continuation piece at the very start also starts a word.
    """
    tokens = check_tokens(tokens, len(list(tokens)), array_name="tokens", axis_name="positions",
                          token_name="tokens")
    n = len(tokens)
    if n == 0:
        raise ValueError("tokens must not be empty")
    hide = [False] * n if hidden is None else [bool(h) for h in hidden]
    begin = word_starts(tokens, marker=marker) if starts is None else [bool(s) for s in starts]
    if len(hide) != n or len(begin) != n:
        raise ValueError(
            f"hidden ({len(hide)}) and starts ({len(begin)}) must have one entry per token ({n})"
        )
    word_of: list[int] = []
    positions: list[list[int]] = []
    labels: list[str] = []
    prev_shown = False
    for i, tok in enumerate(tokens):
        if hide[i]:
            word_of.append(HIDDEN)
            prev_shown = False
            continue
        if merge and prev_shown and not begin[i]:
            positions[-1].append(i)
            labels[-1] = _joined(labels[-1], tok, marker)
        else:
            positions.append([i])
            labels.append(tok)
        word_of.append(len(positions) - 1)
        prev_shown = True
    if not positions:
        raise ValueError("every token is hidden: nothing would be shown")
    return Grouping(tuple(word_of), tuple(tuple(p) for p in positions), tuple(labels))


def grouping_from_word_of_piece(
    word_of_piece: Sequence[int], tokens: Sequence[str] | None = None
) -> Grouping:
    """A :class:`Grouping` from explicit unit indices (``-1`` hidden); checks they are contiguous runs.

    Labels join the tokens of each unit (``"##"`` dropped from pieces after the first), or are the
    unit numbers when no tokens are given.
    """
    try:
        ids = [int(w) for w in word_of_piece]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"word_of_piece must be integers, got {word_of_piece!r}") from exc
    if not ids:
        raise ValueError("word_of_piece must not be empty")
    if tokens is not None:
        tokens = check_tokens(tokens, len(ids), array_name="word_of_piece", axis_name="positions",
                              token_name="tokens")
    positions: list[list[int]] = []
    last = HIDDEN
    for i, w in enumerate(ids):
        if w == HIDDEN:
            last = HIDDEN
            continue
        if w == len(positions) - 1 and last == w:
            positions[-1].append(i)
        elif w == len(positions):
            positions.append([i])
        else:
            raise ValueError(
                f"word_of_piece must number shown units 0, 1, 2, ... as contiguous runs (-1 = hidden); "
                f"position {i} has {w} after {last}"
            )
        last = w
    if not positions:
        raise ValueError("every position is hidden: nothing would be shown")
    if tokens is None:
        labels = [str(u) for u in range(len(positions))]
    else:
        labels = [tokens[ps[0]] + "".join(tokens[p].removeprefix(CONTINUATION) for p in ps[1:])
                  for ps in positions]
    return Grouping(tuple(ids), tuple(tuple(p) for p in positions), tuple(labels))


def _as_grouping(g: Grouping | Sequence[int], n: int, axis: str) -> Grouping:
    grouping = g if isinstance(g, Grouping) else grouping_from_word_of_piece(g)
    if grouping.n_positions != n:
        raise ValueError(
            f"the {axis} grouping covers {grouping.n_positions} positions but the pattern has {n}"
        )
    return grouping


def _index(ndim: int, axis: int, where: object) -> tuple:
    idx: list[object] = [slice(None)] * ndim
    idx[axis] = where
    return tuple(idx)


def _reduce(x: np.ndarray, grouping: Grouping, axis: int, how: str) -> np.ndarray:
    """Sum (``"sum"``), mean (``"mean"``) or logical or (``"any"``) of ``x`` over each unit's positions
    along ``axis``; hidden positions are dropped.

    The shown positions are selected first (a view when they are one run, as with [CLS] ... [SEP]
    hidden); when every unit is one position that is all, otherwise one ``reduceat`` over the units'
    runs. (A matrix product was as fast on one thread but many times slower when BLAS threads compete
    for a busy machine's cores.)
    """
    positions = grouping.positions
    keep = [p for ps in positions for p in ps]  # shown positions, units in order
    if keep == list(range(keep[0], keep[0] + len(keep))):
        shown = x[_index(x.ndim, axis, slice(keep[0], keep[0] + len(keep)))]
    else:
        shown = np.take(x, keep, axis=axis)
    if len(keep) == len(positions):
        return shown
    starts = np.cumsum([0] + [len(ps) for ps in positions[:-1]])
    if how == "any":
        return np.logical_or.reduceat(shown, starts, axis=axis)
    out = np.add.reduceat(shown, starts, axis=axis)
    if how == "mean":
        shape = [1] * x.ndim
        shape[axis] = len(positions)
        out /= np.array([len(ps) for ps in positions], dtype=out.dtype).reshape(shape)
    return out


def merge_pieces(
    patterns: np.ndarray,
    word_of_piece: Grouping | Sequence[int],
    key_word_of_piece: Grouping | Sequence[int] | None = None,
    *,
    renormalise: bool = False,
) -> np.ndarray:
    """Attention between shown units: ``[..., query, key]`` -> ``[..., query_units, key_units]``.

    Columns (attention *to* a unit) are summed over the unit's pieces, rows (attention *from* a
    unit) averaged over them; positions with unit ``-1`` are dropped. ``key_word_of_piece``
    (default: the same as the queries, as for self-attention) groups the keys. ``renormalise``
    divides each original row by the weight it keeps on the shown keys before the rows are averaged
    (a row that keeps no weight stays 0), so every shown row of a softmax pattern sums to 1.
    """
    p = as_array(patterns, (2, 3, 4), "patterns")
    q_group = _as_grouping(word_of_piece, p.shape[-2], "query")
    k_group = _as_grouping(word_of_piece if key_word_of_piece is None else key_word_of_piece,
                           p.shape[-1], "key")
    cols = _reduce(p, k_group, p.ndim - 1, "sum")  # [..., query, key_units]
    if renormalise:
        kept = cols.sum(axis=-1, keepdims=True)  # [..., query, 1]
        cols = np.divide(cols, kept, out=np.zeros_like(cols), where=kept > 0)
    return _reduce(cols, q_group, p.ndim - 2, "mean").astype(np.float32)  # [..., query_units, key_units]


def merge_mask(
    mask: np.ndarray,
    word_of_piece: Grouping | Sequence[int],
    key_word_of_piece: Grouping | Sequence[int] | None = None,
) -> np.ndarray:
    """A merged cell is masked (True) only when every cell it is made of is masked."""
    m = np.asarray(mask)
    if m.dtype != bool or m.ndim < 2:
        raise ValueError(f"mask must be a boolean array [..., query, key], got {m.dtype} of shape {m.shape}")
    q_group = _as_grouping(word_of_piece, m.shape[-2], "query")
    k_group = _as_grouping(word_of_piece if key_word_of_piece is None else key_word_of_piece,
                           m.shape[-1], "key")
    open_ = _reduce(_reduce(~m, k_group, m.ndim - 1, "any"), q_group, m.ndim - 2, "any")
    return ~open_
