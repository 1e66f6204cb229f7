"""Head detectors: a score per role for every head (previous token, first token, duplicate token,
induction, copying) as a layer x head map with its definition and threshold, on seeded probes and on the
user's text or a corpus run found in runs/atlas/; a click opens the head on the input it was scored on."""

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_pages.glue import detectors as DT
from app_support import gateway as G
from app_support import lab, pages
from app_support.i18n import current_lang, t, text
from app_support.messages import show_input_error
from app_support.selection import head_from_scatter_selection
from app_support.sidebar import choose_data, clamp_choice
from app_support.ui import chart, md_tokens, page_header
from app_support.url_state import seed_from_url, set_url_param, stop_page, url_int
from app_support.view import current_view, keep_view_across_switch
from model.public import InputError

view = current_view()
lang = current_lang()  # after the sidebar: it settles the language
page_header(t("page.detectors.title"), t("detectors.intro"))
cfg = G.config(view.model)
kind = "decoder" if cfg.decoder_only else "encoder"
if not view.n_layers.get(kind):
    st.info(t("detectors.no_self"), icon=":material/info:")
    stop_page()
st.markdown(t("detectors.kind", kind=t(f"kind.{kind}.label")))
if not (cfg.decoder_only or cfg.encoder_only):
    st.caption(t("detectors.encdec"))

left, right = st.columns(2)
seed_from_url("det_seed", "probe", lambda v: url_int(v, 0, DT.MAX_SEED), 0)
with left:
    seed = int(st.number_input(t("detectors.seed"), 0, DT.MAX_SEED, key="det_seed",
                               help=t("detectors.seed_help")))
set_url_param("probe", seed)
try:
    scores = lab.detectors.probe_scores(view.model, seed)
except InputError:  # a vocabulary with no tokens that read back as themselves (a tiny uploaded one)
    st.info(t("detectors.no_probe"), icon=":material/info:")
    stop_page()
roles = [r for r in DT.ROLES if r in scores.scores]
seed_from_url("det_role", "role", None, "induction")
clamp_choice("det_role", roles, "induction")
with right:
    role = st.selectbox(t("detectors.role"), roles, key="det_role", help=t("detectors.role_help"),
                        format_func=lambda r: text(lang, f"detectors.role.{r}"))
set_url_param("role", role)
role_name = t(f"detectors.role.{role}")
if scores.copying_note:
    st.caption(t(f"detectors.copying_none.{scores.copying_note}"))


def open_on(text: str, picked: tuple[int, int] | None, memo: str) -> None:
    """Open a clicked head on the single-head page with ``text`` as the input (a new click only: the
    chart keeps its selection, which must not undo a later sidebar choice)."""
    if picked is None or st.session_state.get(memo) == picked:
        return
    st.session_state[memo] = picked
    keep_view_across_switch(text=text, kind=kind, layer=picked[0], head=picked[1])
    st.switch_page(pages.page("single").file)


def show_role(values: np.ndarray, text: str | Callable[[int, int], str], key: str, caption: str) -> None:
    """The role's map, its definition and threshold, and the best heads with links opening ``text`` (or
    ``text(layer, head)``: each head its own input)."""
    threshold = DT.THRESHOLDS[role]
    fig = viz.detector_map(values, threshold, value_name=role_name, signed=DT.is_signed(role), lang=lang)
    event = chart(fig, key=key, on_select="rerun", selection_mode="points")
    picked = head_from_scatter_selection(event)
    if picked is not None:
        open_on(text(*picked) if callable(text) else text, picked, f"_{key}_picked")
    st.caption(caption)
    st.markdown(t(f"detectors.def.{role}"))
    marked = np.nonzero(viz.detectors.above_threshold(values, threshold))
    above = [f"L{la}H{h}" for la, h in zip(*marked, strict=True)]
    st.markdown(t("detectors.threshold", threshold=f"{threshold:g}", mark=viz.detectors.ABOVE_MARK,
                  heads=" ".join(above) or t("detectors.none_above")))
    rows = DT.top_rows(values, role, view.model, text, kind, lang)
    st.markdown(f"**{t('detectors.top_header', role=role_name)}**")
    table = pd.DataFrame(rows, columns=["layer", "head", "score", "above", "link"])
    st.dataframe(table, hide_index=True, key=f"{key}_table", column_config={
        "layer": st.column_config.NumberColumn(t("detectors.col.layer")),
        "head": st.column_config.NumberColumn(t("detectors.col.head")),
        "score": st.column_config.NumberColumn(t("detectors.col.score"), format="%.3f"),
        "above": st.column_config.CheckboxColumn(t("detectors.col.above")),
        "link": st.column_config.LinkColumn(t("detectors.col.open"), display_text=t("detectors.open")),
    })


# --------------------------------------------------------------------------- the probes

st.subheader(t("detectors.probe_header"))
k = (len(scores.tokens[0]) - int(scores.starts_special)) // 2
st.markdown(t("detectors.probe_explain", n=len(scores.texts), k=k,
              bos=t("detectors.bos") if scores.starts_special else ""))
st.markdown(t("detectors.probe_tokens"))
st.markdown(md_tokens(scores.tokens[0]))
heads = int(np.prod(scores.scores[role].shape))
st.caption(t("detectors.computed", heads=heads, seconds=f"{scores.seconds:.2f}"))
show_role(scores.scores[role], scores.texts[0], "det_probe", t("detectors.map_caption"))

# --------------------------------------------------------------------------- the user's text or a corpus

corpora = DT.corpus_scores(view.model)  # computed with `python -m model atlas --corpus`, here or elsewhere
corpus = choose_data("det_data", "text", t("detectors.data.text"), corpora, lambda c: c.label(),
                     t("detectors.data"), t("detectors.data_help"))
st.subheader(t("detectors.text_header") if corpus is None else t("detectors.corpus_header"))
if role not in DT.ON_ANY_INPUT:
    st.info(t("detectors.text_needs_probe", role=role_name), icon=":material/repeat:")
    stop_page()
if corpus is not None:
    src = corpus.atlas.source
    st.markdown(t("detectors.corpus_explain", name=src["corpus"], n=src["sampled"], total=src["prompts"],
                  seed=src["seed"]))
    engine = t(f"detectors.engine.{src['engine']}")
    st.caption(t("detectors.corpus_how", engine=engine, workers=src["workers"], processes=src["processes"],
                 hosts=src["hosts"], shards=src["shards"], size=src["shard_size"],
                 seconds=f"{corpus.atlas.seconds:.1f}", sha=src["corpus_sha256"][:12]))
    over = corpus.detectors.corpus
    if role == "duplicate" and not over.counts["duplicate"]:
        st.info(t("detectors.corpus_no_dup"), icon=":material/info:")
    show_role(over.scores[role], lambda layer, head: corpus.top_prompt(over.kind, layer, head), "det_corpus",
              t("detectors.corpus_caption"))
    stop_page()
try:
    mine = lab.detectors.text_scores(view.model, view.text)
except InputError as e:
    show_input_error(e)
    stop_page()
st.markdown(t("detectors.text_explain", n=len(mine.tokens[0])))
if role == "duplicate" and not mine.counts["duplicate"]:
    st.info(t("detectors.text_no_dup"), icon=":material/info:")
show_role(mine.scores[role], view.text, "det_text", t("detectors.text_caption"))
