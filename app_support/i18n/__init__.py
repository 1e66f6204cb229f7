"""The interface in more than one language: English and Simplified Chinese.

Every piece of interface text comes from per-language string tables written by hand
(``app_support/i18n/tables/``, one module per area of the app, each with an ``EN`` and a ``ZH``
dict). Keys are dotted names (``page.single.title``); values are ``str.format`` templates with
named placeholders. Messages made in ``model/`` (codes with parameters) are worded by
:data:`MESSAGES`. Technical terms follow :mod:`app_support.i18n.glossary`, one Chinese word per
concept. Model tokens are never translated.

:func:`text` is pure (language given); :func:`t` reads the session's language.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping

from app_support.i18n import tables as _tables_pkg
from app_support.i18n.messages_zh import MESSAGES_ZH
from model.messages import ENGLISH as MESSAGES_EN
from model.messages import Message, render

LANGS: tuple[str, ...] = ("en", "zh")
DEFAULT_LANG = "en"
#: How each language names itself in the switch.
LANG_LABELS = {"en": "English", "zh": "简体中文"}
#: Session-state key (and URL parameter) holding the interface language.
LANG_KEY = "lang"


def _load_tables() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Merge every table module; a key defined twice is an error (one place per text)."""
    merged: dict[str, dict[str, str]] = {lang: {} for lang in LANGS}
    origin: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(_tables_pkg.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{_tables_pkg.__name__}.{info.name}")
        for lang in LANGS:
            table = getattr(module, lang.upper())
            for key, value in table.items():
                if key in merged[lang]:
                    raise ValueError(f"text key {key!r} is defined in both {origin[key]} and {info.name}")
                merged[lang][key] = value
                origin[key] = info.name
    return merged, origin


STRINGS, ORIGIN = _load_tables()
MESSAGES: dict[str, Mapping[str, str]] = {"en": MESSAGES_EN, "zh": MESSAGES_ZH}


def valid_lang(value: object) -> str | None:
    return value if isinstance(value, str) and value in LANGS else None


def text(lang: str, key: str, **params: object) -> str:
    """The text of ``key`` in ``lang``, formatted with ``params``; KeyError for an unknown key."""
    try:
        template = STRINGS[lang][key]
    except KeyError:
        raise KeyError(f"no {lang} text for {key!r}") from None
    return template.format(**params) if params else template


def message_text(lang: str, message: Message) -> str:
    """A message from model/ worded in ``lang``."""
    return render(message, MESSAGES[lang])


_ACCEPT_PART = re.compile(r"\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*")


def preferred_lang(locale: str | None = None, accept_language: str | None = None) -> str:
    """The interface language a browser prefers: Chinese if it asks for any ``zh`` first, else English.

    ``locale`` is the browser's own language (e.g. ``st.context.locale``, "zh-CN"); failing that the
    Accept-Language header ("zh-CN,zh;q=0.9,en;q=0.8") is read by quality. Anything unreadable
    falls back to English.
    """
    if isinstance(locale, str) and locale.strip():
        return "zh" if locale.strip().lower().startswith("zh") else DEFAULT_LANG
    if not isinstance(accept_language, str):
        return DEFAULT_LANG
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate(accept_language.split(",")[:32]):
        m = _ACCEPT_PART.fullmatch(part)
        if not m:
            continue
        try:
            q = float(m.group(2)) if m.group(2) else 1.0
        except ValueError:
            continue
        ranked.append((-q, i, m.group(1).lower()))
    for _, _, tag in sorted(ranked):
        primary = tag.split("-")[0]
        if primary == "zh":
            return "zh"
        if primary in ("en", "*"):
            return DEFAULT_LANG
    return DEFAULT_LANG


def current_lang() -> str:
    """The interface language of this session (set by the sidebar from the URL or the browser)."""
    import streamlit as st

    return valid_lang(st.session_state.get(LANG_KEY)) or DEFAULT_LANG


def t(key: str, **params: object) -> str:
    """The text of ``key`` in the session's language."""
    return text(current_lang(), key, **params)


def note(message: Message) -> str:
    """A message from model/ in the session's language."""
    return message_text(current_lang(), message)
