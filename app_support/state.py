"""The shared sidebar, the current view, and shareable URL state.

``app.py`` calls :func:`render_sidebar` before running the page, so the controls live in the
entry point and keep their values across pages. Every choice is mirrored into the URL query
string (``?model=…&text=…&kind=…&layer=…&head=…``); a fresh session reads it back, so a copied
link reproduces the view. Pages add their own parameters with :func:`seed_from_url` and
:func:`set_url_param`; parameters that belong to another page are dropped on navigation.

Pages never write the sidebar's widget keys directly (Streamlit forbids changing a widget's
value after it has been drawn in a run); :func:`open_head` stores the wish and the sidebar
applies it at the start of the next run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import streamlit as st

from app_support import models as M
from app_support.ui import escape_md, inject_css
from model.analysis import Analysis
from model.data.tasks import InputError
from model.registry import UnknownModelError
from model.training.checkpoint import Bundle, CheckpointError

#: Page files (relative to app.py) and their URL paths.
SINGLE_HEAD_PAGE = "app_pages/single_head.py"

#: Query parameters of the shared sidebar.
CORE_PARAMS = ("model", "text", "dir", "kind", "layer", "head", "present")
#: Query parameters owned by one page, keyed by the page's url_path ("" = the start page).
PAGE_PARAMS: dict[str, tuple[str, ...]] = {
    "": ("scale",),
    "heads": (),
    "focus": ("token", "side"),
    "decoding": ("step",),
    "stats": ("x", "y", "bar"),
    "aggregates": ("residual",),
    "compare": ("a", "b", "token"),
    "model": ("pe_len", "pe_dim"),
}

DIRECTION_LABELS = {"auto": "auto-detect", "zh->en": "中文 → English", "en->zh": "English → 中文"}
_PENDING = "_pending_view"
_VIEW = "_view"
_URL_PAGE = "_url_page_params"
_SIDEBAR_KEYS = ("model", "text", "dir", "kind", "layer", "head", "present")
_PAGE_PATH = "_page_path"
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

    @property
    def direction_arg(self) -> str | None:
        return None if self.direction == "auto" else self.direction

    @property
    def kind_label(self) -> str:
        return M.KIND_LABELS[self.kind]

    @property
    def kinds(self) -> list[str]:
        return [k for k in M.KINDS if self.n_layers[k] > 0]

    @property
    def is_translation(self) -> bool:
        return bool(self.directions)


# --------------------------------------------------------------------------- URL helpers


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



def seed_from_url(key: str, param: str, parse: Callable[[str], Any] | None = None, default: Any = None) -> None:
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
    st.session_state.setdefault(_URL_PAGE, {})[param] = "" if value is None else str(value)


def clamp_choice(key: str, options: Sequence[Any], default: Any = None) -> None:
    """Reset widget state ``key`` to ``default`` (or the first option) if it is not an option."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else (options[0] if options else None)


# --------------------------------------------------------------------------- navigation


def open_head(layer: int, head: int, kind: str | None = None, page: str | None = SINGLE_HEAD_PAGE) -> None:
    """Select ``(layer, head)`` (and ``kind``) in the sidebar, then open ``page`` (None: rerun here)."""
    # The whole sidebar is carried over: a page switch may reset widgets to their defaults.
    pending = {k: st.session_state[k] for k in _SIDEBAR_KEYS if k in st.session_state}
    pending.update(layer=int(layer), head=int(head))
    if kind is not None:
        pending["kind"] = kind
    st.session_state[_PENDING] = pending
    if page is None:
        st.rerun()
    st.switch_page(page)


def _apply_pending() -> None:
    pending = st.session_state.pop(_PENDING, None)
    for key, value in (pending or {}).items():
        if key in _SIDEBAR_KEYS:
            st.session_state[key] = value


# --------------------------------------------------------------------------- sidebar


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
    text, st.session_state[_TEXT_CUT] = clip_input(text if text is not None else _example(model))
    st.session_state["text"] = text
    direction = qp.get("dir", "auto")
    st.session_state["dir"] = direction if direction in DIRECTION_LABELS else "auto"
    kind = qp.get("kind", "encoder")
    st.session_state["kind"] = kind if kind in M.KINDS else "encoder"
    st.session_state["layer"] = url_int(qp.get("layer"), 0) or 0
    st.session_state["head"] = url_int(qp.get("head"), 0) or 0
    st.session_state["present"] = qp.get("present", "") in ("1", "true", "yes", "on")


