"""Small display helpers shared by the pages.

Rule: whatever the user typed (and every token, which is user text) reaches the page either
inside a plotly figure (viz/ HTML-escapes it) or through :func:`escape_md` / ``st.code`` /
``st.dataframe``, never as HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

from app_support.i18n import current_lang, text
from viz.theme import fit_title

#: Plotly toolbar: always shown (not only on hover), no logo, PNG export at 2x for slides. Every chart
#: also gets named "PNG ×2" / "SVG" buttons (client-side, see :data:`_CHART_TOOLS_JS`) and, when it has
#: a key, an offline-HTML download (server-side, built only when clicked).
PLOTLY_CONFIG = {
    "displaylogo": False,
    "displayModeBar": True,
    "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "attention-lens"},
}
#: Pixel ratio of the PNG buttons (2x or more: sharp on a projector and in slides).
PNG_SCALE = 2

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^@%])")


def escape_md(text: str) -> str:
    """Make any text render literally inside Streamlit markdown (st.markdown, st.warning, …).

    Every ASCII punctuation character that markdown, Streamlit directives (``:red[...]``,
    ``:material/...:``) or LaTeX (``$``) could interpret is backslash-escaped, and line breaks
    become spaces, so ``<img src=x onerror=...>`` shows as those characters.
    """
    text = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_output(output: str) -> str:
    """A model's output in bold, escaped, or "(empty output)" in italics. The spaces around it are left
    out: a bold run that starts with a space (a language model's " Paris") shows its asterisks."""
    shown = str(output).strip()
    return f"**{escape_md(shown)}**" if shown else f"*{text(current_lang(), 'io.empty_output')}*"


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


def figure_filename(key: str | None, fig: go.Figure | None = None) -> str:
    """A file name (no extension) for a chart's downloads: ``attention-lens-<key>``, else from its title."""
    base = key or ""
    if not base and fig is not None:
        title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else ""
        base = re.sub(r"<[^>]*>", " ", str(title))
    slug = re.sub(r"[^A-Za-z0-9]+", "-", base).strip("-").lower()[:60]
    return f"attention-lens-{slug}" if slug else "attention-lens"


def chart_config(key: str | None, fig: go.Figure | None = None) -> dict:
    """:data:`PLOTLY_CONFIG` with this chart's file name for the toolbar's image download."""
    return {**PLOTLY_CONFIG, "toImageButtonOptions": {"format": "png", "scale": PNG_SCALE,
                                                      "filename": figure_filename(key, fig)}}


def chart(
    fig: go.Figure,
    *,
    key: str | None = None,
    on_select: str = "ignore",
    selection_mode: str | Sequence[str] = ("points", "box", "lasso"),
    width: str | int = "content",
    html: bool = True,
):
    """``st.plotly_chart`` with the viz look kept (``theme=None``) and the app's toolbar config.

    The chart gets visible "PNG ×2" and "SVG" buttons (drawn by the browser, no server renderer) and,
    if it has a ``key`` and ``html``, an "HTML (offline)" download with plotly.js inside the file.
    In presentation mode every font is at least the projector size.
    """
    if st.session_state.get("present"):
        from viz.deck import for_projector

        fig.update_layout(font={"size": 20}, title={"font": {"size": 26}})
        for_projector(fig, 18)
    fit_title(fig)  # wrapped for the width and title font it is drawn at (the projector's is larger)
    kwargs = {}
    if on_select != "ignore":
        kwargs = {"on_select": on_select, "selection_mode": selection_mode}
    shown = st.plotly_chart(fig, theme=None, config=chart_config(key, fig), key=key, width=width, **kwargs)
    if key and html:
        html_download(fig, key)
    return shown


def html_download(fig: go.Figure, key: str, *, label: str | None = None) -> None:
    """An "HTML (offline)" download of ``fig``: the file is built only when the button is clicked."""
    from viz.export import standalone_html

    lang = current_lang()
    name = figure_filename(key, fig)
    st.download_button(label or text(lang, "export.html"), data=lambda: standalone_html(fig, lang=lang),
                       file_name=f"{name}.html", mime="text/html", key=f"{key}__html", on_click="ignore",
                       type="tertiary", icon=":material/download:", help=text(lang, "export.html_help"))


#: Browser-side export buttons: for every plotly chart on the page, a row "PNG ×2 · SVG" right under it.
#: They run plotly.js's own image export in the browser (``Plotly.downloadImage``, else the toolbar's
#: camera with the format switched), so no renderer is needed on the server. Installed once per page
#: load; a MutationObserver decorates charts as they appear.
_CHART_TOOLS_JS = """
<script>
(function () {
  window.__alExportLabels = __LABELS__;
  if (window.__alChartTools) { window.__alChartTools(); return; }
  function save(bar, format) {
    var box = bar.previousElementSibling;  // the chart the row belongs to, found at click time
    var gd = box && box.querySelector ? box.querySelector('.js-plotly-plot') : null;
    if (!gd || !gd._context) return;
    var old = gd._context.toImageButtonOptions || {};
    var opts = {};
    for (var k in old) opts[k] = old[k];
    opts.format = format;
    opts.scale = format === 'png' ? Math.max(__SCALE__, old.scale || 0) : 1;
    if (window.Plotly && window.Plotly.downloadImage) {
      opts.width = gd._fullLayout.width;
      opts.height = gd._fullLayout.height;
      window.Plotly.downloadImage(gd, opts);
      return;
    }
    gd._context.toImageButtonOptions = opts;  // else: the toolbar's own camera, with the format switched
    var buttons = gd.querySelectorAll('.modebar-btn');
    for (var i = 0; i < buttons.length; i++) {
      if ((buttons[i].getAttribute('data-title') || '').indexOf('Download') === 0) {
        buttons[i].dispatchEvent(new MouseEvent('click', {bubbles: true}));
        break;
      }
    }
    setTimeout(function () { gd._context.toImageButtonOptions = old; }, 0);
  }
  function setText(el, value) { if (el.textContent !== value) el.textContent = value; }
  function setAttr(el, name, value) { if (el.getAttribute(name) !== value) el.setAttribute(name, value); }
  function decorate() {
    var labels = window.__alExportLabels;
    var rows = document.querySelectorAll('.al-export');
    for (var r = 0; r < rows.length; r++) {  // a row whose chart is gone goes too
      var prev = rows[r].previousElementSibling;
      if (!prev || prev.getAttribute('data-testid') !== 'stPlotlyChart') rows[r].remove();
    }
    var boxes = document.querySelectorAll('[data-testid="stPlotlyChart"]');
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var bar = box.nextElementSibling;
      if (!bar || !bar.classList || !bar.classList.contains('al-export')) {
        bar = document.createElement('div');
        bar.className = 'al-export';
        bar.setAttribute('role', 'group');
        ['png', 'svg'].forEach(function (format) {
          var b = document.createElement('button');
          b.type = 'button';
          b.className = 'al-export-' + format;
          b.addEventListener('click', function (e) { save(e.currentTarget.parentNode, format); });
          bar.appendChild(b);
        });
        box.insertAdjacentElement('afterend', bar);
      }
      // only what differs is written: every write is a mutation the observer below sees
      setAttr(bar, 'aria-label', labels.group);
      var png = bar.querySelector('.al-export-png'), svg = bar.querySelector('.al-export-svg');
      setText(png, labels.png);
      setAttr(png, 'title', labels.png_help);
      setText(svg, labels.svg);
      setAttr(svg, 'title', labels.svg_help);
    }
  }
  var pending = false;
  function later() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; decorate(); });
  }
  window.__alChartTools = decorate;
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true});
  decorate();
})();
</script>
<style>
  .al-export { display: flex; gap: .4rem; justify-content: flex-end; margin: -.2rem 0 .3rem 0; }
  .al-export button { font: inherit; font-size: .85rem; padding: .1rem .55rem; border-radius: .4rem;
    border: 1px solid rgba(128, 128, 128, .45); background: transparent; color: inherit; cursor: pointer; }
  .al-export button:hover { border-color: #2171b5; color: #2171b5; }
</style>
"""


def chart_tools_html(lang: str) -> str:
    """The browser-side export buttons' script, with its labels in ``lang``."""
    labels = {k: text(lang, f"export.{k}") for k in ("png", "svg", "png_help", "svg_help", "group")}
    return (_CHART_TOOLS_JS.replace("__LABELS__", json.dumps(labels, ensure_ascii=False))
            .replace("__SCALE__", str(PNG_SCALE)))


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
  .block-container { padding-top: 3.6rem; }
  /* the page menu's row: its buttons a little tighter than Streamlit's */
  .st-key-page_menu { row-gap: 0.4rem; }
</style>
"""


def inject_css(present: bool) -> None:
    """Static CSS (no user text): spacing, and bigger fonts in presentation mode; and the script of the
    charts' PNG/SVG buttons (our own text only: the button labels of the interface language)."""
    st.html(_BASE_CSS + (_PRESENTATION_CSS if present else "") + chart_tools_html(current_lang()),
            unsafe_allow_javascript=True)
