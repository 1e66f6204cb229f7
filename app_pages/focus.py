"""Token focus: one token across every head — where it looks and who looks at it."""

import streamlit as st

import viz
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.overview import focus_values
from app_support.sidebar import clamp_choice
from app_support.token_display import page_attention
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from app_support.weighting import choose_weighting

lang = current_lang()
view = current_view()
page_header(t("page.focus.title"), t("focus.intro"))
result = current_analysis(view)

display = choose_weighting("focus", result, view.kind, view.display)  # weight, or weight × ‖value‖
shown = page_attention(result, view.kind, display)  # pieces merged, [CLS]/[SEP] hidden, as chosen
queries, keys = shown.query_tokens, shown.key_tokens

SIDES = {side: text(lang, f"focus.side.{side}") for side in ("from", "to")}
seed_from_url("focus_side", "side", lambda v: v if v in SIDES else None, "from")
clamp_choice("focus_side", list(SIDES), "from")
c1, c2 = st.columns([2, 3])
side = c1.radio(t("focus.question"), list(SIDES), key="focus_side", format_func=SIDES.get, horizontal=False)
group = shown.queries if side == "from" else shown.keys
tokens = list(group.labels)
# The widget and the URL hold the model's position (a merged word: its first piece), so the choice
# survives merging pieces or hiding [CLS]/[SEP]; a hidden position falls back to the first shown one.
options = [ps[0] for ps in group.positions]
seed_from_url("focus_token", "token", lambda v: url_int(v, 0), 0)
here = st.session_state.get("focus_token")
if isinstance(here, int) and 0 <= here < group.n_positions and group.word_of_piece[here] >= 0:
    st.session_state["focus_token"] = options[group.word_of_piece[here]]
clamp_choice("focus_token", options, options[0])
position = c2.selectbox(
    t("focus.token"),
    options,
    key="focus_token",
    format_func=lambda p: "#" + group.position_label(group.word_of_piece[p]).replace(": ", "  ", 1),
    help=t("focus.token_help"),
)
idx = group.word_of_piece[position]  # the shown row (from) or column (to)
set_url_param("side", side)
set_url_param("token", position)

left, right = st.columns([1, 1])
with left:
    # Plain text: viz escapes a caller's title (the token is user text).
    me = tokens[idx]
    # this token's row (from) or column (to) of every head, streamed a layer at a time, kept per token
    values, partners = focus_values(result, view.kind, shown, side, idx)
    grid = viz.focus.focus_grid_of_values(
        values, partners, idx, side, query_tokens=queries, key_tokens=keys,
        title=t(f"focus.grid_title.{side}", token=me), lang=lang,
    )
    chart(grid, key="focus_grid")
    st.caption(t("focus.grid_caption"))
with right:
    pattern = shown.pattern[view.layer, view.head]  # this head only
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
