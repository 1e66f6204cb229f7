"""Attribution beside attention: which source tokens each output token used (by gradients), next to
where cross-attention looks, and how often the two agree over many sentences. On a language model: which
prompt tokens each continuation token used, next to its self-attention over the prompt."""

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import attribution as AT
from app_support import gateway as G
from app_support import interventions as IV
from app_support import lab
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis, needs_output
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view
from viz.interventions import attribution_bars, attribution_heatmap, head_matrix, heads_over_source

view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
lm = G.config(view.model).decoder_only  # a language model: the prompt is the source, bounded here
page_header(t("page.attribution.title"), t("attribution.intro_lm" if lm else "attribution.intro"))
if not lm:  # a translation's output follows the sidebar's cap (None: to the end token), none at 0
    needs_output(view)
max_new = IV.lm_bound(view.max_new) if lm else view.max_new
current_analysis(dataclasses.replace(view, max_new=max_new))
if not view.n_layers.get("cross") and not lm:
    st.info(t("attribution.no_cross"), icon=":material/info:")
    stop_page()

seed_from_url("attr_steps", "steps", lambda v: url_int(v) if url_int(v) in AT.STEP_CHOICES else None,
              AT.LM_DEFAULT_STEPS if lm else AT.DEFAULT_STEPS)
n_steps = st.select_slider(
    t("attribution.steps"), list(AT.STEP_CHOICES), key="attr_steps", help=t("attribution.steps_help")
)
set_url_param("steps", n_steps)
outputs = None
if lm:
    if st.session_state.get("attr_outputs") not in AT.OUTPUT_CHOICES:
        st.session_state["attr_outputs"] = AT.LM_DEFAULT_OUTPUTS
    outputs = st.select_slider(t("attribution.outputs"), list(AT.OUTPUT_CHOICES), key="attr_outputs",
                               help=t("attribution.outputs_help"))
    st.caption(t("attribution.lm_bound", outputs=outputs, m=n_steps, n=max_new))
with st.spinner(t("analysis.running")):
    if lm:
        r = lab.attribution.attribute(view.model, view.text, view.direction_arg, int(n_steps), max_new,
                                      int(outputs))
    else:
        r = lab.attribution.attribute(view.model, view.text, view.direction_arg, int(n_steps), max_new)
lm_key = "_lm" if lm else ""  # the words that name cross-attention, or a language model's self-attention

# --------------------------------------------------------------------------- 1. every step

st.subheader(t("attribution.all.header"))
st.markdown(t(f"attribution.all.explain{lm_key}"))
left, right = st.columns(2)
with left:
    chart(
        attribution_heatmap(
            r.integrated,
            r.output_tokens,
            r.source_tokens,
            title=t("attribution.ig_title"),
            value_name=t("attribution.ig_name"),
            lang=lang,
        ),
        key="attr_ig",
    )
with right:
    chart(
        attribution_heatmap(
            r.grad_x_input,
            r.output_tokens,
            r.source_tokens,
            title=t("attribution.gxi_title"),
            value_name=t("attribution.gxi_name"),
            lang=lang,
        ),
        key="attr_gxi",
    )
error = r.completeness_error
delta = r.f_input - r.f_baseline
worst = int(np.argmax(error))
st.markdown(
    t(
        "attribution.completeness",
        m=r.n_steps,
        max=f"{error.max():.4f}",
        step=worst,
        share=f"{100 * error[worst] / max(abs(delta[worst]), 1e-12):.1f}",
        median=f"{np.median(error):.4f}",
    )
)
with st.expander(t("attribution.completeness_table")):
    st.dataframe(
        pd.DataFrame(
            {
                t("attribution.col.step"): list(range(len(r.output_tokens))),
                t("attribution.col.token"): r.output_tokens,
                t("attribution.col.f_input"): r.f_input,
                t("attribution.col.f_baseline"): r.f_baseline,
                t("attribution.col.delta"): delta,
                t("attribution.col.sum"): r.integrated.sum(-1),
                t("attribution.col.error"): error,
            }
        ),
        hide_index=True,
        column_config={
            t(f"attribution.col.{c}"): st.column_config.NumberColumn(format="%.4f")
            for c in ("f_input", "f_baseline", "delta", "sum", "error")
        },
    )

# --------------------------------------------------------------------------- 2. one step beside attention

st.subheader(t("attribution.step.header"))
n_out = len(r.output_tokens)
seed_from_url("attr_step", "step", lambda v: url_int(v, 0, n_out - 1), 0)
if st.session_state.get("attr_step", 0) > n_out - 1:
    st.session_state["attr_step"] = 0
