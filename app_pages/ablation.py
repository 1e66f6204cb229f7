"""Head ablation: switch chosen heads off, re-decode, and see what changes; rank every head alone.
On a language model the output is the prompt's continuation, bounded on this page."""

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import ablation as AB
from app_support import gateway as G
from app_support import interventions as IV
from app_support import lab
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.selection import clicked_head
from app_support.strategy import greedy_here
from app_support.ui import chart, escape_md, md_output, page_header
from app_support.url_state import seed_from_url, set_url_param
from app_support.view import current_view, open_head
from model.public import ABLATION_MODES, all_heads, format_heads, group_heads, parse_heads
from viz import attention_heatmap
from viz.interventions import attention_change, head_matrix, step_bars, step_pair_bars


def _change_by_layer(intact, ablated, kind: str) -> np.ndarray:
    """[layer, head] attention change, one layer of both runs alive at a time (a long input's heads are
    computed from the recorded queries and keys, never all at once)."""
    before, after = intact.attention(kind), ablated.attention(kind)
    layers = range(before.shape[0])
    return np.concatenate([attention_change(before[i][None], after[i][None]) for i in layers])


view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
cfg = G.config(view.model)
lm = cfg.decoder_only  # a language model: its output is the prompt's continuation, bounded here
page_header(t("page.ablation.title"), t("ablation.intro_lm" if lm else "ablation.intro"))
max_new = view.max_new  # a translation's: the sidebar's bound (None: until the end token)
if lm:
    most = max(view.max_new or IV.LM_DEFAULT_NEW, IV.LM_DEFAULT_NEW)
    if not 1 <= st.session_state.get("abl_new", 0) <= most:
        st.session_state["abl_new"] = IV.lm_bound(view.max_new)
    max_new = int(st.number_input(t("ablation.new_tokens"), 1, most, key="abl_new",
                                  help=t("ablation.new_tokens_help", default=IV.LM_DEFAULT_NEW)))
    st.caption(t("ablation.lm_bound", n=max_new, heads=view.n_layers["decoder"] * view.n_heads))
    view = dataclasses.replace(view, max_new=max_new)  # the analysis shown continues as far as this page
result = current_analysis(view)
HEADS = [format_heads([h]) for h in all_heads(cfg)]
PENDING = "_abl_pending"


def head_label(code: str) -> str:
    kind, layer, head = code.split(".")
    return t("ablation.head_label", kind=t(f"kind.{kind}.label"), layer=layer, head=head)


# --------------------------------------------------------------------------- the heads to remove

if st.session_state.get("_abl_model") != view.model:  # another model: its own heads
    st.session_state.pop("abl_heads", None)
    st.session_state["_abl_model"] = view.model
pending = st.session_state.pop(PENDING, None)
if pending is not None:
    st.session_state["abl_heads"] = pending
if "abl_heads" not in st.session_state:
    from_url, bad = parse_heads(st.query_params.get("heads", ""), cfg)
    st.session_state["abl_heads"] = [format_heads([h]) for h in from_url]
    if bad:
        st.warning(t("ablation.bad_heads", parts=escape_md(", ".join(bad))), icon=":material/warning:")
seed_from_url("abl_mode", "mode", lambda v: v if v in ABLATION_MODES else None, "zero")


def _add(codes: list[str]) -> None:
    current = st.session_state.get("abl_heads", [])
    st.session_state["abl_heads"] = current + [c for c in codes if c not in current]


sidebar_head = format_heads([(view.kind, view.layer, view.head)])
group = [format_heads([h]) for h in group_heads(cfg, view.kind, view.layer)]
cols = st.columns(3)
cols[0].button(t("ablation.add_sidebar", name=head_label(sidebar_head)), on_click=_add,
               args=([sidebar_head],), key="abl_add_one")
cols[1].button(t("ablation.add_group", kind=view.kind_label, layer=view.layer), on_click=_add, args=(group,),
               key="abl_add_group")
cols[2].button(t("ablation.clear"), on_click=lambda: st.session_state.update(abl_heads=[]), key="abl_clear")
chosen_codes = st.multiselect(t("ablation.heads"), HEADS, key="abl_heads", format_func=head_label,
                              help=t("ablation.heads_help"))
