"""The interface language of a Streamlit session, over the string tables of :mod:`strings`.

The text itself (the pages' and the figures' tables, the glossary, the Chinese model messages, the
checks) lives in the Streamlit-free package :mod:`strings`; this module adds what depends on the
session: its language (from the URL, else the browser), :func:`t` and :func:`note`. The names of
:mod:`strings` the app reads are re-exported here, so pages keep importing from one place.
"""

from __future__ import annotations

import re

from model.core.messages import Message
from strings import DEFAULT_LANG, LANGS, MESSAGES, ORIGIN, STRINGS, message_text, text

__all__ = [
    "DEFAULT_LANG", "LANGS", "LANG_KEY", "LANG_LABELS", "MESSAGES", "ORIGIN", "STRINGS", "current_lang",
    "direction_label", "message_text", "note", "preferred_lang", "t", "text", "valid_lang",
]

#: How each language names itself in the switch.
LANG_LABELS = {"en": "English", "zh": "简体中文"}
#: Session-state key (and URL parameter) holding the interface language.
LANG_KEY = "lang"


def valid_lang(value: object) -> str | None:
    return value if isinstance(value, str) and value in LANGS else None


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


def direction_label(lang: str, direction: str) -> str:
    """The direction's own words ("中文 → English"), or its two language codes ("en → de") for a direction of
    a foreign translation model that the string tables do not name."""
    try:
        return text(lang, f"direction.{direction}")
    except KeyError:
        source, _, target = direction.partition("->")
        return text(lang, "direction.codes", a=source, b=target)


def note(message: Message) -> str:
    """A message from model/ in the session's language."""
    return message_text(current_lang(), message)
