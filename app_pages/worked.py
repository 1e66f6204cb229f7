"""Worked example: the classroom exercise (attention by hand) on the typed sentence, with the model's
own numbers."""

import math

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_support.i18n import current_lang, t
from app_support.messages import current_analysis, get_layer_tensors
from app_support.sidebar import clamp_choice
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view

EDGE = 4  # wide vectors: the first and last EDGE dimensions in the tables
# Hand result vs the captured float32 tensors: beyond this, something computes differently. z is a sum of
# value vectors, so its float32 rounding grows with their size: its bound is TOLERANCE x the largest |v|.
TOLERANCE = 1e-5
HIGHLIGHT = "background-color: rgba(33, 113, 181, 0.18)"

view = current_view()
lang = current_lang()  # after the sidebar, which sets the session's language on a first run
page_header(t("worked.title"), t("worked.intro"))
result = current_analysis(view)
data = get_layer_tensors(view)
queries, keys = result.tokens_for(view.kind)
n_q, n_k = len(queries), len(keys)
head = min(view.head, data.n_heads - 1)

st.caption(t("worked.setting", kind=view.kind_label, layer=view.layer, head=head, d_head=data.d_head,
             n_q=n_q, n_k=n_k))
if data.rope:
    st.info(t("worked.rope"), icon=":material/rotate_right:")
if data.n_kv_heads != data.n_heads:
    group = data.n_heads // data.n_kv_heads
    st.info(t("worked.gqa", how="MQA" if data.n_kv_heads == 1 else "GQA", n_heads=data.n_heads,
              n_kv_heads=data.n_kv_heads, group=group, q_head=head,
              kv_head=viz.kv_head_of(head, data.n_heads, data.n_kv_heads)),
            icon=":material/share:")

# The query and the key to spell out; stale choices (another sentence, another kind) are pulled back in.
labels_q, labels_k = viz.position_labels(queries), viz.position_labels(keys)
default_q = min(1, n_q - 1)
seed_from_url("worked_query", "query", lambda v: url_int(v, 0, n_q - 1), default_q)
clamp_choice("worked_query", list(range(n_q)), default_q)
left, right = st.columns(2)
query = left.selectbox(t("worked.query"), list(range(n_q)), key="worked_query",
                       format_func=lambda i: labels_q[i] if i < len(labels_q) else str(i),
                       help=t("worked.query_help"))
set_url_param("query", query)
default_k = int(np.argmax(data.pattern[head, query]))
seed_from_url("worked_key", "key", lambda v: url_int(v, 0, n_k - 1), default_k)
clamp_choice("worked_key", list(range(n_k)), default_k)
key = right.selectbox(t("worked.key"), list(range(n_k)), key="worked_key",
                      format_func=lambda j: labels_k[j] if j < len(labels_k) else str(j),
                      help=t("worked.key_help"))
set_url_param("key", key)

bias = None if data.position_bias is None else data.position_bias[head, query]  # T5: [key_pos]
row = viz.work_row(data.q, data.k, data.v, head, query, key, causal=data.causal, scale=data.divisor,
                   window=data.window, bias=bias)
q_tok, k_tok = escape_md(labels_q[query]), escape_md(labels_k[key])


def fmt(x: float) -> str:
    return "−∞" if x == -math.inf else f"{x:.4f}"


def show_table(frame: pd.DataFrame, highlight: int | None = None) -> None:
    """A numeric table with 4 decimals (−∞ kept visible); one row highlighted."""
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    style = frame.style.format(fmt, subset=numeric)
    if highlight is not None:
        marked = frame.index[highlight]
        style = style.apply(lambda r: [HIGHLIGHT if r.name == marked else ""] * len(r), axis=1)
    st.dataframe(style, height=min(400, 38 + 35 * len(frame)))


# 1 · vectors
st.subheader(t("worked.step1"))
elided = data.d_head > 2 * EDGE + 1
st.markdown(t("worked.step1_text", head=head, d_head=data.d_head,
              elided=t("worked.elided", edge=EDGE) if elided else ""))
