"""All heads at a glance: every layer x head of one attention kind as small multiples."""

import numpy as np
import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.selection import head_from_grid_selection
from app_support.sidebar import current_view, open_head
from app_support.ui import chart, page_header

view = current_view()
page_header(
    "All heads at a glance",
    "Every head of every layer, side by side: one small heatmap per head (rows: queries, "
    "columns: keys), layers top to bottom, heads left to right. Heads specialise: look for "
    "**diagonals** (a token attends to itself), **off-diagonals** (the previous or next token), "
    "**vertical stripes** (everyone looks at one token, often the end token) and **blurry** heads "
    "that average over the sentence. **Click a tile** to open that head.",
)
result = current_analysis(view)

patterns = result.attention(view.kind)
scores = result.attention(view.kind, "scores")
queries, keys = result.tokens_for(view.kind)
n_layers, n_heads = patterns.shape[:2]
fig = viz.all_heads_grid(
    patterns,
    queries,
    keys,
    mask=~np.isfinite(scores),
    title=f"{view.kind_label}: all {n_layers} × {n_heads} heads",
    width=1150 if not view.present else 1300,
)
event = chart(fig, key="all_heads_grid", on_select="rerun", selection_mode=("points", "box"))
hit = head_from_grid_selection(event, viz.grid_layout_from_figure(fig))
if hit is not None:
    open_head(*hit)

st.caption(
    f"Tile rows are layers L0–L{n_layers - 1}, tile columns heads H0–H{n_heads - 1}. "
    f"Each tile is {len(queries)} queries × {len(keys)} keys. Colours use one fixed 0–1 scale, "
    "so tiles can be compared. To open a head, click the middle of its tile (the hover label says "
    "“click to open”), or drag a box over it with the box-select tool of the chart's toolbar."
)

c1, c2, _ = st.columns([1, 1, 3])
options = [(li, hi) for li in range(n_layers) for hi in range(n_heads)]
choice = c1.selectbox(
    "Or pick a head",
    options,
    index=options.index((view.layer, view.head)) if (view.layer, view.head) in options else 0,
    format_func=lambda lh: f"layer {lh[0]} · head {lh[1]}",
    key="all_heads_pick",
)
c2.write("")
if c2.button("Open this head →", key="all_heads_open", type="primary"):
    open_head(*choice)
