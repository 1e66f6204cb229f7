"""The talk: six slides (and an exercise), one idea and one live figure each, from the loaded model.

Slide number in the URL (``?slide=``), the sentence shared with every page, ← → / PageUp PageDown,
speaker notes with timing, a link from every slide to the page behind it, the deck as offline HTML.
"""

import dataclasses

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

import viz
from app_pages.glue import deck as DK
from app_support import gateway as G
from app_support import lab, pages
from app_support import models as M
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis, get_layer_tensors, show_input_error, show_notes
from app_support.ui import chart, escape_md, md_tokens
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from model.public import InputError, hook_name
from viz import deck as VD
from viz.export import deck_html

view = current_view()
lang = current_lang()
DK.install_deck_look()
cfg = G.config(view.model)
model_name = M.model_label(view.model, lang)

seed_from_url(DK.SLIDE_KEY, "slide", lambda v: url_int(v, 1, DK.N_SLIDES), 1)
DK.set_slide(st.session_state[DK.SLIDE_KEY])
n = int(st.session_state[DK.SLIDE_KEY])
set_url_param("slide", n)
DK.remember(n)
slide = DK.slide_key(n)


# --------------------------------------------------------------------------- the bar: sentence, counter, keys


def _sentence_changed() -> None:
    st.session_state["text"] = st.session_state["deck_text"]  # the sidebar's sentence: every page follows


def _use_sentence(sentence: str) -> None:
    st.session_state["text"] = sentence


def _switch_model() -> None:
    st.session_state["model"] = M.DEFAULT_MODEL
    st.session_state["text"] = M.model_example(M.DEFAULT_MODEL)[: M.MAX_INPUT_CHARS]
    st.session_state["dir"] = "auto"


st.session_state["deck_text"] = view.text
with st.container(key="deck_bar"):
    bar = st.columns([5, 2, 1.7, 1.7], vertical_alignment="bottom")
    bar[0].text_input(t("deck.sentence"), key="deck_text", on_change=_sentence_changed,
                      max_chars=M.MAX_INPUT_CHARS, help=t("deck.sentence_help"))
    counter = (t("deck.counter", n=n, total=len(DK.TALK)) if n <= len(DK.TALK)
               else t("deck.counter_exercise", total=len(DK.TALK)))
    bar[1].markdown(f"**{counter}**")
    bar[2].button(t("deck.prev"), key="deck_prev", on_click=DK.step, args=(-1,), disabled=n == 1,
                  icon=":material/arrow_back:", width="stretch")
    bar[3].button(t("deck.next"), key="deck_next", on_click=DK.step, args=(1,), disabled=n == DK.N_SLIDES,
                  icon=":material/arrow_forward:", width="stretch", type="primary")


# --------------------------------------------------------------------------- each slide: figure and text


def _attention(result, query: int | None = None):
    queries, keys = result.tokens_for(view.kind)
    data = get_layer_tensors(view)
    head = min(view.head, data.n_heads - 1)
    q = min(1, len(queries) - 1) if query is None else query
    row = viz.work_row(data.q, data.k, data.v, head, q, causal=data.causal, scale=data.divisor,
                       window=data.window)
    return row, queries, keys, head, q


def slide_attention(result):
    row, queries, keys, head, q = _attention(result)
    top = int(row.weights.argmax())
    lines = [t("deck.1.line1"), t("deck.1.line2", query=f"**{escape_md(f'{q}: {queries[q]}')}**",
                                  kind=view.kind_label, layer=view.layer, head=head)]
    notes = t("deck.1.notes", scale=f"{row.scale:.2f}", top_key=escape_md(f"{top}: {keys[top]}"),
              top=f"{row.weights[top]:.2f}")
    return VD.query_figure(row, queries[q], keys, lang=lang), lines, notes


def slide_heads(result):
    path = hook_name(view.kind, view.layer, "q").rsplit(".", 1)[0]
    fig = VD.wrap_labels(viz.split_merge_figure(viz.split_merge_stages(result.trace, path), lang=lang))
    fmt = {"d_model": cfg.d_model, "h": cfg.n_heads, "d_head": cfg.d_head}
    return fig, [t("deck.2.line1", **fmt), t("deck.2.line2")], t("deck.2.notes", h=cfg.n_heads)


