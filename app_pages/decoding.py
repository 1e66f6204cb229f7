"""Cross-attention and decoding: walk through greedy decoding one output token at a time."""

import numpy as np
import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.sidebar import current_view
from app_support.ui import chart, escape_md, md_tokens, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

view = current_view()
page_header(
    "Step-by-step decoding",
    "The decoder writes the output **one token at a time** (greedy decoding: always the most "
    "likely next token). At each step it reads what it has written so far with **masked "
    "self-attention** and looks back at the source sentence with **cross-attention**; then it "
    "scores every token of its vocabulary. Move the slider to replay the steps.",
)
result = current_analysis(view)

steps = result.steps
n_steps = len(steps)
seed_from_url("decode_step", "step", lambda v: url_int(v, 0), 0)
if not 0 <= int(st.session_state.get("decode_step", 0)) < n_steps:
    st.session_state["decode_step"] = 0
if n_steps > 1:
    t = st.slider("Decoding step", 0, n_steps - 1, key="decode_step", help="Step t produces output token t.")
else:
    t = 0
set_url_param("step", t)
step = steps[t]
pos = step.position

read = result.target_tokens[: pos + 1]
p_chosen = step.top_probs[step.top_ids.index(step.token_id)] if step.token_id in step.top_ids else None
st.markdown(
    f"**Step {t}** — the decoder has read {md_tokens(read, highlight=pos)}  \n"
    f"and chooses **{escape_md(step.token)}**"
    + (f" (probability {p_chosen:.1%})." if p_chosen is not None else ".")
)
if result.teacher_forced:
    st.caption("Teacher-forced: the output is the given target, not the model's own choice.")

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
        cross[:, :, pos, :], result.source_tokens, step_token=step.token, step=t,
        title=f"Step {t}: cross-attention of every head",
    )
    chart(fig, key="decode_cross_all")
    st.caption(
        "One row per decoder layer · head. Each row is a distribution over the source tokens: "
        "where that head looks in the source while this output token is chosen."
    )
with right:
    top = viz.topk_bar(step.top_tokens, np.asarray(step.top_probs, dtype=np.float32),
                       title=f"Step {t}: most likely next tokens")
    chart(top, key="decode_topk")
    st.caption("The model's probabilities for the next token; greedy decoding takes the top one.")

c1, c2 = st.columns(2)
with c1:
    one = viz.attention_heatmap(
        cross[layer, head, pos : pos + 1, :],
        [result.target_tokens[pos]],
        result.source_tokens,
        scores_2d=cross_scores[layer, head, pos : pos + 1, :],
        title=f"Cross-attention row, layer {layer} · head {head}",
    )
    chart(one, key="decode_cross_one")
with c2:
    row = viz.attention_heatmap(
        dec[layer, head, pos : pos + 1, :],
        [result.target_tokens[pos]],
        result.target_tokens,
        scores_2d=dec_scores[layer, head, pos : pos + 1, :],
        title=f"Self-attention row, layer {layer} · head {head}",
    )
    chart(row, key="decode_self_row")
st.caption(
    "Left: the selected head's cross-attention row at this step. Right: the same head's masked "
    "self-attention row — grey keys lie in the future and cannot be seen."
)