mode = st.radio(t("ablation.mode"), list(ABLATION_MODES), key="abl_mode", horizontal=True,
                format_func=lambda m: text(lang, f"ablation.mode.{m}"), help=t("ablation.mode_help"))
chosen = parse_heads(",".join(chosen_codes), cfg)[0]
set_url_param("heads", format_heads(chosen))
set_url_param("mode", mode)
marked = {kind: [(la, h) for k, la, h in chosen if k == kind] for kind in view.kinds}


# --------------------------------------------------------------------------- 1. what removing them does


def effect_section() -> None:
    st.subheader(t("ablation.effect.header"))
    if not chosen:
        st.info(t("ablation.none"), icon=":material/touch_app:")
        return
    with st.spinner(t("analysis.running")):
        ab = lab.ablation.ablate(view.model, view.text, view.direction_arg, tuple(chosen), mode, 5, max_new)
    left, right = st.columns(2)
    left.caption(t("ablation.continuation_intact" if lm else "ablation.output_intact"))
    left.markdown(md_output(ab.intact_output))
    right.caption(t("ablation.continuation_ablated" if lm else "ablation.output_ablated", n=len(chosen)))
    right.markdown(md_output(ab.output))
    st.caption(greedy_here("intervention", view.strategy, current_lang()))
    same = ab.output == ab.intact_output
    st.markdown(t("ablation.summary", kl=f"{ab.mean_kl:.4f}", delta=f"{ab.delta_logprob:+.3f}",
                  verdict=t("ablation.same_output" if same else "ablation.new_output")))
    if not view.is_translation and not lm:  # a didactic task's test words have one right answer
        with st.spinner(t("analysis.running")):
            intact_em = lab.ablation.exact_match_ablated(view.model, (), mode, AB.EXACT_MATCH_N)
            ablated_em = lab.ablation.exact_match_ablated(view.model, tuple(chosen), mode, AB.EXACT_MATCH_N)
        st.markdown(t("ablation.exact_match", n=AB.EXACT_MATCH_N, intact=f"{intact_em:.3f}",
                      ablated=f"{ablated_em:.3f}"))
    tokens = [s.token for s in ab.steps]
    chart(step_bars(tokens, np.array([s.kl for s in ab.steps]), title=t("ablation.kl_title"),
                    value_name=t("ablation.kl_name"), lang=lang), key="abl_kl")
    p_intact, p_ablated = np.array([s.p_intact for s in ab.steps]), np.array([s.p_ablated for s in ab.steps])
    chart(step_pair_bars(tokens, p_intact, p_ablated,
                         names=(t("ablation.intact"), t("ablation.ablated")), title=t("ablation.p_title"),
                         value_name=t("ablation.p_name"), lang=lang), key="abl_p")

    def top(pairs) -> str:
        return " · ".join(f"{tok} {p:.2f}" for tok, p in pairs)

    table = pd.DataFrame({
        t("ablation.col.step"): list(range(len(ab.steps))),
        t("ablation.col.token"): tokens,
        t("ablation.col.kl"): [s.kl for s in ab.steps],
        t("ablation.col.p_intact"): [s.p_intact for s in ab.steps],
        t("ablation.col.p_ablated"): [s.p_ablated for s in ab.steps],
        t("ablation.col.top_intact"): [top(s.top_intact) for s in ab.steps],
        t("ablation.col.top_ablated"): [top(s.top_ablated) for s in ab.steps],
    })
    numbers = ("kl", "p_intact", "p_ablated")
    st.dataframe(table, hide_index=True, column_config={
        t(f"ablation.col.{c}"): st.column_config.NumberColumn(format="%.4f") for c in numbers})
    st.caption(t("ablation.table_caption"))
    later_section(ab.intact_output)


