"""Aggregates: the mean over heads of one layer, and attention rollout across layers."""

import numpy as np
import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param

lang = current_lang()
view = current_view()
page_header(t("aggregates.title"), t("aggregates.intro"))
result = current_analysis(view)

patterns = result.attention(view.kind)
scores = result.attention(view.kind, "scores")
queries, keys = result.tokens_for(view.kind)

left, right = st.columns(2)
with left:
    st.subheader(t("aggregates.mean_header", n_heads=patterns.shape[1], layer=view.layer))
    masked = (~np.isfinite(scores[view.layer])).all(axis=0)  # masked in every head (e.g. the future)
    fig = viz.mean_over_heads_figure(patterns, queries, keys, view.layer, mask_2d=masked, lang=lang)
    chart(fig, key="agg_mean")
    st.caption(t("aggregates.mean_caption"))
with right:
    st.subheader(t("aggregates.rollout_header"))
    if view.kind == "cross":
        st.info(t("aggregates.rollout_cross"))
    else:
        seed_from_url("agg_residual", "residual", lambda v: v != "0", True)
        residual = st.toggle(
            t("aggregates.residual"),
            key="agg_residual",
            help=t("aggregates.residual_help"),
        )
        set_url_param("residual", "1" if residual else "0")
        roll = viz.attention_rollout_figure(patterns, queries, add_residual=residual, lang=lang)
        chart(roll, key="agg_rollout")
        st.caption(t("aggregates.rollout_caption"))
