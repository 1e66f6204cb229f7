"""Shareable URL state: every choice of the view lives in the address bar.

The sidebar's choices (app-wide parameters, read and set by :mod:`app_support.view`) and the open
page's own choices are written into the query string once per run by :func:`sync_url`; a fresh session
reads them back, so a copied link reproduces the view. Which parameters exist is declared in
:mod:`app_support.pages`; a page that sets an undeclared one is recorded (and the page tests fail),
because it would silently drop out of the link.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import streamlit as st

from app_support import pages
from app_support.i18n import t
from app_support.models import MAX_INPUT_CHARS

_APP = "_url_app_params"  # app-wide parameters of this run (set by app_support.view)
_PAGE = "_url_page_params"  # the open page's own parameters of this run
_PATH = "_url_page_path"  # url_path of the open page
UNDECLARED = "_url_undeclared"  # (page, parameter) pairs a page tried to set without declaring them

_ASCII_INT = re.compile(r"[+-]?[0-9]{1,9}")


def url_int(value: object, lo: int | None = None, hi: int | None = None) -> int | None:
    """A whole number from a URL parameter, or None; never raises.

    Only ASCII digits count: ``str.isdigit`` accepts "²" and "①", which ``int`` rejects, and
    ``int`` accepts Arabic-Indic digits, which no link of ours contains. ``lo``/``hi`` bound it
    (inclusive); a value outside is None, so the caller's default applies.
    """
    if not isinstance(value, str) or not _ASCII_INT.fullmatch(value.strip()):
        return None
    n = int(value.strip())
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        return None
    return n


def clip_input(text: str, limit: int = MAX_INPUT_CHARS) -> tuple[str, int | None]:
    """``text`` cut to ``limit`` characters (a box's ``max_chars``; the sidebar's is per model,
    ``models.input_char_limit``), and its length before the cut (None if not cut).

    Text from a link bypasses a box's ``max_chars``; the same limit applies and the page says so.
    """
    if len(text) <= limit:
        return text, None
    return text[:limit], len(text)


def begin_run(page_path: str) -> None:
    """Start of a run: forget the previous run's parameters."""
    st.session_state[_PATH] = page_path
    st.session_state[_APP] = None
    st.session_state[_PAGE] = {}


def set_app_params(params: Mapping[str, str]) -> None:
    """The sidebar's choices for this run (only declared app-wide parameters are kept)."""
    st.session_state[_APP] = {k: v for k, v in params.items() if k in pages.APP_PARAMS}


def seed_from_url(key: str, param: str, parse: Callable[[str], Any] | None = None,
                  default: Any = None) -> None:
    """Before drawing widget ``key``: give it its value from ``?param=`` (or ``default``).

    Only when the widget has no value yet in this session (first visit of the page), so the
    user's later choices win over the URL.
    """
    if key in st.session_state:
        return
    raw = st.query_params.get(param)
    value = None
    if raw is not None:
        value = parse(raw) if parse else raw
    if value is None:
        value = default
    if value is not None:
        st.session_state[key] = value


def set_url_param(param: str, value: Any) -> None:
    """Mirror one page choice into the URL; written with the sidebar's choices by :func:`sync_url`."""
    path = st.session_state.get(_PATH, "")
    if param not in pages.params_of(path):
        st.session_state.setdefault(UNDECLARED, set()).add((path, param))
    st.session_state.setdefault(_PAGE, {})[param] = "" if value is None else str(value)


def sync_url() -> None:
    """Write this run's view (app-wide and page parameters) into the URL query string.

    Called at the very end of the run (``app.py``) and by :func:`stop_page` just before a page
    stops early (Streamlit drops messages sent after ``st.stop()``). Parameters of other pages are
    dropped, nothing is sent when the URL is already right, and calling it twice is harmless.
    """
    app_params = st.session_state.get(_APP)
    if app_params is None:  # no view was selected (e.g. no model could be loaded)
        return
    own = pages.params_of(st.session_state.get(_PATH, ""))
    desired = dict(app_params)
    desired.update({k: v for k, v in (st.session_state.get(_PAGE) or {}).items() if k in own})
    current = {k: st.query_params.get(k) for k in st.query_params.keys()}
    if current != desired:
        st.query_params.from_dict(desired)


def stop_page() -> NoReturn:
    """``st.stop()`` after writing the URL: once stopped, a run can no longer update the address bar,
    so e.g. clearing the sentence box would leave the old ``text=`` in the link."""
    sync_url()
    st.stop()


def note_clipped(cut_from: int | None, which: str = "sentence", limit: int = MAX_INPUT_CHARS) -> None:
    """The visible note for a text that :func:`clip_input` cut to ``limit`` characters
    (``which``: sentence, sentence_a/b)."""
    if cut_from:
        what = t(f"note.clipped.{which}")
        st.warning(t("note.clipped", what=what, cut_from=cut_from, limit=limit),
                   icon=":material/content_cut:")
