"""Cross-attention and decoding: walk through greedy decoding one output token at a time."""

import numpy as np
import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, escape_md, md_tokens, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

lang = current_lang()
view = current_view()
page_header(t("page.decoding.title"), t("decoding.intro"))
result = current_analysis(view)

steps = result.steps
n_steps = len(steps)
seed_from_url("decode_step", "step", lambda v: url_int(v, 0), 0)
if not 0 <= int(st.session_state.get("decode_step", 0)) < n_steps:
    st.session_state["decode_step"] = 0
if n_steps > 1:
    step_no = st.slider(t("decoding.slider"), 0, n_steps - 1, key="decode_step",
                        help=t("decoding.slider_help"))
else:
    step_no = 0
set_url_param("step", step_no)
step = steps[step_no]
pos = step.position

read = result.target_tokens[: pos + 1]
st.markdown(
    t("decoding.step_read", step=step_no, tokens=md_tokens(read, highlight=pos), token=escape_md(step.token))
    + t("decoding.step_prob", p=step.prob)
)
if result.teacher_forced:
    st.caption(t("decoding.teacher_forced"))

cross = result.attention("cross")  # [layer, head, query, key]
cross_scores = result.attention("cross", "scores")
dec = result.attention("decoder")
dec_scores = result.attention("decoder", "scores")
layer, head = view.layer, view.head
if layer >= cross.shape[0]:
    layer = 0

left, right = st.columns([3, 2])
with left:
    fig = viz.cross_attention_step(
        cross[:, :, pos, :], result.source_tokens, step_token=step.token, step=step_no,
        title=t("decoding.cross_title", step=step_no), lang=lang,
    )
    chart(fig, key="decode_cross_all")
    st.caption(t("decoding.cross_caption"))
with right:
    top = viz.topk_bar(step.top_tokens, np.asarray(step.top_probs, dtype=np.float32),
                       title=t("decoding.topk_title", step=step_no), lang=lang)
    chart(top, key="decode_topk")
    st.caption(t("decoding.topk_caption"))

c1, c2 = st.columns(2)
with c1:
    one = viz.attention_heatmap(
        cross[layer, head, pos : pos + 1, :],
        [result.target_tokens[pos]],
        result.source_tokens,
        scores_2d=cross_scores[layer, head, pos : pos + 1, :],
        title=t("decoding.cross_row_title", layer=layer, head=head),
        lang=lang,
    )
    chart(one, key="decode_cross_one")
with c2:
    row = viz.attention_heatmap(
        dec[layer, head, pos : pos + 1, :],
        [result.target_tokens[pos]],
        result.target_tokens,
        scores_2d=dec_scores[layer, head, pos : pos + 1, :],
        title=t("decoding.self_row_title", layer=layer, head=head),
        lang=lang,
    )
    chart(row, key="decode_self_row")
st.caption(t("decoding.rows_caption"))