def clip_input(text: str) -> tuple[str, int | None]:
    """``text`` cut to the input box's limit, and its length before the cut (None if not cut).

    Text from a link bypasses the box's ``max_chars``; the same limit applies and the page says so.
    """
    if len(text) <= M.MAX_INPUT_CHARS:
        return text, None
    return text[: M.MAX_INPUT_CHARS], len(text)


def note_clipped(cut_from: int | None, what: str = "The sentence") -> None:
    """The visible note for a text that :func:`clip_input` cut."""
    if cut_from:
        st.warning(
            f"{what} in the link had {cut_from:,} characters; text boxes take at most "
            f"{M.MAX_INPUT_CHARS:,}, so it was cut to its first {M.MAX_INPUT_CHARS:,}.",
            icon=":material/content_cut:",
        )


def _on_model_change() -> None:
    st.session_state["text"] = _example(st.session_state["model"])[: M.MAX_INPUT_CHARS]
    st.session_state["dir"] = "auto"


def _use_example() -> None:
    st.session_state["text"] = _example(st.session_state["model"])[: M.MAX_INPUT_CHARS]


def sync_url() -> None:
    """Write this run's view (and the page's own choices) into the URL query string.

    Called at the very end of the run (``app.py``) and by :func:`stop_page` just before a page
    stops early (Streamlit drops messages sent after ``st.stop()``), so the browser gets one update
    holding the sidebar's choices and the page's own; parameters of other pages are dropped, and
    nothing is sent when the URL is already right (calling it twice is harmless).
    """
    view: View | None = st.session_state.get(_VIEW)
    page_params: dict[str, str] = st.session_state.get(_URL_PAGE) or {}
    if view is None:
        return
    page_path = st.session_state.get(_PAGE_PATH, "")
    desired = {
        "model": view.model,
        "text": view.text,
        "kind": view.kind,
        "layer": str(view.layer),
        "head": str(view.head),
    }
    if view.directions:
        desired["dir"] = view.direction
    if view.present:
        desired["present"] = "1"
    own = PAGE_PARAMS.get(page_path, ())
    desired.update({k: v for k, v in page_params.items() if k in own})
    current = {k: st.query_params.get(k) for k in st.query_params.keys()}
    if current != desired:
        st.query_params.from_dict(desired)


def stop_page() -> NoReturn:
    """``st.stop()`` after writing the URL: once stopped, a run can no longer update the address bar,
    so e.g. clearing the sentence box would leave the old ``text=`` in the link."""
    sync_url()
    st.stop()


