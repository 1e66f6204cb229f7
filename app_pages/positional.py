"""Positional encoding: the table that tells the model where each token stands."""

import math

import numpy as np
import streamlit as st

import viz
from app_support import gateway as G
from app_support import lab
from app_support.i18n import current_lang, t
from app_support.messages import show_input_error
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from model.public import InputError

view = current_view()
cfg = G.config(view.model)
lang = current_lang()
page_header(t("page.positional.title"), t("positional.intro"))
KINDS_EXPLAINED = ("sinusoidal", "learned", "rope", "relative", "none")
kind_note = t(f"positional.kind.{cfg.pos_encoding}") if cfg.pos_encoding in KINDS_EXPLAINED else ""
st.info(t("positional.setting", value=cfg.pos_encoding, note=kind_note))

DIMS = [16, 32, 64, 128, 256, 512]
MAX_POSITIONS = 512  # the lab's own tables: a model's longer context (SmolLM2 reads 2,048) starts at this
seed_from_url("pe_len", "len", lambda v: url_int(v, 4, MAX_POSITIONS),
              min(max(cfg.max_len, 8), MAX_POSITIONS))
seed_from_url("pe_dim", "dim", lambda v: url_int(v) if url_int(v) in DIMS else None,
              cfg.d_model if cfg.d_model in DIMS else 64)
c1, c2 = st.columns(2)
n_pos = c1.slider(t("positional.positions"), 4, MAX_POSITIONS, key="pe_len")
d = c2.select_slider("d_model", DIMS, key="pe_dim")
set_url_param("len", n_pos)
set_url_param("dim", d)

table, own = lab.positional.position_table(view.model, int(n_pos), int(d))
if own and cfg.pos_encoding == "learned":
    st.caption(t("positional.learned_shown"))
past = int(n_pos) > cfg.max_len
chart(viz.pe_heatmap(table, lang=lang, max_len=cfg.max_len), key="pe_heatmap")
if past:
    st.caption(t("positional.past_max_len", max_len=cfg.max_len, n=int(n_pos)))
left, right = st.columns(2)
with left:
    chart(viz.pe_cosine_similarity(table, lang=lang), key="pe_cosine")
    st.caption(t("positional.cosine_caption"))
