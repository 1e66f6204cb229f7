"""Activation patching: run sentence B with one head's output (or one block's residual stream) taken
from sentence A, and see how B's output moves toward A's; every head ranked by how much it moves B."""

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import patching as PT
from app_support import gateway as G
from app_support import interventions as IV
from app_support import lab
from app_support import models as M
from app_support.i18n import current_lang, note, t, text
from app_support.messages import needs_output
from app_support.selection import clicked_head
from app_support.strategy import greedy_here
from app_support.ui import chart, escape_md, md_output, md_tokens, page_header
from app_support.url_state import clip_input, set_url_param, stop_page
from app_support.view import FROM_COMPARE, current_view, open_head
from model.public import InputError, Site, get_kind
from viz.interventions import head_matrix, step_bars, step_pair_bars

view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
lm = G.config(view.model).decoder_only  # a language model: prompts A (clean) and B (corrupted), continued
page_header(t("page.patching.title"), t("patching.intro_lm" if lm else "patching.intro"))
if not lm:  # a translation's outputs follow the sidebar's cap (None: to the end token), none at 0
    needs_output(view)
max_new = IV.lm_bound(view.max_new) if lm else view.max_new  # what every decoding here writes at most

# Sentence pairs (model input, not interface text): the compare page's presets.
PRESETS = {True: ("苹果公司发布新品", "我吃了一个苹果", "苹"), False: ("listen", "silent", "")}

handoff = st.session_state.pop(FROM_COMPARE, None)
if handoff is not None:  # opened from the compare page: its two sentences and token
    st.session_state["pat_a"], st.session_state["pat_b"] = handoff[0], handoff[1]
    st.session_state["pat_token_wish"] = handoff[2] or ""
    st.session_state["_pat_model"] = view.model
if st.session_state.get("_pat_model") != view.model:
    for key in ("pat_a", "pat_b", "pat_token"):
        st.session_state.pop(key, None)
    a0, b0, token0 = PT.LM_PRESET if lm else PRESETS[view.is_translation]
    if st.session_state.get("_pat_model") is None and "a" in st.query_params and "b" in st.query_params:
        a0, b0 = clip_input(st.query_params["a"])[0], clip_input(st.query_params["b"])[0]
        token0 = st.query_params.get("token", "")
    st.session_state["pat_a"], st.session_state["pat_b"] = a0, b0
    st.session_state["pat_token_wish"] = token0
    st.session_state["_pat_model"] = view.model
if "_pat_site_wish" in st.session_state:  # a click in the ranking: patch that head
    st.session_state["pat_site"] = st.session_state.pop("_pat_site_wish")
if "pat_site" not in st.session_state:
    st.session_state["pat_site"] = "resid" if st.query_params.get("site") == "resid" else "head"

ca, cb = st.columns(2)
which = "prompt" if lm else "sentence"
text_a = ca.text_input(t(f"patching.{which}_a"), key="pat_a", max_chars=M.MAX_INPUT_CHARS,
                       help=t(f"patching.{which}_a_help"))
text_b = cb.text_input(t(f"patching.{which}_b"), key="pat_b", max_chars=M.MAX_INPUT_CHARS,
                       help=t(f"patching.{which}_b_help"))
set_url_param("a", text_a)
set_url_param("b", text_b)


def _run(text: str, which: str):
    if not text.strip():
        st.info(t("patching.empty", which=which), icon=":material/edit:")
        return None
    try:
        # A language model's tokens are its prompt's: one new token is enough to read them.
        return G.get_analysis(view.model, text, view.direction_arg, max_new=1 if lm else max_new)
    except InputError as e:
        st.info(t("patching.input_error", which=which, error=escape_md(note(e.message))))
        return None


res_a, res_b = _run(text_a, "A"), _run(text_b, "B")
if res_a is None or res_b is None:
    stop_page()
if lm and len(res_a.source_tokens) != len(res_b.source_tokens):  # positions are paired one to one
    st.info(t("patching.lm.unequal", len_a=len(res_a.source_tokens), len_b=len(res_b.source_tokens)),
            icon=":material/link_off:")
    stop_page()

