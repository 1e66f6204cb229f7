"""Head statistics: numbers that summarise what each head does, and which heads are alike."""

import streamlit as st

import viz
from app_support.head_summaries import head_summaries
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.selection import head_from_scatter_selection, selected_row
from app_support.sidebar import clamp_choice
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param
from app_support.view import current_view, open_head
from viz.labels import label as viz_label

view = current_view()
lang = current_lang()
page_header(t("page.stats.title"), t("stats.intro"))
result = current_analysis(view)

# one pass over the heads, a block of rows of one layer at a time, once per input and kind
summary = head_summaries(result, view.kind)
df = summary.stats.copy()
labels = viz.column_labels("head_stats", lang)
units = viz.column_help("head_stats", lang)

st.subheader(t("stats.table_title", kind=view.kind_label))
config = {
    col: st.column_config.NumberColumn(labels[col], help=units.get(col, ""), format="%.3f")
    for col in df.columns
    if col not in ("layer", "head", "n_rows")
}
config["layer"] = st.column_config.NumberColumn(labels["layer"], help=t("stats.layer_help"))
config["head"] = st.column_config.NumberColumn(labels["head"], help=t("stats.head_help"))
config["n_rows"] = st.column_config.NumberColumn(labels["n_rows"], help=units.get("n_rows", ""))
event = st.dataframe(
    df,
    column_config=config,
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    key="stats_table",
    width="stretch",
)
row = selected_row(event)
if row is not None and 0 <= row < len(df):
    open_head(int(df.loc[row, "layer"]), int(df.loc[row, "head"]), kind=view.kind)
st.caption(t("stats.table_caption"))

stat_cols = [c for c in viz.HEAD_STATS_COLUMNS
             if c not in ("layer", "head", "n_rows") and df[c].notna().any()]
stat_names = {c: viz_label(lang, f"stat.{c}") for c in stat_cols}
left, right = st.columns(2)
with left:
    seed_from_url("stats_x", "x", None, "entropy")
    seed_from_url("stats_y", "y", None, "mean_distance")
    clamp_choice("stats_x", stat_cols, "entropy")
    clamp_choice("stats_y", stat_cols, "mean_distance")
    cx, cy = st.columns(2)
    x = cx.selectbox(t("stats.x"), stat_cols, key="stats_x", format_func=lambda c: stat_names.get(c, c))
    y = cy.selectbox(t("stats.y"), stat_cols, key="stats_y", format_func=lambda c: stat_names.get(c, c))
    set_url_param("x", x)
    set_url_param("y", y)
    scatter = viz.head_stats_scatter(df, x=x, y=y, lang=lang)
    sel = chart(scatter, key="stats_scatter", on_select="rerun", selection_mode="points")
    hit = head_from_scatter_selection(sel)
    if hit is not None:
        open_head(*hit, kind=view.kind)
    st.caption(t("stats.scatter_caption"))
with right:
    seed_from_url("stats_bar", "bar", None, "entropy")
    clamp_choice("stats_bar", stat_cols, "entropy")
    bar_col = st.selectbox(t("stats.bar"), stat_cols, key="stats_bar",
                           format_func=lambda c: stat_names.get(c, c))
    set_url_param("bar", bar_col)
    chart(viz.head_stats_bar(df, bar_col, lang=lang), key="stats_bar_chart")

st.subheader(t("stats.similar_title"))
chart(viz.head_similarity_heatmap(summary.similarity, summary.labels, lang=lang), key="stats_similarity")
st.caption(t("stats.similar_caption"))
rule = "stats.similar_sampled" if summary.rows_compared < summary.n_queries else "stats.similar_every_row"
st.caption(t(rule, n=summary.n_queries, rows=summary.rows_compared, heads=len(summary.labels),
             pairs=f"{summary.n_pairs:,}"))
