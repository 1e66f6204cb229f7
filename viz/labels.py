"""Words drawn inside figures (titles, axis titles, legends, hover text), per interface language.

viz stays pure: every figure function takes ``lang`` ("en" or "zh") and looks its words up with
:func:`label`. The words live in the app's one string system, :mod:`strings` (the figures' tables
in ``strings/figures/``, one module per figure family; the Chinese follows ``strings/glossary.py``).
Tokens of the model and plotly placeholders such as ``%{z:.3f}`` are passed in as parameters,
never written into a template.
"""

from __future__ import annotations

from strings import LANGS
from strings import STRINGS as TEXT

__all__ = ["LANGS", "TEXT", "label"]


def label(lang: str, key: str, /, **params: object) -> str:
    """The figure word ``key`` in ``lang`` (English for an unknown language), formatted with params.

    Every template is formatted (also without params), so a template never holds a literal brace;
    pass plotly placeholders and tokens as params.
    """
    table = TEXT.get(lang, TEXT["en"])
    template = table[key] if key in table else TEXT["en"][key]
    return template.format(**params)
