"""Positional encoding: the table that tells the model where each token stands."""

import streamlit as st

import viz
from app_support.models import get_bundle, position_table
from app_support.sidebar import current_view
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int

view = current_view()
bundle = get_bundle(view.model)
cfg = bundle.cfg
page_header(
    "Positional encoding",
    "A Transformer sees a *set* of tokens; word order has to be added. The 2017 paper adds a "
    "**sinusoidal** vector to each token's embedding: dimension pair *(2i, 2i+1)* is a sine and "
    "cosine whose wavelength grows with *i*, so fast dimensions tell neighbours apart and slow "
    "ones give the coarse position.",
)
KIND_NOTE = {
    "sinusoidal": "This model uses exactly this table.",
    "learned": "This model learns its own position table; at its own size (positions = max_len, "
    "d_model = its width) the page shows that learned table, otherwise the sinusoidal one for reference.",
    "rope": "This model uses rotary embeddings (RoPE) on queries and keys; the sinusoidal table is "
    "shown for reference — RoPE rotates with the same frequencies.",
    "none": "This model uses no positional encoding; the sinusoidal table is shown for reference.",
}
st.info(f"pos_encoding = `{cfg.pos_encoding}`. " + KIND_NOTE.get(cfg.pos_encoding, ""))

DIMS = [16, 32, 64, 128, 256, 512]
seed_from_url("pe_len", "len", lambda v: url_int(v, 4, 512), max(cfg.max_len, 8))
seed_from_url("pe_dim", "dim", lambda v: url_int(v) if url_int(v) in DIMS else None,
              cfg.d_model if cfg.d_model in DIMS else 64)
c1, c2 = st.columns(2)
n_pos = c1.slider("Positions", 4, 512, key="pe_len")
d = c2.select_slider("d_model", DIMS, key="pe_dim")
set_url_param("len", n_pos)
set_url_param("dim", d)

table, own = position_table(bundle, int(n_pos), int(d))
if own and cfg.pos_encoding == "learned":
    st.caption("Showing this model's learned table.")
chart(viz.pe_heatmap(table), key="pe_heatmap")
left, right = st.columns(2)
with left:
    chart(viz.pe_cosine_similarity(table), key="pe_cosine")
    st.caption("Each position is most similar to itself; similarity falls off with distance.")
with right:
    default_dims = sorted({0, 1, min(d - 2, d // 4), min(d - 2, d // 2), d - 2})
    dims = st.multiselect("Dimensions to plot", list(range(d)), default=default_dims, key=f"pe_dims_{d}")
    if dims:
        chart(viz.pe_dimension_curves(table, dims), key="pe_curves")
        st.caption("Low dimensions oscillate fast, high dimensions slowly.")
    else:
        st.info("Pick at least one dimension.")
