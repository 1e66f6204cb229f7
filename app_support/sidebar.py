"""The shared sidebar: it draws the view's controls; :mod:`app_support.view` reads them into the View.

``app.py`` selects the view (:func:`app_support.view.select_view`) before running the page, which has
:func:`render_sidebar` draw the controls, so they live in the entry point and keep their values across
pages. Each control's widget key is its URL parameter (:data:`app_support.pages.APP_PARAMS`); the view
module seeds the keys from a link, applies the pages' wishes, and writes the choices back into the link.
This module imports nothing of the view: the view module draws the sidebar, so the import points one way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from app_support import gateway as G
from app_support import models as M
from app_support import pages
from app_support import strategy as decoding
from app_support.i18n import (
    LANG_KEY,
    LANG_LABELS,
    LANGS,
    current_lang,
    direction_label,
    note,
    t,
    text,
    valid_lang,
)
from app_support.token_display import AS_TOKENIZED, SPECIALS, TokenDisplay, word_marker, words_key
from app_support.ui import escape_md, inject_css
from app_support.url_state import note_clipped
from model.decoding.strategy import DEFAULT_NEW_TOKENS, GREEDY, Strategy
from model.network.kinds import kinds_present, layer_counts
from model.store.budget import budget_note
from model.store.bundle import Bundle
from model.store.problems import CheckpointError
from model.store.registry import UnknownModelError

DECK_RETURN_KEY = "_deck_return"  # the slide the talk deck was last on (set while the deck is open)
TEXT_CUT = "_text_cut_from"  # a link's sentence was this long before it was cut to the box (None: not cut)
#: The model a link named that this session cannot open (another session's upload, a typo), until another
#: model is chosen; the picker says which model is shown instead.
MODEL_MISSING = "_model_missing_from_link"
#: The longest model name quoted back from a link (a link is user input).
MAX_QUOTED_NAME = 80


#: URL parameter and widget key of a language model's new-token bound, and its largest value (every new
#: token is one more decoding step and one more row on every page).
NEW_TOKENS_PARAM = "new"
MAX_NEW_TOKENS = 128


@dataclass(frozen=True)
class SidebarChoices:
    """What drawing the sidebar settled beyond its widget keys: the model's shape, and the two choices
    offered for some models only."""

    directions: tuple[str, ...]  # the directions a translation model offers (empty: not a translator)
    n_layers: dict[str, int]  # the model's layers per attention kind
    n_heads: int  # heads per layer
    strategy: Strategy  # how the output is decoded (greedy, no controls drawn, without a decoder)
    display: TokenDisplay  # how tokens are shown (as tokenized, no controls drawn, without word pieces)
    # new tokens the model writes at most (None: a model without a decoder, or a translation until its end)
    max_new: int | None = None


def clamp_choice(key: str, options: Sequence[Any], default: Any = None) -> None:
    """Reset widget state ``key`` to ``default`` (or the first option) if it is not an option."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else (options[0] if options else None)


def choose_data(key: str, own: str, own_label: str, runs: Sequence[Any], run_label: Callable[[Any], str],
                label: str, help: str) -> Any | None:
    """The page's Data choice: its own data (``own``, shown as ``own_label``) or one of ``runs`` (corpus
    runs found in runs/atlas/); the run picked, None for the page's own data. Nothing is drawn without
    runs."""
    if not runs:
        return None
    choices = [own, *range(len(runs))]
    clamp_choice(key, choices, own)
    picked = st.selectbox(label, choices, key=key, help=help,
                          format_func=lambda c: own_label if c == own else run_label(runs[c]))
    return None if picked == own else runs[picked]


def corpus_run_label(source: dict, n_texts: int) -> str:
    """A corpus run as a Data choice lists it: the corpus's name and how many prompts it read."""
    return f"{source.get('corpus', '?')} ({source.get('sampled', n_texts):,})"


def _example(name: str) -> str:
    return M.model_example(name) or ""


def _example_in_box(name: str) -> str:
    return _example(name)[: M.input_char_limit(name)]


def _on_model_change() -> None:
    st.session_state[MODEL_MISSING] = None
    st.session_state["text"] = _example_in_box(st.session_state["model"])
    st.session_state["dir"] = "auto"


