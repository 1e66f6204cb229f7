"""Words drawn inside figures (titles, axis titles, legends, hover text), per interface language.

viz stays pure: every figure function takes ``lang`` ("en" or "zh") and looks its words up here.
Tokens of the model are data and are never translated. Keys and placeholders are the same in
both tables (tested), and the Chinese words follow the app's glossary
(``app_support/i18n/glossary.py``).
"""

from __future__ import annotations

LANGS = ("en", "zh")

TEXT: dict[str, dict[str, str]] = {
    "en": {},
    "zh": {},
}


def label(lang: str, key: str, **params: object) -> str:
    """The figure word ``key`` in ``lang`` (English for an unknown language), formatted with params."""
    table = TEXT.get(lang, TEXT["en"])
    template = table[key] if key in table else TEXT["en"][key]
    return template.format(**params) if params else template
