"""Aggregates: the mean over heads of one layer, and attention rollout across layers."""

import streamlit as st

import viz
from app_support.head_summaries import layer_mean, rollout, shown_layout
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param
from app_support.view import current_view

lang = current_lang()
view = current_view()
page_header(t("aggregates.title"), t("aggregates.intro"))
result = current_analysis(view)

shown = shown_layout(result, view.kind, view.display)  # pieces merged, [CLS]/[SEP] hidden, as chosen
n_heads = result.attention(view.kind).shape[1]

left, right = st.columns(2)
with left:
    st.subheader(t("aggregates.mean_header", n_heads=n_heads, layer=view.layer))
    mean, masked = layer_mean(result, view.kind, view.layer, shown)  # this layer only; masked in every head
    fig = viz.layer_mean_figure(mean, shown.query_tokens, shown.key_tokens, view.layer, mask_2d=masked,
                                lang=lang)
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
        roll, labels = rollout(result, view.kind, residual, shown)  # streamed, remembered for this input
        chart(viz.rollout_figure(roll, labels, add_residual=residual, lang=lang), key="agg_rollout")
        st.caption(t("aggregates.rollout_caption"))
        st.caption(t("aggregates.rollout_streamed"))
        if shown.display.active:
            st.caption(t("aggregates.rollout_units"))
