"""Small display helpers shared by the pages.

Rule: whatever the user typed (and every token, which is user text) reaches the page either
inside a plotly figure (viz/ HTML-escapes it) or through :func:`escape_md` / ``st.code`` /
``st.dataframe``, never as HTML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

#: Plotly toolbar: no logo, PNG export at 2x for slides.
PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "attention-lens"},
}

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^@%])")


def escape_md(text: str) -> str:
    """Make any text render literally inside Streamlit markdown (st.markdown, st.warning, …).

    Every ASCII punctuation character that markdown, Streamlit directives (``:red[...]``,
    ``:material/...:``) or LaTeX (``$``) could interpret is backslash-escaped, and line breaks
    become spaces, so ``<img src=x onerror=...>`` shows as those characters.
    """
    text = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_tokens(tokens: Sequence[str], highlight: int | None = None) -> str:
    """Tokens as one escaped markdown line, ``a · b · c``, with one token in bold."""
    parts = []
    for i, t in enumerate(tokens):
        shown = escape_md(t) if t.strip() else "␣"
        parts.append(f"**{shown}**" if i == highlight else shown)
    return " · ".join(parts)


def page_header(title: str, intro: str) -> None:
    """Page title and a short explanation (static text written by us, markdown allowed)."""
    st.title(title)
    st.markdown(intro)


def chart(
    fig: go.Figure,
    *,
    key: str | None = None,
    on_select: str = "ignore",
    selection_mode: str | Sequence[str] = ("points", "box", "lasso"),
    width: str | int = "content",
):
    """``st.plotly_chart`` with the viz look kept (``theme=None``) and the app's toolbar config."""
    if st.session_state.get("present"):
        fig.update_layout(font={"size": 20}, title={"font": {"size": 26}})
    kwargs = {}
    if on_select != "ignore":
        kwargs = {"on_select": on_select, "selection_mode": selection_mode}
    return st.plotly_chart(fig, theme=None, config=PLOTLY_CONFIG, key=key, width=width, **kwargs)


_PRESENTATION_CSS = """
<style>
  [data-testid="stMain"] .stMarkdown p,
  [data-testid="stMain"] .stMarkdown li,
  [data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.35rem !important; }
  [data-testid="stMain"] h1 { font-size: 3.2rem !important; }
  [data-testid="stMain"] h2 { font-size: 2.4rem !important; }
  [data-testid="stMain"] h3 { font-size: 1.9rem !important; }
  [data-testid="stMain"] code { font-size: 1.25rem !important; }
</style>
"""

_BASE_CSS = """
<style>
  /* token strips: keep them on one line where possible, wrap where not */
  .block-container { padding-top: 2.2rem; }
</style>
"""


def inject_css(present: bool) -> None:
    """Static CSS only (no user text): spacing, and bigger fonts in presentation mode."""
    st.html(_BASE_CSS + (_PRESENTATION_CSS if present else ""))
