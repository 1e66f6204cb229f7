"""What the app tells the user about their input, and the analysis of the sidebar's sentence (and the layer
tensors of it that the worked example and the talk deck work out by hand).

Notes come from ``model/`` (truncation, script conversion, unknown characters, ...); this module
shows each as a visible box, and stops a page with a message when the input cannot be run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import streamlit as st

from app_support import gateway as G
from app_support import lab
from app_support.i18n import current_lang, direction_label, note, t
from app_support.sidebar import NEW_TOKENS_PARAM
from app_support.strategy import name as strategy_name
from app_support.ui import escape_md, md_output
from app_support.url_state import stop_page
from model.core.messages import Message
from model.data.tasks import InputError
from model.decoding.strategy import DEFAULT_NEW_TOKENS
from model.network import progress
from model.network.kinds import decoder_only
from model.run.analysis import Analysis

if TYPE_CHECKING:
    from app_support.view import View
    from model.lab.worked import LayerTensors


_BOX = {"info": (st.info, ":material/info:"), "warning": (st.warning, ":material/warning:"),
        "error": (st.error, ":material/error:")}


def show_message(message: Message) -> None:
    """One message from model/ in the interface language, boxed by its severity."""
    box, icon = _BOX[message.severity]
    box(escape_md(note(message)), icon=icon)


def show_notes(result: Analysis) -> None:
    """Every note about the input (truncation, unknown characters, conversions), most severe first."""
    order = {"error": 0, "warning": 1, "info": 2}
    for message in sorted(result.notes, key=lambda m: order[m.severity]):
        show_message(message)


def show_input_error(error: InputError) -> None:
    """Why the input cannot run, in the interface language (as an info box: nothing broke)."""
    message = getattr(error, "message", None)
    st.info(escape_md(note(message) if isinstance(message, Message) else str(error)))


#: Characters of the input shown above the charts; a longer one shows its start and its end (what a
#: language model continues from), the whole text in an expander. At 1,024 tokens the whole text was two
#: screens of a laptop above the chart.
SHOWN_INPUT_CHARS = 320


def shortened_input(text: str) -> str:
    """``text``, or its first and last characters around " … " when it is longer than SHOWN_INPUT_CHARS."""
    if len(text) <= SHOWN_INPUT_CHARS:
        return text
    head = SHOWN_INPUT_CHARS // 3
    return f"{text[:head].rstrip()} … {text[-(SHOWN_INPUT_CHARS - head):].lstrip()}"


def show_io(view: View, result: Analysis) -> None:
    """The input as the model reads it and the model's output, as plain (escaped) text."""
    cols = st.columns([3, 3, 1.4])
    with cols[0]:
        st.caption(t("io.input"))
        text = result.prepared.text
        st.markdown(escape_md(shortened_input(text)) or "∅")
        if len(text) > SHOWN_INPUT_CHARS:  # the rest folded away: the page's charts stay on the first screen
            with st.expander(t("io.input_whole", chars=f"{len(text):,}")):
                st.markdown(escape_md(text))
    with cols[1]:
        st.caption(t("io.output_translation") if view.is_translation else t("io.output"))
        if not result.teacher_forced and view.n_layers.get("cross", 0):
            st.caption(t("strategy.output_by", strategy=strategy_name(result.strategy, current_lang())))
        st.markdown(md_output(result.output_text))
    with cols[2]:
        st.caption(t("io.tokens"))
        direction = f" · {direction_label(current_lang(), result.prepared.direction)}" \
            if result.prepared.direction else ""
        st.markdown(f"{len(result.source_tokens)} → {len(result.target_tokens)}{escape_md(direction)}")


def tokens_read(result: Analysis) -> int:
    """The tokens an analysis read: a translation model's source and decoder input; a language model's
    decoder input alone, which starts with the prompt (its source tokens, not read twice)."""
    if decoder_only(result.layer_counts):
        return len(result.target_tokens)
    return len(result.source_tokens) + len(result.target_tokens)


#: A first analysis that took this long says how long (a long input on a small server: seconds).
SAY_TIME_FROM_S = 1.0


def current_analysis(view: View, *, show: bool = True, whole_trace: bool = False) -> Analysis:
    """The cached analysis of the sidebar's sentence; on unusable input, explain and stop the page.
    ``whole_trace``: its shape trace is that of one pass over the whole sequence (see ``analyze``)."""
    if not view.text.strip():
        st.info(t("analysis.empty"), icon=":material/edit:")
        stop_page()
    bar = st.empty()
    told: list[float] = []

    def tell(fraction: float, stage: str) -> None:  # only while the analysis is computed, not on a hit
        told.append(fraction)
        bar.progress(fraction, text=t(f"analysis.progress.{stage if stage == 'decode' else 'read'}"))

    started = time.perf_counter()
    try:
        with st.spinner(t("analysis.running")), progress.reporting(tell):
            result = G.get_analysis(view.model, view.text, view.direction_arg, strategy=view.strategy,
                              max_new=view.max_new, whole_trace=whole_trace)
    except InputError as e:
        bar.empty()
        show_input_error(e)
        stop_page()
    bar.empty()
    seconds = time.perf_counter() - started
    if told and seconds >= SAY_TIME_FROM_S:
        st.caption(t("analysis.took", seconds=f"{seconds:.1f}", tokens=f"{tokens_read(result):,}"))
    if show:
        show_io(view, result)
        show_notes(result)
    return result


def needs_output(view: View) -> None:
    """For a page that shows the model's output: when the sidebar asks for no new tokens, say so, offer to
    write the default (a language model's number of tokens, a translation to its end), and stop the page."""
    if view.max_new != 0:
        return
    if view.n_layers.get("cross"):
        st.info(t("analysis.no_output_translation"), icon=":material/edit_off:")
        st.button(t("analysis.translate_to_end"), key="write_output", on_click=_write_output, args=(None,))
    else:
        st.info(t("analysis.no_output"), icon=":material/edit_off:")
        st.button(t("analysis.write_output", n=DEFAULT_NEW_TOKENS), key="write_output",
                  on_click=_write_output, args=(DEFAULT_NEW_TOKENS,))
    stop_page()


def _write_output(new: int | None) -> None:
    st.session_state[NEW_TOKENS_PARAM] = new


def get_layer_tensors(view: View) -> LayerTensors:
    """q, k, v, scores, pattern and z of the sidebar's attention layer for its input, shared by every
    session: the same text, direction, strategy and new-token bound as the page's analysis
    (:func:`current_analysis`); raises ``InputError`` for unusable input."""
    return lab.worked.layer_tensors_for(view.model, view.text, view.direction_arg, view.kind,
                                          int(view.layer), view.strategy, view.max_new)