def _use_example() -> None:
    st.session_state["text"] = _example_in_box(st.session_state["model"])


def _keep_language() -> None:
    # A segmented control can be cleared (None); the language must always be one of ours.
    if not valid_lang(st.session_state.get(LANG_KEY)):
        st.session_state[LANG_KEY] = st.session_state.get("_last_lang", "en")
    st.session_state["_last_lang"] = st.session_state[LANG_KEY]


# --------------------------------------------------------------------------- the steps, top to bottom


def _language_switch() -> None:
    st.segmented_control(t("sidebar.language"), LANGS, key=LANG_KEY, format_func=LANG_LABELS.get,
                         on_change=_keep_language)


def _model_picker(models: list[str], lang: str) -> Bundle:
    """The model box and the model's description; the chosen model, loaded (or the page stops)."""
    if st.session_state.get("model") not in models:  # no longer listed (e.g. an upload gone from the session)
        clamp_choice("model", models, M.DEFAULT_MODEL)
        _on_model_change()
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
    missing = st.session_state.get(MODEL_MISSING)
    if missing:
        quoted = missing if len(missing) <= MAX_QUOTED_NAME else missing[:MAX_QUOTED_NAME] + "…"
        st.warning(t("sidebar.model_missing", name=escape_md(quoted), shown=escape_md(name)),
                   icon=":material/link_off:")
    desc = M.model_description(name, lang)
    if desc:
        st.caption(escape_md(desc))
    clamped = budget_note(bundle)
    if clamped is not None:  # the model reads less than its config allows: say so where it is chosen
        st.caption(escape_md(note(clamped)))
    return bundle


def _sentence_box(name: str, bundle: Bundle) -> None:
    """The input sentence (within the model's character limit), and the button back to its example."""
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
    if st.session_state.get(TEXT_CUT) and len(st.session_state["text"]) == char_limit:
        note_clipped(st.session_state[TEXT_CUT], limit=char_limit)
    else:
        st.session_state[TEXT_CUT] = None
    st.button(t("sidebar.use_example"), icon=":material/restart_alt:", on_click=_use_example,
              type="tertiary")


def _direction_choice(bundle: Bundle, lang: str) -> tuple[str, ...]:
    """The translation direction, for a model that translates (the prompt's form, raw or chat, for a
    chat language model); the directions it offers."""
    directions = tuple(getattr(bundle.task, "directions", []) or [])
    if directions and bundle.cfg.decoder_only:
        clamp_choice("dir", list(directions), directions[0])
        st.radio(t("sidebar.form"), list(directions), key="dir", help=t("sidebar.form_help"),
                 format_func=lambda d: direction_label(lang, d))
    elif bundle.cfg.decoder_only and getattr(bundle.task, "chat_reason", None):
        st.caption(t("sidebar.no_chat_form", reason=escape_md(bundle.task.chat_reason)))
    elif directions:
        clamp_choice("dir", ["auto", *directions], "auto")
        st.radio(
            t("sidebar.direction"),
            ["auto", *directions],
            key="dir",
            format_func=lambda d: direction_label(lang, d),
        )
    return directions


def _attention_choice(bundle: Bundle, lang: str) -> tuple[dict[str, int], int]:
    """Attention kind, layer and head; the model's layers per kind and heads per layer."""
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
    return n_layers, n_heads


def _decoding_strategy(bundle: Bundle, n_layers: dict[str, int]) -> Strategy:
    """The decoding controls, for a model with a decoder (greedy, drawing nothing, for one without)."""
    return decoding.controls(bundle.cfg.output_vocab_size) if n_layers.get("decoder", 0) else GREEDY


