"""Aggregates: the mean over heads of one layer, and attention rollout across layers."""

import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.token_display import page_attention
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param
from app_support.view import current_view

lang = current_lang()
view = current_view()
page_header(t("aggregates.title"), t("aggregates.intro"))
result = current_analysis(view)

shown = page_attention(result, view.kind, view.display)  # pieces merged, [CLS]/[SEP] hidden, as chosen
patterns = shown.pattern
queries, keys = shown.query_tokens, shown.key_tokens

left, right = st.columns(2)
with left:
    st.subheader(t("aggregates.mean_header", n_heads=patterns.shape[1], layer=view.layer))
    masked = shown.mask[view.layer].all(axis=0)  # masked in every head (e.g. the future)
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
        if shown.display.active:  # rolled out over the model's tokens, then merged / hidden as shown
            tokens, _ = result.tokens_for(view.kind)
            roll = viz.attention_rollout_figure(result.attention(view.kind), tokens, add_residual=residual,
                                                units=shown.queries, renormalise=shown.display.renormalise,
                                                lang=lang)
        else:
            roll = viz.attention_rollout_figure(patterns, queries, add_residual=residual, lang=lang)
        chart(roll, key="agg_rollout")
        st.caption(t("aggregates.rollout_caption"))
        if shown.display.active:
            st.caption(t("aggregates.rollout_units"))