# Tokens of B that A also has, on either side (the source, and the decoder's input).
shared = []
for side_a, side_b in (
    (res_a.source_tokens, res_b.source_tokens),
    (res_a.target_tokens, res_b.target_tokens),
):
    shared += [tok for tok in dict.fromkeys(side_b) if tok in side_a and tok not in shared]
options = [""] + shared
wish = st.session_state.pop("pat_token_wish", None)
if wish is not None:
    st.session_state["pat_token"] = wish if wish in options else (shared[0] if shared else "")
elif st.session_state.get("pat_token") not in options:
    st.session_state["pat_token"] = ""
token, position = "", None
if lm:  # the prompts are paired position by position: all of them, or one
    prompt_b = res_b.source_tokens
    if "_pat_pos_wish" in st.session_state:  # a click in the residual grid: patch that position
        st.session_state["pat_pos"] = st.session_state.pop("_pat_pos_wish")
    if st.session_state.get("pat_pos", -1) not in range(-1, len(prompt_b)):
        st.session_state["pat_pos"] = -1

    def _position_label(p: int) -> str:
        return t("patching.lm.all_positions") if p < 0 else f"{p} · {prompt_b[p]}"

    position = st.selectbox(t("patching.lm.position"), list(range(-1, len(prompt_b))), key="pat_pos",
                            help=t("patching.lm.position_help"), format_func=_position_label)
    position = None if position < 0 else position
else:
    token = st.selectbox(
        t("patching.token"),
        options,
        key="pat_token",
        help=t("patching.token_help"),
        format_func=lambda tok: text(lang, "patching.token_none") if tok == "" else tok,
    )
    set_url_param("token", token)
site_what = st.radio(
    t("patching.site"),
    ["head", "resid"],
    key="pat_site",
    horizontal=True,
    format_func=lambda w: text(
        lang,
        f"patching.site.{w}",
        kind=text(lang, f"kind.{view.kind}.label"),  # not t(): a widget's format_func may run outside the run
        layer=view.layer,
        head=view.head,
        stack=text(lang, f"patching.stack.{get_kind(view.kind).stack}"),
    ),
    help=t("patching.site_help"),
)
set_url_param("site", site_what)
site = Site(site_what, view.kind, view.layer, view.head if site_what == "head" else None)


# --------------------------------------------------------------------------- the alignment


def show_alignment(side: str, tokens_a: list[str], tokens_b: list[str]) -> None:
    al = PT.alignment(tokens_a, tokens_b, side, token)
    where = t(f"patching.side.{side}")
    if al.pairs:
        st.markdown(t(f"patching.aligned.{al.reason}", side=where, n=len(al.pairs), total=len(tokens_b)))
        st.markdown(
            "A: "
            + md_tokens(tokens_a, highlight=al.pairs[0][1] if al.reason == "token" else None)
            + "  \nB: "
            + md_tokens(tokens_b, highlight=al.pairs[0][0] if al.reason == "token" else None)
        )
    else:
        st.info(
            t(
                f"patching.unaligned.{al.reason}",
                side=where,
                len_a=len(tokens_a),
                len_b=len(tokens_b),
                token=escape_md(token),
                count_a=al.count_a,
                count_b=al.count_b,
            ),
            icon=":material/link_off:",
        )


st.subheader(t("patching.align.header"))
if lm:
    n_prompt = len(res_b.source_tokens)
    st.markdown(t("patching.lm.aligned", n=1 if position is not None else n_prompt, total=n_prompt))
    st.markdown("A: " + md_tokens(res_a.source_tokens, highlight=position) + "  \nB: "
                + md_tokens(res_b.source_tokens, highlight=position))
    st.caption(t("patching.lm.bound", n=max_new, most=IV.LM_DEFAULT_NEW))
else:
    show_alignment(site.side, *((res_a.source_tokens, res_b.source_tokens) if site.side == "source"
                                else (res_a.target_tokens, res_b.target_tokens)))
if site.side == "source":
    st.caption(t("patching.align.steps"))
    show_alignment("target", res_a.target_tokens, res_b.target_tokens)


# --------------------------------------------------------------------------- 1. one patch

