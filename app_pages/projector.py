"""Representation projector: one word's hidden state at every layer over many sentences, projected on the
layer's first two principal components and coloured by sense, with the between-sense / within-sense
distance ratio per layer (at which layer the senses come apart)."""

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.glue import projector as PJ
from app_support import gateway as G
from app_support.i18n import current_lang, t, text
from app_support.models import reads_letters
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import clip_input, seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view
from viz.projector import projection_scatter, ratio_figure, row_labels

view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
cfg = G.config(view.model)
page_header(t("page.projector.title"), t("projector.intro"))
if reads_letters(view.model):
    st.info(t("projector.letters"), icon=":material/info:")
    stop_page()


def sense_name(key: str) -> str:
    return t(f"projector.sense.{key}")


def _preset_changed() -> None:
    """A preset brings its word; typing one's own starts from the preset shown before, unless the box
    already holds sentences the user wrote."""
    chosen = st.session_state["proj_preset"]
    if chosen in PJ.PRESETS:
        st.session_state["proj_word"] = PJ.PRESETS[chosen].word
        return
    box = str(st.session_state.get("proj_sentences", "")).strip()
    if not box or box in {PJ.preset_lines(p, sense_name) for p in PJ.PRESETS}:
        before = st.session_state.get("_proj_last_preset", PJ.default_preset(lang))
        st.session_state["proj_sentences"] = PJ.preset_lines(before, sense_name)


seed_from_url("proj_preset", "preset", lambda v: v if v in PJ.preset_names() else None,
              PJ.default_preset(lang))
preset = st.session_state["proj_preset"]
if "proj_sentences" not in st.session_state:
    from_link, cut = clip_input(st.query_params.get("sentences", ""), PJ.MAX_CHARS)
    st.session_state["_proj_cut"] = cut
    st.session_state["proj_sentences"] = from_link or PJ.preset_lines(
        preset if preset in PJ.PRESETS else PJ.default_preset(lang), sense_name)
seed_from_url("proj_word", "word", lambda v: v[: PJ.MAX_WORD_CHARS],
              PJ.PRESETS[preset].word if preset in PJ.PRESETS else "")

left, right = st.columns([2, 1])
with left:
    preset = st.selectbox(t("projector.preset"), PJ.preset_names(), key="proj_preset",
                          on_change=_preset_changed, help=t("projector.preset_help"),
                          format_func=lambda p: text(lang, f"projector.preset.{p}"))
with right:
    word = st.text_input(t("projector.word"), key="proj_word", max_chars=PJ.MAX_WORD_CHARS,
                         help=t("projector.word_help"))
set_url_param("preset", preset)
set_url_param("word", word)
if preset in PJ.PRESETS:
    st.session_state["_proj_last_preset"] = preset
    pairs = PJ.PRESETS[preset].sentences
    typed = PJ.Typed(tuple(s for _, s in pairs), tuple(sense_name(k) for k, _ in pairs), 0)
else:
    box = st.text_area(t("projector.sentences"), key="proj_sentences", height=220, max_chars=PJ.MAX_CHARS,
                       help=t("projector.sentences_help", limit=PJ.MAX_SENTENCES))
    set_url_param("sentences", box)
    cut = st.session_state.get("_proj_cut")
    if cut and len(box) == PJ.MAX_CHARS:
        st.warning(t("projector.clipped", cut_from=f"{cut:,}", limit=f"{PJ.MAX_CHARS:,}"),
                   icon=":material/content_cut:")
    typed = PJ.parse_lines(box)
    if typed.dropped:
        st.warning(t("projector.cap", limit=PJ.MAX_SENTENCES, dropped=typed.dropped),
                   icon=":material/content_cut:")

seed_from_url("proj_color", "color", lambda v: v if v in PJ.COLOR_BY else None, PJ.DEFAULT_COLOR)
color_by = st.segmented_control(t("projector.color"), list(PJ.COLOR_BY), key="proj_color",
                                format_func=lambda c: text(lang, f"projector.color.{c}"),
                                help=t("projector.color_help")) or PJ.DEFAULT_COLOR
set_url_param("color", color_by)

if not word.strip():
    st.info(t("projector.no_word"), icon=":material/info:")
    stop_page()
if not typed.sentences:
    st.info(t("projector.no_sentences"), icon=":material/info:")
    stop_page()

family = "decoder_only" if cfg.decoder_only else "encoder_only" if cfg.encoder_only else "encoder_decoder"
st.caption(t(f"projector.reads.{family}"))
with st.spinner(t("projector.running", n=len(typed.sentences))):
    states, proj = PJ.projection(view.model, word, typed.sentences, typed.labels)

