"""Cost vs length: the time of attention's L² part measured on this machine (bounded), its quadratic fit
and doubling ratios, the score tensor's memory, and the whole model's forward time with the L² share."""

import os

import streamlit as st

import viz
from app_support import gateway as G
from app_support import lab
from app_support.i18n import current_lang, t
from app_support.ui import chart, page_header
from app_support.view import current_view
from model.public import COST_LENGTHS

#: Seconds of work the page may spend measuring, in all (attention core and whole model together): under
#: the 2 s a page may take to answer, once per model and server (it does not depend on the input; the
#: measurements are ``model/lab/cost.py``'s, cached by the gateway per model and budget). Tests shorten it
#: with the environment variable ``ATTENTION_LENS_COST_BUDGET``.
BUDGET_S = float(os.environ.get("ATTENTION_LENS_COST_BUDGET", "1.5"))

view = current_view()
lang = current_lang()  # after the sidebar, which sets the session's language on a first run
page_header(t("cost.title"), t("cost.intro"))
cfg = G.config(view.model)
n_attention_layers = cfg.n_enc_layers + 2 * cfg.n_dec_layers

with st.spinner(t("cost.measuring", budget=f"{BUDGET_S:g}")):
    cost = lab.cost.measure_cost(view.model, BUDGET_S)
core, whole = cost.attention, cost.model
budget = f"{cost.budget_s:g}"
sep = "、" if lang == "zh" else ", "
st.caption(
    t(
        "cost.setting",
        h=cost.n_heads,
        d_head=cost.d_head,
        repeats=core.repeats,
        elapsed=f"{core.elapsed_s + whole.elapsed_s:.2f}",
        budget=budget,
    )
)

# 1 · the L² part
st.subheader(t("cost.core.header"))
st.markdown(t("cost.core.text"))
if core.stopped_early:
    if core.lengths:
        st.info(
            t("cost.stopped", budget=budget, skipped=sep.join(map(str, core.skipped)), last=core.lengths[-1]),
            icon=":material/timer_off:",
        )
    else:
        st.info(t("cost.none"), icon=":material/timer_off:")
fit = None
if len(core.lengths) >= 3:
    fit = viz.fit_quadratic(core.lengths, core.seconds)  # seconds; printed in ms
    st.markdown(t("cost.fit", a=f"{fit.a * 1e3:.3g}", b=f"{fit.b * 1e3:.3g}", c=f"{fit.c * 1e3:.3g}"))
elif core.lengths:
    st.caption(t("cost.fit_few"))
if core.lengths:
    chart(viz.cost_figure(core.lengths, core.seconds, fit, lang=lang), key="cost_curve")

    st.markdown("#### " + t("cost.doubling.header"))
    st.markdown(t("cost.doubling.text"))
    doublings = viz.doubling_ratios(core.lengths, core.seconds)
    if doublings:
        st.dataframe(viz.doubling_table(doublings, core.lengths, core.seconds, lang=lang), hide_index=True)
        near = [f"{d.short} → {d.long}" for d in doublings if d.verdict == "quadratic"]
        st.markdown(
            t("cost.doubling.summary", pairs=sep.join(near)) if near else t("cost.doubling.summary_none")
        )

# 2 · memory
st.subheader(t("cost.memory.header"))
st.markdown(t("cost.memory.text", h=cfg.n_heads))
st.dataframe(
    viz.memory_table(COST_LENGTHS, batch=1, heads=cfg.n_heads, layers=n_attention_layers, lang=lang),
    hide_index=True,
)

# 3 · the whole model
st.subheader(t("cost.model.header"))
model_text = "cost.model.text_lm" if cfg.decoder_only else "cost.model.text"
st.markdown(t(model_text, max_len=cfg.max_len, layers=n_attention_layers))
if whole.lengths:
    st.dataframe(
        viz.model_table(
            whole.lengths,
            whole.seconds,
            whole.core_seconds,
            whole.shares,
            layers=n_attention_layers,
            lang=lang,
        ),
        hide_index=True,
    )
    if max(whole.shares) < 0.5:
        st.markdown(t("cost.model.small", d_model=cfg.d_model))
else:
    st.info(t("cost.model.none"), icon=":material/timer_off:")