def _new_tokens(bundle: Bundle) -> int | None:
    """How many new tokens the model writes: a decoder-only model at most the number in the box (a language
    model rarely ends by itself soon); an encoder-decoder until it writes its end token, or at most the
    number when one is given (an empty box: None). A model without a decoder writes nothing (None)."""
    cfg = bundle.cfg
    if cfg.decoder_only:
        if not isinstance(st.session_state.get(NEW_TOKENS_PARAM), int):
            st.session_state[NEW_TOKENS_PARAM] = DEFAULT_NEW_TOKENS
        # 0: the prompt alone is read (no decoding); pages that need an output say so (messages.needs_output)
        st.number_input(t("sidebar.new_tokens"), min_value=0, max_value=MAX_NEW_TOKENS, step=8,
                        key=NEW_TOKENS_PARAM, help=t("sidebar.new_tokens_help", most=MAX_NEW_TOKENS))
        return int(st.session_state[NEW_TOKENS_PARAM])
    if getattr(cfg, "encoder_only", False):
        return None
    if not isinstance(st.session_state.get(NEW_TOKENS_PARAM), int):
        st.session_state[NEW_TOKENS_PARAM] = None  # the default: until the end token
    # 0: the decoder reads its start token alone (the source is read, nothing is written); value=None lets
    # the box be emptied again
    st.number_input(t("sidebar.new_tokens_translation"), min_value=0, max_value=MAX_NEW_TOKENS, value=None,
                    step=8, key=NEW_TOKENS_PARAM, placeholder=t("sidebar.new_tokens_until_end"),
                    help=t("sidebar.new_tokens_translation_help", most=MAX_NEW_TOKENS, limit=cfg.max_len))
    chosen = st.session_state[NEW_TOKENS_PARAM]
    return None if chosen is None else int(chosen)


def _token_display(bundle: Bundle, lang: str) -> TokenDisplay:
    """Merge word pieces / hide [CLS] and [SEP]: offered for tokenizers that mark word pieces (WordPiece's
    ``##``, SentencePiece's ``▁``; the default elsewhere), worded for the tokenizer's marks."""
    marker = word_marker(bundle.tokenizer)
    if marker is None:
        return AS_TOKENIZED
    st.toggle(t("tokens.merge"), key="pieces", help=t(words_key("tokens.merge_help", marker)))
    clamp_choice("special", list(SPECIALS), "show")
    st.radio(t(words_key("tokens.special", marker)), SPECIALS, key="special", horizontal=True,
             format_func=lambda o: text(lang, f"tokens.special.{o}"),
             help=t(words_key("tokens.special_help", marker)))
    return TokenDisplay(merge=bool(st.session_state.get("pieces")), special=st.session_state["special"],
                        marker=marker)


def _projector_switch() -> None:
    """Presentation mode (bigger text, the controls folded) and where the link to this view is."""
    st.toggle(t("sidebar.present"), key="present", help=t("sidebar.present_help"))
    st.caption(t("sidebar.link"))


def render_sidebar(models: list[str], page_path: str = "") -> SidebarChoices:
    """Draw the shared sidebar's controls for ``models`` on the page at ``page_path``.

    The widgets' keys then hold the view's choices; what only the drawing knows comes back.
    """
    present = bool(st.session_state.get("present"))
    inject_css(present)
    deck_back_link(page_path)  # after the talk deck was opened: a way back to its slide
    # Bound now: format functions also run outside the script (AppTest), where session state is absent.
    lang = current_lang()
    with st.sidebar:
        st.markdown("### :material/center_focus_strong: Attention Lens")
        _language_switch()
        with st.expander(t("sidebar.controls"), expanded=False) if present else st.container():
            bundle = _model_picker(models, lang)
            _sentence_box(st.session_state["model"], bundle)
            directions = _direction_choice(bundle, lang)
            n_layers, n_heads = _attention_choice(bundle, lang)
            strategy = _decoding_strategy(bundle, n_layers)
            max_new = _new_tokens(bundle)
            display = _token_display(bundle, lang)
        _projector_switch()
    return SidebarChoices(directions=directions, n_layers=n_layers, n_heads=n_heads, strategy=strategy,
                          display=display, max_new=max_new)


def deck_back_link(page_path: str) -> None:
    """On any page but the deck, after the deck was opened: a link back to the slide it was on."""
    n = st.session_state.get(DECK_RETURN_KEY)
    if not n or page_path == pages.page("deck").url_path:
        return
    try:
        st.page_link(pages.page("deck").file, label=t("deck.back", n=n), icon=":material/slideshow:",
                     query_params={"slide": str(n)})
    except StreamlitAPIException:  # a page run on its own (tests): no navigation holds the deck
        pass
