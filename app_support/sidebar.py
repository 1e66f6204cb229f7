"""The shared sidebar and the view it selects.

``app.py`` calls :func:`render_sidebar` before running the page, so the controls live in the
entry point and keep their values across pages. Its choices are the app-wide URL parameters
(:data:`app_support.pages.APP_PARAMS`).

Pages never write the sidebar's widget keys directly (Streamlit forbids changing a widget's
value after it has been drawn in a run); :func:`open_head` stores the wish and the sidebar
applies it at the start of the next run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from app_support import gateway as G
from app_support import models as M
from app_support import pages
from app_support import strategy as decoding
from app_support.deck import back_link
from app_support.i18n import LANG_KEY, LANG_LABELS, LANGS, current_lang, preferred_lang, t, text, valid_lang
from app_support.messages import note_clipped
from app_support.token_display import AS_TOKENIZED, SPECIALS, TokenDisplay, has_word_pieces
from app_support.token_display import url_params as token_url_params
from app_support.ui import escape_md, inject_css
from app_support.url_state import begin_run, clip_input, set_app_params, url_int
from app_support.user_models import session_models
from model.decoding import GREEDY, Strategy
from model.network.kinds import KINDS, kinds_present, layer_counts
from model.store.bundle import Bundle, CheckpointError
from model.store.registry import UnknownModelError

_PENDING = "_pending_view"
_VIEW = "_view"
_SIDEBAR_KEYS = pages.APP_PARAMS  # the sidebar's widget keys are named after their URL parameters
_TEXT_CUT = "_text_cut_from"


@dataclass(frozen=True)
class View:
    """What the sidebar selects for this run."""

    model: str
    text: str
    direction: str  # "auto", "zh->en" or "en->zh" ("auto" for models without directions)
    kind: str  # "encoder", "decoder" or "cross"
    layer: int
    head: int
    present: bool
    n_layers: dict[str, int]
    n_heads: int
    directions: tuple[str, ...]
    strategy: Strategy = GREEDY  # how the output is decoded (greedy for a model without a decoder)
    display: TokenDisplay = AS_TOKENIZED  # word pieces merged, [CLS]/[SEP] hidden (WordPiece models only)

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
    def is_translation(self) -> bool:
        return bool(self.directions)



def clamp_choice(key: str, options: Sequence[Any], default: Any = None) -> None:
    """Reset widget state ``key`` to ``default`` (or the first option) if it is not an option."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else (options[0] if options else None)


def keep_view_across_switch(**changes: Any) -> None:
    """Carry the sidebar's choices (with ``changes``) over a page switch.

    A page switch resets widgets that the run did not draw to their defaults; the wish is stored
    and the sidebar applies it at the start of the next run.
    """
    pending = {k: st.session_state[k] for k in _SIDEBAR_KEYS if k in st.session_state}
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
        if key in _SIDEBAR_KEYS:
            st.session_state[key] = value



def _example(name: str) -> str:
    return M.model_example(name) or ""


def _init_from_url(models: list[str]) -> None:
    """First run of a session: take every sidebar choice from the URL (or a default)."""
    if st.session_state.get("_url_loaded"):
        return
    st.session_state["_url_loaded"] = True
    qp = st.query_params
    model = qp.get("model")
    if model not in models:
        model = M.DEFAULT_MODEL if M.DEFAULT_MODEL in models else models[0]
    st.session_state["model"] = model
    text = qp.get("text")
    text, st.session_state[_TEXT_CUT] = clip_input(text if text is not None else _example(model),
                                                   M.input_char_limit(model))
    st.session_state["text"] = text
    direction = qp.get("dir", "auto")
    st.session_state["dir"] = direction if direction in ("auto", "zh->en", "en->zh") else "auto"
    kind = qp.get("kind", "encoder")
    st.session_state["kind"] = kind if kind in KINDS else KINDS[0]
    st.session_state["layer"] = url_int(qp.get("layer"), 0) or 0
    st.session_state["head"] = url_int(qp.get("head"), 0) or 0
    st.session_state["present"] = qp.get("present", "") in ("1", "true", "yes", "on")
    st.session_state["pieces"] = qp.get("pieces") == "words"
    st.session_state["special"] = qp.get("special") if qp.get("special") in SPECIALS else "show"
    decoding.seed_from_url(qp.get(decoding.PARAM))


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


def _keep_language() -> None:
    # A segmented control can be cleared (None); the language must always be one of ours.
    if not valid_lang(st.session_state.get(LANG_KEY)):
        st.session_state[LANG_KEY] = st.session_state.get("_last_lang", "en")
    st.session_state["_last_lang"] = st.session_state[LANG_KEY]


def _example_in_box(name: str) -> str:
    return _example(name)[: M.input_char_limit(name)]


def _on_model_change() -> None:
    st.session_state["text"] = _example_in_box(st.session_state["model"])
    st.session_state["dir"] = "auto"


def _use_example() -> None:
    st.session_state["text"] = _example_in_box(st.session_state["model"])


def _token_display(bundle: Bundle, lang: str) -> TokenDisplay:
    """Merge word pieces / hide [CLS] and [SEP]: offered for WordPiece models (the default elsewhere)."""
    if not has_word_pieces(bundle.tokenizer):
        return AS_TOKENIZED
    st.toggle(t("tokens.merge"), key="pieces", help=t("tokens.merge_help"))
    clamp_choice("special", list(SPECIALS), "show")
    st.radio(t("tokens.special"), SPECIALS, key="special", horizontal=True,
             format_func=lambda o: text(lang, f"tokens.special.{o}"), help=t("tokens.special_help"))
    return TokenDisplay(merge=bool(st.session_state.get("pieces")), special=st.session_state["special"])


