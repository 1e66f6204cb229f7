"""The model itself: shape trace, parameters, config, metrics, training curve, positional encoding."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_support.model_info import CONFIG_HELP, SYMBOLS, history_long, metric_columns
from app_support.models import get_analysis, get_bundle, get_summary
from app_support.state import current_view, seed_from_url, set_url_param, url_int
from app_support.ui import chart, escape_md, page_header
from model.analysis import analyze, export_zip
from model.data.tasks import InputError
from model.network.positional import sinusoidal_table

view = current_view()
bundle = get_bundle(view.model)
summary = get_summary(view.model)
cfg = bundle.cfg
page_header(
    f"The model: {view.model}",
    "What is inside the network: the path a sentence takes through it with every tensor's "
    "shape, where its parameters live, how it was configured and trained, and how it encodes "
    "word order.",
)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Parameters", f"{summary['total_parameters']:,}")
m2.metric("Layers (encoder + decoder)", f"{cfg.n_enc_layers} + {cfg.n_dec_layers}")
m3.metric("Heads per layer", cfg.n_heads)
m4.metric("d_model / d_head", f"{cfg.d_model} / {cfg.d_head}")

tabs = st.tabs(["Shape trace", "Parameters", "Config & metrics", "Training curve", "Positional encoding"])

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
        results = metrics.get("results") if isinstance(metrics, dict) else None
        if isinstance(results, dict) and results:
            for name, res in results.items():
                if not isinstance(res, dict):
                    continue
                shown = {k: v for k, v in res.items() if isinstance(v, int | float) and k != "n"}
                cols = st.columns(max(1, len(shown)))
                for col, (k, v) in zip(cols, shown.items(), strict=False):
                    col.metric(f"{name} {k}", f"{v:.3g}" if isinstance(v, float) else v)
                if "n" in res:
                    st.caption(f"{escape_md(str(name))}: {res['n']} test sentences.")
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

with tabs[4]:
    st.markdown(
        "A Transformer sees a *set* of tokens; word order has to be added. The 2017 paper adds a "
        "**sinusoidal** vector to each token's embedding: dimension pair *(2i, 2i+1)* is a sine and "
        "cosine whose wavelength grows with *i*, so fast dimensions tell neighbours apart and slow "
        "ones give the coarse position."
    )
    kind_note = {
        "sinusoidal": "This model uses exactly this table.",
        "learned": "This model learns its own position table; the sinusoidal table is shown for reference.",
        "rope": "This model uses rotary embeddings (RoPE) on queries and keys; the sinusoidal table is "
        "shown for reference — RoPE rotates with the same frequencies.",
        "none": "This model uses no positional encoding; the sinusoidal table is shown for reference.",
    }
    st.info(f"pos_encoding = `{cfg.pos_encoding}`. " + kind_note.get(cfg.pos_encoding, ""))
    dims_options = [16, 32, 64, 128, 256, 512]
    seed_from_url("pe_len", "pe_len", lambda v: url_int(v, 4, 512),
                  max(cfg.max_len, 8))
    seed_from_url("pe_dim", "pe_dim", lambda v: url_int(v) if url_int(v) in dims_options else None,
                  cfg.d_model if cfg.d_model in dims_options else 64)
    c1, c2 = st.columns(2)
    n_pos = c1.slider("Positions", 4, 512, key="pe_len")
    d = c2.select_slider("d_model", dims_options, key="pe_dim")
    set_url_param("pe_len", n_pos)
    set_url_param("pe_dim", d)
    table = sinusoidal_table(int(n_pos), int(d)).numpy().astype(np.float32)
    if cfg.pos_encoding == "learned" and (n_pos, d) == (cfg.max_len, cfg.d_model):
        positions = getattr(bundle.model.encoder.embed, "positions", None)
        if positions is not None and hasattr(positions, "table"):
            table = positions.table.detach().float().numpy()
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