def render_sidebar(page_path: str = "") -> View:
    """Draw the shared sidebar and store the resulting :class:`View` for the page."""
    st.session_state.pop(_VIEW, None)
    models = M.list_models()
    if not models:
        st.error(
            "No models found in `assets/models/`. Train one, e.g. "
            "`python -m model train --preset reverse --ship`, then reload this page."
        )
        st.stop()
    _init_from_url(models)
    _apply_pending()
    if st.session_state.get("model") not in models:
        st.session_state["model"] = M.DEFAULT_MODEL if M.DEFAULT_MODEL in models else models[0]
        _on_model_change()

    present = bool(st.session_state.get("present"))
    inject_css(present)
    with st.sidebar:
        st.markdown("### :material/center_focus_strong: Attention Lens")
        box = st.expander("Controls", expanded=False) if present else st.container()
        with box:
            st.selectbox(
                "Model",
                models,
                key="model",
                format_func=M.model_label,
                on_change=_on_model_change,
                help="`default` translates Chinese ↔ English; the others are tiny didactic models "
                "whose attention is easy to read.",
            )
            name = st.session_state["model"]
            try:
                bundle: Bundle = M.get_bundle(name)
            except (CheckpointError, UnknownModelError, OSError) as e:
                st.error(f"Cannot load model {escape_md(name)}: {escape_md(str(e))}")
                st.stop()
            desc = M.model_description(name)
            if desc:
                st.caption(escape_md(desc))
            if not isinstance(st.session_state.get("text"), str):
                st.session_state["text"] = _example(name)
            st.text_input(
                "Input sentence",
                key="text",
                max_chars=M.MAX_INPUT_CHARS,
                help="Press Enter to run. The model reads at most "
                f"{bundle.cfg.max_len} tokens; longer input is cut (you will be told).",
            )
            if st.session_state.get(_TEXT_CUT) and len(st.session_state["text"]) == M.MAX_INPUT_CHARS:
                note_clipped(st.session_state[_TEXT_CUT])
            else:
                st.session_state[_TEXT_CUT] = None
            st.button("Use the example sentence", icon=":material/restart_alt:", on_click=_use_example, type="tertiary")
            directions = tuple(getattr(bundle.task, "directions", []) or [])
            if directions:
                clamp_choice("dir", ["auto", *directions], "auto")
                st.radio(
                    "Translation direction",
                    ["auto", *directions],
                    key="dir",
                    format_func=DIRECTION_LABELS.get,
                )
            n_layers = M.n_layers_by_kind(bundle)
            kinds = [k for k in M.KINDS if n_layers[k] > 0]
            clamp_choice("kind", kinds, "encoder")
            st.radio(
                "Attention",
                kinds,
                key="kind",
                format_func=M.KIND_LABELS.get,
                help="\n".join(f"- **{M.KIND_LABELS[k]}**: {M.KIND_HELP[k]}" for k in kinds),
            )
            kind = st.session_state["kind"]
            n_heads = bundle.cfg.n_heads
            clamp_choice("layer", list(range(n_layers[kind])), 0)
            clamp_choice("head", list(range(n_heads)), 0)
            c1, c2 = st.columns(2)
            c1.selectbox("Layer", list(range(n_layers[kind])), key="layer", format_func=lambda i: f"layer {i}")
            c2.selectbox("Head", list(range(n_heads)), key="head", format_func=lambda i: f"head {i}")
        st.toggle("Presentation mode", key="present", help="Bigger text for projectors; the controls fold away.")
        st.caption(":material/link: The address bar always holds a link to exactly this view — copy it to share.")

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
    )
    st.session_state[_VIEW] = view
    st.session_state[_PAGE_PATH] = page_path
    st.session_state[_URL_PAGE] = {}
    return view


def current_view() -> View:
    """The view the sidebar selected in this run (pages call this first)."""
    view = st.session_state.get(_VIEW)
    if view is None:  # a page run on its own (not through app.py)
        view = render_sidebar()
    return view


# --------------------------------------------------------------------------- analysis


_NOTE_INFO_WORDS = ("Traditional", "lowercased")


def show_notes(result: Analysis) -> None:
    """Every note about the input (truncation, unknown characters, conversions) as a visible box."""
    for note in result.notes:
        if any(w in note for w in _NOTE_INFO_WORDS):
            st.info(escape_md(note), icon=":material/info:")
        else:
            st.warning(escape_md(note), icon=":material/warning:")


def show_io(view: View, result: Analysis) -> None:
    """The input as the model reads it and the model's output, as plain (escaped) text."""
    cols = st.columns([3, 3, 1.4])
    with cols[0]:
        st.caption("Input, as the model reads it")
        st.markdown(escape_md(result.prepared.text) or "∅")
    with cols[1]:
        st.caption("Model output" + (" (translation)" if view.is_translation else ""))
        st.markdown(f"**{escape_md(result.output_text)}**" if result.output_text.strip() else "*(empty output)*")
    with cols[2]:
        st.caption("Tokens in → out")
        direction = f" · {result.prepared.direction}" if result.prepared.direction else ""
        st.markdown(f"{len(result.source_tokens)} → {len(result.target_tokens)}{escape_md(direction)}")


def current_analysis(view: View, *, show: bool = True) -> Analysis:
    """The cached analysis of the sidebar's sentence; on unusable input, explain and stop the page."""
    if not view.text.strip():
        st.info("The input is empty. Type a sentence in the sidebar (or press “Use the example sentence”).", icon=":material/edit:")
        stop_page()
    try:
        with st.spinner("Running the model …"):
            result = M.get_analysis(view.model, view.text, view.direction_arg)
    except InputError as e:
        st.info(escape_md(str(e)))
        stop_page()
    if show:
        show_io(view, result)
        show_notes(result)
    return result