st.subheader(
    t(
        "patching.effect.header",
        site=t(
            f"patching.site.{site_what}",
            kind=view.kind_label,
            layer=view.layer,
            head=view.head,
            stack=text(lang, f"patching.stack.{get_kind(view.kind).stack}"),
        ),
    )
)
with st.spinner(t("analysis.running")):
    result = lab.patching.patch(view.model, text_a, text_b, site, token or None, view.direction_arg,
                                max_new, position)
cols = st.columns(3)
for col, label_key, output in (
    (cols[0], "patching.output_a", result.output_a),
    (cols[1], "patching.output_b", result.output_b),
    (cols[2], "patching.output_patched", result.output),
):
    col.caption(t(label_key.replace("output", "continuation") if lm else label_key))
    col.markdown(md_output(output))
st.caption(greedy_here("intervention", view.strategy, current_lang()))
stopped = [m for m in res_a.notes + res_b.notes if m.code == "output_max_new"]
if not lm and stopped:  # the sidebar's cap cut a translation, as the decoding page says
    st.caption(note(stopped[0]))
if not result.alignment.pairs:
    st.info(t("patching.nothing_patched"), icon=":material/info:")
toward = result.toward_a
st.markdown(
    t(
        "patching.summary",
        kl=f"{result.mean_kl:.4f}",
        toward=t("patching.toward_none") if toward is None else f"{toward:.3f}",
        verdict=t(
            "patching.same_as_a"
            if result.output == result.output_a
            else "patching.same_as_b"
            if result.output == result.output_b
            else "patching.other_output"
        ),
    )
)
if result.logit_diff is not None:  # a language model: how far B's first answer token moved toward A's
    recovered = result.recovered
    st.markdown(t("patching.lm.answer", a=escape_md(result.answers[0]), b=escape_md(result.answers[1]),
                  ld_a=f"{result.logit_diff[0]:+.3f}", ld_b=f"{result.logit_diff[1]:+.3f}",
                  ld_p=f"{result.logit_diff[2]:+.3f}",
                  recovered=t("patching.toward_none") if recovered is None else f"{recovered:.3f}"))
tokens = [s.token for s in result.steps]
chart(
    step_bars(
        tokens,
        np.array([s.kl for s in result.steps]),
        title=t("patching.kl_title"),
        value_name=t("patching.kl_name"),
        lang=lang,
    ),
    key="pat_kl",
)
chart(
    step_pair_bars(
        tokens,
        np.array([s.p_intact for s in result.steps]),
        np.array([s.p_patched for s in result.steps]),
        names=(t("patching.b_intact"), t("patching.b_patched")),
        title=t("patching.p_title"),
        value_name=t("patching.p_name"),
        lang=lang,
    ),
    key="pat_p",
)
st.dataframe(
    pd.DataFrame(
        {
            t("patching.col.step"): list(range(len(result.steps))),
            t("patching.col.token"): tokens,
            t("patching.col.kl"): [s.kl for s in result.steps],
            t("patching.col.p_intact"): [s.p_intact for s in result.steps],
            t("patching.col.p_patched"): [s.p_patched for s in result.steps],
            t("patching.col.a_token"): [s.a_token if s.a_token is not None else "—" for s in result.steps],
            t("patching.col.toward"): [
                s.toward_a if s.toward_a is not None else np.nan for s in result.steps
            ],
        }
    ),
    hide_index=True,
    column_config={
        t(f"patching.col.{c}"): st.column_config.NumberColumn(format="%.4f")
        for c in ("kl", "p_intact", "p_patched", "toward")
    },
)
st.caption(t("patching.table_caption"))


# --------------------------------------------------------------------------- 2. every head


