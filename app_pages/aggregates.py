"""Aggregates: the mean over heads of one layer, and attention rollout across layers."""

import numpy as np
import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param

view = current_view()
page_header(
    "Mean over heads & attention rollout",
    "Two popular summaries. Neither is something the model computes — each is **our** way of "
    "squeezing many heads into one picture, and both hide what individual heads do.",
)
result = current_analysis(view)

patterns = result.attention(view.kind)
scores = result.attention(view.kind, "scores")
queries, keys = result.tokens_for(view.kind)

left, right = st.columns(2)
with left:
    st.subheader(f"Mean over the {patterns.shape[1]} heads of layer {view.layer}")
    masked = (~np.isfinite(scores[view.layer])).all(axis=0)  # masked in every head (e.g. the future)
    fig = viz.mean_over_heads_figure(patterns, queries, keys, view.layer, mask_2d=masked)
    chart(fig, key="agg_mean")
    st.caption(
        "The plain average of the layer's heads. The layer's real output *concatenates* the heads "
        "and mixes them with a learned matrix, so a head with a sharp pattern may be washed out here."
    )
with right:
    st.subheader("Attention rollout through all layers")
    if view.kind == "cross":
        st.info(
            "Rollout multiplies self-attention matrices layer by layer (tokens → same tokens), so it "
            "is defined for encoder or decoder self-attention, not for cross-attention. Pick a "
            "self-attention kind in the sidebar."
        )
    else:
        seed_from_url("agg_residual", "residual", lambda v: v != "0", True)
        residual = st.toggle(
            "Count the residual connection",
            key="agg_residual",
            help="Each block adds its input back to its output; rollout models this by adding the "
            "identity to each layer's mean attention (Abnar & Zuidema, 2020).",
        )
        set_url_param("residual", "1" if residual else "0")
        roll = viz.attention_rollout_figure(patterns, queries, add_residual=residual)
        chart(roll, key="agg_rollout")
        st.caption(
            "Row i estimates how much the top layer's token i draws on each input token, by "
            "multiplying the head-averaged attention of every layer (with the residual path). "
            "It is an estimate of information flow, not an attention pattern of the model."
        )
