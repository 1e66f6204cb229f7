"""The model itself: shape trace, parameters, config, metrics, training curve."""

import pandas as pd
import streamlit as st

import viz
from app_support.model_info import CONFIG_HELP, SYMBOLS, evaluation_rows, history_long, metric_columns
from app_support.models import get_analysis, get_bundle, get_summary
from app_support.sidebar import current_view
from app_support.ui import chart, escape_md, page_header
from model.analysis import analyze, export_zip
from model.data.tasks import InputError

view = current_view()
bundle = get_bundle(view.model)
summary = get_summary(view.model)
cfg = bundle.cfg
page_header(
    f"The model: {view.model}",
    "What is inside the network: the path a sentence takes through it with every tensor's "
    "shape, where its parameters live, and how it was configured and trained. How it encodes "
    "word order has a page of its own: **Positional encoding**.",
)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Parameters", f"{summary['total_parameters']:,}")
m2.metric("Layers (encoder + decoder)", f"{cfg.n_enc_layers} + {cfg.n_dec_layers}")
m3.metric("Heads per layer", cfg.n_heads)
m4.metric("d_model / d_head", f"{cfg.d_model} / {cfg.d_head}")

tabs = st.tabs(["Shape trace", "Parameters", "Config & metrics", "Training curve"])

with tabs[0]:
    st.markdown(
        "Every step of one forward pass on the sidebar's sentence, in order, with the **real shapes** "
        "of its tensors and the **symbolic shapes** the code expects. A hook name marks a tensor "
        "the model records (the attention pages read the `hook_pattern` and `hook_scores` ones)."
    )
    try:
        if not view.text.strip():
            raise InputError("The input is empty. Type a sentence in the sidebar to trace its shapes.")
        result = get_analysis(view.model, view.text, view.direction_arg)
    except InputError as e:
        st.info(escape_md(str(e)))
    else:
        table = viz.shape_trace_table(result.trace)
        sizes = result.trace_sizes
        st.markdown(
            "Symbols in this pass: "
            + " · ".join(f"`{k}` = {v}" for k, v in sizes.items())
        )
        query = st.text_input("Filter steps (e.g. `cross_attn`, `blocks.1`, `softmax`)", key="trace_filter")
        shown = table
        if query.strip():
            q = query.strip().lower()
            hit = table.apply(lambda r: q in " ".join(str(v) for v in r.values).lower(), axis=1)
            shown = table[hit]
        st.dataframe(shown, hide_index=True, width="stretch", height=min(720, 38 * (len(shown) + 1) + 4))
        st.caption(f"{len(shown)} of {len(table)} steps.")
        text, direction = view.text, view.direction_arg

        def export() -> bytes:
            # Built on click: the cached analysis keeps only attention, the archive has every hook.
            return export_zip(bundle, analyze(bundle, text, direction), text)

        st.download_button(
            "Download every hooked tensor of this sentence (activations.npz + meta.json)",
            data=export,
            file_name=f"attention-lens-{view.model}.zip",
            mime="application/zip",
            icon=":material/download:",
            key="export_zip",
            on_click="ignore",
        )
        st.caption("The same files as `python -m model inspect --out DIR`: one float32 array per hook name, "
                   "and the tokens, output, config, shape trace and parameter counts.")
        with st.expander("What the symbols mean"):
            st.dataframe(
                pd.DataFrame([{"symbol": k, "value": sizes.get(k, ""), "meaning": v} for k, v in SYMBOLS.items()]),
                hide_index=True,
            )

with tabs[1]:
    counts = summary["parameters"]
    style = st.radio("Chart", ["treemap", "bar"], horizontal=True, key="param_chart_kind")
    chart(viz.parameter_breakdown_chart(counts, kind=style), key="param_chart")
    st.caption(
        "Parameters per module (tied embedding matrices counted once). Attention layers hold "
        "4·d_model² weights (Q, K, V, output); feed-forward layers 2·d_model·d_ff."
    )

with tabs[2]:
    left, right = st.columns(2)
    with left:
        st.subheader("Configuration")
        rows = [{"setting": k, "value": str(v), "meaning": CONFIG_HELP.get(k, "")} for k, v in summary["config"].items()]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=38 * (len(rows) + 1) + 4)
    with right:
        st.subheader("Evaluation")
        metrics = bundle.metrics or {}
        rows = evaluation_rows(metrics)
        if rows:
            for name, shown, n in rows:
                cols = st.columns(max(1, len(shown)))
                for col, (k, v) in zip(cols, shown, strict=False):
                    col.metric(f"{name} {k}", v)
                if n is not None:
                    st.caption(f"{escape_md(name)}: {n} test sentences.")
            st.caption(
                "chrF: character n-gram F-score (0–100, higher is better); BLEU: word n-gram precision "
                "(0–100). For the didactic models, exact match is the share of outputs that are exactly right."
            )
        else:
            st.info("No evaluation results are stored with this model.")
        with st.expander("Raw metrics and training info"):
            st.json({"metrics": metrics, "info": bundle.info}, expanded=False)

with tabs[3]:
    history = bundle.history or []
    if not history:
        st.info("No training history is stored with this model.")
    else:
        losses, scores = metric_columns(history)
        st.subheader("Loss")
        st.line_chart(history_long(history, losses), x="step", y="value", color="series")
        st.caption("Cross-entropy (with label smoothing) on training batches; valid_loss on held-out sentences.")
        if scores:
            st.subheader("Translation quality during training")
            st.line_chart(history_long(history, scores), x="step", y="value", color="series")
            st.caption("chrF / BLEU on a validation sample at each evaluation.")
