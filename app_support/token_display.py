"""Attention as the attention pages draw it: word pieces merged into words, [CLS]/[SEP] hidden, if asked.

One app-wide choice (sidebar, URL ``pieces=words`` and ``special=hide|renorm``), offered for models
whose tokenizer cuts words into WordPiece pieces (MiniLM). Every attention page gets its patterns
through :func:`page_attention`, so merging and hiding happen here only (the arithmetic is
:mod:`viz.wordpieces`): attention *to* a word is the sum over its pieces, attention *from* a word
the mean over its pieces; hidden special tokens lose their rows and columns, and the remaining rows
are renormalised (``special=renorm``) or keep only the weight they put on shown tokens
(``special=hide``). Each shown row and column keeps its original positions
(:attr:`ShownAttention.queries`), so a choice made on the drawn matrix maps back to a position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_support.i18n import t
from model.analysis import Analysis
from model.data.tokenizers import WordPieceTokenizer, word_starts
from viz.wordpieces import Grouping, group_pieces, merge_mask, merge_pieces

PIECES_PARAM = "pieces"  # URL parameter and sidebar widget key: True / "words" = merge pieces into words
SPECIAL_PARAM = "special"  # URL parameter and sidebar widget key: one of SPECIALS
SPECIALS = ("show", "hide", "renorm")  # [CLS]/[SEP] shown; hidden as they are; hidden, rows renormalised


@dataclass(frozen=True)
class TokenDisplay:
    """How the attention pages show the tokens of a sentence."""

    merge: bool = False  # word pieces merged into words (to = sum over pieces, from = mean over pieces)
    special: str = "show"  # one of SPECIALS

    @property
    def hide(self) -> bool:
        return self.special != "show"

    @property
    def renormalise(self) -> bool:
        return self.special == "renorm"

    @property
    def active(self) -> bool:
        return self.merge or self.hide


AS_TOKENIZED = TokenDisplay()


def has_word_pieces(tokenizer: object) -> bool:
    """True for a tokenizer that marks word pieces (WordPiece's ``##``): the option is offered then."""
    return isinstance(tokenizer, WordPieceTokenizer)


def display_from_url(pieces: str | None, special: str | None) -> TokenDisplay:
    """The choice a link holds (unknown values fall back to the tokens as they are)."""
    return TokenDisplay(merge=pieces == "words", special=special if special in SPECIALS else "show")


def url_params(display: TokenDisplay) -> dict[str, str]:
    """The URL parameters of a choice (none for the default)."""
    out = {}
    if display.merge:
        out[PIECES_PARAM] = "words"
    if display.hide:
        out[SPECIAL_PARAM] = display.special
    return out


@dataclass(frozen=True)
class ShownAttention:
    """One attention kind of one analysis, as drawn: every array over shown rows and columns."""

    pattern: np.ndarray  # [layer, head, shown_query, shown_key]
    scores: np.ndarray | None  # same shape, pre-softmax; None once pieces are merged (scores do not add up)
    mask: np.ndarray  # same shape, bool, True where masked (a merged cell: where all its cells are)
    queries: Grouping  # rows: original positions and text of each shown row
    keys: Grouping  # columns
    query_special: np.ndarray  # [shown_query] bool: the row is a special token
    key_special: np.ndarray  # [shown_key] bool
    display: TokenDisplay

    @property
    def query_tokens(self) -> list[str]:
        return list(self.queries.labels)

    @property
    def key_tokens(self) -> list[str]:
        return list(self.keys.labels)

    def query_unit(self, position: int) -> int | None:
        """The shown row that holds original query ``position`` (None if hidden or out of range)."""
        return _unit(self.queries, position)


def _unit(grouping: Grouping, position: int) -> int | None:
    if not 0 <= position < grouping.n_positions:
        return None
    unit = grouping.word_of_piece[position]
    return None if unit < 0 else unit


def _grouping(tokens: list[str], special: np.ndarray, display: TokenDisplay) -> Grouping:
    hide = special if display.hide and not special.all() else np.zeros_like(special)
    # a special token is a unit of its own: it neither joins a word nor takes the piece after it
    after_special = np.concatenate([[False], special[:-1]])
    starts = np.array(word_starts(tokens)) | special | after_special
    return group_pieces(tokens, merge=display.merge, hidden=hide.tolist(), starts=starts.tolist())


def shown_attention(result: Analysis, kind: str, display: TokenDisplay = AS_TOKENIZED) -> ShownAttention:
    """Pattern, scores, mask and labels of ``kind`` as drawn under ``display``.

    With the default display this is the model's own pattern, unchanged. A sentence made only of
    special tokens keeps them (there would be nothing left to show).
    """
    ka = result.kind_attention(kind)
    q_group = _grouping(ka.query_tokens, ka.query_special, display)
    k_group = _grouping(ka.key_tokens, ka.key_special, display)
    if q_group.is_identity and k_group.is_identity:
        return ShownAttention(ka.pattern, ka.scores, ka.mask, q_group, k_group, ka.query_special,
                              ka.key_special, display)
    q_keep = [ps[0] for ps in q_group.positions]
    k_keep = [ps[0] for ps in k_group.positions]
    pattern = merge_pieces(ka.pattern, q_group, k_group, renormalise=display.renormalise)
    mask = merge_mask(ka.mask, q_group, k_group)
    scores = None
    if not display.merge:  # only rows and columns dropped: the kept scores are the model's own
        scores = ka.scores[..., q_keep, :][..., k_keep]
    return ShownAttention(pattern, scores, mask, q_group, k_group, ka.query_special[q_keep],
                          ka.key_special[k_keep], display)


def current_display() -> TokenDisplay:
    """The sidebar's choice in this run (the tokens as they are when it offers none)."""
    from app_support.sidebar import current_view

    return current_view().display


def display_note(display: TokenDisplay) -> str:
    """What the page shows instead of the model's own token × token pattern ("" when it is that)."""
    parts = []
    if display.merge:
        parts.append(t("tokens.note.merged"))
    if display.hide:
        parts.append(t(f"tokens.note.{display.special}"))
    return " ".join(parts)


def page_attention(result: Analysis, kind: str, *, note: bool = True) -> ShownAttention:
    """The attention a page draws for ``kind``, under the sidebar's choice; says which when not plain."""
    display = current_display()
    shown = shown_attention(result, kind, display)
    if note and display.active:
        st.caption(display_note(display))
    return shown