q_label = [f"q · {labels_q[query]}"]
k_labels = [f"k · {lab}" for lab in labels_k]
st.caption(t("worked.query_vector", q_tok=q_tok))
show_table(viz.vector_table(row.q, q_label, edge=EDGE))
st.caption(t("worked.key_vectors"))
show_table(viz.vector_table(row.k, k_labels, edge=EDGE), highlight=key)
if elided or data.rope:
    with st.expander(t("worked.full")):
        show_table(viz.vector_table(row.q, q_label, edge=None))
        show_table(viz.vector_table(row.k, k_labels, edge=None), highlight=key)
        if data.rope:
            kv = row.kv_head
            st.caption(t("worked.before_rotation"))
            show_table(viz.vector_table(data.q_unrotated[query, head], q_label, edge=None))
            show_table(viz.vector_table(data.k_unrotated[:, kv], k_labels, edge=None), highlight=key)

# 1b · QK-norm (Qwen3, Gemma 3, OLMo 2): q and k normalised before RoPE, by hand from the norm's weights
norm = data.qk_norm
if norm is not None and data.q_normed is not None:
    st.subheader(t("worked.norm.header"))
    d = data.d_head
    whole = norm.over == "full"

    def normalised(x: np.ndarray, heads: np.ndarray, weight: np.ndarray, bias, index: int):
        """(the norm by hand, the head's slice of its result): over the head, or the whole projection."""
        done = viz.norm_by_hand(heads.reshape(-1) if whole else x, weight, norm.eps, kind=norm.kind,
                                bias=bias)
        return done, (done.normed[index * d:(index + 1) * d] if whole else done.normed)

    q_done, q_normed = normalised(data.q_unrotated[query, head], data.q_unrotated[query], norm.q_weight,
                                  norm.q_bias, head)
    _, k_normed = normalised(data.k_unrotated[key, row.kv_head], data.k_unrotated[key], norm.k_weight,
                             norm.k_bias, row.kv_head)
    spread_name = t("worked.norm.rms" if norm.kind == "rmsnorm" else "worked.norm.std")
    st.markdown(t("worked.norm.text_full" if whole else "worked.norm.text_head", kind=norm.kind, d_head=d,
                  width=q_done.x.shape[0], head=head, formula=t(f"worked.norm.formula.{norm.kind}"),
                  spread_name=spread_name, spread=f"{q_done.spread:.4f}", eps=f"{norm.eps:g}"))
    weight = norm.q_weight[head * d:(head + 1) * d] if whole else norm.q_weight
    rows = np.stack([data.q_unrotated[query, head], weight, q_normed, data.q_normed[query, head]])
    show_table(viz.vector_table(rows,
                                [t(f"worked.norm.row.{r}") for r in ("x", "weight", "normed", "recorded")],
                                edge=EDGE))
    st.caption(t("worked.norm.check",
                 q=f"{float(np.max(np.abs(q_normed - data.q_normed[query, head]))):.2e}",
                 k=f"{float(np.max(np.abs(k_normed - data.k_normed[key, row.kv_head]))):.2e}"))

