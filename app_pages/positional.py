"""Positional encoding: the table that tells the model where each token stands."""

import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.models import get_bundle, position_table
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

view = current_view()
bundle = get_bundle(view.model)
cfg = bundle.cfg
lang = current_lang()
page_header(t("page.positional.title"), t("positional.intro"))
KINDS_EXPLAINED = ("sinusoidal", "learned", "rope", "none")
kind_note = t(f"positional.kind.{cfg.pos_encoding}") if cfg.pos_encoding in KINDS_EXPLAINED else ""
st.info(t("positional.setting", value=cfg.pos_encoding, note=kind_note))

DIMS = [16, 32, 64, 128, 256, 512]
seed_from_url("pe_len", "len", lambda v: url_int(v, 4, 512), max(cfg.max_len, 8))
seed_from_url("pe_dim", "dim", lambda v: url_int(v) if url_int(v) in DIMS else None,
              cfg.d_model if cfg.d_model in DIMS else 64)
c1, c2 = st.columns(2)
n_pos = c1.slider(t("positional.positions"), 4, 512, key="pe_len")
d = c2.select_slider("d_model", DIMS, key="pe_dim")
set_url_param("len", n_pos)
set_url_param("dim", d)

table, own = position_table(bundle, int(n_pos), int(d))
if own and cfg.pos_encoding == "learned":
    st.caption(t("positional.learned_shown"))
chart(viz.pe_heatmap(table, lang=lang), key="pe_heatmap")
left, right = st.columns(2)
with left:
    chart(viz.pe_cosine_similarity(table, lang=lang), key="pe_cosine")
    st.caption(t("positional.cosine_caption"))
with right:
    default_dims = sorted({0, 1, min(d - 2, d // 4), min(d - 2, d // 2), d - 2})
    dims = st.multiselect(t("positional.dims"), list(range(d)), default=default_dims, key=f"pe_dims_{d}")
    if dims:
        chart(viz.pe_dimension_curves(table, dims, lang=lang), key="pe_curves")
        st.caption(t("positional.curves_caption"))
    else:
        st.info(t("positional.no_dims"))
