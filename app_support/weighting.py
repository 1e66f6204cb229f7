"""The attention pages' display option: the softmax's weights, or weight × ‖value‖ (norm-based attention,
Kobayashi et al. 2020; the arithmetic is model/lab/flow.py). One widget for the single head, all heads and
token focus pages, kept in the URL as ``weigh=norm``; the choice is part of the view's
:class:`~app_support.token_display.TokenDisplay`, so what a page keeps per input is kept per choice."""

from __future__ import annotations

import dataclasses

import streamlit as st

from app_support.i18n import current_lang, t, text
from app_support.sidebar import clamp_choice
from app_support.token_display import TokenDisplay
from app_support.url_state import seed_from_url, set_url_param
from model.lab.flow import WEIGHTINGS, NoValueNorms, layer_value_norms
from model.run.analysis import Analysis

URL_PARAM = "weigh"


def choose_weighting(
    page: str, result: Analysis, kind: str, display: TokenDisplay, container=st
) -> TokenDisplay:
    """``display`` with the weighting the page's radio chooses (``page``: the widget's key prefix).
    An analysis without value norms (one saved before they were recorded) is shown by weight, with a line
    that says so."""
    key = f"{page}_weigh"
    seed_from_url(key, URL_PARAM, lambda v: v if v in WEIGHTINGS else None, WEIGHTINGS[0])
    clamp_choice(key, list(WEIGHTINGS), WEIGHTINGS[0])
    lang = current_lang()  # captured: the widget's labels are formatted again outside this run
    choice = container.radio(
        t("flow.weighting"),
        WEIGHTINGS,
        key=key,
        horizontal=True,
        format_func=lambda w: text(lang, f"flow.weighting.{w}"),
        help=t("flow.weighting_help"),
    )
    set_url_param(URL_PARAM, choice)
    if choice == "norm":
        try:
            layer_value_norms(result, kind)
        except NoValueNorms:
            st.info(t("flow.no_value_norms"))
            return display
        with st.expander(t("flow.norm_title")):
            st.markdown(t("flow.norm_explain"))
    return dataclasses.replace(display, weighting=choice)
