"""Matching the tokens of two sentences: which positions hold the same token (as a multiset, in
order), which tokens both share, and which shared token stands for a word."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

import numpy as np

from viz._validate import check_tokens


def align_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of positions whose tokens are equal, matched as a multiset in order.

    The n-th occurrence of a token in A is paired with its n-th occurrence in B; tokens
    without a partner are left out. Pairs are in A's order.
    """
    positions_b: dict[str, list[int]] = defaultdict(list)
    for j, t in enumerate(tokens_b):
        positions_b[t].append(j)
    seen: dict[str, int] = defaultdict(int)
    pairs: list[tuple[int, int]] = []
    for i, t in enumerate(tokens_a):
        n = seen[t]
        seen[t] += 1
        if n < len(positions_b[t]):
            pairs.append((i, positions_b[t][n]))
    return pairs


def shared_tokens(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> list[str]:
    """Tokens present in both sequences, in A's order, each once."""
    out: list[str] = []
    for i, _ in align_tokens(tokens_a, tokens_b):
        if tokens_a[i] not in out:
            out.append(tokens_a[i])
    return out


def pick_shared_token(shared: Sequence[str], word: str, special: Collection[str] = ()) -> str:
    """The shared token that best stands for ``word`` (e.g. a preset's 苹果 or "bank").

    In order: the token itself; a token equal to the word once the "▁" word marker and case are
    ignored; a token containing the word; the first piece of a word the tokenizer split
    (苹果 -> 苹 果); else the first shared token that is not special. Raises ValueError if
    nothing is shared.
    """
    if not shared:
        raise ValueError("the two sentences share no token")
    word = (word or "").strip()
    if word:
        if word in shared:
            return word
        for t in shared:
            if t.replace("▁", "").strip().lower() == word.lower():
                return t
        for t in shared:
            if word.lower() in t.lower():
                return t
        for t in shared:
            piece = t.replace("▁", "").strip()
            if piece and piece in word and t not in special:
                return t
    content = [t for t in shared if t not in special]
    return content[0] if content else shared[0]


def find_query(tokens: Sequence[str], token: str, occurrence: int, which: str) -> int:
    """Position of the ``occurrence``-th ``token`` among the query ``tokens`` of sentence ``which``."""
    hits = [i for i, t in enumerate(tokens) if t == token]
    if not hits:
        raise ValueError(f"token {token!r} does not occur in the {which} query tokens")
    if not 0 <= occurrence < len(hits):
        raise ValueError(
            f"token {token!r} occurs {len(hits)} time(s) in {which}; occurrence={occurrence} is out of range"
        )
    return hits[occurrence]


def query_key_tokens(
    arr: np.ndarray, tokens: Sequence[str], key_tokens: Sequence[str] | None, array_name: str, side: str
) -> tuple[list[str], list[str]]:
    """Checked (query tokens, key tokens) of one sentence's pattern; its last two axes are query, key.

    Key tokens default to the query tokens (self-attention)."""
    queries = check_tokens(
        tokens,
        arr.shape[-2],
        array_name=array_name,
        axis_name="query rows",
        token_name=f"tokens_{side.lower()}",
    )
    keys = check_tokens(
        queries if key_tokens is None else key_tokens,
        arr.shape[-1],
        array_name=array_name,
        axis_name="key columns",
        token_name=f"key tokens of {side}",
    )
    return queries, keys
