"""The model itself: shape trace, parameters, config, metrics, training curve."""

import pandas as pd
import streamlit as st

import viz
from app_pages.glue.model import (
    config_table,
    display_name,
    evaluation_label,
    evaluation_rows,
    history_chart,
    layer_weights,
    metric_columns,
    run_starts,
    symbol_table,
)
from app_support import lab
from app_support.anatomy import model_parameters
from app_support.gateway import config, get_analysis, get_summary
from app_support.i18n import current_lang, t, text
from app_support.messages import show_input_error
from app_support.ui import chart, escape_md, page_header
from app_support.view import current_view
from model.public import ARCHIVE_LIMIT_BYTES, FUSED_FROM_CELLS, InputError


def _part_label(scope) -> str:
    """One kind, layer or head of the archive, in the page's language."""
    kind = t(f"kind.{scope.kind}.label")
    if scope.layer is None:
        return kind
    if scope.head is None:
        return t("model.trace.part_layer", kind=kind, layer=scope.layer)
    return t("model.trace.part_head", kind=kind, layer=scope.layer, head=scope.head)


view = current_view()
summary = get_summary(view.model)
record = lab.model.training_record(view.model)
cfg = config(view.model)
lang = current_lang()
page_header(t("model.title", title=t("page.model.title"), name=view.model), t("model.intro"))

m1, m2, m3, m4 = st.columns(4)
m1.metric(t("model.metric.parameters"), f"{summary['total_parameters']:,}")
m2.metric(t("model.metric.layers"), f"{cfg.n_enc_layers} + {cfg.n_dec_layers}")
m3.metric(t("model.metric.heads"), cfg.n_heads)
m4.metric(t("model.metric.widths"), f"{cfg.d_model} / {cfg.d_head}")

tabs = st.tabs([t("model.tab.trace"), t("model.tab.parameters"), t("model.tab.config"),
                t("model.tab.training")])

with tabs[0]:
    st.markdown(t("model.trace.intro"))
    result = None
    if not view.text.strip():
        st.info(t("model.trace.empty"))
    else:
        try:
            # a translation's shapes are those of the whole sequence (its decoding starts from a token or
            # two), as on the architecture page
            result = get_analysis(view.model, view.text, view.direction_arg, strategy=view.strategy,
                                  max_new=view.max_new, whole_trace=not cfg.decoder_only)
        except InputError as e:
            show_input_error(e)
    if result is not None:
        table = viz.shape_trace_table(result.trace, lang=lang)
        sizes = result.trace_sizes
        st.markdown(
            t("model.trace.symbols")
            + " · ".join(f"`{k}` = {v}" for k, v in sizes.items())
        )
        query = st.text_input(t("model.trace.filter"), key="trace_filter")
        shown = table
        if query.strip():
            q = query.strip().lower()
            hit = table.apply(lambda r: q in " ".join(str(v) for v in r.values).lower(), axis=1)
            shown = table[hit]
        trace_help = viz.column_help("shape_trace_table", lang)
        trace_columns = {col: st.column_config.Column(label, help=trace_help.get(col))
                         for col, label in viz.column_labels("shape_trace_table", lang).items()}
        st.dataframe(shown, column_config=trace_columns, hide_index=True, width="stretch",
                     height=min(720, 38 * (len(shown) + 1) + 4))
        st.caption(t("model.trace.count", shown=len(shown), total=len(table)))
        if any(step["op"].startswith("fused attention") for step in result.trace):
            st.info(t("model.trace.fused", cells=f"{FUSED_FROM_CELLS:,}"))
        name, sentence, direction, strategy, max_new = (view.model, view.text, view.direction_arg,
                                                        view.strategy, view.max_new)
        plan = lab.model.archive_scopes(name, len(result.source_tokens), len(result.target_tokens))
        part = plan[0][0]
        if len(plan) > 1 or part.kind is not None:
            # Labels fixed while the page runs (the widget may format its options again outside the run).
            labels = {s: t("model.trace.part_option", part=_part_label(s), size=f"{b / 2**20:,.0f}")
                      for s, b in plan}
            part = st.selectbox(t("model.trace.part"), list(labels), key="export_zip_part",
                                format_func=labels.__getitem__)
            st.caption(t("model.trace.part_caption", limit=f"{ARCHIVE_LIMIT_BYTES / 2**20:,.0f}"))

        def export() -> bytes:
            # Built on click: the cached analysis keeps no hook tensors, the archive has every hook of `part`.
            return lab.model.archive(name, sentence, direction, strategy, max_new, part)

        st.download_button(
            t("model.trace.download"),
            data=export,
            file_name=f"attention-lens-{view.model}.zip" if part.kind is None
            else f"attention-lens-{view.model}-{part.slug}.zip",
            mime="application/zip",
            icon=":material/download:",
            key="export_zip",
            on_click="ignore",
        )
        st.caption(t("model.trace.download_caption"))
        with st.expander(t("model.trace.symbols_meaning")):
            st.dataframe(symbol_table(sizes, lang), hide_index=True)

