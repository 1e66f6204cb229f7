"""Single head: one head's attention pattern as a token x token heatmap."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param

view = current_view()
page_header(t("page.single.title"), t("single.intro"))
result = current_analysis(view)

seed_from_url("single_per_head_scale", "scale", lambda v: v == "head", False)
per_head = st.toggle(
    t("single.scale"),
    key="single_per_head_scale",
    help=t("single.scale_help"),
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
    title=t("single.figure_title", layer=view.layer, head=view.head),
    zmax=None if per_head else 1.0,
    subtitle=view.kind_label,
    lang=current_lang(),
)
chart(fig, key="single_head_heatmap")

masked = ~np.isfinite(scores)
notes = [t("single.note_axes")]
if masked.any():
    notes.append(t("single.note_masked"))
if view.kind == "cross":
    notes.append(t("single.note_cross"))
st.caption(" ".join(notes))

with st.expander(t("single.numbers")):
    labels_q = [f"{i}: {t}" for i, t in enumerate(queries)]
    labels_k = [f"{j}: {t}" for j, t in enumerate(keys)]
    table = pd.DataFrame(np.where(masked, np.nan, pattern), index=labels_q, columns=labels_k)
    st.caption(t("single.numbers_caption"))
    st.dataframe(table.style.format("{:.3f}", na_rep=""))
