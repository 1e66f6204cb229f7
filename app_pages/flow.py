"""Information flow: the links that build a prediction (Ferrando & Voita 2024), drawn as layers x positions,
with a check of the strongest edges by knocking them out."""

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import flow as FL
from app_support import gateway as G
from app_support import lab
from app_support.i18n import current_lang, t, text
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view, open_head
from viz.flow import flow_figure, importance_vs_effect

view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
cfg = G.config(view.model)
page_header(t("page.flow.title"), t("flow.intro"))
problem = FL.flow_problem(cfg)
if problem is not None:  # one clear line, never a silently wrong graph
    st.info(t(f"flow.not_applicable.{problem}"), icon=":material/info:")
    stop_page()

# the prompt's tokens: the first graph (from the last token) gives them
direction = None if cfg.decoder_only else view.direction_arg
first = lab.flow.flow_graph(view.model, view.text, None, FL.DEFAULT_THRESHOLD, direction)
n_tokens = first.position + 1
tokens = first.tokens

c1, c2 = st.columns([3, 2])
seed_from_url("flow_pos", "pos", lambda v: url_int(v, 0, n_tokens - 1), n_tokens - 1)
if st.session_state.get("flow_pos") not in range(n_tokens):  # another input: its last token
    st.session_state["flow_pos"] = n_tokens - 1
position = c1.selectbox(
    t("flow.position"),
    list(range(n_tokens)),
    key="flow_pos",
    help=t("flow.position_help"),
    format_func=lambda p: text(lang, "flow.position_option", pos=p, token=tokens[p]),
)
set_url_param("pos", position)
lo, hi = FL.THRESHOLDS
seed_from_url(
    "flow_thr",
    "thr",
    lambda v: (url_int(v, round(lo * 100), round(hi * 100)) or 4) / 100,
    FL.DEFAULT_THRESHOLD,
)
threshold = c2.slider(
    t("flow.threshold"), lo, hi, step=0.01, format="%.2f", key="flow_thr", help=t("flow.threshold_help")
)
set_url_param("thr", round(threshold * 100))

with st.spinner(t("flow.computing")):
    graph = lab.flow.flow_graph(view.model, view.text, position, threshold, direction)
st.markdown(
    t(
        "flow.summary",
        token=escape_md(graph.predicted_token.replace(" ", "␣")) or "∅",
        logp=f"{graph.log_prob:.3f}",
        edges=len(graph.layer),
        rows=graph.rows_computed,
        seconds=f"{graph.seconds:.1f}",
    )
)
if graph.source_tokens:  # a translation model: the decoder's positions, the source beside them
    st.caption(t("flow.seq2seq_note", n_source=len(graph.source_tokens), n_enc=graph.n_enc_layers))
if not len(graph.layer):
    st.info(t("flow.no_edges"))
    stop_page()
fig = flow_figure(
    graph.tokens,
    graph.n_layers,
    graph.layer,
    graph.kind,
    graph.source,
    graph.target,
    graph.importance,
    graph.head,
    title=t("flow.figure_title", pos=position),
    lang=lang,
    **(
        {"source_tokens": graph.source_tokens, "stack": graph.stack, "n_enc_layers": graph.n_enc_layers}
        if graph.source_tokens
        else {}
    ),
)
event = chart(fig, key="flow_graph", on_select="rerun", selection_mode=("points",))
hit = FL.clicked_head(event, graph)
if hit is not None:  # the single-head page at that layer, head and kind, as a link keeps it
    open_head(hit[0], hit[1], kind=hit[2])
st.caption(t("flow.click"))
table = FL.edges_table(graph)
st.download_button(
    t("flow.download"),
    table.to_csv(index=False).encode("utf-8"),
    file_name=f"attention-lens-flow-{position}.csv",
    mime="text/csv",
    icon=":material/download:",
)

st.subheader(t("flow.check_title"))
st.caption(t("flow.check_intro"))
attention = graph.attention_edges()
if len(attention):

    def edge_label(i: int) -> str:
        s, tg = int(graph.source[i]), int(graph.target[i])
        found = text(
            lang,
            "flow.check_option",
            layer=int(graph.layer[i]),
            dst=tg,
            dst_token=graph.target_token(i),
            src=s,
            src_token=graph.source_token(i),
            importance=f"{graph.importance[i]:.3f}",
        )
        return (
            found
            if not graph.source_tokens
            else f"{found} · {text(lang, f'flow.kind.{graph.attention_kind(i)}')}"
        )

    e1, e2 = st.columns([4, 1])
    chosen = e1.selectbox(t("flow.check_edge"), list(attention), format_func=edge_label, key="flow_edge")
    e2.write("")
    if e2.button(t("flow.check_run"), key="flow_knock"):
        link = (
            (
                int(graph.layer[chosen]),
                int(graph.source[chosen]),
                int(graph.target[chosen]),
                graph.attention_kind(chosen),
            ),
        )
        one = lab.flow.check_edges(
            view.model, view.text, position, threshold, links=link, direction=direction
        )
        st.markdown(
            t(
                "flow.check_result",
                layer=link[0][0],
                dst=link[0][2],
                src=link[0][1],
                token=escape_md(graph.predicted_token.replace(" ", "␣")) or "∅",
                delta=f"{float(one.effect[0]):+.4f}",
            )
        )

    n_check = min(FL.KNOCKOUT_EDGES, len(attention))
    st.markdown(f"**{t('flow.table_title', n=n_check)}**")
    run_now = n_tokens <= FL.KNOCKOUT_DEFAULT_UP_TO
    if run_now:
        st.caption(t("flow.table_auto", limit=FL.KNOCKOUT_DEFAULT_UP_TO))
    else:
        st.caption(
            t(
                "flow.table_long",
                n=n_tokens,
                edges=n_check,
                seconds=f"{n_check * max(graph.pass_seconds, 0.01):.0f}",
            )
        )
        run_now = st.button(t("flow.table_run"), key="flow_table_run")
    if run_now:
        with st.spinner(t("flow.table_running", edges=n_check)):
            check = lab.flow.check_edges(view.model, view.text, position, threshold, direction=direction)
        side = lambda kind, p: (graph.source_tokens if kind == "encoder" else tokens)[int(p)]
        rows = pd.DataFrame(
            {
                t("flow.col.layer"): check.layer,
                t("flow.col.edge"): [
                    f"#{int(tg)} {side(k, tg)} ← #{int(s)} {side('encoder' if k == 'cross' else k, s)}"
                    for s, tg, k in zip(check.source, check.target, check.kinds, strict=True)
                ],
                t("flow.col.importance"): np.round(check.importance, 4),
                t("flow.col.effect"): np.round(check.effect, 4),
            }
        )
        if np.isnan(check.spearman):
            st.caption(t("flow.spearman_nan"))
        else:
            st.markdown(
                t(
                    "flow.spearman",
                    rho=f"{check.spearman:.2f}",
                    n=len(check.effect),
                    seconds=f"{check.seconds:.1f}",
                )
            )
        left, right = st.columns([3, 2])
        left.dataframe(rows, hide_index=True)
        with right:
            chart(
                importance_vs_effect(
                    check.importance,
                    check.effect,
                    list(rows[t("flow.col.edge")]),
                    title=t("flow.scatter_title"),
                    lang=lang,
                ),
                key="flow_scatter",
            )
