"""Head statistics: numbers that summarise what each head does, and which heads are alike."""

import numpy as np
import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.models import special_mask
from app_support.selection import head_from_scatter_selection, selected_row
from app_support.sidebar import clamp_choice, current_view, open_head
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param

view = current_view()
page_header(
    "Head statistics",
    "Numbers that summarise each head for this sentence. **Entropy** is low for a focused head "
    "(one key takes all the weight) and high for a head that spreads its attention. **Mean "
    "distance** is how far (in positions) a head looks. **Diagonal / previous token** show "
    "positional heads. **Special tokens** is the weight parked on tokens like `<eos>` — a common "
    "“no-op” for heads with nothing to do. Select a row (or click a dot) to open that head.",
)
result = current_analysis(view)

patterns = result.attention(view.kind)
scores = result.attention(view.kind, "scores")
queries, keys = result.tokens_for(view.kind)
df = viz.head_stats(patterns, key_mask=~np.isfinite(scores), special_tokens=special_mask(keys))
units = df.attrs.get("units", {})

st.subheader(f"{view.kind_label}: one row per head")
config = {
    col: st.column_config.NumberColumn(col.replace("_", " "), help=units.get(col, ""), format="%.3f")
    for col in df.columns
    if col not in ("layer", "head", "n_rows")
}
config["layer"] = st.column_config.NumberColumn("layer", help="0-based layer index")
config["head"] = st.column_config.NumberColumn("head", help="0-based head index")
config["n_rows"] = st.column_config.NumberColumn("rows", help=units.get("n_rows", ""))
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
st.caption("Click a column header to sort. Entropies are in nats (natural log).")

stat_cols = [c for c in viz.HEAD_STATS_COLUMNS if c not in ("layer", "head", "n_rows") and df[c].notna().any()]
left, right = st.columns(2)
with left:
    seed_from_url("stats_x", "x", None, "entropy")
    seed_from_url("stats_y", "y", None, "mean_distance")
    clamp_choice("stats_x", stat_cols, "entropy")
    clamp_choice("stats_y", stat_cols, "mean_distance")
    cx, cy = st.columns(2)
    x = cx.selectbox("x axis", stat_cols, key="stats_x")
    y = cy.selectbox("y axis", stat_cols, key="stats_y")
    set_url_param("x", x)
    set_url_param("y", y)
    scatter = viz.head_stats_scatter(df, x=x, y=y)
    sel = chart(scatter, key="stats_scatter", on_select="rerun", selection_mode="points")
    hit = head_from_scatter_selection(sel)
    if hit is not None:
        open_head(*hit, kind=view.kind)
    st.caption("One dot per head, coloured by layer. Click a dot to open the head.")
with right:
    seed_from_url("stats_bar", "bar", None, "entropy")
    clamp_choice("stats_bar", stat_cols, "entropy")
    bar_col = st.selectbox("Statistic per head", stat_cols, key="stats_bar")
    set_url_param("bar", bar_col)
    chart(viz.head_stats_bar(df, bar_col), key="stats_bar_chart")

st.subheader("Which heads behave alike?")
sim = viz.head_similarity(patterns)
_, labels = viz.flatten_heads(patterns)
chart(viz.head_similarity_heatmap(sim, labels), key="stats_similarity")
st.caption(
    "Similarity = 1 − Jensen-Shannon divergence / log 2 between two heads' attention rows, averaged "
    "over the queries: 1 means the two heads attend identically on this sentence, 0 means they never "
    "look at the same keys. Blocks of similar heads are redundant for this input."
)
