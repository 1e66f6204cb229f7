"""What the app tells the user about their input, and the analysis of the sidebar's sentence.

Notes come from ``model/`` (truncation, script conversion, unknown characters, ...); this module
shows each as a visible box, and stops a page with a message when the input cannot be run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from app_support import models as M
from app_support.ui import escape_md
from app_support.url_state import stop_page
from model.analysis import Analysis
from model.data.tasks import InputError

if TYPE_CHECKING:
    from app_support.sidebar import View


def note_clipped(cut_from: int | None, what: str = "The sentence") -> None:
    """The visible note for a text that :func:`clip_input` cut."""
    if cut_from:
        st.warning(
            f"{what} in the link had {cut_from:,} characters; text boxes take at most "
            f"{M.MAX_INPUT_CHARS:,}, so it was cut to its first {M.MAX_INPUT_CHARS:,}.",
            icon=":material/content_cut:",
        )


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