with tabs[1]:
    counts = summary["parameters"]
    style = st.radio(t("model.params.chart"), ["treemap", "bar"], horizontal=True, key="param_chart_kind",
                     format_func=lambda v: text(lang, f"model.params.chart.{v}"))
    chart(viz.parameter_breakdown_chart(counts, kind=style, lang=lang), key="param_chart")
    weights = layer_weights(cfg)
    st.caption(t("model.params.caption", attn=f"{weights['attn']:,}", ffn=f"{weights['ffn']:,}",
                 attn_formula=weights["attn_formula"], ffn_formula=weights["ffn_formula"]))
    st.markdown(f"#### {t('model.params.formula_header')}")
    parts = model_parameters(cfg)
    st.dataframe(pd.DataFrame({t("model.params.col.part"): [t(f"model.params.part.{p}") for p, _, _ in parts],
                               t("model.params.col.formula"): [f for _, f, _ in parts],
                               t("model.params.col.count"): [v for _, _, v in parts]}),
                 hide_index=True, column_config={t("model.params.col.count"): st.column_config.NumberColumn(
                     format="localized")})
    formula_total, real = sum(v for _, _, v in parts), summary["total_parameters"]
    st.caption(t("model.params.formula_total" if formula_total == real else "model.params.formula_off",
                 total=f"{formula_total:,}", real=f"{real:,}"))

with tabs[2]:
    left, right = st.columns(2)
    with left:
        st.subheader(t("model.config.title"))
        config = config_table(summary["config"], lang)
        st.dataframe(config, hide_index=True, width="stretch", height=38 * (len(config) + 1) + 4)
    with right:
        st.subheader(t("model.eval.title"))
        metrics = record.metrics
        rows = evaluation_rows(metrics)
        if rows:
            for name, shown, n in rows:
                cols = st.columns(max(1, len(shown)))
                for col, (k, v) in zip(cols, shown, strict=False):
                    col.metric(evaluation_label(name, k, lang), v)
                if n is not None:
                    st.caption(t("model.eval.n", name=escape_md(display_name("eval_name", name, lang)), n=n))
            st.caption(t("model.eval.caption_lm" if cfg.decoder_only else "model.eval.caption"))
        else:
            st.info(t("model.eval.none"))
        with st.expander(t("model.eval.raw")):
            st.json({"metrics": metrics, "info": record.info}, expanded=False)

with tabs[3]:
    history = record.history
    if not history:
        st.info(t("model.history.none"))
    else:
        losses, scores = metric_columns(history)
        step, series, value = (t(f"model.chart.{c}") for c in ("step", "series", "value"))
        st.subheader(t("model.history.loss"))
        st.line_chart(history_chart(history, losses, lang), x=step, y=value, color=series)
        st.caption(t("model.history.loss_caption"))
        for start in run_starts(history):
            st.caption(t("model.history.run_start", step=f"{start:,}"))
        if scores:
            st.subheader(t("model.history.quality"))
            st.line_chart(history_chart(history, scores, lang), x=step, y=value, color=series)
            st.caption(t("model.history.quality_caption"))
