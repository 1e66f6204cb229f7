"""Reading figures in tests: a title as written, before viz wrapped it to the figure's width."""

from __future__ import annotations

from viz.theme import plain_title


def title_of(fig) -> str:
    """``fig``'s title text with the line breaks :func:`viz.theme.wrap_title` added taken out."""
    return plain_title(fig.layout.title.text or "")