def slide_position(result):
    run = lab.pitfalls.order_run(view.model, view.text, view.direction_arg, 0)
    fig = viz.encoder_cosine_bars(run.source_tokens, run.cosine["with"], run.cosine["without"], lang=lang)
    lines = [t("deck.3.line1"), t("deck.3.line2")]
    notes = t("deck.3.notes", gap=f"{abs(1 - run.cosine['without']).max():.1e}",
              low=f"{run.cosine['with'].min():.3f}")
    return fig, lines, notes, run


def slide_residual(result):
    res = DK.get_residuals(view)
    fig = VD.residual_norm_figure(res.stacks, norm_first=res.norm_first, lang=lang)
    enc = res.stacks[0].norms.mean(axis=1)
    last = enc[-2] if res.norm_first and len(enc) > 2 else enc[-1]  # before the final norm
    lines = [t("deck.4.line.pre" if res.norm_first else "deck.4.line.post"), t("deck.4.line2")]
    return fig, lines, t("deck.4.notes", first=float(enc[0]), last=float(last))


def slide_architecture(result):
    fig = viz.architecture_figure(dataclasses.asdict(cfg), viz.architecture_shapes(result.trace), lang=lang)
    sizes = result.trace_sizes
    lines = [t("deck.5.line1", n_enc=cfg.n_enc_layers, n_dec=cfg.n_dec_layers, vocab=f"{cfg.vocab_size:,}"),
             t("deck.5.line2", l_src=sizes.get("L_src", len(result.source_tokens)),
               l_tgt=sizes.get("L_tgt", len(result.target_tokens)))]
    return fig, lines, t("deck.5.notes")


def slide_live(result):
    queries, keys = result.tokens_for(view.kind)
    head = min(view.head, result.attention(view.kind).shape[1] - 1)
    pattern = result.attention(view.kind)[view.layer, head]
    scores = result.attention(view.kind, "scores")[view.layer, head]
    fig = viz.attention_heatmap(pattern, queries, keys, scores, lang=lang,
                                subtitle=f"{view.kind_label} · {t('sidebar.layer_option', i=view.layer)} · "
                                f"{t('sidebar.head_option', i=head)}")
    return fig, [t("deck.6.line1"), t("deck.6.line2")], t("deck.6.notes")


def slide_exercise(result):
    row, queries, keys, head, q = _attention(result, query=min(1, len(result.tokens_for(view.kind)[0]) - 1))
    lines = [t("deck.7.line1"), t("deck.7.line2", d_head=row.d_head, n=len(keys))]
    return VD.query_figure(row, queries[q], keys, lang=lang), lines, t("deck.7.notes")


BUILD = {"attention": slide_attention, "heads": slide_heads, "position": slide_position,
         "residual": slide_residual, "architecture": slide_architecture, "live": slide_live,
         "exercise": slide_exercise}


def _open_link(key: str) -> None:
    target, params = DK.EXPLORER[key]
    spec = pages.page(target)
    try:
        st.page_link(spec.file, label=t("deck.open", page=t(f"page.{target}.title")), icon=spec.icon,
                     query_params=params or None)
    except StreamlitAPIException:  # the page run on its own (tests): no navigation holds the others
        st.caption(t("deck.open", page=t(f"page.{target}.title")))


def deck_file(result) -> str:
    """The six slides of this sentence as one offline HTML file (built when the button is clicked)."""
    slides = []
    for i, key in enumerate(DK.TALK, start=1):
        if DK.slide_problems(view.model, key):
            continue
        built = BUILD[key](result)
        slides.append((f"{i} · {t(f'deck.{i}.title')}", [line.replace("**", "") for line in built[1]],
                       VD.for_projector(built[0])))
    return deck_html(slides, title=t("page.deck.title"), subtitle=f"{t('deck.sentence')}: {view.text}",
                     lang=lang)


