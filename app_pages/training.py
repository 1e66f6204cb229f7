"""Training, step by step: the reverse model's weights as saved during its training, run on the typed word
at the chosen step: the loss curve with the step marked, the chosen cross-attention head at that step, and
when each head's alignment appears."""

import numpy as np
import streamlit as st

import viz
from app_pages.glue import training as TS
from app_support import gateway as G
from app_support import lab
from app_support import reverse_models as RM
from app_support.i18n import current_lang, t, text
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view
from model.public import PRESETS, UnknownModelError

view = current_view()  # the sidebar first: it sets the interface language from the link
lang = current_lang()
name = TS.MODEL
try:
    steps = lab.training.steps(name)
except UnknownModelError:
    page_header(t("training.title"), "")
    st.info(t("training.missing", name=name), icon=":material/model_training:")
    stop_page()
page_header(t("training.title"), t("training.intro", n=len(steps), last=steps[-1]))
if len(steps) < 2:
    st.info(t("training.no_snapshots", name=name), icon=":material/model_training:")
    stop_page()


def _code(text: str) -> str:
    return f"`{text}`" if text.strip() else f"*{t('io.empty_output')}*"


cfg = G.config(name)
word = lab.pitfalls.trained_word(view.model, name, view.text)
layer, head = RM.clamp_head(cfg, view.layer, view.head)

seed_from_url("training_step", "step", lambda v: TS.nearest_step(steps, url_int(v)), steps[-1])
if st.session_state.get("training_step") not in steps:  # e.g. the model was retrained with other steps
    st.session_state["training_step"] = steps[-1]
step = st.select_slider(t("training.slider"), options=steps, key="training_step",
                        format_func=lambda s: text(lang, "training.step_option", step=s),
                        help=t("training.slider_help"))
set_url_param("step", step)

with st.spinner(t("analysis.running")):
    run = lab.training.step_run(name, step, word)
    line = lab.training.timeline(name, word)

loss = TS.loss_at(line.series, step)
em = line.exact_match.get(step)
c1, c2, c3 = st.columns(3)
c1.metric(t("training.metric.step"), f"{step} / {steps[-1]}")
c2.metric(t("training.metric.loss"), t("training.metric.loss_none") if loss is None else f"{loss:.3f}",
          help=t("training.metric.loss_help"))
c3.metric(t("training.metric.em"), t("training.metric.em_none") if em is None else f"{em:.3f}",
          help=t("training.metric.em_help"))
st.markdown(t("training.writes", output=_code(run.output), word=_code(word), answer=_code(run.answer)))

chart(viz.scrub_timeline(line.series["step"], line.series["loss"], line.steps,
                         [line.exact_match.get(s) for s in line.steps], step, lang=lang),
      key="training_timeline")
st.caption(t("training.timeline_caption"))

st.markdown(t("training.word", word=_code(word), layer=layer, head=head))
if word == RM.TRAINED_WORD and word != view.text.strip():
    st.caption(t("training.word_default"))
if (layer, head) != (view.layer, view.head):
    st.caption(t("training.clamped", layers=cfg.n_dec_layers, heads=cfg.n_heads))
queries, keys = run.analysis.tokens_for(RM.KIND)
pattern = run.analysis.attention(RM.KIND)[layer, head]
chart(viz.attention_heatmap(pattern, queries, keys, title=t("training.map_title", step=step, layer=layer,
                                                                 head=head), lang=lang),
      key="training_map")
chance = 1.0 / len(keys)
st.caption(t("training.map_caption", score=f"{run.alignment[layer, head]:.3f}", n_keys=len(keys),
             chance=f"{chance:.3f}"))

st.subheader(t("training.alignment_header"))
chart(viz.alignment_timeline(line.steps, line.alignment, step, (layer, head), chance=chance, lang=lang),
      key="training_alignment")
st.caption(t("training.alignment_caption"))
final = line.alignment[-1]
best_layer, best_head = (int(i) for i in np.unravel_index(int(np.argmax(final)), final.shape))
curve = line.alignment[:, best_layer, best_head]
rise = next(s for s, v in zip(line.steps, curve, strict=True) if v > final[best_layer, best_head] / 2)
st.markdown(t("training.alignment_summary", word=_code(word), layer=best_layer, head=best_head,
              first=f"{curve[0]:.3f}", first_step=line.steps[0], last=f"{curve[-1]:.3f}",
              last_step=line.steps[-1], rise=rise))
st.caption(t("training.how", name=name, n=PRESETS[name].snapshots + 1 if name in PRESETS else len(steps)))
