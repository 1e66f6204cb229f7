"""Which part of a long attention pattern the single-head page draws (pure, no Streamlit).

A heatmap of a few hundred pixels cannot show every cell of a 512-token sentence, so above
:data:`WINDOW_FROM` positions on an axis the page draws a window of it, chosen by a range
slider and kept in the URL as ``first-last`` (inclusive, like the slider). Anything a link
holds is read by :func:`window_from_url`, which never raises: a hostile or stale link (another
sentence, another length) gives a window inside the pattern, never an error.
"""

from __future__ import annotations

import re

from viz.pooling import MAX_TILE_CELLS

#: Axes longer than this get a window; its default is their first WINDOW_FROM positions.
WINDOW_FROM = MAX_TILE_CELLS

_SPAN = re.compile(r"([0-9]{1,9})-([0-9]{1,9})")


def needs_window(n: int) -> bool:
    """Whether an axis of ``n`` positions is drawn through a window."""
    return n > WINDOW_FROM


def default_window(n: int) -> tuple[int, int]:
    """``(first, last)`` inclusive: the first :data:`WINDOW_FROM` positions (all when fewer)."""
    return 0, max(0, min(n, WINDOW_FROM) - 1)


def clamp_window(span: object, n: int) -> tuple[int, int]:
    """``span`` as ``(first, last)`` inside ``0..n-1`` (swapped if reversed, cut at the ends);
    the default window when it is no pair of whole numbers or lies wholly past the end."""
    try:
        first, last = (int(v) for v in span)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return default_window(n)
    if n < 1:
        return 0, 0
    first, last = sorted((first, last))
    if first > n - 1:  # wholly past the end (a longer sentence's window): start again
        return default_window(n)
    return max(first, 0), min(max(last, 0), n - 1)


def window_from_url(raw: object, n: int) -> tuple[int, int]:
    """The window a link's ``first-last`` asks for, clamped to ``n`` positions; else the default.

    Only ASCII digits count (as in :func:`app_support.url_state.url_int`); a negative or
    non-numeric value, a missing dash or extra text give the default window.
    """
    if not isinstance(raw, str):
        return default_window(n)
    match = _SPAN.fullmatch(raw.strip())
    if match is None:
        return default_window(n)
    return clamp_window((int(match[1]), int(match[2])), n)


def window_to_url(span: tuple[int, int]) -> str:
    """``(first, last)`` as the URL writes it: ``"first-last"``."""
    return f"{span[0]}-{span[1]}"


def as_range(span: tuple[int, int]) -> tuple[int, int]:
    """Inclusive ``(first, last)`` as the ``(start, stop)`` of ``viz.attention_heatmap``."""
    return span[0], span[1] + 1
