"""Logit lens: each layer's residual stream read through the final norm and the output embedding, as a
layer x position grid of top tokens, and one position's final choice through the layers."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import lens as LL
from app_support import gateway as G
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view
from viz.lens import lens_cell_hover, lens_heatmap, lens_position_figure, row_labels


def shown_token(token: str) -> str:
    """A token inside bold markdown: spaces made visible (a bold run may not start with one), escaped."""
    return escape_md(token.replace(" ", "␣")) or "∅"


view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
cfg = G.config(view.model)
page_header(t("page.lens.title"), t("lens.intro"))
if cfg.encoder_only:
    st.info(t("lens.encoder_only"), icon=":material/info:")
    stop_page()
st.warning(t("lens.caveat"), icon=":material/psychology_alt:")
result = current_analysis(view)  # the view's analysis: its notes, and the check of the top row below
with st.spinner(t("lens.running")):
    lens = G.get_lens(view.model, view.text, view.direction_arg, view.strategy, view.max_new)
start, n, prompt_len = int(lens.positions[0]), int(lens.positions[-1]) + 1, lens.prompt_len
n_out = n - prompt_len
st.caption(t("lens.side_lm", prompt=prompt_len, output=n_out) if cfg.decoder_only
           else t("lens.side_decoder", output=n_out))
if start:
    st.caption(t("lens.window", n=n, shown=n - start, start=start, stop=n - 1))
positions = [int(p) for p in lens.positions]
rows = row_labels(lens.n_rows, lang)

seed_from_url("lens_view", "lens_view", LL.parse_view, LL.DEFAULT_VIEW)
shown = st.segmented_control(t("lens.view"), list(LL.VIEWS), key="lens_view", help=t("lens.view_help"),
                             format_func=lambda v: text(lang, f"lens.view.{v}")) or LL.DEFAULT_VIEW
set_url_param("lens_view", shown)
values = {"top": lens.top_probs[:, :, 0], "final": lens.final_prob, "entropy": lens.entropy}[shown]
zmax = float(max(np.max(lens.entropy), 1e-6)) if shown == "entropy" else 1.0

seed_from_url("lens_pos", "pos", lambda v: url_int(v, positions[0], positions[-1]), positions[-1])
if st.session_state.get("lens_pos") not in positions:  # another input: its last position
    st.session_state["lens_pos"] = positions[-1]
hover = lens_cell_hover(lens.top_ids, lens.top_probs, lens.words, lens.tokens, lens.final_ids,
                        lens.final_rank, lens.final_prob, lens.entropy, positions, lang)
a, b = LL.grid_window(len(positions), positions.index(st.session_state["lens_pos"]))
if b - a < len(positions):  # a window the cells' tokens stay readable in; it follows the chosen position
    st.caption(t("lens.grid_window", first=positions[a], last=positions[b - 1], n=len(positions)))
grid = lens_heatmap(values[:, a:b], [row[a:b] for row in lens.top_tokens()], lens.tokens[a:b],
                    positions=positions[a:b], prompt_len=prompt_len, chosen=st.session_state["lens_pos"],
                    hover=[row[a:b] for row in hover], value_name=t(f"lens.value.{shown}"),
                    zmax=zmax, title=t("lens.grid_title"), lang=lang)
event = chart(grid, key="lens_grid", on_select="rerun", selection_mode=("points",))
hit = LL.clicked_position(event)
if hit is not None and hit in positions and st.session_state.get("_lens_handled") != hit:
    st.session_state["_lens_handled"] = hit
    st.session_state["lens_pos"] = hit
    st.rerun()
elif hit is None:
    st.session_state["_lens_handled"] = None
st.caption(t("lens.click"))

pos = st.selectbox(t("lens.pos"), positions, key="lens_pos", help=t("lens.pos_help"),
                   format_func=lambda p: text(lang, "lens.pos_option", pos=p,
                                              token=lens.tokens[p - positions[0]]))
set_url_param("pos", pos)
column = pos - positions[0]
final = lens.words[int(lens.final_ids[column])]
st.markdown(t("lens.at_pos", pos=pos, token=shown_token(lens.tokens[column]), final=shown_token(final),
              prob=f"{float(lens.final_prob[-1, column]):.3f}", first=rows[lens.first_top(column)],
              stays=rows[lens.stays_top(column)]))
tops = [row[column] for row in lens.top_tokens()]
path = lens_position_figure(lens.final_rank[:, column], lens.final_prob[:, column], lens.entropy[:, column],
                            tops, final_token=final, title=t("lens.position_title", pos=pos), lang=lang)
chart(path, key="lens_position")
st.caption(t("lens.position_caption", vocab=f"{cfg.output_vocab_size:,}",
             max_entropy=f"{math.log(cfg.output_vocab_size):.2f}"))
with st.expander(t("lens.table")):
    st.dataframe(pd.DataFrame({
        t("lens.col.layer"): rows,
        t("lens.col.top"): tops,
        t("lens.col.top_prob"): lens.top_probs[:, column, 0],
        t("lens.col.rank"): lens.final_rank[:, column] + 1,
        t("lens.col.prob"): lens.final_prob[:, column],
        t("lens.col.entropy"): lens.entropy[:, column],
    }), hide_index=True, column_config={t(f"lens.col.{c}"): st.column_config.NumberColumn(format="%.4f")
                                        for c in ("top_prob", "prob", "entropy")})
delta = LL.last_row_difference(lens, result.steps)
if delta is not None:
    st.caption(t("lens.check", delta=f"{delta:.1e}"))