if states.skipped:
    lines = [t(f"projector.skip.{s.reason}", number=s.index + 1, sentence=escape_md(typed.sentences[s.index]),
               word=escape_md(word.strip()), max_len=cfg.max_len) for s in states.skipped]
    st.warning(t("projector.skipped", n=len(states.skipped), total=len(typed.sentences)) + "\n\n"
               + "\n".join(f"- {line}" for line in lines), icon=":material/filter_alt_off:")
if len(states.kept) < 2:
    st.info(t("projector.too_few", n=len(states.kept)), icon=":material/info:")
    stop_page()

counts = sorted({len(p) for p in states.pieces})
first_pieces = " · ".join(escape_md(p.replace(" ", "␣")) for p in states.pieces[0])
if counts[-1] > 1:
    st.markdown(t("projector.pieces_mean", n=len(states.pieces[0]), pieces=first_pieces))
    if len(counts) > 1:
        st.caption(t("projector.pieces_vary", lo=counts[0], hi=counts[-1]))
else:
    st.caption(t("projector.pieces_one", pieces=first_pieces))
if cfg.decoder_only and states.at_start:
    st.warning(t("projector.at_start", n=len(states.at_start),
                 which=", ".join(str(i + 1) for i in states.at_start)), icon=":material/first_page:")
if states.repeated:
    st.caption(t("projector.repeated", n=len(states.repeated),
                 which=", ".join(str(i + 1) for i in states.repeated)))

n_rows = states.n_rows
rows = row_labels(n_rows, lang)
peak = proj.peak()


def where(r: int) -> str:
    return t("projector.where.embed") if r == 0 else t("projector.where.block", row=r)


def shown(value: float) -> str:
    return f"{value:.2f}" if np.isfinite(value) else "—"


if peak is None:
    st.info(t("projector.no_ratio"), icon=":material/info:")
else:
    st.markdown(t("projector.summary", where=where(peak), ratio=shown(float(proj.ratio[peak])),
                  first=shown(float(proj.ratio[0])), last=shown(float(proj.ratio[-1]))))

default_row = n_rows - 1 if peak is None else peak
seed_from_url("proj_row", "row", lambda v: url_int(v, 0, n_rows - 1), default_row)
if st.session_state.get("proj_row") not in range(n_rows):  # another model: another number of layers
    st.session_state["proj_row"] = default_row
row = st.select_slider(t("projector.row"), options=list(range(n_rows)), key="proj_row",
                       format_func=lambda r: rows[r], help=t("projector.row_help"))
set_url_param("row", row)

numbers = [i + 1 for i in states.kept]
scatter = projection_scatter(proj.coords[row], proj.labels, [typed.sentences[i] for i in states.kept],
                             states.pieces, explained=proj.explained[row], color_by=color_by, numbers=numbers,
                             title=t("projector.scatter_title", word=word.strip(), where=where(row)),
                             lang=lang)
chart(scatter, key="proj_scatter")
st.caption(t("projector.scatter_caption", pc1=f"{100 * float(proj.explained[row, 0]):.0f}%",
             pc2=f"{100 * float(proj.explained[row, 1]):.0f}%"))
if peak is not None:
    chart(ratio_figure(proj.ratio, proj.between, proj.within, chosen=row,
                       title=t("projector.ratio_title", word=word.strip()), lang=lang), key="proj_ratio")
st.caption(t("projector.ratio_caption"))
if row == 0:
    st.caption(t("projector.embed_position"))
st.caption(t("projector.computed", n=len(states.kept), batches=states.batches,
             seconds=f"{states.seconds:.2f}", hook=f"{states.stack}.blocks.*.hook_resid_post"))

with st.expander(t("projector.table")):
    st.dataframe(pd.DataFrame({
        t("projector.col.layer"): rows,
        t("projector.col.ratio"): proj.ratio,
        t("projector.col.between"): proj.between,
        t("projector.col.within"): proj.within,
        t("projector.col.pc1"): proj.explained[:, 0],
        t("projector.col.pc2"): proj.explained[:, 1],
    }), hide_index=True, column_config={t(f"projector.col.{c}"): st.column_config.NumberColumn(format="%.4f")
                                        for c in ("ratio", "between", "within", "pc1", "pc2")})
with st.expander(t("projector.sentences_table")):
    st.dataframe(pd.DataFrame({
        t("projector.col.number"): np.asarray(numbers),
        t("projector.col.sense"): proj.labels,
        t("projector.col.sentence"): states.texts,
        t("projector.col.pieces"): [" · ".join(p) for p in states.pieces],
    }), hide_index=True)
