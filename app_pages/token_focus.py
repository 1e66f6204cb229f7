"""Token focus: one token across every head — where it looks and who looks at it."""

import streamlit as st

import viz
from app_support.messages import current_analysis
from app_support.sidebar import clamp_choice, current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

view = current_view()
page_header(
    "Token focus",
    "Follow **one token** through the whole model. *Where does it look?* treats the token as a "
    "query and shows, for every head, how strongly it attends and to which token. *Who looks at it?* "
    "treats it as a key and shows which token pays it the most attention. On the right, the "
    "selected head (sidebar) drawn as lines: thicker = more weight.",
)
result = current_analysis(view)

patterns = result.attention(view.kind)
queries, keys = result.tokens_for(view.kind)

SIDES = {"from": "Where does it look? (token as query)", "to": "Who looks at it? (token as key)"}
seed_from_url("focus_side", "side", lambda v: v if v in SIDES else None, "from")
clamp_choice("focus_side", list(SIDES), "from")
c1, c2 = st.columns([2, 3])
side = c1.radio("Question", list(SIDES), key="focus_side", format_func=SIDES.get, horizontal=False)
tokens = queries if side == "from" else keys
options = list(range(len(tokens)))
seed_from_url("focus_token", "token", lambda v: url_int(v, 0), 0)
clamp_choice("focus_token", options, 0)
idx = c2.selectbox(
    "Token",
    options,
    key="focus_token",
    format_func=lambda i: f"#{i}  {tokens[i]}",
    help="Tokens of the sequence the question is about: source tokens for encoder self-attention, "
    "output tokens for decoder self-attention; for cross-attention, queries are output tokens and "
    "keys are source tokens.",
)
set_url_param("side", side)
set_url_param("token", idx)

left, right = st.columns([1, 1])
with left:
    # Plain text: viz escapes a caller's title (the token is user text).
    me = tokens[idx]
    grid = viz.token_focus_grid(
        patterns, idx, side, query_tokens=queries, key_tokens=keys,
        title=f"Where does “{me}” look?" if side == "from" else f"Who looks at “{me}”?",
    )
    chart(grid, key="focus_grid")
    st.caption(
        "One cell per head: colour = the strongest weight, text = the partner token. "
        "A row of dark cells on the same partner means many heads agree."
    )
with right:
    pattern = patterns[view.layer, view.head]
    arcs = viz.attention_arcs(
        pattern,
        queries,
        token_index=idx if side == "from" else None,
        key_tokens=keys,
        title=f"Layer {view.layer} · head {view.head} as lines",
    )
    chart(arcs, key="focus_arcs")
    st.caption(
        "Queries on the left, keys on the right; a line's width and darkness grow with the weight. "
        "Lines under 0.01 are hidden."
    )
