"""Attention as the attention pages draw it: word pieces merged into words, [CLS]/[SEP] hidden, if asked.

One app-wide choice (sidebar, URL ``pieces=words`` and ``special=hide|renorm``), offered for models
whose tokenizer marks word pieces: WordPiece's ``##`` (MiniLM) or SentencePiece's ``▁`` (e5; where a
word starts is :func:`viz.wordpieces.word_starts`, one rule for every page). Every attention page
gets its patterns through :func:`page_attention`, so merging and hiding happen here only (the
arithmetic is :mod:`viz.wordpieces`): attention *to* a word is the sum over its pieces, attention
*from* a word the mean over its pieces; hidden special tokens lose their rows and columns, and the
remaining rows are renormalised (``special=renorm``) or keep only the weight they put on shown tokens
(``special=hide``). A fixed prefix the model reads before the text (e5's ``query:``) is hidden with
them. Each shown row and column keeps its original positions (:attr:`ShownAttention.queries`), so a
choice made on the drawn matrix maps back to a position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_support.gateway import derived
from app_support.i18n import t
from model.lab.flow import weighted_attention
from model.network.attention_stack import AttentionStack
from model.network.kinds import get_kind
from model.run.analysis import Analysis
from viz.wordpieces import CONTINUATION, Grouping, group_pieces, merge_mask, merge_pieces, word_starts

PIECES_PARAM = "pieces"  # URL parameter and sidebar widget key: True / "words" = merge pieces into words
SPECIAL_PARAM = "special"  # URL parameter and sidebar widget key: one of SPECIALS
SPECIALS = ("show", "hide", "renorm")  # [CLS]/[SEP] shown; hidden as they are; hidden, rows renormalised


@dataclass(frozen=True)
class TokenDisplay:
    """How the attention pages show the tokens of a sentence."""

    merge: bool = False  # word pieces merged into words (to = sum over pieces, from = mean over pieces)
    special: str = "show"  # one of SPECIALS
    marker: str = CONTINUATION  # how the model's tokenizer marks word pieces ("##" or "▁"; word_marker)
    # "weight": the softmax's weights; "norm": weight × ‖value‖, rows renormalised (model/lab/flow.py),
    # a page's own option (single head, all heads, token focus), part of the display so caches keep both
    weighting: str = "weight"

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


def word_marker(tokenizer: object) -> str | None:
    """How ``tokenizer`` marks word pieces (WordPiece's ``##``, SentencePiece's ``▁``), None when it
    does not say: the options are offered for a tokenizer that does."""
    return getattr(tokenizer, "word_marker", None)


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

    # [layer, head, shown_query, shown_key]: an AttentionStack (the model's own tokens: index it, a layer
    # or a head at a time) or an array (one head, merged pieces / hidden specials, kept hook arrays)
    pattern: np.ndarray | AttentionStack
    scores: np.ndarray | AttentionStack | None  # same shape, pre-softmax; None once pieces are merged
    mask: np.ndarray | AttentionStack  # same shape, bool, True where masked (a merged cell: all its cells)
    queries: Grouping  # rows: original positions and text of each shown row
    keys: Grouping  # columns
    query_special: np.ndarray  # [shown_query] bool: the row is a special token or the model's fixed prefix
    key_special: np.ndarray  # [shown_key] bool
    display: TokenDisplay
    any_masked: bool = True  # False: nothing is masked (``mask`` is all False)
    # [shown_query] / [shown_key] bool: the unit is the model's fixed prefix (e5's "query:"), drawn greyed;
    # None: the model reads no prefix
    query_prefix: np.ndarray | None = None
    key_prefix: np.ndarray | None = None

    @property
    def query_tokens(self) -> list[str]:
        return list(self.queries.labels)

    @property
    def key_tokens(self) -> list[str]:
        return list(self.keys.labels)


def _select(x: np.ndarray, keep: list[int], axis: int) -> np.ndarray:
    """``x`` at positions ``keep`` along ``axis``: a view when they are one run."""
    if keep == list(range(keep[0], keep[0] + len(keep))):
        idx: list[object] = [slice(None)] * x.ndim
        idx[axis] = slice(keep[0], keep[0] + len(keep))
        return x[tuple(idx)]
    return np.take(x, keep, axis=axis)


def _grouping(tokens: list[str], special: np.ndarray, prefix: np.ndarray, display: TokenDisplay) -> Grouping:
    """The shown units of one axis: ``special`` tokens and the ``prefix`` hidden if asked, pieces merged
    into words by the one word-start rule (the prefix's own pieces merge as words do: ``▁query`` ``:``)."""
    hidden = special | prefix
    hide = hidden if display.hide and not hidden.all() else np.zeros_like(hidden)
    marker = display.marker
    starts = word_starts(tokens, special.tolist(), marker=marker)
    return group_pieces(tokens, merge=display.merge, hidden=hide.tolist(), starts=starts, marker=marker)


def _side_marks(result: Analysis, side: str) -> tuple[np.ndarray, np.ndarray]:
    """(special, prefix) bool per position of one side: the tokens the model adds, and the fixed text
    it reads before the user's (right after the start token, or first without one; source side only)."""
    special = np.array(result.source_special if side == "source" else result.target_special, dtype=bool)
    prefix = np.zeros_like(special)
    if side == "source":
        start = getattr(result.prepared, "source_prefix_start", 1)
        prefix[start:start + result.prepared.source_prefix] = True
    return special, prefix


def _per_unit(prefix: np.ndarray, grouping: Grouping) -> np.ndarray | None:
    """Whether each shown unit is the fixed prefix (None when there is none): a unit never holds both
    prefix and text, since the text's first piece starts a word."""
    if not prefix.any():
        return None
    return np.array([prefix[list(ps)].all() for ps in grouping.positions], dtype=bool)


def _masked(result: Analysis, kind: str) -> bool:
    # Looked at once per analysis: an encoder on one sentence masks nothing, and at 512 tokens a look
    # over 72 x 512 x 512 scores took 0.1 s of every rerun (a stack answers from its masks' description).
    return derived(result, ("any_masked", get_kind(kind).name), lambda: result.masks_anything(kind))


def _model_attention(result: Analysis, kind: str, heads: tuple[int, int] | None,
                     any_masked: bool) -> tuple[object, object, object]:
    """(pattern, scores, mask) [layer, head, query, key] of the model's own tokens: stacks as they are
    (nothing computed until indexed), arrays of one head with ``heads``, or the kept hook arrays."""
    if heads is not None:
        scores, pattern = result.head_attention(kind, *heads)  # this head alone: [query, key]
        pattern, scores = pattern[None, None], scores[None, None]
        mask = np.isneginf(scores) if any_masked else np.broadcast_to(np.False_, scores.shape)
        return pattern, scores, mask
    pattern, scores = result.attention(kind), result.attention(kind, "scores")
    if isinstance(pattern, AttentionStack):
        return pattern, scores, result.attention(kind, "mask")
    # nothing masked: a read-only all-False view that costs no memory
    mask = np.isneginf(scores) if any_masked else np.broadcast_to(np.False_, scores.shape)
    return pattern, scores, mask


def _per_layer(x: object, fn) -> np.ndarray:
    """``fn`` of each layer of ``x`` stacked: a stack's layers are computed one at a time."""
    return np.stack([fn(np.asarray(x[i])) for i in range(x.shape[0])])


def shown_attention(result: Analysis, kind: str, display: TokenDisplay = AS_TOKENIZED,
                    heads: tuple[int, int] | None = None) -> ShownAttention:
    """Pattern, scores, mask and labels of ``kind`` as drawn under ``display``.

    With the default display this is the model's own pattern, unchanged: for an analysis that keeps
    queries and keys, :class:`~model.network.attention_stack.AttentionStack` s that compute what a page
    indexes (never every head at once). A sentence made only of special tokens keeps them (there would be
    nothing left to show). ``heads=(layer, head)`` computes that one head only (arrays
    ``[1, 1, query, key]``): a page that draws one head does not compute or merge all of them. Merged
    word pieces and hidden specials (MiniLM, at most 512 tokens) are computed layer by layer, as arrays.
    """
    any_masked = _masked(result, kind)
    pattern, scores, mask = _model_attention(result, kind, heads, any_masked)
    if display.weighting == "norm":  # scores belong to the weights: none to show beside the norms
        pattern, scores = weighted_attention(result, kind, pattern, heads), None
    queries, keys = result.tokens_for(kind)
    k = get_kind(kind)
    q_special, q_prefix = _side_marks(result, k.queries)
    k_special, k_prefix = _side_marks(result, k.keys)
    q_group = _grouping(queries, q_special, q_prefix, display)
    k_group = _grouping(keys, k_special, k_prefix, display)
    prefixes = (_per_unit(q_prefix, q_group), _per_unit(k_prefix, k_group))
    q_special, k_special = q_special | q_prefix, k_special | k_prefix
    if q_group.is_identity and k_group.is_identity:
        return ShownAttention(pattern, scores, mask, q_group, k_group, q_special, k_special, display,
                              any_masked, *prefixes)
    q_keep = [ps[0] for ps in q_group.positions]
    k_keep = [ps[0] for ps in k_group.positions]
    shown = _per_layer(pattern, lambda p: merge_pieces(p, q_group, k_group, renormalise=display.renormalise))
    if any_masked:
        mask = _per_layer(mask, lambda m: merge_mask(m, q_group, k_group))
    else:  # nothing masked (an encoder on one sentence): nothing to merge
        mask = np.zeros(shown.shape, dtype=bool)
    kept_scores = None
    # only rows and columns dropped: the kept scores are the model's own (none under weight × ‖value‖)
    if not display.merge and scores is not None:
        kept_scores = _per_layer(scores, lambda s: _select(_select(s, q_keep, -2), k_keep, -1))
    return ShownAttention(shown, kept_scores, mask, q_group, k_group, q_special[q_keep], k_special[k_keep],
                          display, any_masked, *prefixes)


def words_key(key: str, marker: str) -> str:
    """The string key of ``key`` for a tokenizer marking pieces with ``marker``: SentencePiece's words
    (``<s>``, ``</s>``, the prefix, ``▁``) end in ``_sp``, WordPiece's are the plain key."""
    return key if marker == CONTINUATION else f"{key}_sp"


def display_note(display: TokenDisplay) -> str:
    """What the page shows instead of the model's own token × token pattern ("" when it is that)."""
    parts = []
    if display.merge:
        parts.append(t("tokens.note.merged"))
    if display.hide:
        parts.append(t(words_key(f"tokens.note.{display.special}", display.marker)))
    return " ".join(parts)


def page_attention(result: Analysis, kind: str, display: TokenDisplay, *, note: bool = True,
                   heads: tuple[int, int] | None = None) -> ShownAttention:
    """The attention a page draws for ``kind`` (one ``(layer, head)`` only, if given) under the sidebar's
    choice ``display`` (the view's); says which when it is not the model's own token x token pattern."""
    shown = shown_attention(result, kind, display, heads)
    if note and display.active:
        st.caption(display_note(display))
    return shown
