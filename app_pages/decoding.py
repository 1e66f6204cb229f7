"""Cross-attention and decoding: walk through the chosen decoding (greedy, beam search or sampling) one
output token at a time, and teacher forcing with a reference beside it."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_pages.glue import decoding as D
from app_support import gateway as G
from app_support import models as M
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis, needs_output, show_input_error, show_notes
from app_support.strategy import name as strategy_name
from app_support.ui import chart, escape_md, md_tokens, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from model.public import BeamResult, InputError, SampleResult

lang = current_lang()
view = current_view()
# A decoder-only language model reads no source: each step's attention is its own over what it read.
language_model = not view.n_layers.get("cross")
page_header(t("page.decoding.title"), t("decoding.intro_lm" if language_model else "decoding.intro"))
needs_output(view)
result = current_analysis(view)
vocab_size = G.config(view.model).output_vocab_size

steps = result.steps
n_steps = len(steps)
seed_from_url("decode_step", "step", lambda v: url_int(v, 0), 0)
if not 0 <= int(st.session_state.get("decode_step", 0)) < n_steps:
    st.session_state["decode_step"] = 0
if n_steps > 1:
    step_no = st.slider(t("decoding.slider"), 0, n_steps - 1, key="decode_step",
                        help=t("decoding.slider_help"))
else:
    step_no = 0
set_url_param("step", step_no)
step = steps[step_no]
pos = step.position

read = result.target_tokens[: pos + 1]
st.markdown(
    t("decoding.step_read", step=step_no, tokens=md_tokens(read, highlight=pos), token=escape_md(step.token))
    + t("decoding.step_prob", p=step.prob)
)
st.caption(t("decoding.strategy_now", strategy=strategy_name(result.strategy, lang)))

dec = result.attention("decoder")  # [layer, head, query, key]
dec_scores = result.attention("decoder", "scores")
layer, head = view.layer, view.head
if layer >= dec.shape[0]:
    layer = 0

left, right = st.columns([3, 2])
with left:
    if language_model:  # every head's row over the prompt and the output so far
        fig = viz.cross_attention_step(
            dec[:, :, pos, : pos + 1], result.target_tokens[: pos + 1], step_token=step.token, step=step_no,
            title=t("decoding.lm_title", step=step_no), lang=lang,
        )
    else:
        fig = viz.cross_attention_step(
            result.attention("cross")[:, :, pos, :], result.source_tokens, step_token=step.token,
            step=step_no, title=t("decoding.cross_title", step=step_no), lang=lang,
        )
    chart(fig, key="decode_cross_all")
    st.caption(t("decoding.lm_caption" if language_model else "decoding.cross_caption"))
with right:
    top = viz.topk_bar(step.top_tokens, np.asarray(step.top_probs, dtype=np.float32),
                       title=t("decoding.topk_title", step=step_no), lang=lang)
    chart(top, key="decode_topk")
    st.caption(t("decoding.topk_caption"))

c1, c2 = st.columns(2) if not language_model else (None, st.container())
if c1 is not None:
    with c1:
        one = viz.attention_heatmap(
            result.attention("cross")[layer, head, pos : pos + 1, :],
            [result.target_tokens[pos]],
            result.source_tokens,
            scores_2d=result.attention("cross", "scores")[layer, head, pos : pos + 1, :],
            title=t("decoding.cross_row_title", layer=layer, head=head),
            lang=lang,
        )
        chart(one, key="decode_cross_one")
with c2:
    row = viz.attention_heatmap(
        dec[layer, head, pos : pos + 1, :],
        [result.target_tokens[pos]],
        result.target_tokens,
        scores_2d=dec_scores[layer, head, pos : pos + 1, :],
        title=t("decoding.self_row_title", layer=layer, head=head),
        lang=lang,
    )
    chart(row, key="decode_self_row")
st.caption(t("decoding.lm_rows_caption" if language_model else "decoding.rows_caption"))


# --------------------------------------------------------------------------- the search itself

search = result.search
if isinstance(search, BeamResult):
    st.subheader(t("decoding.beam.header"))
    st.markdown(t("decoding.beam.explain", width=view.strategy.beam, n=len(search.finished)))
    st.caption(t("decoding.beam.vs_transformers"))
    nodes = D.beam_nodes(view.model, search, result.target_tokens[len(result.prepared.prefix) - 1])
    tree = viz.beam_tree(nodes.steps, nodes.parents, nodes.tokens, nodes.logps, nodes.statuses, nodes.chosen,
                         current=step_no if step_no < len(search.steps) else None, lang=lang)
    chart(tree, key="decode_beam_tree")
    if step_no < len(search.steps):
        status_words = {s: t(f"decoding.beam.status.{s}") for s in ("kept", "finished", "cut", "pruned")}
        rows = D.beam_rows(view.model, search.steps[step_no])
        table = pd.DataFrame({
            t("decoding.beam.col.rank"): [r["rank"] for r in rows],
            t("decoding.beam.col.hypothesis"): [r["hypothesis"] for r in rows],
            t("decoding.beam.col.token"): [r["token"] for r in rows],
            t("decoding.beam.col.logp"): [round(r["logp"], 4) for r in rows],
            t("decoding.beam.col.score"): [round(r["score"], 4) for r in rows],
            t("decoding.beam.col.status"): [status_words[r["status"]] for r in rows],
        })
        st.markdown(t("decoding.beam.table", step=step_no))
        st.dataframe(table, hide_index=True)
    else:
        st.caption(t("decoding.beam.no_step", step=step_no, n=len(search.steps)))
    best = search.best
    st.caption(t("decoding.beam.best", logp=best.logp, score=best.score, n=len(best.ids) + int(best.ended)))
elif isinstance(search, SampleResult):
    st.subheader(t("decoding.sample.header"))
    st.markdown(t("decoding.sample.explain"))
    if step_no < len(search.steps):
        sv = D.sample_view(view.model, search.steps[step_no])
        bars = viz.sampling_bars(sv.tokens, sv.filtered, sv.raw, sv.drawn, n_kept=sv.n_kept,
                                 title=t("decoding.sample.title", step=step_no, n=sv.n_kept), lang=lang)
        chart(bars, key="decode_sample_bars")
        drawn = search.steps[step_no]
        st.caption(t("decoding.sample.caption", token=escape_md(D.token_text(view.model, drawn.token_id)),
                     p=drawn.token_prob, raw=drawn.raw_prob, n=sv.n_kept, vocab=vocab_size))
    else:
        st.caption(t("decoding.sample.no_step", step=step_no))
else:
    st.info(t("decoding.greedy_hint"), icon=":material/tune:")


# --------------------------------------------------------------------------- teacher forcing

st.subheader(t("decoding.tf.header"))
st.markdown(t("decoding.tf.explain"))
seed_from_url("decode_ref", "ref", None, "")
reference = st.text_input(t("decoding.tf.reference"), key="decode_ref", max_chars=M.MAX_INPUT_CHARS,
                          help=t("decoding.tf.reference_help"))
if reference:
    set_url_param("ref", reference)
if not reference.strip():
    st.info(t("decoding.tf.empty"), icon=":material/edit:")
else:
    try:
        forced = G.get_analysis(view.model, view.text, view.direction_arg, target=reference)
    except InputError as e:
        show_input_error(e)
        forced = None
    if forced is not None:
        show_notes(forced)
        losses = D.losses_of(view.model, forced)
        a, b, c = st.columns(3)
        a.metric(t("decoding.tf.mean_smoothed", eps=f"{losses.smoothing:g}"), f"{losses.mean_smoothed:.3f}")
        b.metric(t("decoding.tf.mean_nll"), f"{losses.mean_nll:.3f}")
        c.metric(t("decoding.tf.n_differ"), f"{int(losses.differs.sum())} / {len(losses.tokens)}")
        fig = viz.token_losses(losses.tokens, losses.nll, losses.smoothed, losses.differs,
                               losses.model_tokens, smoothing=losses.smoothing, lang=lang)
        chart(fig, key="decode_tf_losses")
        smoothing_note = "decoding.tf.smoothing" if losses.smoothing > 0 else "decoding.tf.no_smoothing"
        st.caption(t(smoothing_note, eps=f"{losses.smoothing:g}"))
        table = pd.DataFrame({
            t("decoding.tf.col.token"): losses.tokens,
            t("decoding.tf.col.p"): [round(float(np.exp(-x)), 4) for x in losses.nll],
            t("decoding.tf.col.nll"): np.round(losses.nll, 4),
            t("decoding.tf.col.smoothed"): np.round(losses.smoothed, 4),
            t("decoding.tf.col.model"): losses.model_tokens,
            t("decoding.tf.col.model_p"): np.round(losses.model_probs, 4),
            t("decoding.tf.col.differs"): losses.differs.tolist(),
        })
        st.dataframe(table, hide_index=True)
        st.markdown(t("decoding.tf.side_by_side", free=escape_md(result.output_text) or "∅",
                      strategy=strategy_name(result.strategy, lang), reference=escape_md(forced.output_text)))