# --------------------------------------------------------------------------- the slide

if view.model != M.DEFAULT_MODEL:  # the talk is written for the translation model: one click away
    note, switch = st.columns([5, 2], vertical_alignment="center")
    note.caption(t("deck.other_model", model=escape_md(model_name)))
    switch.button(t("deck.switch"), on_click=_switch_model, icon=":material/translate:", key="deck_switch")

with st.container(key="deck_body"):
    st.title(f"{n} · {t(f'deck.{n}.title')}" if n <= len(DK.TALK) else t(f"deck.{n}.title"))
    problems = DK.slide_problems(view.model, slide)
    if problems:
        st.info(t(f"deck.needs.{problems[0]}", model=escape_md(model_name)), icon=":material/swap_horiz:")
        result = None
    else:
        # the slides draw a translation's shapes over the whole sequence (its decoding starts from a token)
        result = current_analysis(view, show=False, whole_trace=not cfg.decoder_only)
        output = result.output_text
        st.caption(escape_md(result.prepared.text) + (f" → {escape_md(output)}" if output.strip() else ""))
        show_notes(result)
    if result is not None:
        try:
            built = BUILD[slide](result)
        except InputError as e:
            show_input_error(e)
            built = None
        if built is not None:
            fig, lines, notes = built[:3]
            for line in lines:
                st.markdown(line)
            chart(VD.for_projector(fig), key=f"deck_figure_{slide}")
            if slide == "position":
                run = built[3]
                st.markdown(t("deck.3.shuffled", tokens=md_tokens(run.shuffled_tokens)))
                st.dataframe(pd.DataFrame({
                    t("deck.3.col.input"): [t(f"deck.3.row.{r}") for r in ("original", "shuffled")],
                    t("deck.3.col.with"): [run.outputs[f"{r}/with"] for r in ("original", "shuffled")],
                    t("deck.3.col.without"): [run.outputs[f"{r}/without"] for r in ("original", "shuffled")],
                }), hide_index=True)
            if slide == "live":
                if view.directions:
                    pair = st.columns(3)
                    for column, sentence in zip(pair, DK.APPLE_PAIR, strict=False):
                        column.button(sentence, on_click=_use_sentence, args=(sentence,),
                                      key=f"deck_pair_{DK.APPLE_PAIR.index(sentence)}",
                                      type="primary" if view.text == sentence else "secondary")
                    try:
                        pair[2].page_link(pages.page("compare").file, label=t("deck.6.pair"),
                                          icon=pages.page("compare").icon,
                                          query_params={"a": DK.APPLE_PAIR[0], "b": DK.APPLE_PAIR[1],
                                                        "token": "苹"})
                    except StreamlitAPIException:
                        pass
                else:
                    st.caption(t("deck.6.no_pair"))
            if slide == "exercise":
                translation = bool(view.directions)
                six = DK.SIX_WORDS["translation" if translation else "letters"]
                if view.text != six:
                    st.button(t("deck.7.six", sentence=six), on_click=_use_sentence, args=(six,),
                              key="deck_six", icon=":material/looks_6:", type="tertiary")
                for column, query in zip(st.columns(2), (0, 1), strict=True):
                    row, queries, keys, _, q = _attention(result, query=min(query, len(result.tokens_for(
                        view.kind)[0]) - 1))
                    table = viz.steps_table(row, keys, lang=lang)
                    column.markdown(t("deck.7.query", query=f"**{escape_md(f'{q}: {queries[q]}')}**"))
                    column.dataframe(table.style.format("{:.3f}"))
            with st.expander(t("deck.notes", minutes=VD.MINUTES[slide])):
                st.markdown(notes)
    _open_link(slide)

st.caption(t("deck.keys") + " " + t("deck.timing", minutes=DK.talk_minutes(), extra=VD.MINUTES["exercise"]))
if result is not None:
    st.download_button(t("deck.download"), data=lambda: deck_file(result),
                       file_name="attention-lens-talk.html", mime="text/html", key="deck_html",
                       on_click="ignore", icon=":material/slideshow:",
                       help=t("deck.download_help"))
