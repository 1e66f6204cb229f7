"""The app's state in one run: the :class:`View` every page draws, read from the link and the session.

The shared sidebar's widgets hold the view's choices under keys named after their URL parameters
(:data:`app_support.pages.APP_PARAMS`). On a session's first run this module seeds those keys from the
link; on every run it has the sidebar draw them (:func:`app_support.sidebar.render_sidebar`), reads
them back into a :class:`View` and writes that view into the link. Pages call :func:`current_view`.

Pages never write the widget keys directly (Streamlit forbids changing a widget's value after it has
been drawn in a run); :func:`open_head` and :func:`keep_view_across_switch` store the wish and
:func:`select_view` applies it at the start of the next run.

This module imports the sidebar and never the other way round: a page run on its own (the page tests)
has no router that drew the sidebar first, so :func:`current_view` draws it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import streamlit as st

from app_support import models as M
from app_support import pages
from app_support import strategy as decoding
from app_support.i18n import LANG_KEY, preferred_lang, t, valid_lang
from app_support.sidebar import (
    MAX_NEW_TOKENS,
    MODEL_MISSING,
    NEW_TOKENS_PARAM,
    TEXT_CUT,
    SidebarChoices,
    render_sidebar,
)
from app_support.token_display import AS_TOKENIZED, SPECIALS, TokenDisplay
from app_support.token_display import url_params as token_url_params
from app_support.url_state import begin_run, clip_input, set_app_params, url_int
from app_support.user_models import session_models
from model.decoding.strategy import DEFAULT_NEW_TOKENS, GREEDY, Strategy
from model.network.kinds import KINDS, decoder_only

_PENDING = "_pending_view"  # the choices a page asked for, applied at the start of the next run
_VIEW = "_view"  # this run's View, once the sidebar was drawn
_URL_LOADED = "_url_loaded"  # True once the session took its first choices from the link
_VIEW_KEYS = pages.APP_PARAMS  # the sidebar's widget keys are named after their URL parameters
_DIRECTIONS = ("auto", "zh->en", "en->zh", "raw", "chat")  # a chat model's prompt forms take the same place
_LANGUAGE_PAIR = re.compile(r"[A-Za-z_]{2,16}->[A-Za-z_]{2,16}")
_TRUE_WORDS = ("1", "true", "yes", "on")  # how a link may say present=...
#: Session key the compare page fills (sentence A, sentence B, token) before opening the patching page.
FROM_COMPARE = "_patch_from_compare"


@dataclass(frozen=True)
class View:
    """What the sidebar selects for this run."""

    model: str  # the model's registry name (a shipped model, or one this session uploaded)
    text: str  # the input sentence, at most the model's character limit (models.input_char_limit)
    direction: str  # "auto", "zh->en" or "en->zh" ("auto" for models without directions)
    kind: str  # the attention shown: "encoder", "decoder" or "cross"
    layer: int  # the layer of that kind, from 0
    head: int  # the head in that layer, from 0
    present: bool  # presentation mode: bigger text, the controls folded away
    n_layers: dict[str, int]  # the model's layers per attention kind (0 or absent: no such attention)
    n_heads: int  # heads per layer (every layer of a model has as many)
    directions: tuple[str, ...]  # the directions a translation model offers (empty: not a translator)
    strategy: Strategy = GREEDY  # how the output is decoded (greedy for a model without a decoder)
    display: TokenDisplay = AS_TOKENIZED  # word pieces merged, [CLS]/[SEP] hidden (WordPiece models only)
    # new tokens the model writes at most (None: a model without a decoder, or a translation until its end)
    max_new: int | None = None

    @property
    def direction_arg(self) -> str | None:
        return None if self.direction == "auto" else self.direction

    @property
    def kind_label(self) -> str:
        return t(f"kind.{self.kind}.label")

    @property
    def kinds(self) -> list[str]:
        return [k for k in KINDS if self.n_layers.get(k, 0) > 0]

    @property
    def is_language_model(self) -> bool:
        return decoder_only(self.n_layers)

    @property
    def is_translation(self) -> bool:
        # A chat model's prompt forms (raw, chat) take the directions' place, but it does not translate.
        return bool(self.directions) and bool(self.n_layers.get("cross"))


# --------------------------------------------------------------------------- wishes for the next run


def keep_view_across_switch(**changes: Any) -> None:
    """Carry the sidebar's choices (with ``changes``) over a page switch.

    A page switch resets widgets that the run did not draw to their defaults; the wish is stored
    and applied at the start of the next run.
    """
    pending = {k: st.session_state[k] for k in _VIEW_KEYS if k in st.session_state}
    pending.update(changes)
    st.session_state[_PENDING] = pending


def open_head(layer: int, head: int, kind: str | None = None,
              page: str | None = pages.page("single").file) -> None:
    """Select ``(layer, head)`` (and ``kind``) in the sidebar, then open ``page`` (None: rerun here)."""
    changes: dict[str, Any] = {"layer": int(layer), "head": int(head)}
    if kind is not None:
        changes["kind"] = kind
    keep_view_across_switch(**changes)
    if page is None:
        st.rerun()
    st.switch_page(page)


def _apply_pending() -> None:
    pending = st.session_state.pop(_PENDING, None)
    for key, value in (pending or {}).items():
        if key in _VIEW_KEYS:
            st.session_state[key] = value


# --------------------------------------------------------------------------- reading the link


def init_language() -> None:
    """The session's interface language: the link's ``lang=``, else the browser's preference.

    Runs before the navigation is built (page titles are translated). A language chosen in the
    switch stays the session's; a ``lang=`` in a link the session is opened with wins once.
    """
    if valid_lang(st.session_state.get(LANG_KEY)):
        return
    from_url = valid_lang(st.query_params.get("lang"))
    if from_url is None:
        locale = getattr(st.context, "locale", None)
        headers = getattr(st.context, "headers", None) or {}
        from_url = preferred_lang(locale, headers.get("Accept-Language"))
    st.session_state[LANG_KEY] = from_url


def _init_from_url(models: list[str]) -> None:
    """First run of a session: take every sidebar choice from the URL (or a default)."""
    if st.session_state.get(_URL_LOADED):
        return
    st.session_state[_URL_LOADED] = True
    qp = st.query_params
    model = qp.get("model")
    st.session_state[MODEL_MISSING] = model if model and model not in models else None
    if model not in models:
        model = M.DEFAULT_MODEL if M.DEFAULT_MODEL in models else models[0]
    st.session_state["model"] = model
    text = qp.get("text")
    if text is None:
        text = M.model_example(model) or ""
    st.session_state["text"], st.session_state[TEXT_CUT] = clip_input(text, M.input_char_limit(model))
    direction = qp.get("dir", "auto")
    # a foreign translation model's own pair (zh->fra): the sidebar clamps it to the model's directions
    known = direction in _DIRECTIONS or bool(_LANGUAGE_PAIR.fullmatch(direction or ""))
    st.session_state["dir"] = direction if known else "auto"
    kind = qp.get("kind", "encoder")
    st.session_state["kind"] = kind if kind in KINDS else KINDS[0]
    st.session_state["layer"] = url_int(qp.get("layer"), 0) or 0
    st.session_state["head"] = url_int(qp.get("head"), 0) or 0
    st.session_state["present"] = qp.get("present", "") in _TRUE_WORDS
    st.session_state["pieces"] = qp.get("pieces") == "words"
    st.session_state["special"] = qp.get("special") if qp.get("special") in SPECIALS else "show"
    decoding.seed_from_url(qp.get(decoding.PARAM))
    # out of range or not a number: None, the model's default (a language model's DEFAULT_NEW_TOKENS, a
    # translation's end token: sidebar._new_tokens); 0: the prompt (the source) alone
    st.session_state[NEW_TOKENS_PARAM] = url_int(qp.get(NEW_TOKENS_PARAM), 0, MAX_NEW_TOKENS)


# --------------------------------------------------------------------------- the view of this run


def _listed_models() -> list[str]:
    """The shipped models, then this session's own, then a hidden model the link names; a page cannot run
    without one."""
    models = M.list_models() + session_models()
    # the model chosen (on a first run: the link's); a hidden one is listed for as long as it is chosen
    asked = st.session_state.get("model", st.query_params.get("model"))
    if asked and asked not in models and asked in M.hidden_models():
        models.append(asked)
    if not models:
        st.error(t("sidebar.no_models"))
        st.stop()
    return models


def _read_view(drawn: SidebarChoices) -> View:
    """The view the sidebar's widgets hold once drawn."""
    state = st.session_state
    return View(
        model=state["model"],
        text=state["text"],
        direction=state.get("dir", "auto") if drawn.directions else "auto",
        kind=state["kind"],
        layer=int(state["layer"]),
        head=int(state["head"]),
        present=bool(state.get("present")),
        n_layers=drawn.n_layers,
        n_heads=drawn.n_heads,
        directions=drawn.directions,
        strategy=drawn.strategy,
        display=drawn.display,
        max_new=drawn.max_new,
    )


