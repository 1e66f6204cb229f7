"""Model vs model: two models that share a tokenizer on the sidebar's sentence, every head of A matched
with its nearest head of B (Jensen–Shannon distance), a map of how far each head moved, and one head of
each side by side."""

import streamlit as st

import viz
from app_pages.glue import versus as VS
from app_support import lab
from app_support import models as M
from app_support.i18n import current_lang, t
from app_support.messages import show_input_error
from app_support.selection import head_from_scatter_selection
from app_support.sidebar import clamp_choice
from app_support.ui import chart, escape_md, md_output, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page
from app_support.view import current_view
from model.public import InputError

view = current_view()  # first: run on its own, the page learns the language from the sidebar
lang = current_lang()
page_header(t("page.versus.title"), t("versus.intro"))

# --------------------------------------------------------------------------- model B

options = VS.choices(view.model)
if not options:
    st.info(t("versus.no_other"), icon=":material/info:")
    stop_page()
default_other = VS.default_other(view.model, options)
seed_from_url("versus_other", "other", lambda v: v if v in options else None, default_other)
clamp_choice("versus_other", options, default_other)
other = st.selectbox(t("versus.other"), options, key="versus_other",
                     format_func=lambda n: M.model_label(n, lang), help=t("versus.other_help"))
set_url_param("other", other)
model_a, model_b = escape_md(M.model_label(view.model, lang)), escape_md(M.model_label(other, lang))

match = lab.versus.tokenizer_match(view.model, other)
if not match.shared:
    st.warning(VS.refusal_text(match, model_a, model_b), icon=":material/block:")
    stop_page()
if not view.text.strip():
    st.info(t("analysis.empty"), icon=":material/edit:")
    stop_page()
try:
    with st.spinner(t("analysis.running")):
        result = lab.versus.compare(view.model, other, view.text, view.direction_arg, view.kind, view.max_new)
except InputError as e:
    show_input_error(e)
    stop_page()

# --------------------------------------------------------------------------- outputs side by side

left, right = st.columns(2)
for column, name, output in ((left, model_a, result.output_a), (right, model_b, result.output_b)):
    with column:
        st.caption(t("versus.output_of", model=name))
        st.markdown(md_output(output))
if view.n_layers.get("decoder"):
    st.caption(t("versus.greedy"))
if result.refusal:
    st.info(t(f"versus.refuse.{result.refusal}", a=model_a, b=model_b, kind=view.kind_label),
            icon=":material/info:")
    stop_page()
if result.b_read_a_output:
    st.caption(t("versus.teacher_forced", a=model_a, b=model_b))
if result.cut_rows:
    st.caption(t("versus.cut", n=len(result.query_tokens), cut=result.cut_rows))

# --------------------------------------------------------------------------- how far each head moved

m = result.match
st.subheader(t("versus.map_header", kind=view.kind_label))
st.markdown(t("versus.map_explain"))
measures = (("same", m.same_position),) if m.same_position is not None else ()
measures += (("nearest", m.nearest_distance),)
if m.same_position is None:
    shapes = [" × ".join(map(str, s)) for s in (result.distance.shape[:2], result.distance.shape[2:])]
    st.caption(t("versus.shapes_differ", a=model_a, b=model_b, shape_a=shapes[0], shape_b=shapes[1]))
clicked = None
for column, (measure, values) in zip(st.columns(len(measures)), measures, strict=True):
    with column:
        fig = viz.moved_map(values, m.nearest, measure=measure, model_b=M.model_label(other, lang), lang=lang)
        picked = head_from_scatter_selection(chart(fig, key=f"versus_map_{measure}", on_select="rerun",
                                                   selection_mode="points"))
        if picked is not None and st.session_state.get(f"_versus_picked_{measure}") != picked:
            st.session_state[f"_versus_picked_{measure}"] = picked  # act on a new click only
            clicked = picked
st.caption(t("versus.map_caption"))

# --------------------------------------------------------------------------- the two heads

n_a, n_b = result.distance.shape[:2], result.distance.shape[2:]
heads_a = [viz.head_label(i, h) for i in range(n_a[0]) for h in range(n_a[1])]
heads_b = [viz.head_label(i, h) for i in range(n_b[0]) for h in range(n_b[1])]


def nearest_of(label: str) -> str:
    i, h = divmod(heads_a.index(label), n_a[1])
    return viz.head_label(*m.nearest[i, h])


start_a = viz.head_label(min(view.layer, n_a[0] - 1), min(view.head, n_a[1] - 1))
from_url = VS.parse_pair(st.query_params.get("pair", ""))
if from_url is not None and "versus_a" not in st.session_state:
    st.session_state["versus_a"], st.session_state["versus_b"] = (viz.head_label(*from_url[0]),
                                                                  viz.head_label(*from_url[1]))
if clicked is not None:
    st.session_state["versus_a"] = viz.head_label(*clicked)
    st.session_state["versus_b"] = nearest_of(st.session_state["versus_a"])
clamp_choice("versus_a", heads_a, start_a)
clamp_choice("versus_b", heads_b, nearest_of(st.session_state["versus_a"]))
st.subheader(t("versus.pair_header"))
pick_a, pick_b = st.columns(2)
with pick_a:
    head_a = st.selectbox(t("versus.head_a", model=model_a), heads_a, key="versus_a")
with pick_b:
    head_b = st.selectbox(t("versus.head_b", model=model_b), heads_b, key="versus_b",
                          help=t("versus.head_b_help"))
la, ha = divmod(heads_a.index(head_a), n_a[1])
lb, hb = divmod(heads_b.index(head_b), n_b[1])
set_url_param("pair", VS.pair_param((la, ha), (lb, hb)))
names = (M.model_label(view.model, lang), M.model_label(other, lang))
figs = viz.versus_heads(result.pattern("a", la, ha), result.pattern("b", lb, hb), result.query_tokens,
                        result.key_tokens, names=names, heads=((la, ha), (lb, hb)),
                        distance=float(result.distance[la, ha, lb, hb]), lang=lang)
for column, fig, key in zip(st.columns(2), figs, ("versus_head_a", "versus_head_b"), strict=True):
    with column:
        chart(fig, key=key)
if head_b == nearest_of(head_a):
    st.caption(t("versus.is_nearest", head=head_b))

# --------------------------------------------------------------------------- every head's match

st.subheader(t("versus.table_header"))
st.dataframe(VS.match_table(result), hide_index=True, width="stretch")
st.caption(t("versus.table_caption"))