step = (
    st.slider(t("attribution.step"), 0, n_out - 1, key="attr_step", help=t("attribution.step_help"))
    if n_out > 1
    else 0
)
set_url_param("step", step)
n_cross = r.cross.shape[0]
layer = min(view.layer, n_cross - 1)
head = view.head
st.markdown(t("attribution.step.which", step=step, token=escape_md(r.output_tokens[step])))
series = {
    t("attribution.series.ig"): r.integrated[step],
    t("attribution.series.gxi"): r.grad_x_input[step],
    t(f"attribution.series.head{lm_key}", l=layer, h=head): r.cross[layer, head, step],
    t(f"attribution.series.mean{lm_key}"): r.mean_attention[step],
    t(f"attribution.series.rollout{lm_key}"): r.rollout[step],
}
chart(
    attribution_bars(r.source_tokens, series, title=t("attribution.bars_title", step=step), lang=lang),
    key="attr_bars",
)
target = np.abs(r.integrated[step])
rho = AT.rank_agreement(series, target)
head_name = t(f"attribution.series.head{lm_key}", l=layer, h=head)
st.markdown(
    t(
        f"attribution.step.rho{lm_key}",
        rho_head=f"{rho[head_name]:.2f}",
        mean=f"{rho[t('attribution.series.mean' + lm_key)]:.2f}",
        rollout=f"{rho[t('attribution.series.rollout' + lm_key)]:.2f}",
        gxi=f"{rho[t('attribution.series.gxi')]:.2f}",
        layer=layer,
        head=head,
    )
)
labels = [
    t("attribution.row_label", l=la, h=h) for la in range(n_cross) for h in range(r.cross.shape[1])
]
chart(
    heads_over_source(
        r.cross[:, :, step].reshape(-1, r.cross.shape[-1]),
        labels,
        r.source_tokens,
        title=t(f"attribution.heads_title{lm_key}", step=step),
        lang=lang,
    ),
    key="attr_heads",
)
st.caption(t(f"attribution.step.caption{lm_key}"))

# --------------------------------------------------------------------------- 3. agreement over many sentences

st.subheader(t("attribution.agree.header"))
if lm:  # each prompt costs a backward pass per output token through all layers: not measured here
    st.info(t("attribution.agree.lm_skipped"), icon=":material/info:")
    stop_page()
st.markdown(t("attribution.agree.explain", n=AT.AGREEMENT_SENTENCES, m=AT.AGREEMENT_STEPS))
measured = st.session_state.setdefault("_attr_measured", set())
if view.model not in measured:
    if st.button(
        t("attribution.agree.button", n=AT.AGREEMENT_SENTENCES),
        key="attr_agree",
        icon=":material/play_arrow:",
    ):
        measured.add(view.model)
        st.rerun()
    st.caption(t("attribution.agree.cost"))
else:
    with st.spinner(t("attribution.agree.running", n=AT.AGREEMENT_SENTENCES)):
        texts = lab.ablation.sample_texts(view.model, AT.AGREEMENT_SENTENCES)
        ag = lab.attribution.agreement(view.model, texts, AT.AGREEMENT_STEPS)
    chart(
        head_matrix(
            ag.heads,
            title=t("attribution.agree.matrix_title"),
            value_name=t("attribution.agree.rho"),
            signed=True,
            zmax=1.0,
            marked=[(layer, head)],
            lang=lang,
        ),
        key="attr_agree_matrix",
    )
    best = np.unravel_index(int(np.argmax(ag.heads)), ag.heads.shape)
    worst_head = np.unravel_index(int(np.argmin(ag.heads)), ag.heads.shape)
    st.markdown(
        t(
            "attribution.agree.numbers",
            sentences=ag.n_sentences,
            steps=ag.n_steps,
            best=f"{ag.heads[best]:.2f}",
            best_layer=int(best[0]),
            best_head=int(best[1]),
            worst=f"{ag.heads[worst_head]:.2f}",
            worst_layer=int(worst_head[0]),
            worst_head=int(worst_head[1]),
            mean=f"{ag.mean_attention:.2f}",
            rollout=f"{ag.rollout:.2f}",
            gxi=f"{ag.grad_x_input:.2f}",
            spread=f"{float(ag.spread.mean()):.2f}",
        )
    )
    st.warning(
        t("attribution.agree.caveat", best=f"{ag.heads[best]:.2f}", gxi=f"{ag.grad_x_input:.2f}"),
        icon=":material/psychology_alt:",
    )
    with st.expander(t("attribution.agree.sentences")):
        st.markdown(" · ".join(escape_md(s) for s in texts))