with right:
    default_dims = sorted({0, 1, min(d - 2, d // 4), min(d - 2, d // 2), d - 2})
    dims = st.multiselect(t("positional.dims"), list(range(d)), default=default_dims, key=f"pe_dims_{d}")
    if dims:
        chart(viz.pe_dimension_curves(table, dims, lang=lang), key="pe_curves")
        st.caption(t("positional.curves_caption"))
    else:
        st.info(t("positional.no_dims"))

# --------------------------------------------------------------------------- similarity against distance

st.subheader(t("positional.distance.header"))
profile = viz.similarity_by_distance(table)
chart(viz.pe_similarity_by_distance(table, lang=lang, max_len=cfg.max_len), key="pe_distance")
last = int(profile.distance[-1])
summary = [t("positional.distance.falls", end=f"{profile.mean[-1]:.3f}", last=last)]
if profile.monotone:
    summary.append(t("positional.distance.monotone"))
else:
    rises = profile.rises
    first = int(rises[0])
    summary.append(t("positional.distance.not_monotone", count=len(rises), total=last, first=first,
                     a=f"{profile.mean[first - 1]:.4f}", b=f"{profile.mean[first]:.4f}",
                     rise=f"{float(np.max(np.diff(profile.mean))):.2g}"))
if profile.spread < 1e-5:  # float32 rounding of a table whose similarity depends on distance only
    summary.append(t("positional.distance.band_flat", spread=f"{profile.spread:.1e}"))
else:
    summary.append(t("positional.distance.band_wide", spread=f"{profile.spread:.3f}"))
st.markdown(" ".join(summary))

# --------------------------------------------------------------------------- relative positions

st.subheader(t("positional.shift.header"))
st.markdown(t("positional.shift.intro"))
seed_from_url("pe_k", "k", lambda v: url_int(v, 1, 511), 3)
k_max = int(n_pos) - 1
if not 1 <= int(st.session_state.get("pe_k", 3)) <= k_max:
    st.session_state["pe_k"] = min(3, k_max)
k = int(st.slider(t("positional.shift.k"), 1, k_max, key="pe_k"))
set_url_param("k", k)
shift = lab.positional.sinusoid_shift(int(n_pos), int(d), k)
m_k, errors = shift.matrix, shift.errors
SHOWN = 64
c1, c2 = st.columns(2)
with c1:
    chart(viz.shift_matrix_heatmap(m_k[:SHOWN, :SHOWN], k, lang=lang), key="pe_shift_matrix")
    if d > SHOWN:
        st.caption(t("positional.shift.matrix_cut", shown=SHOWN, d=int(d)))
with c2:
    chart(viz.shift_error_curve(errors, k, lang=lang), key="pe_shift_error")
st.markdown(t("positional.shift.error", err=f"{float(errors.max()):.1e}", n=len(errors), d=int(d), k=k))

# --------------------------------------------------------------------------- the model's own scheme

def _rope_bases(rotations) -> None:
    """Gemma 3: the local layers' base and the global layers' (with their linear scaling), side by side."""
    local = [r for r in rotations if r.window]
    global_ = [r for r in rotations if not r.window]
    if not local or not global_:
        return
    st.subheader(t("positional.rope.bases_header"))
    g = global_[0]
    scaling = t("positional.rope.bases_scaling", factor=f"{g.factor:g}") if g.factor != 1.0 else ""
    st.markdown(t("positional.rope.bases", window=local[0].window,
                  local=", ".join(str(r.layer) for r in local),
                  global_=", ".join(str(r.layer) for r in global_), local_base=f"{local[0].base:,.0f}",
                  global_base=f"{g.base:,.0f}", scaling=scaling))
    for column, (which, r) in zip(st.columns(2), (("local", local[0]), ("global", g)), strict=True):
        with column:
            scaled = (t("positional.rope.bases_title_scaling", factor=f"{r.factor:g}") if r.factor != 1.0
                      else "")
            title = t("positional.rope.bases_title", which=t(f"positional.rope.bases_which.{which}"),
                      base=f"{r.base:,.0f}", scaling=scaled)
            freqs = lab.positional.rope_frequencies(r.rotary_dims, r.base, r.factor)
            chart(viz.rope_frequency_bars(freqs, title=title, lang=lang), key=f"pe_rope_freq_{which}")
    st.caption(t("positional.rope.bases_caption"))


def _sentence_length() -> int | None:
    """Positions of the sentence the pages read (a language model's prompt and output), or None."""
    if not view.text.strip():
        return None
    try:
        return len(lab.positional.sentence_input_vectors(view.model, view.text, view.direction_arg,
                                                         view.strategy, view.max_new).tokens)
    except InputError:
        return None


def _longrope() -> tuple[tuple[float, ...], float]:
    """Phi-3's longrope: which factors this sentence is rotated with (one line), and (factors, scale)."""
    st.markdown(f"**{t('positional.rope.longrope_header')}**")
    scale = cfg.rope_attention_factor
    st.markdown(t("positional.rope.longrope", switch=cfg.rope_switch_len, scale=f"{scale:.4f}",
                  squared=f"{scale ** 2:.4f}"))
    length = _sentence_length()
    pairs, which = cfg.rope_factors_for(length if length is not None else 1)
    if length is None:
        st.caption(t("positional.rope.longrope_none", switch=cfg.rope_switch_len))
    else:
        st.info(t(f"positional.rope.longrope_{which}", n=length, switch=cfg.rope_switch_len))
    st.caption(t("positional.rope.longrope_factors",
                 short=", ".join(f"{x:g}" for x in cfg.rope_short_factors[:8]),
                 long=", ".join(f"{x:g}" for x in cfg.rope_long_factors[:8]),
                 more="…" if len(cfg.rope_short_factors) > 8 else ""))
    return pairs, cfg.rope_attention_factor


if cfg.pos_encoding == "rope":
    st.subheader(t("positional.rope.header"))
    st.markdown(t("positional.rope.intro", d_head=cfg.d_head))
    rotations = lab.positional.layer_rotations(view.model)
    first = rotations[0] if rotations else None
    turned = first.rotary_dims if first else cfg.d_head
    if turned < cfg.d_head:  # partial rotary (Pythia, Phi-3): which dimensions turn
        st.markdown(f"**{t('positional.rope.partial_header')}**")
        st.markdown(t("positional.rope.partial", r=turned, d_head=cfg.d_head, share=turned / cfg.d_head,
                      pairs=turned // 2, end=cfg.d_head - 1))
    base, factor = (first.base, first.factor) if first else (cfg.rope_theta, 1.0)
    pairs, scale = _longrope() if cfg.longrope else ((), 1.0)
    c1, c2 = st.columns(2)
    with c1:
        freqs = lab.positional.rope_frequencies(turned, base, factor, pairs)
        chart(viz.rope_frequency_bars(freqs, lang=lang), key="pe_rope_freq")
    with c2:
        scores = lab.positional.rope_scores(cfg.d_head, int(n_pos), base=base, rotary_dims=turned,
                                            factor=factor, pairs=pairs, scale=scale)
        chart(viz.rope_score_heatmap(scores, lang=lang, max_len=cfg.max_len), key="pe_rope_scores")
    worst = max(float(np.ptp(np.diagonal(scores, offset=o))) for o in range(-len(scores) + 1, len(scores)))
    st.markdown(t("positional.rope.diagonals", spread=f"{worst:.1e}"))
    if past:
        st.caption(t("positional.rope.past", max_len=cfg.max_len))
    _rope_bases(rotations)
elif cfg.pos_encoding == "learned":
    st.caption(t("positional.learned_note", max_len=cfg.max_len, d_model=cfg.d_model))
elif cfg.pos_encoding == "relative":
    st.subheader(t("positional.relative.header"))
    st.markdown(t("positional.relative.intro", far=cfg.relative_max_distance, buckets=cfg.relative_buckets))
    reach = min(int(n_pos), cfg.relative_max_distance + 8)  # a few distances past the last bucket's start
    for column, found in zip(st.columns(2), lab.positional.position_biases(view.model, reach), strict=False):
        with column:
            figure = viz.relative_bias_curves(found.distance, found.bias, stack=found.stack,
                                              buckets=found.buckets, lang=lang)
            chart(figure, key=f"pe_rel_bias_{found.stack}")
    st.caption(t("positional.relative.caption"))

# --------------------------------------------------------------------------- magnitudes on the sentence

st.subheader(t("positional.norms.header"))
vectors = None
if not view.text.strip():
    st.info(t("analysis.empty"), icon=":material/edit:")
else:
    try:
        vectors = lab.positional.sentence_input_vectors(view.model, view.text, view.direction_arg,
                                                           view.strategy, view.max_new)
    except InputError as e:
        show_input_error(e)
if vectors is not None:
    chart(viz.embedding_norm_bars(vectors.tokens, vectors.embed_norm, vectors.pos_norm, lang=lang),
          key="pe_norms")
    scale = math.sqrt(cfg.d_model) if cfg.scale_embeddings else 1.0
    word = float(np.mean(vectors.embed_norm))
    if vectors.pos_norm is None:
        which = "no_pos" if cfg.pos_encoding == "rope" else "no_pos_none"
        if cfg.decoder_only or not cfg.scale_embeddings:  # its decoder reads the input; no √d_model scale
            which = f"{which}_lm"
        if cfg.pos_encoding == "relative":
            which = "no_pos_relative"
        st.markdown(t(f"positional.norms.{which}", scale=f"{scale:.1f}"))
    else:
        ratio = vectors.pos_norm / vectors.embed_norm
        lo, hi = float(ratio.min()), float(ratio.max())
        verdict = "below" if hi < 1 else ("above" if lo > 1 else "mixed")
        st.markdown(
            t("positional.norms.ratio", mean=f"{float(ratio.mean()):.2f}", lo=f"{lo:.2f}", hi=f"{hi:.2f}",
              n=len(ratio))
            + " "
            + t(f"positional.norms.{verdict}")
        )
        st.markdown(t("positional.norms.why", scale=f"{scale:.1f}", word=f"{word / scale:.2f}",
                      pe=f"{float(np.mean(vectors.pos_norm)):.2f}"))
