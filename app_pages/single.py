"""Single head: one head's attention pattern as a token x token heatmap."""

import numpy as np
import pandas as pd
import streamlit as st

import viz
from app_pages.glue import single as window
from app_pages.glue.single_export import attention_downloads
from app_support.i18n import current_lang, t, text
from app_support.messages import current_analysis
from app_support.sidebar import clamp_choice
from app_support.token_display import page_attention
from app_support.ui import chart, page_header
from app_support.url_state import seed_from_url, set_url_param, url_int
from app_support.view import current_view
from app_support.weighting import choose_weighting
from viz.flow import norm_disagreement

lang = current_lang()
view = current_view()
page_header(t("page.single.title"), t("single.intro"))
result = current_analysis(view)

seed_from_url("single_per_head_scale", "scale", lambda v: v == "head", False)
per_head = st.toggle(
    t("single.scale"),
    key="single_per_head_scale",
    help=t("single.scale_help"),
)
set_url_param("scale", "head" if per_head else "fixed")
display = choose_weighting("single", result, view.kind, view.display)  # weight, or weight × ‖value‖

# this head only, word pieces merged / [CLS], [SEP] hidden if the sidebar says so
shown = page_attention(result, view.kind, display, heads=(view.layer, view.head))
pattern = shown.pattern[0, 0]
scores = None if shown.scores is None else shown.scores[0, 0]
masked = shown.mask[0, 0]
queries, keys = shown.query_tokens, shown.key_tokens

# Hiding weak links: off, below a weight, or per row beyond the strongest links holding a share.
# The URL holds whole numbers (hundredths of a weight, percent of a row), read with url_int.
HIDE = ("off", "below", "share")


def _hundredths(n: int | None) -> float | None:
    return None if n is None else n / 100


MIN_RANGE = (1, 50)  # hundredths: weights 0.01-0.50
SHARE_RANGE = (10, 100)  # percent of each row's weight
seed_from_url("single_hide", "hide", lambda v: v if v in HIDE else None, "off")
clamp_choice("single_hide", list(HIDE), "off")
left, right = st.columns([3, 2])
hide = left.radio(
    t("single.hide"),
    HIDE,
    key="single_hide",
    format_func=lambda o: text(lang, f"single.hide.{o}"),
    horizontal=True,
    help=t("single.hide_help"),
)
set_url_param("hide", hide)
threshold = keep_share = None
if hide == "below":
    seed_from_url("single_min", "min", lambda v: _hundredths(url_int(v, *MIN_RANGE)), 0.05)
    threshold = right.slider(
        t("single.min"),
        MIN_RANGE[0] / 100,
        MIN_RANGE[1] / 100,
        step=0.01,
        format="%.2f",
        key="single_min",
        help=t("single.min_help"),
    )
    set_url_param("min", round(threshold * 100))
elif hide == "share":
    seed_from_url("single_share", "share", lambda v: url_int(v, *SHARE_RANGE), 90)
    percent = right.slider(
        t("single.share"),
        *SHARE_RANGE,
        step=5,
        format="%d%%",
        key="single_share",
        help=t("single.share_help"),
    )
    keep_share = percent / 100
    set_url_param("share", percent)

# Long inputs: a window per axis longer than window.WINDOW_FROM positions (first and last, inclusive).
n_q, n_k = pattern.shape
spans = {"q": (0, n_q - 1), "k": (0, n_k - 1)}
for axis, n in (("q", n_q), ("k", n_k)):
    if not window.needs_window(n):
        continue
    key = f"single_window_{axis}"
    seed_from_url(key, axis, lambda v, n=n: window.window_from_url(v, n))
    # a stale window (another sentence) is pulled inside this one before the slider reads it
    st.session_state[key] = window.clamp_window(st.session_state.get(key), n)
    spans[axis] = st.slider(t(f"single.window_{axis}", n=n), 0, n - 1, key=key)
    set_url_param(axis, window.window_to_url(spans[axis]))
(q0, q1), (k0, k1) = spans["q"], spans["k"]
windowed = (q0, q1, k0, k1) != (0, n_q - 1, 0, n_k - 1)

fig = viz.attention_heatmap(
    pattern,
    queries,
    keys,
    scores_2d=scores,
    mask_2d=masked,
    title=t("single.figure_title", layer=view.layer, head=view.head),
    zmax=None if per_head else 1.0,
    subtitle=view.kind_label if display.weighting == "weight"
    else f"{view.kind_label} · {t('flow.weighting.norm')}",
    query_range=window.as_range(spans["q"]) if windowed else None,
    key_range=window.as_range(spans["k"]) if windowed else None,
    threshold=threshold,
    keep_share=keep_share,
    lang=lang,
    dimmed_queries=shown.query_prefix,  # the prefix the model reads before the text, greyed
    dimmed_keys=shown.key_prefix,
)
chart(fig, key="single_head_heatmap")
if display.weighting == "norm":  # where the weights and what the keys send disagree most
    by_weight = page_attention(result, view.kind, view.display, note=False, heads=(view.layer, view.head))
    chart(norm_disagreement(
        np.where(masked, 0.0, by_weight.pattern[0, 0]), np.where(masked, 0.0, pattern), keys,
        title=t("flow.disagree_title", layer=view.layer, head=view.head), lang=lang), key="single_disagree")
    st.caption(t("flow.disagree_caption"))

notes = [t("single.note_axes")]
if display.weighting == "norm":
    notes.append(t("flow.note_norm"))
if masked.any():
    notes.append(t("single.note_masked"))
if view.kind == "cross":
    notes.append(t("single.note_cross"))
if threshold is not None:
    notes.append(t("single.note_below", weight=f"{threshold:.2f}"))
elif keep_share is not None:
    notes.append(t("single.note_share", share=f"{keep_share:.0%}"))
if windowed:
    notes.append(t("single.note_window", q0=q0, q1=q1, k0=k0, k1=k1, n_q=n_q, n_k=n_k))
st.caption(" ".join(notes))

with st.expander(t("single.numbers")):
    # the table shows the same window as the figure: a 512 x 512 table would be as heavy as the picture
    # labelled with the model's positions (a merged word: its pieces' range; hidden tokens: none)
    labels_q = [shown.queries.position_label(i) for i in range(q0, q1 + 1)]
    labels_k = [shown.keys.position_label(j) for j in range(k0, k1 + 1)]
    shown = np.where(masked, np.nan, pattern)[q0 : q1 + 1, k0 : k1 + 1]
    table = pd.DataFrame(shown, index=labels_q, columns=labels_k)
    st.caption(t("single.numbers_caption"))
    # three decimals drawn by the browser: a pandas Styler formatted every cell on the server at each rerun
    # (64 x 64 cells: ~40% of the page's rerun at 1,024 tokens)
    st.dataframe(table, column_config={k: st.column_config.NumberColumn(format="%.3f") for k in labels_k},
                 placeholder="")  # masked cells empty, as the caption says

attention_downloads(result, view.model)  # the attention of this sentence as CSV / NPZ