def render_sidebar(page_path: str = "") -> View:
    """Draw the shared sidebar and store the resulting :class:`View` for the page."""
    st.session_state.pop(_VIEW, None)
    begin_run(page_path)
    init_language()
    models = M.list_models() + session_models()  # the shipped models, then this session's own
    if not models:
        st.error(t("sidebar.no_models"))
        st.stop()
    _init_from_url(models)
    _apply_pending()
    if st.session_state.get("model") not in models:
        st.session_state["model"] = M.DEFAULT_MODEL if M.DEFAULT_MODEL in models else models[0]
        _on_model_change()

    present = bool(st.session_state.get("present"))
    inject_css(present)
    back_link(page_path)  # after the talk deck was opened: a way back to its slide
    # Bound now: format functions also run outside the script (AppTest), where session state is absent.
    lang = current_lang()
    with st.sidebar:
        st.markdown("### :material/center_focus_strong: Attention Lens")
        st.segmented_control(t("sidebar.language"), LANGS, key=LANG_KEY, format_func=LANG_LABELS.get,
                             on_change=_keep_language)
        box = st.expander(t("sidebar.controls"), expanded=False) if present else st.container()
        with box:
            st.selectbox(
                t("sidebar.model"),
                models,
                key="model",
                format_func=lambda n: M.model_label(n, lang),
                on_change=_on_model_change,
                help=t("sidebar.model_help"),
            )
            name = st.session_state["model"]
            try:
                bundle: Bundle = G.get_bundle(name)
            except (CheckpointError, UnknownModelError, OSError) as e:
                st.error(t("sidebar.cannot_load", name=escape_md(name), error=escape_md(str(e))))
                st.stop()
            desc = M.model_description(name, lang)
            if desc:
                st.caption(escape_md(desc))
            if not isinstance(st.session_state.get("text"), str):
                st.session_state["text"] = _example(name)
            char_limit = M.input_char_limit(name)
            if len(st.session_state["text"]) > char_limit:  # typed under another model's limit
                st.session_state["text"] = st.session_state["text"][:char_limit]
            st.text_input(
                t("sidebar.input"),
                key="text",
                max_chars=char_limit,
                help=t("sidebar.input_help", max_len=bundle.cfg.max_len),
            )
            if st.session_state.get(_TEXT_CUT) and len(st.session_state["text"]) == char_limit:
                note_clipped(st.session_state[_TEXT_CUT], limit=char_limit)
            else:
                st.session_state[_TEXT_CUT] = None
            st.button(t("sidebar.use_example"), icon=":material/restart_alt:", on_click=_use_example,
                      type="tertiary")
            directions = tuple(getattr(bundle.task, "directions", []) or [])
            if directions:
                clamp_choice("dir", ["auto", *directions], "auto")
                st.radio(
                    t("sidebar.direction"),
                    ["auto", *directions],
                    key="dir",
                    format_func=lambda d: text(lang, f"direction.{d}"),
                )
            n_layers = layer_counts(bundle.cfg)
            kinds = kinds_present(bundle.cfg)
            clamp_choice("kind", kinds, "encoder")
            st.radio(
                t("sidebar.attention"),
                kinds,
                key="kind",
                format_func=lambda k: text(lang, f"kind.{k}.label"),
                help="\n".join(f"- **{t(f'kind.{k}.label')}**: {t(f'kind.{k}.help')}" for k in kinds),
            )
            kind = st.session_state["kind"]
            n_heads = bundle.cfg.n_heads
            clamp_choice("layer", list(range(n_layers[kind])), 0)
            clamp_choice("head", list(range(n_heads)), 0)
            c1, c2 = st.columns(2)
            c1.selectbox(t("sidebar.layer"), list(range(n_layers[kind])), key="layer",
                         format_func=lambda i: text(lang, "sidebar.layer_option", i=i))
            c2.selectbox(t("sidebar.head"), list(range(n_heads)), key="head",
                         format_func=lambda i: text(lang, "sidebar.head_option", i=i))
            strategy = decoding.controls(bundle.cfg.vocab_size) if n_layers.get("cross", 0) else GREEDY
            display = _token_display(bundle, lang)
        st.toggle(t("sidebar.present"), key="present", help=t("sidebar.present_help"))
        st.caption(t("sidebar.link"))

    view = View(
        model=name,
        text=st.session_state["text"],
        direction=st.session_state.get("dir", "auto") if directions else "auto",
        kind=kind,
        layer=int(st.session_state["layer"]),
        head=int(st.session_state["head"]),
        present=bool(st.session_state.get("present")),
        n_layers=n_layers,
        n_heads=n_heads,
        directions=directions,
        strategy=strategy,
        display=display,
    )
    st.session_state[_VIEW] = view
    params = {"lang": st.session_state[LANG_KEY], "model": view.model, "text": view.text, "kind": view.kind,
              "layer": str(view.layer), "head": str(view.head)}
    if view.directions:
        params["dir"] = view.direction
    if view.present:
        params["present"] = "1"
    if view.strategy != GREEDY:
        params[decoding.PARAM] = view.strategy.param
    params.update(token_url_params(view.display))
    set_app_params(params)
    return view


def current_view() -> View:
    """The view the sidebar selected in this run (pages call this first)."""
    view = st.session_state.get(_VIEW)
    if view is None:  # a page run on its own (not through app.py)
        view = render_sidebar()
    return view


