"""The decoding strategy in the sidebar: its controls, its URL word (``?decode=``) and its name.

The strategy is app-wide (every page shows the output of the chosen decoding and the attention of
that path), so its controls sit in the shared sidebar and its URL parameter is in
:data:`app_support.pages.APP_PARAMS`. The widgets have their own keys; the link holds one word,
``Strategy.param`` (``greedy``, ``beam4-lp1``, ``sample-t0.8-k40-p0.9-s3``).
"""

from __future__ import annotations

import streamlit as st

from app_support.i18n import t, text
from app_support.ui import escape_md
from model.decoding.strategy import GREEDY, MAX_BEAM, MAX_LENGTH_PENALTY, MAX_SEED, MAX_TEMPERATURE, Strategy

PARAM = "decode"  # the URL parameter
KINDS = ("greedy", "beam", "sample")
#: Widget key of each control -> the Strategy field it sets ("kind" for the radio).
FIELDS = {"strategy_kind": "kind", "strategy_beam": "beam", "strategy_lp": "length_penalty",
          "strategy_temp": "temperature", "strategy_topk": "top_k", "strategy_topp": "top_p",
          "strategy_seed": "seed"}
# Every field's value, kept outside the widgets: Streamlit forgets a widget's value in a run that does
# not draw it, and the beam controls are not drawn while sampling is chosen (and the other way round).
_STORE = "_decode_values"
_BAD = "_decode_bad_url"  # the link's strategy word when it could not be read


def seed_from_url(raw: str | None) -> None:
    """First run of a session: the controls take the link's strategy (greedy when absent or bad)."""
    try:
        strategy = Strategy.parse(raw) if raw else GREEDY
        st.session_state[_BAD] = None
    except ValueError:
        strategy, st.session_state[_BAD] = GREEDY, raw
    st.session_state[_STORE] = {f: getattr(strategy, f) for f in FIELDS.values()}
    for key in FIELDS:
        st.session_state.pop(key, None)


def _store() -> dict:
    if not isinstance(st.session_state.get(_STORE), dict):
        st.session_state[_STORE] = {f: getattr(GREEDY, f) for f in FIELDS.values()}
    return st.session_state[_STORE]


def _draw(widget, key: str, label: str, help_key: str, **kwargs) -> None:
    """One control, starting from the stored value; its value is stored back after it is drawn."""
    store = _store()
    if key not in st.session_state:
        st.session_state[key] = store[FIELDS[key]]
    widget(t(label), key=key, help=t(help_key), **kwargs)
    store[FIELDS[key]] = st.session_state[key]


def controls(vocab_size: int) -> Strategy:
    """Draw the strategy controls (inside the sidebar) and return the strategy they select."""
    bad = st.session_state.get(_BAD)
    if bad:
        st.warning(t("strategy.bad_url", value=escape_md(bad)), icon=":material/warning:")
    store = _store()
    if store.get("kind") not in KINDS:
        store["kind"] = "greedy"
    store["top_k"] = min(int(store.get("top_k", 0)), vocab_size)  # another model: maybe a smaller vocabulary
    top_k = st.session_state.get("strategy_topk")
    if isinstance(top_k, int) and top_k > vocab_size:
        st.session_state["strategy_topk"] = vocab_size
    names = {k: t(f"strategy.kind.{k}") for k in KINDS}
    _draw(st.radio, "strategy_kind", "strategy.label", "strategy.help", options=KINDS, format_func=names.get,
          horizontal=True)
    kind = store["kind"]
    if kind == "beam":
        c1, c2 = st.columns(2)
        with c1:
            _draw(st.number_input, "strategy_beam", "strategy.beam", "strategy.beam_help",
                  min_value=1, max_value=MAX_BEAM, step=1)
        with c2:
            _draw(st.number_input, "strategy_lp", "strategy.length_penalty", "strategy.length_penalty_help",
                  min_value=0.0, max_value=MAX_LENGTH_PENALTY, step=0.1, format="%.2f")
    elif kind == "sample":
        c1, c2 = st.columns(2)
        with c1:
            _draw(st.number_input, "strategy_temp", "strategy.temperature", "strategy.temperature_help",
                  min_value=0.05, max_value=MAX_TEMPERATURE, step=0.1, format="%.2f")
        with c2:
            _draw(st.number_input, "strategy_topk", "strategy.top_k", "strategy.top_k_help",
                  min_value=0, max_value=vocab_size, step=1)
        c3, c4 = st.columns(2)
        with c3:
            _draw(st.number_input, "strategy_topp", "strategy.top_p", "strategy.top_p_help",
                  min_value=0.01, max_value=1.0, step=0.05, format="%.2f")
        with c4:
            _draw(st.number_input, "strategy_seed", "strategy.seed", "strategy.seed_help",
                  min_value=0, max_value=MAX_SEED, step=1)
    return current()


def current() -> Strategy:
    """The strategy the controls hold now (greedy if a value is out of range)."""
    values = dict(_store())
    kind = values.pop("kind", "greedy")
    try:
        # Rounded as the controls show them, so a link's word and the cache key stay short and stable.
        for f in ("length_penalty", "temperature", "top_p"):
            values[f] = round(float(values[f]), 3)
        for f in ("beam", "top_k", "seed"):
            values[f] = int(values[f])
        return Strategy.make(kind if kind in KINDS else "greedy", **values)
    except (ValueError, TypeError, KeyError):
        return GREEDY


def name(strategy: Strategy | str, lang: str) -> str:
    """The strategy in words, in ``lang`` (for captions and titles)."""
    s = strategy if isinstance(strategy, Strategy) else Strategy.parse(strategy)
    if s.kind == "beam":
        return text(lang, "strategy.name.beam", width=s.beam, penalty=f"{s.length_penalty:g}")
    if s.kind == "sample":
        return text(lang, "strategy.name.sample", temperature=f"{s.temperature:g}",
                    top_k=s.top_k if s.top_k else "∞", top_p=f"{s.top_p:g}", seed=s.seed)
    return text(lang, "strategy.name.greedy")


def greedy_here(reason: str, chosen: Strategy, lang: str) -> str:
    """The caption of a page whose outputs are greedy whatever the sidebar says (``reason``:
    "intervention" or "batch"), naming the sidebar's strategy when it is another one."""
    note = text(lang, f"strategy.greedy_here.{reason}")
    if chosen.kind != "greedy":
        note += " " + text(lang, "strategy.greedy_here.not_sidebar", strategy=name(chosen, lang))
    return note
