"""Compare two sentences: the same head on sentence A and sentence B, and which heads change most."""

import numpy as np
import streamlit as st

import viz
from app_support import pages
from app_support.gateway import get_analysis
from app_support.i18n import current_lang, note, t
from app_support.messages import show_notes
from app_support.models import MAX_INPUT_CHARS, reads_letters
from app_support.overview import rank_heads_streamed
from app_support.selection import selected_row
from app_support.strategy import name as strategy_name
from app_support.token_display import page_attention
from app_support.ui import chart, escape_md, md_tokens, page_header
from app_support.url_state import clip_input, note_clipped, set_url_param, stop_page
from app_support.view import FROM_COMPARE, current_view, keep_view_across_switch, open_head
from model.public import InputError

view = current_view()
lang = current_lang()
page_header(t("page.compare.title"), t("compare.intro"))

# (label, sentence A, sentence B, word to focus on); the sentences are model input, not interface text
SENTENCE_PRESETS = [
    (t("compare.preset.apple"), "苹果公司发布新品", "我吃了一个苹果", "苹果"),
    (t("compare.preset.bank"), "The bank raised interest rates.", "We sat on the river bank.", "bank"),
]
LETTER_PRESETS = [
    (t("compare.preset.anagram"), "listen", "silent", "s"),
    (t("compare.preset.banana"), "banana", "bandana", "n"),
]
presets = LETTER_PRESETS if reads_letters(view.model) else SENTENCE_PRESETS


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

st.caption(t("compare.presets"))
pcols = st.columns(len(presets) + 2)
for i, (label, a, b, word) in enumerate(presets):
    pcols[i].button(label, key=f"cmp_preset_{i}", on_click=_apply_preset, args=(a, b, word))

ca, cb = st.columns(2)
text_a = ca.text_input(t("compare.sentence_a"), key="cmp_a", max_chars=MAX_INPUT_CHARS)
text_b = cb.text_input(t("compare.sentence_b"), key="cmp_b", max_chars=MAX_INPUT_CHARS)
for col, which, text in ((ca, "a", text_a), (cb, "b", text_b)):
    cut = st.session_state.get(f"cmp_{which}_cut")
    if cut and len(text) == MAX_INPUT_CHARS:
        with col:
            note_clipped(cut, f"sentence_{which}")
set_url_param("a", text_a)
set_url_param("b", text_b)


def _run(text: str, which: str):
    if not text.strip():
        st.info(t("compare.empty", which=which), icon=":material/edit:")
        return None
    try:
        return get_analysis(view.model, text, view.direction_arg, strategy=view.strategy,
                            max_new=view.max_new)
    except InputError as e:
        st.info(t("compare.input_error", which=which, error=escape_md(note(e.message))))
        return None


res_a = _run(text_a, "A")
res_b = _run(text_b, "B")
if res_a is None or res_b is None:
    stop_page()

ca.markdown(t("compare.output", output=escape_md(res_a.output_text) or "∅"))
cb.markdown(t("compare.output", output=escape_md(res_b.output_text) or "∅"))
if view.n_layers.get("cross", 0):
    st.caption(t("strategy.output_by", strategy=strategy_name(res_a.strategy, current_lang())))
with ca:
    show_notes(res_a)
with cb:
    show_notes(res_b)
if res_a.embedding is not None and res_b.embedding is not None:  # an encoder-only model: what it is for
    st.markdown(t("compare.embedding", cos=f"{viz.cosine(res_a.embedding, res_b.embedding):.3f}"))
    st.caption(t("compare.embedding_help", d=res_a.embedding.shape[0]))


def _to_patching() -> None:
    """Open the patching page on these two sentences (and the chosen token)."""
    st.session_state[FROM_COMPARE] = (text_a, text_b, st.session_state.get("cmp_token", ""))
    keep_view_across_switch()


if st.button(t("compare.patch_link"), icon=":material/swap_horiz:", key="cmp_to_patching",
             on_click=_to_patching):
    st.switch_page(pages.page("patching").file)

kind, layer, head = view.kind, view.layer, view.head
# word pieces merged / [CLS], [SEP] hidden if the sidebar says so (the note is written once)
shown_a = page_attention(res_a, kind, view.display)
shown_b = page_attention(res_b, kind, view.display, note=False)
pa, pb = shown_a.pattern[layer, head], shown_b.pattern[layer, head]  # this head only, in A and in B
qa, ka = shown_a.query_tokens, shown_a.key_tokens
qb, kb = shown_b.query_tokens, shown_b.key_tokens

st.subheader(t("compare.subheader", kind=view.kind_label, layer=layer, head=head))
fig = viz.compare_heatmaps(
    pa, qa, pb, qb,
    key_tokens_a=ka, key_tokens_b=kb,
    mask_a=shown_a.mask[layer, head], mask_b=shown_b.mask[layer, head],
    names=(t("compare.sentence_a"), t("compare.sentence_b")),
    lang=lang,
)
chart(fig, key="cmp_heatmaps")

# Tokens that are queries in both sentences, in A's order, without repeats.
shared = viz.shared_tokens(qa, qb)
if not shared:
    st.info(t("compare.no_shared"))
    stop_page()


if st.session_state.get("cmp_token") not in shared:
    special = {t for t, is_special in zip(qa, shown_a.query_special, strict=True) if is_special}
    st.session_state["cmp_token"] = viz.pick_shared_token(shared, st.session_state.get("cmp_word", ""),
                                                          special)
token = st.selectbox(
    t("compare.token"),
    shared,
    key="cmp_token",
    help=t("compare.token_help"),
)
set_url_param("token", token)

st.markdown("A: " + md_tokens(qa, highlight=qa.index(token))
            + "  \nB: " + md_tokens(qb, highlight=qb.index(token)))

left, right = st.columns([3, 2])
with left:
    rd = viz.shared_token_row_diff(pa, qa, pb, qb, token,
                                   key_tokens_a=ka, key_tokens_b=kb)
    chart(viz.row_diff_figure(rd, names=("A", "B"), lang=lang), key="cmp_rowdiff")
    st.caption(t("compare.row_diff_caption"))
with right:
    st.markdown(t("compare.ranking_title"))
    try:
        # one layer at a time: only the token's row in A and in B of each head is computed
        ranking = rank_heads_streamed(shown_a, shown_b, token)
    except ValueError as e:
        st.info(escape_md(str(e)))
    else:
        rank_labels = viz.column_labels("rank_heads_by_change", lang)
        rank_help = viz.column_help("rank_heads_by_change", lang)
        event = st.dataframe(
            ranking,
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key="cmp_ranking",
            column_config={
                "rank": st.column_config.NumberColumn(rank_labels["rank"], help=rank_help["rank"]),
                "layer": st.column_config.NumberColumn(rank_labels["layer"]),
                "head": st.column_config.NumberColumn(rank_labels["head"]),
                "js_divergence": st.column_config.ProgressColumn(
                    rank_labels["js_divergence"], min_value=0.0, max_value=float(np.log(2)), format="%.3f",
                    help=rank_help["js_divergence"],
                ),
                "n_queries": st.column_config.NumberColumn(
                    rank_labels["n_queries"], help=rank_help["n_queries"],
                ),
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
        st.caption(t("compare.select_row"))
