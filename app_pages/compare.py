"""Compare two sentences: the same head on sentence A and sentence B, and which heads change most."""

import numpy as np
import streamlit as st

import viz
from app_support.messages import note_clipped, show_notes
from app_support.models import MAX_INPUT_CHARS, get_analysis, special_mask
from app_support.selection import selected_row
from app_support.sidebar import current_view, open_head
from app_support.ui import chart, escape_md, md_tokens, page_header
from app_support.url_state import clip_input, set_url_param, stop_page
from model.data.tasks import InputError

view = current_view()
page_header(
    "Compare two sentences",
    "The same word can mean different things: does the model *attend* differently when the "
    "context changes? Type two sentences that share a word, pick the shared token, and compare the "
    "selected head on both (same layer, head and colour scale), the token's attention row in each, "
    "and a ranking of the heads whose attention changes most.",
)

# (label, sentence A, sentence B, word to focus on)
TRANSLATION_PRESETS = [
    ("苹果: company vs. fruit", "苹果公司发布新品", "我吃了一个苹果", "苹果"),
    ("bank: money vs. river", "The bank raised interest rates.", "We sat on the river bank.", "bank"),
]
LETTER_PRESETS = [
    ("listen / silent (same letters)", "listen", "silent", "s"),
    ("banana / bandana", "banana", "bandana", "n"),
]
presets = TRANSLATION_PRESETS if view.is_translation else LETTER_PRESETS


def _apply_preset(a: str, b: str, word: str) -> None:
    st.session_state["cmp_a"] = a
    st.session_state["cmp_b"] = b
    st.session_state["cmp_word"] = word
    st.session_state.pop("cmp_token", None)


if st.session_state.get("cmp_model") != view.model:
    # New model (or first visit): start from the URL, else from the first preset of this kind of model.
    for key in ("cmp_a", "cmp_b", "cmp_token", "cmp_word"):
        st.session_state.pop(key, None)
    if st.session_state.get("cmp_model") is None and "a" in st.query_params and "b" in st.query_params:
        st.session_state["cmp_a"], st.session_state["cmp_a_cut"] = clip_input(st.query_params["a"])
        st.session_state["cmp_b"], st.session_state["cmp_b_cut"] = clip_input(st.query_params["b"])
        st.session_state["cmp_word"] = st.query_params.get("token", "")
    else:
        _apply_preset(*presets[0][1:])
    st.session_state["cmp_model"] = view.model

st.caption("Presets — one click:")
pcols = st.columns(len(presets) + 2)
for i, (label, a, b, word) in enumerate(presets):
    pcols[i].button(label, key=f"cmp_preset_{i}", on_click=_apply_preset, args=(a, b, word))

ca, cb = st.columns(2)
text_a = ca.text_input("Sentence A", key="cmp_a", max_chars=MAX_INPUT_CHARS)
text_b = cb.text_input("Sentence B", key="cmp_b", max_chars=MAX_INPUT_CHARS)
for col, which, text in ((ca, "a", text_a), (cb, "b", text_b)):
    cut = st.session_state.get(f"cmp_{which}_cut")
    if cut and len(text) == MAX_INPUT_CHARS:
        with col:
            note_clipped(cut, f"sentence_{which}")
set_url_param("a", text_a)
set_url_param("b", text_b)


def _run(text: str, which: str):
    if not text.strip():
        st.info(f"Sentence {which} is empty — type a sentence that shares a word with the other one.", icon=":material/edit:")
        return None
    try:
        return get_analysis(view.model, text, view.direction_arg)
    except InputError as e:
        st.info(f"Sentence {which}: {escape_md(str(e))}")
        return None


res_a = _run(text_a, "A")
res_b = _run(text_b, "B")
if res_a is None or res_b is None:
    stop_page()

ca.markdown("Output: **" + (escape_md(res_a.output_text) or "∅") + "**")
cb.markdown("Output: **" + (escape_md(res_b.output_text) or "∅") + "**")
with ca:
    show_notes(res_a)
with cb:
    show_notes(res_b)

kind, layer, head = view.kind, view.layer, view.head
pa, pb = res_a.attention(kind), res_b.attention(kind)
sa, sb = res_a.attention(kind, "scores"), res_b.attention(kind, "scores")
qa, ka = res_a.tokens_for(kind)
qb, kb = res_b.tokens_for(kind)

st.subheader(f"{view.kind_label} · layer {layer} · head {head}, on both sentences")
fig = viz.compare_heatmaps(
    pa[layer, head], qa, pb[layer, head], qb,
    key_tokens_a=ka, key_tokens_b=kb,
    mask_a=~np.isfinite(sa[layer, head]), mask_b=~np.isfinite(sb[layer, head]),
    names=("Sentence A", "Sentence B"),
)
chart(fig, key="cmp_heatmaps")

# Tokens that are queries in both sentences, in A's order, without repeats.
shared = viz.shared_tokens(qa, qb)
if not shared:
    st.info(
        "The two sentences share no query token for this attention kind, so their rows cannot be "
        "compared. Try sentences with a word in common (or another attention kind)."
    )
    stop_page()


if st.session_state.get("cmp_token") not in shared:
    special = {t for t, is_special in zip(qa, special_mask(qa), strict=True) if is_special}
    st.session_state["cmp_token"] = viz.pick_shared_token(shared, st.session_state.get("cmp_word", ""), special)
token = st.selectbox(
    "Shared token to follow",
    shared,
    key="cmp_token",
    help="Tokens present in both sentences (as queries of this attention kind). Word starts in the "
    "translation model's English tokens carry “▁”.",
)
set_url_param("token", token)

st.markdown("A: " + md_tokens(qa, highlight=qa.index(token)) + "  \nB: " + md_tokens(qb, highlight=qb.index(token)))

left, right = st.columns([3, 2])
with left:
    rd = viz.shared_token_row_diff(pa[layer, head], qa, pb[layer, head], qb, token, key_tokens_a=ka, key_tokens_b=kb)
    chart(viz.row_diff_figure(rd, names=("A", "B")), key="cmp_rowdiff")
    st.caption(
        "Top two: where the token looks in each sentence. Bottom: B − A on the keys both sentences "
        "share (blue = more attention in B, red = less)."
    )
with right:
    st.markdown("**Heads ranked by how much this token's attention changes**")
    try:
        ranking = viz.rank_heads_by_change(pa, qa, pb, qb, token, key_tokens_a=ka, key_tokens_b=kb)
    except ValueError as e:
        st.info(escape_md(str(e)))
    else:
        event = st.dataframe(
            ranking,
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key="cmp_ranking",
            column_config={
                "js_divergence": st.column_config.ProgressColumn(
                    "change (JS, nats)", min_value=0.0, max_value=float(np.log(2)), format="%.3f",
                    help="Jensen-Shannon divergence between the token's attention over the shared keys "
                    "in A and in B: 0 = identical, log 2 ≈ 0.69 = completely different.",
                ),
                "n_queries": st.column_config.NumberColumn("rows", help="query rows averaged"),
            },
            width="stretch",
        )
        row = selected_row(event)
        # Act once per new selection: the table keeps its selection while the sidebar moves on.
        handled = (token, row)
        if row is not None and 0 <= row < len(ranking) and st.session_state.get("cmp_handled") != handled:
            st.session_state["cmp_handled"] = handled
            sel = (int(ranking.loc[row, "layer"]), int(ranking.loc[row, "head"]))
            if sel != (layer, head):
                open_head(*sel, page=None)
        elif row is None:
            st.session_state["cmp_handled"] = None
        st.caption("Select a row to show that head above.")
