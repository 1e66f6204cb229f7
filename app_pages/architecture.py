"""Architecture and shape flow: the diagram of the loaded model (encoder–decoder, encoder- or decoder-only),
each box with the real shape of its output (from the shape trace), and the multi-head split and merge of the
chosen attention."""

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

import viz
from app_support import gateway as G
from app_support import pages
from app_support.anatomy import block_parameters, block_wiring
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis
from app_support.ui import chart, page_header
from app_support.view import current_view
from model.public import hook_name

#: The config values the diagram reads.
CONFIG_KEYS = (
    "n_enc_layers",
    "n_dec_layers",
    "n_heads",
    "n_kv_heads",
    "d_model",
    "d_ff",
    "norm_first",
    "norm",
    "pos_encoding",
    "tie_embeddings",
    "max_len",
    "vocab_size",
)
#: Pages a box can name, in the order of the links under the figure.
LINKED = ("single", "heads", "positional", "model")

view = current_view()
lang = current_lang()  # after the sidebar, which sets the session's language on a first run
cfg = G.config(view.model)
page_header(t("architecture.title"), t("architecture.intro_lm" if cfg.decoder_only else "architecture.intro"))
# A translation's decoding starts from one or two tokens: the shapes worth drawing are those of the whole
# sequence (a language model's prompt pass is its input, shown as read)
result = current_analysis(view, whole_trace=not cfg.decoder_only)
# how the block's norms and residual adds are wired: Pre-LN, Post-LN, OLMo 2's, Gemma 3's or a parallel block
how, block_lines = block_wiring(cfg, "encoder" if cfg.encoder_only else "decoder")
config = {k: getattr(cfg, k) for k in CONFIG_KEYS} | {"norm_style": how}

st.caption(
    t(
        "architecture.config_lm" if cfg.decoder_only else "architecture.config",
        n_enc=cfg.n_enc_layers,
        n_dec=cfg.n_dec_layers,
        h=cfg.n_heads,
        d_head=cfg.d_head,
        d_model=cfg.d_model,
        d_ff=cfg.d_ff,
        norm=t(f"architecture.norm.{how}"),
        pos=t(f"architecture.pos.{cfg.pos_encoding}"),
        tied=t("architecture.tied." + ("yes" if cfg.tie_embeddings else "no")),
    )
)

titles = {key: t(f"page.{key}.title") for key in LINKED}
shapes = viz.architecture_shapes(result.trace)
chart(viz.architecture_figure(config, shapes, page_titles=titles, lang=lang), key="architecture_diagram")
st.caption(t("architecture.shapes_note", B=result.trace_sizes.get("B", 1)))
if result.trace and result.trace[-1]["name"] == "decoding":  # one pass: the prompt's, then one token a step
    prompt_len = result.trace_sizes.get("L_tgt", 0)
    st.caption(t("architecture.one_pass", L=prompt_len, new=len(result.target_tokens) - prompt_len))

if how in ("pre", "post"):  # the other wirings are explained with their block below
    st.markdown(t(f"architecture.reading.{how}"))
if cfg.n_enc_layers and cfg.n_dec_layers:
    st.markdown(t("architecture.reading.cross"))
if cfg.decoder_only:
    st.markdown(t("architecture.reading.decoder_only"))
if cfg.pos_encoding == "rope":
    st.markdown(t("architecture.reading.rope"))
st.markdown(
    t(
        "architecture.reading.tied",
        vocab=cfg.vocab_size,
        tied=t("architecture.reading.tied_" + ("yes" if cfg.tie_embeddings else "no")),
    )
)

st.markdown(t("architecture.links"))
for column, key in zip(st.columns(len(LINKED)), LINKED, strict=True):
    spec = pages.page(key)
    with column:
        try:
            st.page_link(spec.file, label=titles[key], icon=spec.icon)
        except StreamlitAPIException:  # the page run on its own (tests): no navigation holds the others
            st.markdown(titles[key])

# --------------------------------------------------------------------------- one block
st.subheader(t("architecture.block.header"))
stack = "encoder" if cfg.encoder_only else "decoder"
stack_name = t(f"architecture.block.stack.{stack}")
st.markdown(t("architecture.block.intro", stack=stack_name))
st.code("\n".join(block_lines), language="python")
st.markdown(t(f"architecture.block.how.{how}"))
if cfg.qk_norm != "none":
    st.markdown(t(f"architecture.block.qk.{cfg.qk_norm}", d_head=cfg.d_head,
                  width=f"(h + h_kv)·d_head = {(cfg.n_heads + cfg.kv_heads) * cfg.d_head}"
                  if cfg.qk_norm == "full" else cfg.d_head))
parts = block_parameters(cfg, stack)
st.markdown(t("architecture.block.params", stack=stack_name, total=f"{sum(v for _, _, v in parts):,}",
              formula=" + ".join(f"`{formula}` = {value:,} ({t(f'model.params.part.{part}')})"
                                 for part, formula, value in parts)))

# --------------------------------------------------------------------------- split and merge
st.subheader(t("architecture.split.header"))
path = hook_name(view.kind, view.layer, "q").rsplit(".", 1)[0]
try:
    stages = viz.split_merge_stages(result.trace, path)
except KeyError as e:
    st.info(t("architecture.missing", op=f"`{e.args[0]}`"))
    st.stop()
by_key = {s.key: s for s in stages}
scores = by_key["scores"].shape
st.markdown(
    t(
        "architecture.split.text",
        kind=view.kind_label,
        layer=view.layer,
        d_model=cfg.d_model,
        h=cfg.n_heads,
        d_head=cfg.d_head,
        lq=scores[-2],
        lk=scores[-1],
        merged=by_key["merge"].shape[-1],
    )
)
if cfg.kv_heads != cfg.n_heads:
    st.info(
        t("architecture.split.gqa", kv=cfg.kv_heads, group=cfg.n_heads // cfg.kv_heads, h=cfg.n_heads),
        icon=":material/share:",
    )
if cfg.pos_encoding == "rope" and view.kind != "cross":
    st.caption(t("architecture.split.rope"))
chart(viz.split_merge_figure(stages, lang=lang), key="architecture_split")
ops = dict((key, op) for key, op, _ in viz.SPLIT_MERGE)
table = pd.DataFrame(
    {
        t("architecture.col.stage"): [t(f"architecture.stage.{s.key}") for s in stages],
        t("architecture.col.shape"): [viz.format_shape(s.shape) for s in stages],
        t("architecture.col.symbol"): ["(" + ", ".join(s.symbol) + ")" for s in stages],
        t("architecture.col.step"): [ops[s.key] for s in stages],
    }
)
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    column_config={t("architecture.col.step"): st.column_config.TextColumn()},
)