def _url_params(view: View) -> dict[str, str]:
    """The link's app-wide parameters for ``view`` (the optional ones only when not their default)."""
    params = {"lang": st.session_state[LANG_KEY], "model": view.model, "text": view.text, "kind": view.kind,
              "layer": str(view.layer), "head": str(view.head)}
    if view.directions:
        params["dir"] = view.direction
    if view.present:
        params["present"] = "1"
    if view.strategy != GREEDY:
        params[decoding.PARAM] = view.strategy.param
    # a language model's default is a number; a translation's (until its end token) is None
    default = DEFAULT_NEW_TOKENS if not view.n_layers.get("cross") else None
    if view.max_new is not None and view.max_new != default:
        params[NEW_TOKENS_PARAM] = str(view.max_new)
    params.update(token_url_params(view.display))
    return params


def select_view(page_path: str = "") -> View:
    """This run's view: the link's choices (first run) and the pages' wishes, drawn in the sidebar,
    stored for the page and written into the link."""
    st.session_state.pop(_VIEW, None)
    begin_run(page_path)
    init_language()
    models = _listed_models()
    _init_from_url(models)
    _apply_pending()
    view = _read_view(render_sidebar(models, page_path))
    st.session_state[_VIEW] = view
    set_app_params(_url_params(view))
    return view


def current_view() -> View:
    """The view the sidebar selected in this run (pages call this first)."""
    view = st.session_state.get(_VIEW)
    if view is None:  # a page run on its own (not through app.py)
        view = select_view()
    return view
