"""All heads at a glance: every layer x head of one attention kind as small multiples."""

import streamlit as st

import viz
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.overview import pooled_tiles
from app_support.selection import head_from_grid_selection
from app_support.token_display import page_attention
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view, open_head
from app_support.weighting import choose_weighting

#: Most tiles one all-heads figure draws.
MAX_TILES = 72

lang = current_lang()
view = current_view()
page_header(t("heads.title"), t("heads.intro"))
result = current_analysis(view)

display = choose_weighting("heads", result, view.kind, view.display)  # weight, or weight × ‖value‖
shown = page_attention(result, view.kind, display)  # pieces merged, [CLS]/[SEP] hidden, as chosen
queries, keys = shown.query_tokens, shown.key_tokens
n_layers, n_heads = shown.pattern.shape[:2]
width = 1150 if not view.present else 1300
# A model of many heads (SmolLM2: 30 x 9) is shown a page of layers at a time, so one figure stays within
# MAX_TILES tiles and viz.MAX_FIGURE_CELLS pooled cells (under 3 MB of figure JSON); MiniLM's 6 x 12 is one.
per_page = viz.layers_per_figure(n_layers, n_heads, len(queries), len(keys), width, MAX_TILES)
first = 0
if n_layers > per_page:
    starts = list(range(0, n_layers, per_page))
    seed_from_url("heads_layers", "layers", lambda v: url_int(v, 0), 0)
    if st.session_state.get("heads_layers") not in starts:
        st.session_state["heads_layers"] = 0
    first = st.segmented_control(
        t("heads.layer_page"), starts, key="heads_layers",
        format_func=lambda s: f"L{s}–L{min(s + per_page, n_layers) - 1}",
    ) or 0
    set_url_param("layers", first)
    st.caption(t("heads.layer_page_help", shown=min(per_page, n_layers - first), n_layers=n_layers))
# The shown layers' tiles, pooled as viz.all_heads_grid pools them, computed once per input and page of
# layers, a layer at a time, and kept: a rerun, or a page of layers looked at before, draws the kept tiles.
block = viz.grid.grid_block(len(queries), len(keys), width, n_heads)
shown_layers = range(first, min(first + per_page, n_layers))
with st.spinner(t("heads.pooling", n=len(shown_layers) * n_heads)):
    values, pooled_mask = pooled_tiles(result, view.kind, shown, block, layers=shown_layers)
fig = viz.grid.pooled_heads_grid(
    values,
    pooled_mask,  # None when nothing is masked: no mask layer
    block,
    queries,
    keys,
    title=t("heads.figure_title", kind=view.kind_label, n_layers=n_layers, n_heads=n_heads),
    width=width,
    first_layer=first,
    lang=lang,
)
event = chart(fig, key="all_heads_grid", on_select="rerun", selection_mode=("points", "box"))
hit = head_from_grid_selection(event, viz.grid_layout_from_figure(fig))
if hit is not None:
    open_head(*hit)

st.caption(
    t("heads.caption", last_layer=n_layers - 1, last_head=n_heads - 1,
      n_queries=len(queries), n_keys=len(keys))
)

c1, c2, _ = st.columns([1, 1, 3])
options = [(li, hi) for li in range(n_layers) for hi in range(n_heads)]
choice = c1.selectbox(
    t("heads.pick"),
    options,
    index=options.index((view.layer, view.head)) if (view.layer, view.head) in options else 0,
    format_func=lambda lh: text(lang, "common.layer_head", layer=lh[0], head=lh[1]),
    key="all_heads_pick",
)
c2.write("")
if c2.button(t("heads.open"), key="all_heads_open", type="primary"):
    open_head(*choice)
