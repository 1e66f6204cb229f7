"""Architecture variants: the reverse task trained with one architectural change at a time (Post-LN, the
positional encodings, RMSNorm, GQA/MQA), side by side: training curves, test exact match, cross-attention
on the same word, and the key/value cache each one really holds per generated token."""

from dataclasses import replace

import pandas as pd
import streamlit as st

import viz
from app_pages.glue import variants as V
from app_support import gateway as G
from app_support import lab
from app_support import reverse_models as RM
from app_support.i18n import current_lang, t, text
from app_support.models import model_description, model_label
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page
from app_support.view import current_view
from model.public import PRESETS

view = current_view()  # the sidebar first: it sets the interface language from the link
lang = current_lang()
page_header(t("variants.title"), t("variants.intro"))

missing = V.missing_models()
if missing:
    st.info(t("variants.missing", names=", ".join(f"`{n}`" for n in missing)),
            icon=":material/model_training:")
    stop_page()


def _label(name: str) -> str:
    return model_label(name, lang)


def _code(text: str) -> str:
    return f"`{text}`" if text.strip() else f"*{t('io.empty_output')}*"


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


def _change(name: str) -> str:
    if name == V.MODELS[0]:
        return t("variants.change.base")
    return model_description(name, lang)


# --------------------------------------------------------------------------- all variants

with st.spinner(t("analysis.running")):
    rows = {name: lab.variants.variant_row(name) for name in V.MODELS}
st.subheader(t("variants.table_header"))
table = pd.DataFrame({
    t("variants.col.model"): [_label(n) for n in V.MODELS],
    t("variants.col.change"): [_change(n) for n in V.MODELS],
    t("variants.col.em"): [rows[n].exact_match for n in V.MODELS],
    t("variants.col.loss", n=V.LAST_STEPS): [rows[n].final_loss for n in V.MODELS],
    t("variants.col.valid"): [rows[n].valid_loss for n in V.MODELS],
    t("variants.col.params"): [rows[n].parameters for n in V.MODELS],
    t("variants.col.kv_heads"): [rows[n].kv_heads for n in V.MODELS],
})
loss_col = t("variants.col.loss", n=V.LAST_STEPS)
st.dataframe(table.style.format({t("variants.col.em"): "{:.3f}", loss_col: "{:.3f}",
                                 t("variants.col.valid"): "{:.3f}", t("variants.col.params"): "{:,}"},
                                na_rep="—"), hide_index=True)
st.caption(t("variants.table_caption"))

# --------------------------------------------------------------------------- one comparison

seed_from_url("variants_axis", "axis", V.axis_from_url, V.AXES[0])
axis = st.radio(t("variants.axis_pick"), V.AXES, key="variants_axis", horizontal=True,
                format_func=lambda a: text(lang, f"variants.axis.{a}"), help=t("variants.axis_help"))
set_url_param("axis", axis)
names = V.VARIANT_AXES[axis]
st.subheader(t(f"variants.axis.{axis}"))
st.markdown(t(f"variants.explain.{axis}"))

chart(viz.variant_loss_curves({_label(n): rows[n].series for n in names}, lang=lang), key="variants_curves")
st.caption(t("variants.curves_caption"))
ems = [rows[n].exact_match for n in names]
chart(viz.variant_bars([_label(n) for n in names], ems, value_name=t("variants.col.em"),
                       title=t("variants.em_title"), y_range=[0, 1.12], lang=lang), key="variants_em")
measured = [(em, n) for em, n in zip(ems, names, strict=True) if em is not None]
if len(measured) >= 2:
    (worst_em, worst), (best_em, best) = min(measured), max(measured)
    spread = best_em - worst_em
    key = "variants.measured_same" if spread <= 0.02 else "variants.measured"
    st.markdown(t(key, best=_label(best), best_em=f"{best_em:.3f}", worst=_label(worst),
                  worst_em=f"{worst_em:.3f}", spread=f"{spread:.3f}"))

reference = G.config(names[0])
word = lab.pitfalls.trained_word(view.model, names[0], view.text)
layer, head = RM.clamp_head(reference, view.layer, view.head)
st.markdown(t("variants.word", word=_code(word), layer=layer, head=head))
if word == RM.TRAINED_WORD and word != view.text.strip():
    st.caption(t("variants.word_default"))
if (layer, head) != (view.layer, view.head):
    st.caption(t("variants.clamped", layers=reference.n_dec_layers, heads=reference.n_heads))
with st.spinner(t("analysis.running")):
    views = {n: lab.variants.variant_view(n, word) for n in names}
for column, name in zip(st.columns(len(names)), names, strict=True):
    run = views[name]
    queries, keys = run.analysis.tokens_for(RM.KIND)
    with column:
        chart(viz.attention_heatmap(run.analysis.attention(RM.KIND)[layer, head], queries, keys,
                                    title=t("variants.map_title", model=_label(name), layer=layer, head=head),
                                    lang=lang), key=f"variants_map_{name}")
        st.markdown(t("variants.writes", output=_code(run.output), score=f"{run.alignment[layer, head]:.3f}"))
        best_layer, best_head = divmod(int(run.alignment.argmax()), run.alignment.shape[1])
        st.caption(t("variants.best_head", layer=best_layer, head=best_head,
                     score=f"{run.alignment[best_layer, best_head]:.3f}"))

# --------------------------------------------------------------------------- key/value cache

st.subheader(t("variants.kv_header"))
st.markdown(t("variants.kv_explain"))
kv_names = V.VARIANT_AXES[V.KV_AXIS]
chart(viz.kv_cache_bars([_label(n) for n in kv_names], [rows[n].kv_bytes for n in kv_names], lang=lang),
      key="variants_kv")
mha = rows[kv_names[0]].kv_bytes
st.dataframe(pd.DataFrame({
    t("variants.kv_col.model"): [_label(n) for n in kv_names],
    t("variants.kv_col.kv_heads"): [rows[n].kv_heads for n in kv_names],
    t("variants.kv_col.measured"): [rows[n].kv_bytes for n in kv_names],
    t("variants.kv_col.formula"): [V.kv_formula(G.config(n)) for n in kv_names],
    t("variants.kv_col.float16"): [V.kv_formula(G.config(n), 2) for n in kv_names],
    t("variants.kv_col.ratio"): [rows[n].kv_bytes / mha for n in kv_names],
    t("variants.kv_col.em"): [_num(rows[n].exact_match) for n in kv_names],
}).style.format({t("variants.kv_col.measured"): "{:,.0f}", t("variants.kv_col.ratio"): "{:.2f}"}),
    hide_index=True)
st.caption(t("variants.kv_caption", n=V.KV_TOKENS))
big = PRESETS["default"].model
gqa_heads = 2
st.markdown(t("variants.kv_scaled", d_model=big.d_model, heads=big.n_heads, layers=big.n_dec_layers,
              gqa_heads=gqa_heads, mha=f"{V.kv_formula(big, 2):,}",
              gqa=f"{V.kv_formula(replace(big, n_kv_heads=gqa_heads), 2):,}",
              mqa=f"{V.kv_formula(replace(big, n_kv_heads=1), 2):,}"))
st.caption(t("variants.kv_cross"))
st.caption(t("variants.how"))
