"""Masks: the padding and causal masks of a real padded batch, what −∞ does after the softmax, and a
demonstration of the decoder without its causal mask."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_support import gateway as G
from app_support import lab
from app_support import models as M
from app_support.i18n import STRINGS, current_lang, t
from app_support.messages import current_analysis, show_input_error
from app_support.strategy import greedy_here
from app_support.ui import chart, escape_md, md_output, page_header
from app_support.url_state import seed_from_url, set_url_param
from app_support.view import current_view
from model.public import InputError

lang = current_lang()
view = current_view()
title_key = "page.masks.title" if "page.masks.title" in STRINGS[lang] else "masks.title"
page_header(t(title_key), t("masks.intro"))
result = current_analysis(view)
kind = view.kind
kind_label = view.kind_label
# a decoder-only model (SmolLM2, induction, an uploaded GPT-style model) reads one sequence per sentence
language_model = view.is_language_model
view_is_rope = G.config(view.model).pos_encoding == "rope"
NAMES = (t("masks.sentence_a"), t("masks.sentence_b"))


# --------------------------------------------------------------------------- 1. a padded batch

st.subheader(t("masks.batch.header"))
st.markdown(t("masks.batch.explain"))

# The second sentence's default follows the model and the sidebar's sentence until the user edits it.
default_other = lab.masks.default_other(view.model, view.text, view.direction_arg)
seed_from_url("masks_other", "other", None, default_other)
if st.session_state.get("_masks_other_default") not in (None, default_other):
    if st.session_state.get("masks_other") == st.session_state["_masks_other_default"]:
        st.session_state["masks_other"] = default_other
st.session_state["_masks_other_default"] = default_other
other = st.text_input(t("masks.other"), key="masks_other", max_chars=M.MAX_INPUT_CHARS,
                      help=t("masks.other_help"))
set_url_param("other", other)


def _side_table(ids: np.ndarray, tokens: list[list[str]], padding: np.ndarray) -> pd.DataFrame:
    columns: dict[str, object] = {}
    for i, name in enumerate(NAMES):
        columns[t("masks.col.token", name=name)] = tokens[i]
        columns[t("masks.col.id", name=name)] = ids[i].tolist()
        columns[t("masks.col.pad", name=name)] = padding[i].tolist()
    frame = pd.DataFrame(columns)
    frame.index.name = t("masks.col.position")
    return frame


def _batch_outputs(batch) -> None:
    for i, name in enumerate(NAMES):
        st.markdown(t("masks.output", name=name, text=escape_md(batch.texts[i]),
                      output=md_output(batch.outputs[i])))
    if batch.decoder_only:
        st.caption(t("masks.lm.decoded_alone"))
    elif "decoder" in batch.masks:
        st.caption(greedy_here("batch", view.strategy, current_lang()))
    sides = (("target", batch.target_lengths),) if batch.decoder_only else (
        ("source", batch.source_lengths), ("target", batch.target_lengths))
    for side, lengths in sides:
        if lengths[0] == lengths[1]:
            side_name = t("masks.side.sequence") if batch.decoder_only else t(f"masks.side.{side}")
            st.info(t("masks.same_length", side=side_name), icon=":material/info:")


def _ids_tables(batch) -> None:
    with st.expander(t("masks.ids_header"), expanded=True):
        left, right = st.columns(2)
        if batch.decoder_only:
            pads = [tok for row, flags in zip(batch.target_tokens, batch.target_padding, strict=True)
                    for tok, flag in zip(row, flags, strict=True) if flag]
            st.caption(t("masks.lm.ids_caption", pad_id=batch.pad_id, n=batch.target_ids.shape[1],
                         pad_token=escape_md(pads[0] if pads else ""))
                       + (" " + t("masks.lm.pad_is_eos") if batch.pad_is_eos else ""))
            with left:
                st.caption(t("masks.lm.right"))
                st.dataframe(_side_table(batch.target_ids, batch.target_tokens, batch.target_padding))
            with right:
                st.caption(t("masks.lm.left"))
                st.dataframe(_side_table(batch.left.ids, batch.left.tokens, batch.left.padding))
            return
        st.caption(t("masks.ids_caption", pad_id=batch.pad_id, src_len=batch.source_ids.shape[1],
                     tgt_len=batch.target_ids.shape[1]))
        with left:
            st.caption(t("masks.side.source"))
            st.dataframe(_side_table(batch.source_ids, batch.source_tokens, batch.source_padding))
        with right:
            st.caption(t("masks.side.target"))
            st.dataframe(_side_table(batch.target_ids, batch.target_tokens, batch.target_padding))


def _causal_figure(batch) -> None:
    st.markdown(f"#### {t('masks.causal_header')}")
    n = batch.causal.shape[0]
    positions = [str(i) for i in range(n)]
    chart(viz.mask_matrix(batch.causal, positions, positions, title=t("masks.causal_title", n=n),
                          query_title=t("masks.axis_query_position"),
                          key_title=t("masks.axis_key_position"), lang=lang),
          key="masks_causal")
    st.caption(t("masks.causal_caption", n=n))


def _kind_masks(batch) -> None:
    st.markdown(f"#### {t('masks.kind_header', kind=kind_label)}")
    columns = st.columns(2)
    for i, name in enumerate(NAMES):
        queries, keys = batch.tokens(kind, i)
        with columns[i]:
            chart(viz.mask_matrix(batch.masks[kind][i], queries, keys,
                                  title=t("masks.kind_title", name=name, kind=kind_label), lang=lang),
                  key=f"masks_mask_{i}")
    if batch.masks_padding:
        caption = t(f"masks.kind_caption.{kind}")
    else:  # a converted language model, or the pitfall model trained without the padding mask
        caption = t("masks.kind_caption.lm_no_padding" if batch.decoder_only
                    else "masks.kind_caption.no_padding")
    if batch.window:  # a local layer (Gemma 3, Phi-3): the mask drawn is that layer's, window included
        caption += " " + t("masks.kind_window", layer=min(view.layer, view.n_layers[kind] - 1),
                           window=batch.window)
    st.caption(caption + " " + t("masks.pad_rows"))


def _patterns(batch) -> None:
    st.markdown(f"#### {t('masks.pattern_header')}")
    columns = st.columns(2)
    masked_max, worst = 0.0, 0.0
    for i, name in enumerate(NAMES):
        queries, keys = batch.tokens(kind, i)
        pattern = batch.head_pattern(kind, i, view.layer, view.head)
        mask = batch.masks[kind][i]
        masked_max = max(masked_max, float(pattern[mask].max()) if mask.any() else 0.0)
        worst = max(worst, float(np.abs(viz.row_sums(pattern) - 1).max()))
        with columns[i]:
            chart(viz.pattern_with_row_sums(
                pattern, queries, keys, mask,
                title=t("masks.pattern_title", name=name, kind=kind_label, layer=view.layer, head=view.head),
                lang=lang), key=f"masks_pattern_{i}")
    st.caption(t("masks.pattern_caption", masked_max=f"{masked_max:g}", worst=f"{worst:.1e}") + " "
               + t("masks.kinds_choice"))
    if batch.decoder_only:
        st.caption(t("masks.lm.right_equal", a=f"{batch.right_diff[0]:.1e}", b=f"{batch.right_diff[1]:.1e}"))


def _left_padding(batch) -> None:
    """The shorter sequence left-padded: as the model runs it, and with the padding mask."""
    st.markdown(f"#### {t('masks.lm.left_header')}")
    st.markdown(t("masks.lm.left_explain"))
    left = batch.left
    i = int(np.argmin(batch.target_lengths))
    if not left.padding[i].any():
        return
    tokens = left.tokens[i]
    columns = st.columns(2)
    runs = ((left.applied, "as_run"), (left.with_padding, "masked"))
    for (masks, key), column in zip(runs, columns, strict=True):
        with column:
            chart(viz.pattern_with_row_sums(
                left.head_pattern(key, i, view.layer, view.head), tokens, tokens, masks[i],
                title=t(f"masks.lm.left_title.{key}", name=NAMES[i], layer=view.layer, head=view.head),
                lang=lang), key=f"masks_left_{key}")
    st.caption(t("masks.lm.left_caption", name=NAMES[i], weight=f"{left.pad_weight[i]:.3f}",
                 as_run=f"{left.diff_as_run[i]:.1e}", masked=f"{left.diff_masked[i]:.1e}"))
    mask_note = "masks.lm.left_model_masks" if batch.masks_padding else "masks.lm.left_model_no_mask"
    positions = "masks.lm.left_rope" if view_is_rope else "masks.lm.left_absolute"
    st.markdown(t(mask_note) + " " + t(positions))


def batch_section() -> None:
    if not other.strip():
        st.info(t("masks.other_empty"), icon=":material/edit:")
        return
    try:
        with st.spinner(t("analysis.running")):
            # without scores, and one kind's one layer: the page draws the masks and that head only
            batch = lab.masks.padded_batch(view.model, [view.text, other], view.direction_arg,
                                           with_scores=False, kind=kind, layer=view.layer,
                                           **({"max_new": view.max_new} if language_model else {}))
    except InputError as e:
        show_input_error(e)
        return
    _batch_outputs(batch)
    _ids_tables(batch)
    if "decoder" in batch.masks:
        _causal_figure(batch)
    _kind_masks(batch)
    _patterns(batch)
    if batch.left is not None:
        _left_padding(batch)


batch_section()


# --------------------------------------------------------------------------- sliding windows


def _window_mask(windows, layer: int, tokens: list[str], title: str, column) -> None:
    with column:
        chart(viz.mask_matrix(windows.masks[windows.windows[layer]], tokens, tokens, title=title, lang=lang),
              key=f"masks_window_{layer}")


def window_section() -> None:
    """Gemma 3's local and global layers (Phi-3: one window everywhere), each layer's own mask drawn."""
    tokens = list(result.target_tokens)
    windows = lab.masks.sliding_windows(view.model, len(tokens)) if language_model and tokens else None
    if windows is None:
        return
    st.subheader(t("masks.window.header"))
    st.markdown(t("masks.window.explain"))
    local, global_ = windows.local_layers, windows.global_layers
    width = windows.windows[local[0]]
    if global_:
        st.markdown(t("masks.window.layers", window=width, local=", ".join(map(str, local)),
                      global_=", ".join(map(str, global_)) or t("masks.window.none")))
    else:
        st.markdown(t("masks.window.every_layer", window=width))
    columns = st.columns(2)
    _window_mask(windows, local[0], tokens, t("masks.window.local_title", layer=local[0], window=width),
                 columns[0])
    if global_:
        _window_mask(windows, global_[0], tokens, t("masks.window.global_title", layer=global_[0]),
                     columns[1])
    st.caption(t("masks.window.caption", n=len(tokens)))
    if len(tokens) <= width:
        st.info(t("masks.window.short", n=len(tokens), window=width), icon=":material/info:")


window_section()


# --------------------------------------------------------------------------- 2. the causal mask off

st.subheader(t("masks.demo.header"))
st.warning(t("masks.demo.label"), icon=":material/science:")
st.markdown(t("masks.demo.greedy"))
seed_from_url("masks_causal_off", "causal", lambda v: v == "off", False)
causal_off = st.toggle(t("masks.demo.switch"), key="masks_causal_off", help=t("masks.demo.switch_help"))
set_url_param("causal", "off" if causal_off else "on")


def _p_of(step, token_id: int) -> float:
    """The probability a step gives ``token_id`` (NaN when neither its own token nor in its top-k)."""
    if step.token_id == token_id:
        return step.prob
    if token_id in step.top_ids:
        return step.top_probs[step.top_ids.index(token_id)]
    return float("nan")


def demo_section() -> None:
    if not result.output_text.strip():
        st.info(t("masks.demo.no_output"))
        return
    layer = min(view.layer, view.n_layers["decoder"] - 1)
    head = view.head
    with st.spinner(t("analysis.running")):
        # one layer each: every layer of SmolLM2 at 256 tokens is ~140 MB a run
        args = (view.model, view.text, view.direction_arg, result.output_text, layer)
        intact = lab.masks.causal_demo_run(*args)
        off = lab.masks.causal_demo_run(*args, causal_off=True) if causal_off else None
    st.caption(t("masks.demo.which", layer=layer, head=head))
    tokens = intact.query_tokens
    runs = [(intact, "with", t("masks.demo.with_title"))]
    if off is not None:
        runs.append((off, "without", t("masks.demo.without_title")))
    columns = st.columns(2)
    for (analysis, key, title), column in zip(runs, columns, strict=False):
        with column:
            chart(viz.pattern_with_future(analysis.pattern[head], tokens, analysis.masked[head], title=title,
                                          lang=lang),
                  key=f"masks_demo_{key}")
    if off is None:
        st.info(t("masks.demo.off_hint"), icon=":material/toggle_on:")
        return
    future = viz.future_weight(off.pattern[head])
    row = int(np.argmax(future))
    st.caption(t("masks.demo.future_caption", layer=layer, head=head, most=f"{future[row]:.3f}", row=row))

    st.markdown(f"#### {t('masks.demo.predictions_header')}")
    own = [s.token for s in intact.steps]
    p_with = np.array([s.prob for s in intact.steps], dtype=np.float64)
    p_without = np.array([_p_of(o, s.token_id) for s, o in zip(intact.steps, off.steps, strict=True)])
    top_with = [s.top_tokens[0] for s in intact.steps]
    top_without = [s.top_tokens[0] for s in off.steps]
    changed = [a != b for a, b in zip(top_with, top_without, strict=True)]
    st.markdown(t("masks.demo.summary", changed=sum(changed), total=len(changed),
                  p_with=f"{np.nanmean(p_with):.3f}", p_without=f"{np.nanmean(p_without):.3f}"))
    chart(viz.token_probability_bars(own, p_with, p_without, lang=lang), key="masks_demo_bars")
    table = pd.DataFrame({
        t("masks.col.position"): [s.position for s in intact.steps],
        t("masks.col.reads"): [tokens[s.position] for s in intact.steps],
        t("masks.col.own"): own,
        t("masks.col.top_with"): top_with,
        t("masks.col.top_without"): top_without,
        t("masks.col.p_with"): p_with,
        t("masks.col.p_without"): p_without,
        t("masks.col.changed"): changed,
    })
    st.dataframe(table.style.format({t("masks.col.p_with"): "{:.4f}", t("masks.col.p_without"): "{:.4f}"},
                                    na_rep="—"), hide_index=True)
    st.caption(t("masks.table_caption"))
    st.markdown(t("masks.demo.explain"))
    if language_model:
        st.markdown(t("masks.demo.lm"))


demo_section()
