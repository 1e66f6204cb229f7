"""Pitfall lab: classic Transformer bugs, each run for real. The inference half: faults switched on in
the loaded model through model.run.interventions (never its weights), a fully masked row, the word-order
test without the positional encoding, input cut at max_len; and the dimensions lab on a tiny random
model, where every error shown is the exception the code really raised."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_pages.glue import pitfalls as PF
from app_support import lab
from app_support.i18n import current_lang, note, t, text
from app_support.messages import current_analysis, show_input_error
from app_support.models import model_description, model_label
from app_support.ui import chart, escape_md, md_output, md_tokens, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from model.public import InputError

view = current_view()  # the sidebar first: it sets the interface language from the link
lang = current_lang()
page_header(t("pitfalls.title"), t("pitfalls.intro"))
result = current_analysis(view)


# ---------------------------------------------------------------------------
# Sections about models trained with a fault (another part of the lab) go here, before the
# inference faults below: each section is a function called in order at the end of this file.
# ---------------------------------------------------------------------------


# --------------------------------------------------------------------------- 0. trained with the bug


def _model_label(name: str) -> str:
    return model_label(name, lang)


def _exact_match(value: float | None) -> str:
    return t("pitfalls.trained.no_metrics") if value is None else f"{value:.3f}"


def trained_section() -> None:
    st.subheader(t("pitfalls.trained.header"))
    seed_from_url("pitfalls_variant", "variant", PF.variant_from_short, PF.TRAINED_VARIANTS[0])
    variant = st.selectbox(t("pitfalls.trained.pick"), PF.TRAINED_VARIANTS, key="pitfalls_variant",
                           format_func=_model_label, help=t("pitfalls.trained.pick_help"))
    set_url_param("variant", PF.variant_short(variant))
    st.caption(model_description(variant, lang))
    st.markdown(t("pitfalls.trained.explain"))  # after the choice: the choice is on the first screen
    word = lab.pitfalls.trained_word(view.model, PF.TRAINED_CORRECT, view.text)
    with st.spinner(t("analysis.running")):
        correct = lab.pitfalls.trained_run(PF.TRAINED_CORRECT, word)
        broken = lab.pitfalls.trained_run(variant, word)
    st.markdown(t("pitfalls.trained.fault_line"))
    st.code(broken.fault_line, language="python")
    left, right = st.columns(2)
    left.metric(t("pitfalls.trained.em_correct"), _exact_match(correct.exact_match))
    right.metric(t("pitfalls.trained.em_variant"), _exact_match(broken.exact_match))
    st.caption(t("pitfalls.trained.em_caption"))
    st.markdown(t(f"pitfalls.trained.verdict.{PF.variant_short(variant)}"))
    names = (_model_label(PF.TRAINED_CORRECT), _model_label(variant))
    chart(viz.training_curves(correct.series, broken.series, names=names, lang=lang),
          key="pitfalls_trained_curves")
    st.caption(t("pitfalls.trained.curves_caption"))
    st.markdown(t("pitfalls.trained.word", word=f"`{word}`", layer=correct.layer, head=correct.head))
    if word == PF.TRAINED_WORD and word != view.text.strip():
        st.caption(t("pitfalls.trained.word_default"))
    columns = st.columns(2)
    runs = (correct, broken)
    for column, run, name, which in zip(columns, runs, names, ("correct", "variant"), strict=True):
        queries, keys = run.analysis.tokens_for("cross")
        pattern = run.analysis.attention("cross")[run.layer, run.head]
        with column:
            title = t("pitfalls.trained.map", model=name, layer=run.layer, head=run.head)
            chart(viz.attention_heatmap(pattern, queries, keys, title=title, lang=lang),
                  key=f"pitfalls_trained_map_{which}")
            st.markdown(t("pitfalls.trained.output", model=name, output=f"`{run.analysis.output_text}`"
                          if run.analysis.output_text.strip() else f"*{t('io.empty_output')}*"))
            if run.head != PF.TRAINED_HEAD:
                st.caption(t("pitfalls.trained.head_clamped", n=run.analysis.attention("cross").shape[1],
                             head=run.head))


# --------------------------------------------------------------------------- 1. faults switched on


def _pick_fault() -> str:
    seed_from_url("pitfalls_fault", "fault", lambda v: v if v in PF.FAULTS else None, PF.FAULTS[0])
    fault = st.radio(t("pitfalls.fault.pick"), PF.FAULTS, key="pitfalls_fault",
                     format_func=lambda f: text(lang, f"pitfalls.fault.{f}"),
                     help=t("pitfalls.fault.pick_help"))
    set_url_param("fault", fault)
    return fault


def _maps(run: PF.FaultRun, kind: str, layer: int, head: int, fault: str) -> None:
    """The intact head and the broken head side by side, and both outputs."""
    queries, keys = run.intact.query_tokens, run.intact.key_tokens
    columns = st.columns(2)
    for column, one, which in zip(columns, (run.intact, run.broken), ("intact", "broken"), strict=True):
        title = t(f"pitfalls.map.{which}", kind=t(f"kind.{kind}.label"), layer=layer, head=head)
        pattern, mask = one.pattern[head], one.masked[head]
        with column:
            if fault == "causal":
                fig = viz.pattern_with_future(pattern, queries, mask, title=title, lang=lang)
            else:
                fig = viz.pattern_with_row_sums(pattern, queries, keys, mask, title=title, lang=lang)
            chart(fig, key=f"pitfalls_map_{which}")
    st.caption(t("pitfalls.map.teacher_forced"))
    left, right = st.columns(2)
    left.markdown(t("pitfalls.output.intact", output=md_output(run.intact_output)))
    right.markdown(t("pitfalls.output.broken", output=md_output(run.broken_output)))


def _edit_fault(fault: str) -> None:
    causal_mode = "reversed"
    if fault == "causal":
        seed_from_url("pitfalls_causal", "causal", lambda v: v if v in PF.CAUSAL_MODES else None,
                      PF.CAUSAL_MODES[0])
        causal_mode = st.radio(t("pitfalls.causal.pick"), PF.CAUSAL_MODES, key="pitfalls_causal",
                               format_func=lambda m: text(lang, f"pitfalls.causal.{m}"), horizontal=True)
        set_url_param("causal", causal_mode)
    if lab.pitfalls.fault_problems(view.model, fault, causal_mode):
        st.info(t("pitfalls.not_applicable"), icon=":material/block:")
        return
    kind, layer, head = view.kind, view.layer, view.head
    if fault == "causal":
        kind, layer = "decoder", min(view.layer, view.n_layers["decoder"] - 1)
    if kind != "encoder" and not result.output_text.strip():
        st.info(t("pitfalls.no_output"), icon=":material/info:")
        return
    with st.spinner(t("analysis.running")):
        run = PF.get_fault_run(view.model, view.text, view.direction_arg, fault, causal_mode, kind, layer)
    st.markdown(t(f"pitfalls.{fault}.explain"))
    _maps(run, kind, layer, head, fault)
    broken = run.broken.pattern[head].astype(np.float64)
    if fault == "scaling":
        with_scaling = PF.head_entropy(run.intact.pattern)
        without = PF.head_entropy(run.broken.pattern)
        bars_title = t("pitfalls.scaling.bars_title", kind=t(f"kind.{kind}.label"), layer=layer)
        chart(viz.entropy_bars(with_scaling, without, lang=lang, title=bars_title), key="pitfalls_entropy")
        st.caption(t("pitfalls.scaling.caption", mean_with=f"{with_scaling.mean():.3f}",
                     mean_without=f"{without.mean():.3f}", top=f"{broken.max(-1).mean():.3f}"))
    elif fault == "axis":
        rows, cols = broken.sum(-1), broken.sum(-2)
        st.markdown(t("pitfalls.axis.sums", rows=", ".join(f"{s:.3f}" for s in rows),
                      cols=", ".join(f"{s:.3f}" for s in cols)))
    else:
        future = viz.future_weight(broken)
        past = np.tril(broken, -1).sum(-1)
        st.caption(t(f"pitfalls.causal.caption_{causal_mode}", future=f"{future.max():.3f}",
                     past=f"{past.max():.3f}"))


def _masked_row() -> None:
    st.markdown(t("pitfalls.masked_row.explain"))
    demo = lab.pitfalls.masked_row_demo()
    st.code("scores = [[1.0, -inf, 0.5, -inf],\n          [-inf, -inf, -inf, -inf]]\n"
            "torch.softmax(scores, dim=-1)", language="python")
    names = [t("pitfalls.masked_row.partly"), t("pitfalls.masked_row.fully")]
    for i, name in enumerate(names):
        frame = pd.DataFrame({
            t("pitfalls.masked_row.col.scores"): demo.scores[i],
            t("pitfalls.masked_row.col.torch"): demo.torch_softmax[i],
            t("pitfalls.masked_row.col.model"): demo.model_softmax[i],
        })
        frame.index.name = t("pitfalls.masked_row.col.key")
        st.caption(name)
        st.dataframe(frame)
    st.markdown(t("pitfalls.masked_row.spread",
                  partly="`[" + ", ".join(f"{v:.3f}" for v in demo.nan_after_values[0]) + "]`",
                  fully="`[" + ", ".join(str(v) for v in demo.nan_after_values[1]) + "]`"))
    st.markdown(t("pitfalls.masked_row.why"))


def _reroll() -> None:
    st.session_state["pitfalls_seed"] = int(st.session_state.get("pitfalls_seed", 0)) + 1


def _position() -> None:
    if lab.pitfalls.fault_problems(view.model, "position"):
        st.info(t("pitfalls.not_applicable"), icon=":material/block:")
        return
    st.markdown(t("pitfalls.position.explain"))
    seed_from_url("pitfalls_seed", "shuffle", lambda v: url_int(v, 0, 10**6), 0)
    left, right = st.columns([3, 1])
    seed = left.number_input(t("pitfalls.position.seed"), min_value=0, max_value=10**6, step=1,
                             key="pitfalls_seed", help=t("pitfalls.position.seed_help"))
    right.button(t("pitfalls.position.reroll"), on_click=_reroll, icon=":material/casino:")
    set_url_param("shuffle", int(seed))
    try:
        with st.spinner(t("analysis.running")):
            run = lab.pitfalls.order_run(view.model, view.text, view.direction_arg, int(seed))
    except InputError as e:
        show_input_error(e)
        return
    st.markdown(t("pitfalls.position.original", tokens=md_tokens(run.source_tokens)))
    st.markdown(t("pitfalls.position.shuffled", tokens=md_tokens(run.shuffled_tokens)))
    if run.order == sorted(run.order):
        st.info(t("pitfalls.position.same_order"), icon=":material/info:")
    chart(viz.encoder_cosine_bars(run.source_tokens, run.cosine["with"], run.cosine["without"], lang=lang),
          key="pitfalls_cosine")
    st.caption(t("pitfalls.position.cosine_caption", low=f"{run.cosine['with'].min():.3f}",
                 gap=f"{np.abs(1 - run.cosine['without']).max():.1e}"))
    names = ("original", "shuffled")
    table = pd.DataFrame({
        t("pitfalls.position.col.input"): [t(f"pitfalls.position.row.{n}") for n in names],
        t("pitfalls.position.col.with"): [run.outputs[f"{n}/with"] for n in names],
        t("pitfalls.position.col.without"): [run.outputs[f"{n}/without"] for n in names],
    })
    st.dataframe(table, hide_index=True)
    st.markdown(t("pitfalls.position.conclusion"))


def _truncation() -> None:
    st.markdown(t("pitfalls.truncation.explain"))
    try:
        with st.spinner(t("analysis.running")):
            run = lab.pitfalls.truncation_run(view.model, view.text, view.direction_arg)
    except InputError as e:
        show_input_error(e)
        return
    st.markdown(t("pitfalls.truncation.input", n=len(run.all_tokens), max_len=run.max_len))
    st.code(run.text, language=None, wrap_lines=True)
    for message in run.notes:
        if message.code == "input_truncated":
            st.warning(escape_md(note(message)), icon=":material/content_cut:")
    st.markdown(t("pitfalls.truncation.kept", n=len(run.kept), tokens=md_tokens(run.kept)))
    st.markdown(t("pitfalls.truncation.dropped", n=len(run.dropped), tokens=md_tokens(run.dropped)))
    st.markdown(t("pitfalls.truncation.output", output=md_output(run.output)))
    st.caption(t("pitfalls.truncation.caption"))


def faults_section() -> None:
    st.subheader(t("pitfalls.faults.header"))
    st.markdown(t("pitfalls.faults.explain"))
    fault = _pick_fault()
    if fault in PF.EDIT_FAULTS:
        _edit_fault(fault)
    elif fault == "masked_row":
        _masked_row()
    elif fault == "position":
        _position()
    else:
        _truncation()


# --------------------------------------------------------------------------- 2. dimensions

D_MODELS = (4, 6, 8, 12, 16, 32)
HEADS = (1, 2, 3, 4, 5, 8)


def dimensions_section() -> None:
    st.subheader(t("pitfalls.dims.header"))
    st.markdown(t("pitfalls.dims.explain", batch=PF.BATCH, length=PF.LENGTH, vocab=PF.VOCAB))
    seed_from_url("pitfalls_dmodel", "dmodel", lambda v: url_int(v) if url_int(v) in D_MODELS else None, 8)
    seed_from_url("pitfalls_heads", "heads", lambda v: url_int(v) if url_int(v) in HEADS else None, 2)
    seed_from_url("pitfalls_order", "order", lambda v: v if v in PF.ORDERS else None, PF.ORDERS[0])
    left, middle = st.columns(2)
    d_model = left.selectbox("d_model", D_MODELS, key="pitfalls_dmodel", help=t("pitfalls.dims.d_model_help"))
    heads = middle.selectbox(t("pitfalls.dims.heads"), HEADS, key="pitfalls_heads")
    order = st.radio(t("pitfalls.dims.order"), PF.ORDERS, key="pitfalls_order",
                     format_func=lambda o: text(lang, f"pitfalls.dims.order.{o}"))
    set_url_param("dmodel", d_model)
    set_url_param("heads", heads)
    set_url_param("order", order)
    run = lab.pitfalls.dimension_run(int(d_model), int(heads), order)
    if run.error:
        st.error(t("pitfalls.dims.raised") + f"\n\n`{run.error}`", icon=":material/error:")
        st.caption(t("pitfalls.dims.config_caption"))
        return
    if order == "seq_first":
        st.warning(t("pitfalls.dims.seq_first", shape=" × ".join(map(str, run.input_shape)),
                     gap=f"{run.logits_gap:.4f}"), icon=":material/warning:")
    if order == "merge_wrong":
        if run.merge_error:
            st.error(t("pitfalls.dims.merge_raised") + f"\n\n`{run.merge_error}`", icon=":material/error:")
        else:
            st.info(t("pitfalls.dims.merge_no_error"), icon=":material/info:")
        if run.merge_gap:
            st.warning(t("pitfalls.dims.merge_silent", shape=" × ".join(map(str, run.merge_shape)),
                         gap=f"{run.merge_gap:.4f}", out_gap=f"{run.out_gap:.4f}"), icon=":material/warning:")
        else:
            st.info(t("pitfalls.dims.merge_one_head"), icon=":material/info:")
    st.markdown(t("pitfalls.dims.symbols") + " · ".join(f"`{k}` = {v}" for k, v in run.sizes.items()))
    table = viz.shape_trace_table(run.steps, lang=lang)
    trace_help = viz.column_help("shape_trace_table", lang)
    columns = {col: st.column_config.Column(label, help=trace_help.get(col))
               for col, label in viz.column_labels("shape_trace_table", lang).items()}
    st.dataframe(table, column_config=columns, hide_index=True, width="stretch",
                 height=min(560, 38 * (len(table) + 1) + 4))
    st.caption(t("pitfalls.dims.trace_caption", n=len(table)))


trained_section()
faults_section()
dimensions_section()
