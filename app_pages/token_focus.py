"""Token focus: one token across every head — where it looks and who looks at it."""

import streamlit as st

import viz
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.sidebar import clamp_choice, current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

lang = current_lang()
view = current_view()
page_header(t("page.focus.title"), t("focus.intro"))
result = current_analysis(view)

patterns = result.attention(view.kind)
queries, keys = result.tokens_for(view.kind)

SIDES = {side: text(lang, f"focus.side.{side}") for side in ("from", "to")}
seed_from_url("focus_side", "side", lambda v: v if v in SIDES else None, "from")
clamp_choice("focus_side", list(SIDES), "from")
c1, c2 = st.columns([2, 3])
side = c1.radio(t("focus.question"), list(SIDES), key="focus_side", format_func=SIDES.get, horizontal=False)
tokens = queries if side == "from" else keys
options = list(range(len(tokens)))
seed_from_url("focus_token", "token", lambda v: url_int(v, 0), 0)
clamp_choice("focus_token", options, 0)
idx = c2.selectbox(
    t("focus.token"),
    options,
    key="focus_token",
    format_func=lambda i: f"#{i}  {tokens[i]}",
    help=t("focus.token_help"),
)
set_url_param("side", side)
set_url_param("token", idx)

left, right = st.columns([1, 1])
with left:
    # Plain text: viz escapes a caller's title (the token is user text).
    me = tokens[idx]
    grid = viz.token_focus_grid(
        patterns, idx, side, query_tokens=queries, key_tokens=keys,
        title=t(f"focus.grid_title.{side}", token=me), lang=lang,
    )
    chart(grid, key="focus_grid")
    st.caption(t("focus.grid_caption"))
with right:
    pattern = patterns[view.layer, view.head]
    arcs = viz.attention_arcs(
        pattern,
        queries,
        token_index=idx if side == "from" else None,
        key_tokens=keys,
        title=t("focus.arcs_title", layer=view.layer, head=view.head),
        lang=lang,
    )
    chart(arcs, key="focus_arcs")
    st.caption(t("focus.arcs_caption"))
