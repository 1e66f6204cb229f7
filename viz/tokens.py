"""Turning user tokens into safe, readable, distinct display labels.

Tokens are user text. Plotly renders a subset of HTML in labels, hover text and
annotations, so every token is HTML-escaped before it reaches a figure.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence

_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

#: Visible stand-ins for whitespace and invisible characters.
_VISIBLE = {
    " ": "␣",
    "\n": "↵",
    "\r": "␍",
    "\t": "⇥",
    "\u00a0": "⍽",
    "\u200b": "∅",
}

EMPTY_TOKEN = "∅"


def escape_text(text: str) -> str:
    """HTML-escape ``text`` for plotly rich text.

    ``<``, ``>`` and ``&`` become entities; quotes become *numeric* entities because
    plotly.js only decodes a handful of named entities (``&quot;`` would show literally).
    """
    return html.escape(text, quote=False).replace('"', "&#34;").replace("'", "&#39;")


def visible_whitespace(token: str) -> str:
    """Replace whitespace/invisible characters by visible symbols; empty becomes ``∅``."""
    if token == "":
        return EMPTY_TOKEN
    return "".join(_VISIBLE.get(ch, ch) for ch in token)


def _truncate(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[: max(1, max_chars - 1)] + "…"


def token_label(token: str, max_chars: int | None = 32) -> str:
    """One display label: whitespace made visible, long tokens shortened, then HTML-escaped."""
    if not isinstance(token, str):
        raise ValueError(f"tokens must be strings, got {type(token).__name__}: {token!r}")
    return escape_text(_truncate(visible_whitespace(token), max_chars))


def token_labels(tokens: Sequence[str], *, unique: bool = True, max_chars: int | None = 32) -> list[str]:
    """Display labels for ``tokens``: HTML-escaped, whitespace visible, optionally unique.

    With ``unique=True`` a label that occurs more than once gets its position appended as a
    subscript (``the₀`` … ``the₄``) so duplicates can be told apart on axes and in hover.
    The returned list always has the same length and order as ``tokens``.
    """
    if isinstance(tokens, str):
        raise ValueError("tokens must be a list of strings, not a single string")
    base = [token_label(t, max_chars) for t in tokens]
    if not unique:
        return base
    counts = Counter(base)
    return [f"{lab}{str(i).translate(_SUBSCRIPT)}" if counts[lab] > 1 else lab for i, lab in enumerate(base)]
