"""Single head: one head's attention pattern as a token x token heatmap."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param

view = current_view()
page_header(
    "Single head",
    "Attention lets every token (a **query**, one row) collect information from other tokens "
    "(the **keys**, the columns). Each row holds the weights that query gives to every key; "
    "a row always sums to 1. Dark cells are where this head *looks*. "
    "Pick the attention kind, layer and head in the sidebar.",
)
result = current_analysis(view)

seed_from_url("single_per_head_scale", "scale", lambda v: v == "head", False)
per_head = st.toggle(
    "Scale colours to this head's strongest weight",
    key="single_per_head_scale",
    help="Off: a fixed 0–1 scale, so heads can be compared. On: the darkest colour is this head's "
    "largest weight, which shows structure in heads whose weights are all small.",
)
set_url_param("scale", "head" if per_head else "fixed")

pattern = result.attention(view.kind)[view.layer, view.head]
scores = result.attention(view.kind, "scores")[view.layer, view.head]
queries, keys = result.tokens_for(view.kind)
fig = viz.attention_heatmap(
    pattern,
    queries,
    keys,
    scores_2d=scores,
    title=f"Attention of layer {view.layer} · head {view.head}",
    zmax=None if per_head else 1.0,
    subtitle=view.kind_label,
)
chart(fig, key="single_head_heatmap")

masked = ~np.isfinite(scores)
notes = [
    "Rows: **queries** (the token doing the looking). Columns: **keys** (the tokens looked at). "
    "Hover a cell for its weight and its pre-softmax score (the scaled dot product q·k/√d_head)."
]
if masked.any():
    notes.append(
        "Grey cells are **masked**: in the decoder a token may not look at tokens that come after it "
        "(they have not been generated yet), so their weight is exactly 0."
    )
if view.kind == "cross":
    notes.append("Cross-attention: output tokens (rows) read the encoder's source tokens (columns).")
st.caption(" ".join(notes))

with st.expander("The numbers behind the picture"):
    labels_q = [f"{i}: {t}" for i, t in enumerate(queries)]
    labels_k = [f"{j}: {t}" for j, t in enumerate(keys)]
    table = pd.DataFrame(np.where(masked, np.nan, pattern), index=labels_q, columns=labels_k)
    st.caption("Attention weights (rows sum to 1; empty = masked).")
    st.dataframe(table.style.format("{:.3f}", na_rep=""))