# 1c · RoPE: which dimensions turn (partial rotary: Pythia, Phi-3), the query's rotation by hand
if data.rope and data.rotary_dims:
    st.subheader(t("worked.rotate.header"))
    r, d = data.rotary_dims, data.d_head
    factor = t("worked.rotate.factor", factor=f"{data.rope_factor:g}") if data.rope_factor != 1.0 else ""
    base = f"{data.rope_base:,.0f}"
    if r < d:
        st.markdown(t("worked.rotate.partial", r=r, d_head=d, last_a=r - 2, last_b=r - 1, base=base,
                      factor=factor, end=d - 1))
    else:
        st.markdown(t("worked.rotate.all", d_head=d, base=base, factor=factor))
    before = data.q_before_rotation[query, head]
    if data.rope_switch:  # longrope: which factors this sequence was turned with
        n = data.q.shape[0]
        which = "long" if n > data.rope_switch else "short"
        st.info(t(f"worked.rotate.longrope_{which}", n=n, switch=data.rope_switch,
                  scale=f"{data.rope_scale:.4f}"))
    turned = viz.rotate_by_hand(before, query, r, data.rope_base, data.rope_factor, data.rope_pairs,
                                data.rope_scale)
    rows = np.stack([before, turned.rotated, data.q[query, head]])
    # the partial edge: the last turned dims and the first untouched ones
    show_table(viz.vector_table(rows, [t(f"worked.rotate.row.{w}") for w in ("before", "after", "recorded")],
                                edge=None if d <= 2 * EDGE + 1 else EDGE))
    same = bool(np.array_equal(data.q[query, head, r:], before[r:]))
    st.caption(t("worked.rotate.check", pos=query,
                 diff=f"{float(np.max(np.abs(turned.rotated - data.q[query, head]))):.2e}",
                 same=t("worked.rotate.same_yes" if same else "worked.rotate.same_no")))
    st.caption(t("worked.rotate.pairs", half=r // 2))

# 2 · one dot product
st.subheader(t("worked.step2"))
chart(viz.products_figure(row, queries[query], keys[key], lang=lang), key="worked_products")
st.markdown(t("worked.step2_text", k_tok=k_tok, total=f"{row.dots[key]:.4f}",
              model=f"{data.raw_scores[head, query, key]:.4f}"))

# 3 · scores -> weights
st.subheader(t("worked.step3"))
n_hidden = int(row.mask.sum())
behind = int(row.mask[:query + 1].sum())  # keys before the query hidden: a local layer's sliding window
if not data.causal:
    mask_note = t("worked.mask_none")
elif behind:
    mask_note = t("worked.mask_window", window=data.window, n=behind)
elif n_hidden:
    mask_note = t("worked.mask_causal", n=n_hidden)
else:
    mask_note = t("worked.mask_causal_last")
own_scale = not math.isclose(row.scale, math.sqrt(data.d_head), rel_tol=1e-12)
scaling = t("worked.scaling.own" if own_scale else "worked.scaling.sqrt", d_head=data.d_head,
            scale=f"{row.scale:.4f}")
st.markdown(t("worked.step3_text", scaling=scaling, mask_note=mask_note,
              top=f"{row.max_score:.4f}", total=f"{row.total:.4f}"))
if row.bias is not None:  # T5: the relative position bias joins the scores before the mask
    st.markdown(t("worked.bias_text", k_tok=k_tok, bias=f"{row.bias[key]:+.4f}",
                  distance=key - query))
show_table(viz.steps_table(row, keys, lang=lang), highlight=key)
st.caption(t("worked.steps_caption"))
if row.mask[key]:
    st.info(t("worked.key_masked", k_tok=k_tok), icon=":material/block:")
chart(viz.weights_figure(row, keys, lang=lang), key="worked_weights")

# 4 · weighted sum of the values
st.subheader(t("worked.step4"))
st.markdown(t("worked.step4_text", d_head=data.d_head, q_tok=q_tok))
st.caption(t("worked.values_caption"))
show_table(viz.vector_table(row.v, [f"v · {lab}" for lab in labels_k], edge=EDGE), highlight=key)
st.caption(t("worked.sum_caption"))
show_table(viz.weighted_sum_table(row, keys, edge=EDGE, lang=lang), highlight=n_k)

# 5 · check against the captured tensors
st.subheader(t("worked.step5"))
st.markdown(t("worked.step5_text"))
diffs = {
    "raw": float(np.max(np.abs(row.dots - data.raw_scores[head, query].astype(np.float64)))),
    "pattern": float(np.max(np.abs(row.weights - data.pattern[head, query].astype(np.float64)))),
    "z": float(np.max(np.abs(row.z - data.z[query, head].astype(np.float64)))),
}
if row.bias is not None:  # score + bias against hook_scores, where the query may look
    seen = ~row.mask
    recorded = data.scores[head, query].astype(np.float64)
    off = float(np.max(np.abs(row.masked[seen] - recorded[seen]), initial=0.0))
    diffs = {"raw": diffs["raw"], "scores": off, "pattern": diffs["pattern"], "z": diffs["z"]}
for column, (name, diff) in zip(st.columns(len(diffs)), diffs.items(), strict=True):
    column.metric(t(f"worked.check_{name}"), f"{diff:.2e}")
z_bound = TOLERANCE * max(1.0, float(np.max(np.abs(row.v))))
if diffs["pattern"] <= TOLERANCE and diffs["z"] <= z_bound:
    st.success(t("worked.check_ok", q_pos=query), icon=":material/check_circle:")
else:
    st.warning(t("worked.check_off", tol=f"{TOLERANCE:g}"), icon=":material/warning:")