def lm_ranking() -> None:
    """A language model: every head, or the residual stream at every (block, position), patched alone."""
    column = "head" if site_what == "head" else "position"
    st.subheader(t(f"patching.lm.rank.header_{column}"))
    n_cols = view.n_heads if column == "head" else len(res_b.source_tokens)
    st.markdown(t(f"patching.lm.rank.explain_{column}", sites=view.n_layers["decoder"] * n_cols))
    working = t("patching.lm.rank.progress")
    bar = st.progress(0.0, text=working)
    effects = PT.rank_lm(view.model, text_a, text_b, view.direction_arg, site_what, view.n_layers["decoder"],
                         lambda share: bar.progress(share, text=working))
    bar.empty()
    values = PT.recovered_matrix(effects, view.n_layers["decoder"], n_cols, column)
    marked = [(view.layer, view.head if column == "head" else position)] if (column == "head" or position
                                                                              is not None) else []
    event = chart(head_matrix(values, title=t(f"patching.lm.rank.matrix_title_{column}"),
                              value_name=t("patching.lm.recovered"), signed=True, marked=marked, lang=lang,
                              columns=None if column == "head" else res_b.source_tokens,
                              column_title=None if column == "head" else t("patching.lm.position_axis")),
                  key=f"pat_lm_rank_{column}", on_select="rerun", selection_mode=("points",))
    hit = clicked_head(event)
    if hit is not None and st.session_state.get("pat_lm_rank_handled") != (column, hit):
        st.session_state["pat_lm_rank_handled"] = (column, hit)
        if column == "position":
            st.session_state["_pat_pos_wish"] = hit[1]
        open_head(hit[0], hit[1] if column == "head" else view.head, "decoder", page=None)
    elif hit is None:
        st.session_state["pat_lm_rank_handled"] = None
    st.caption(t("patching.lm.rank.click"))
    if all(e.recovered is None for e in effects):
        st.info(t("patching.lm.same_answer"), icon=":material/info:")


if lm:
    lm_ranking()
    stop_page()

st.subheader(t("patching.rank.header"))
st.markdown(t("patching.rank.explain"))
with st.spinner(t("analysis.running")):
    effects = lab.patching.rank_patches(view.model, text_a, text_b, token or None, view.direction_arg,
                                        max_new=max_new)
moved = {kind: np.full((view.n_layers[kind], view.n_heads), np.nan) for kind in view.kinds}
for e in effects:
    moved[e.kind][e.layer, e.head] = e.mean_kl
columns = st.columns(len(view.kinds))
for kind, column in zip(view.kinds, columns, strict=True):
    with column:
        marked = [(view.layer, view.head)] if (site_what == "head" and kind == view.kind) else []
        event = chart(
            head_matrix(
                moved[kind],
                title=t("patching.rank.matrix_title", kind=t(f"kind.{kind}.label")),
                value_name=t("patching.kl_name"),
                marked=marked,
                lang=lang,
            ),
            key=f"pat_rank_{kind}",
            on_select="rerun",
            selection_mode=("points",),
        )
        hit = clicked_head(event)
        if hit is not None and st.session_state.get(f"pat_rank_handled_{kind}") != (kind, hit):
            st.session_state[f"pat_rank_handled_{kind}"] = (kind, hit)
            st.session_state["_pat_site_wish"] = "head"
            open_head(hit[0], hit[1], kind, page=None)
        elif hit is None:
            st.session_state[f"pat_rank_handled_{kind}"] = None
st.caption(t("patching.rank.click"))
top_n = effects[:10]
st.dataframe(
    pd.DataFrame(
        {
            t("patching.col.rank"): list(range(1, len(top_n) + 1)),
            t("patching.col.head"): [
                t("ablation.head_label", kind=t(f"kind.{e.kind}.label"), layer=e.layer, head=e.head)
                for e in top_n
            ],
            t("patching.col.kl"): [e.mean_kl for e in top_n],
            t("patching.col.toward"): [e.toward_a if e.toward_a is not None else np.nan for e in top_n],
            t("patching.col.aligned"): [e.aligned for e in top_n],
        }
    ),
    hide_index=True,
    column_config={
        t(f"patching.col.{c}"): st.column_config.NumberColumn(format="%.4f") for c in ("kl", "toward")
    },
)
unaligned_kinds = [
    t(f"kind.{k}.label") for k in view.kinds if not any(e.aligned for e in effects if e.kind == k)
]
if unaligned_kinds:
    st.info(t("patching.rank.unaligned", kinds=", ".join(unaligned_kinds)), icon=":material/link_off:")
