"""Head atlas: every head's figures over the held-out test split, role labels with their thresholds, which
heads attend alike, and the sentences where one head fires (each a link to the single-head page)."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_pages.glue import atlas as AT
from app_support import lab, pages
from app_support.i18n import current_lang, t, text
from app_support.selection import head_from_scatter_selection, selected_row
from app_support.sidebar import choose_data, clamp_choice
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view, keep_view_across_switch, open_head
from model.public import LM_NEW_TOKENS, ROLE_STAT, ROLES, STATS

view = current_view()  # first: run on its own, the page learns the language from the sidebar
lang = current_lang()
page_header(t("page.atlas.title"), t("atlas.intro"))

if not AT.has_test_split(view.model):
    st.info(t("atlas.no_split"), icon=":material/info:")
    stop_page()

# --------------------------------------------------------------------------- the dataset

didactic = AT.is_didactic(view.model)
n: int | None = None
corpora = AT.corpus_atlases(view.model)  # computed with `python -m model atlas --corpus`, here or elsewhere
corpus = choose_data("atlas_data", "held-out", t("atlas.data.held_out"), corpora, AT.corpus_label,
                     t("atlas.data"), t("atlas.data_help"))
if corpus is not None:
    src = corpus.source
    st.markdown(t("atlas.corpus_dataset", name=src["corpus"], n=src["sampled"], total=src["prompts"],
                  seed=src["seed"]))
    st.caption(t("atlas.corpus_how", engine=t(f"atlas.engine.{src['engine']}"), workers=src["workers"],
                 processes=src["processes"], hosts=src["hosts"], shards=src["shards"], size=src["shard_size"],
                 seconds=f"{corpus.seconds:.1f}", sha=src["corpus_sha256"][:12]))
elif not didactic:
    default_n = AT.default_sample(view.model)
    seed_from_url("atlas_n", "n", lambda v: url_int(v), default_n)
    clamp_choice("atlas_n", list(AT.SAMPLE_SIZES), default_n)
    n = st.selectbox(t("atlas.sample"), AT.SAMPLE_SIZES, key="atlas_n", help=t("atlas.sample_help"))
    set_url_param("n", n)
prompts = AT.prompt_kind(view.model)
if corpus is not None:
    pass
elif prompts:
    data = lab.atlas.held_out_dataset(view.model, n)
    st.markdown(t("atlas.dataset_prompts", n=len(data.texts), what=t(f"atlas.prompts.{prompts}"),
                  new=LM_NEW_TOKENS))
elif didactic:
    data = lab.atlas.held_out_dataset(view.model, n)
    st.markdown(t("atlas.dataset_words", n=len(data.texts)))
else:
    data = lab.atlas.held_out_dataset(view.model, n)
    st.markdown(t("atlas.dataset_sentences", n=len(data.texts), total=data.total))

atlas = corpus if corpus is not None else AT.stored_atlas(view.model, n)
fresh = False
if atlas is None:
    if not AT.auto_compute(view.model, n):
        st.info(t("atlas.compute_hint"), icon=":material/hourglass_empty:")
        if not st.button(t("atlas.compute", n=len(data.texts)), key="atlas_compute", type="primary",
                         help=t("atlas.compute_help")):
            stop_page()
    bar = st.progress(0.0, text=t("atlas.progress", done=0, total=len(data.texts)))

    def _progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=t("atlas.progress", done=done, total=total))

    atlas = AT.compute(view.model, n, _progress)
    bar.empty()
    fresh = True
seconds = f"{atlas.seconds:.1f}"
if corpus is None:
    st.caption(t("atlas.computed", seconds=seconds) if fresh else t("atlas.from_disk", seconds=seconds))
if didactic and corpus is None:
    st.markdown(t("atlas.exact", right=sum(atlas.exact), n=len(atlas.texts)))

kind = view.kind
kind_label = view.kind_label
if kind not in atlas.layer_counts:  # cannot happen for the sidebar's kinds; guard against a stale file
    stop_page()


def role_text(role: str) -> str:
    return text(lang, f"atlas.role.{role}")


def stat_name(stat: str) -> str:
    return text(lang, f"atlas.stat.{stat}")


# --------------------------------------------------------------------------- the head map

st.subheader(t("atlas.map_header"))
shown_stats = [s for s in STATS if np.isfinite(atlas.stats[s][kind]).any()]
default_stat = "alignment" if "alignment" in shown_stats else "max_weight"
seed_from_url("atlas_stat", "stat", None, default_stat)
clamp_choice("atlas_stat", shown_stats, default_stat)
stat = st.selectbox(t("atlas.color_by"), shown_stats, key="atlas_stat", format_func=stat_name,
                    help=t("atlas.color_by_help"))
set_url_param("stat", stat)
values = atlas.stats[stat][kind]
bounded = stat not in ("entropy", "mean_distance")
fig = viz.atlas_head_map(values, AT.role_grid(atlas, kind, role_text), value_name=stat_name(stat),
                         zmax=1.0 if bounded else None, lang=lang)
picked = head_from_scatter_selection(chart(fig, key="atlas_map", on_select="rerun", selection_mode="points"))
# Act on a new click only: the chart keeps its selection, which must not undo a later sidebar choice.
if picked is not None and st.session_state.get("_atlas_picked") != picked:
    st.session_state["_atlas_picked"] = picked
    if picked != (view.layer, view.head):
        open_head(*picked, kind=kind, page=None)
st.caption(t("atlas.map_caption", kind=kind_label))

# --------------------------------------------------------------------------- roles and thresholds

st.subheader(t("atlas.roles_header"))
st.markdown(t("atlas.roles_explain"))
limits = atlas.thresholds.by_role()
with_role = {role: [] for role in ROLES}
for layer in range(atlas.layer_counts[kind]):
    for head in range(atlas.n_heads):
        for r in atlas.roles(kind, layer, head):
            with_role[r.name].append(f"L{layer}H{head}")
rules = pd.DataFrame({
    t("atlas.col.role"): [role_text(r) for r in ROLES],
    t("atlas.col.rule"): [f"{stat_name(ROLE_STAT[r])}: {t(f'atlas.rule.{r}')}" for r in ROLES],
    t("atlas.col.threshold"): [limits[r] for r in ROLES],
    t("atlas.col.heads", kind=kind_label): [" ".join(with_role[r]) for r in ROLES],
})
st.dataframe(rules, hide_index=True, width="stretch")
if atlas.task in AT.TRUTH_TASKS:
    st.caption(t("atlas.truth", rule=t(f"atlas.truth.{atlas.task}")))
else:
    st.caption(t("atlas.no_truth"))

# --------------------------------------------------------------------------- every head

st.subheader(t("atlas.table_header", kind=kind_label))
table = AT.head_table(atlas, kind, role_text)
config = {
    "layer": st.column_config.NumberColumn(t("atlas.col.layer")),
    "head": st.column_config.NumberColumn(t("atlas.col.head")),
    "roles": st.column_config.TextColumn(t("atlas.col.roles"), help=t("atlas.col.roles_help")),
    "n_rows": st.column_config.NumberColumn(t("atlas.col.n_rows"), help=t("atlas.col.n_rows_help")),
}
for s in STATS:
    if s in table.columns:
        config[s] = st.column_config.NumberColumn(stat_name(s), help=t(f"atlas.help.{s}"), format="%.3f")
event = st.dataframe(table, column_config=config, hide_index=True, on_select="rerun",
                     selection_mode="single-row", key="atlas_table", width="stretch")
row = selected_row(event)
if row is not None and 0 <= row < len(table):
    open_head(int(table.loc[row, "layer"]), int(table.loc[row, "head"]), kind=kind)
rows = int(atlas.n_rows[kind].max())
st.caption(t("atlas.table_caption", rows=rows))
if kind == "cross":
    st.caption(t("atlas.cross_note"))

# --------------------------------------------------------------------------- similarity

st.subheader(t("atlas.similar_header"))
matrix, labels = viz.ordered_matrix(atlas.similarity(kind), atlas.head_labels(kind), atlas.order[kind])
chart(viz.head_similarity_heatmap(matrix, labels, title=text(lang, "atlas.similar_header"), lang=lang),
      key="atlas_similarity")
st.caption(t("atlas.similar_caption", rows=rows))

# --------------------------------------------------------------------------- where does it fire

st.subheader(t("atlas.fire_header", layer=view.layer, head=view.head))
st.markdown(t("atlas.fire_explain"))
top = AT.top_table(atlas, kind, view.layer, view.head, lang, present=view.present)
fire = st.dataframe(
    top.drop(columns=["index"]),
    column_config={
        "rank": st.column_config.NumberColumn(t("atlas.col.rank")),
        "max_weight": st.column_config.NumberColumn(t("atlas.col.max_weight"),
                                                    help=t("atlas.col.max_weight_help"), format="%.3f"),
        "sentence": st.column_config.TextColumn(t("atlas.col.sentence")),
        "output": st.column_config.TextColumn(t("atlas.col.output")),
        "link": st.column_config.LinkColumn(t("atlas.col.link"), help=t("atlas.col.link_help"),
                                            display_text=t("atlas.link_text")),
    },
    hide_index=True, on_select="rerun", selection_mode="single-row", key="atlas_fire", width="stretch",
)
chosen = selected_row(fire)
if chosen is not None and 0 <= chosen < len(top):
    i = int(top.loc[chosen, "index"])
    changes = {"text": atlas.texts[i], "kind": kind, "layer": view.layer, "head": view.head}
    if atlas.directions[i]:
        changes["dir"] = atlas.directions[i]
    keep_view_across_switch(**changes)
    st.switch_page(pages.page("single").file)
st.caption(t("atlas.fire_caption", mean=f"{atlas.stat('max_weight', kind, view.layer, view.head):.3f}"))