def later_section(intact_output: str) -> None:
    st.subheader(t("ablation.later.header"))
    if not intact_output.strip():
        st.info(t("ablation.later.no_output"))
        return
    with st.spinner(t("analysis.running")):
        intact = G.get_analysis(view.model, view.text, view.direction_arg, target=intact_output)
        ablated = lab.ablation.ablated_analysis(view.model, view.text, view.direction_arg, intact_output,
                                                tuple(chosen), mode)
    st.markdown(t("ablation.later.explain"))
    columns = st.columns(len(view.kinds))
    for kind, column in zip(view.kinds, columns, strict=True):
        # The intact run is fixed by the ablated one's input and output: the key needs only the kind.
        change = G.derived(ablated, ("attention_change", kind),
                           lambda kind=kind: _change_by_layer(intact, ablated, kind))  # [layer, head]
        with column:
            title = t("ablation.later.matrix_title", kind=t(f"kind.{kind}.label"))
            chart(head_matrix(change, title=title, value_name=t("ablation.later.change_name"),
                              marked=marked[kind], zmax=1.0, lang=lang), key=f"abl_change_{kind}")
    kind, layer, head = view.kind, view.layer, view.head
    queries, keys = intact.tokens_for(kind)
    left, right = st.columns(2)
    for column, analysis, key, title in ((left, intact, "intact", "ablation.later.intact_title"),
                                         (right, ablated, "ablated", "ablation.later.ablated_title")):
        scores = analysis.attention(kind, "scores")[layer, head]
        with column:
            chart(attention_heatmap(analysis.attention(kind)[layer, head], queries, keys, scores_2d=scores,
                                    title=t(title, kind=view.kind_label, layer=layer, head=head), lang=lang),
                  key=f"abl_head_{key}")
    st.caption(t("ablation.later.caption"))


effect_section()


# --------------------------------------------------------------------------- 2. every head alone


st.subheader(t("ablation.rank.header"))
st.markdown(t("ablation.rank.explain", mode=t(f"ablation.mode.{mode}")))
if lm:  # 270 heads on SmolLM2: a slice of layers per cached call, the bar between them
    working = t("ablation.rank.progress", n=len(HEADS))
    bar = st.progress(0.0, text=working)
    effects = AB.rank_heads_lm(view.model, view.text, view.direction_arg, mode, max_new,
                               view.n_layers["decoder"], lambda share: bar.progress(share, text=working))
    bar.empty()
else:
    with st.spinner(t("analysis.running")):
        effects = lab.ablation.rank_heads(view.model, view.text, view.direction_arg, mode, max_new=max_new)
kl = AB.kl_matrices(effects, view.n_layers, view.n_heads)
columns = st.columns(len(view.kinds))
for kind, column in zip(view.kinds, columns, strict=True):
    with column:
        title = t("ablation.rank.matrix_title", kind=t(f"kind.{kind}.label"))
        event = chart(head_matrix(kl[kind], title=title,
                                  value_name=t("ablation.kl_name"), marked=marked[kind], lang=lang),
                      key=f"abl_rank_{kind}", on_select="rerun", selection_mode=("points",))
        hit = clicked_head(event)
        handled = (kind, hit)
        if hit is not None and st.session_state.get(f"abl_rank_handled_{kind}") != handled:
            st.session_state[f"abl_rank_handled_{kind}"] = handled
            st.session_state[PENDING] = [format_heads([(kind, *hit)])]
            open_head(hit[0], hit[1], kind, page=None)
        elif hit is None:
            st.session_state[f"abl_rank_handled_{kind}"] = None
st.caption(t("ablation.rank.click"))
top_n = effects[:10]
st.dataframe(pd.DataFrame({
    t("ablation.col.rank"): list(range(1, len(top_n) + 1)),
    t("ablation.col.head"): [head_label(format_heads([(e.kind, e.layer, e.head)])) for e in top_n],
    t("ablation.col.kl"): [e.mean_kl for e in top_n],
    t("ablation.col.delta"): [e.delta_logprob for e in top_n],
}), hide_index=True, column_config={t("ablation.col.kl"): st.column_config.NumberColumn(format="%.4f"),
                                    t("ablation.col.delta"): st.column_config.NumberColumn(format="%+.3f")})
best = effects[0]
st.markdown(t("ablation.rank.measured", head=head_label(format_heads([(best.kind, best.layer, best.head)])),
              kl=f"{best.mean_kl:.4f}", n=len(effects),
              small=sum(e.mean_kl < 0.01 for e in effects)))
