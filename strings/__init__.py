"""Every piece of text the app and its figures show, in English and Simplified Chinese.

One system of hand-written tables: the pages' text in ``strings/pages/`` (one module per page, and
one per area several pages share) and the figures' words in ``strings/figures/`` (one module per
figure family); each module defines an ``EN`` and a ``ZH`` dict. Keys are dotted names
(``page.single.title``); values are ``str.format`` templates with named placeholders. A key is
defined in one module only (merging raises otherwise), so a page and a figure that show the same
words share its key, and two different texts never hide behind one key.

Messages made in ``model/`` (codes with parameters) are worded by :data:`MESSAGES`. Technical terms
follow :mod:`strings.glossary`, one Chinese word per concept; :mod:`strings.check` holds the checks
the tests run over every table. Model tokens are never translated.

Pure Python: nothing here imports streamlit, plotly, torch, viz or app_support, so the app
(``app_support.i18n``) and the figures (``viz.labels``) both read it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import ModuleType

from model.core.messages import ENGLISH as MESSAGES_EN
from model.core.messages import Message, render
from strings import figures, pages
from strings.messages_zh import MESSAGES_ZH

LANGS: tuple[str, ...] = ("en", "zh")
#: The language every table is written from, and the one a figure falls back to.
DEFAULT_LANG = "en"


def table_modules() -> list[tuple[str, ModuleType]]:
    """(name, module) of every table module, the pages' then the figures' (``pages.masks``...)."""
    found = []
    for package in (pages, figures):
        group = package.__name__.rpartition(".")[2]
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            found.append((f"{group}.{info.name}", importlib.import_module(f"{package.__name__}.{info.name}")))
    return found


def merge_tables(
    modules: Iterable[tuple[str, ModuleType]],
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(language -> key -> template, key -> the module defining it) over ``modules``.

    A key defined in two modules is an error that names both: one place per text.
    """
    merged: dict[str, dict[str, str]] = {lang: {} for lang in LANGS}
    origin: dict[str, str] = {}
    for name, module in modules:
        for lang in LANGS:
            for key, value in getattr(module, lang.upper()).items():
                if key in merged[lang]:
                    raise ValueError(f"text key {key!r} is defined in both {origin[key]} and {name}")
                merged[lang][key] = value
                origin[key] = name
    return merged, origin


STRINGS, ORIGIN = merge_tables(table_modules())
MESSAGES: dict[str, Mapping[str, str]] = {"en": MESSAGES_EN, "zh": MESSAGES_ZH}


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
