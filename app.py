"""Attention Lens — explore the attention of small encoder-decoder Transformers.

Run with ``streamlit run app.py`` (or ``python3 run.py app``). This file only routes: it sets up
the page, builds the navigation from the page registry (:mod:`app_support.pages`), follows
redirects of old links, draws the shared sidebar (so its choices survive page changes) and runs
the page.
"""

from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import RerunException

from app_support import pages, session_memory
from app_support.gateway import freeze_long_lived, trim_heap
from app_support.i18n import current_lang, t
from app_support.models import model_example, model_label
from app_support.navigation import first_visit_hint, page_menu
from app_support.ui import escape_md
from app_support.url_state import stop_page, sync_url
from app_support.view import init_language, keep_view_across_switch, select_view

freeze_long_lived()  # once per process: later garbage collections skip the imported modules

st.set_page_config(
    page_title="Attention Lens",
    page_icon=str(Path(__file__).parent / "app_support" / "favicon.png"),
    layout="wide",
    initial_sidebar_state="expanded",
    menu_items={"About": "Attention Lens: every head, every tensor shape, in the browser. · "
                "Attention Lens：每一个注意力头、每一个张量形状，都在浏览器里。"},
)
init_language()  # before the navigation: page titles are in the interface language


def _st_page(spec: pages.PageSpec) -> st.Page:
    title = t(f"page.{spec.key}.title")
    if spec is pages.START_PAGE:
        return st.Page(spec.file, title=title, icon=spec.icon, default=True)
    return st.Page(spec.file, title=title, icon=spec.icon, url_path=spec.url_path)


st_pages = {spec.key: _st_page(spec) for spec in pages.PAGES}
menu = {t(f"section.{section}"): [st_pages[p.key] for p in pages.PAGES if p.section == section]
        for section in pages.SECTIONS}
page = st.navigation(menu, position="hidden")  # our own menu (app_support.navigation) keeps the sidebar short

moved = pages.redirect_for(page.url_path, st.query_params.to_dict())
if moved is not None:
    target, params = moved
    keep_view_across_switch()
    st.switch_page(st_pages[target.key], query_params=params)

session_memory.watch_session()  # when the session ends, what it holds goes (session_memory)
complete = True
try:
    spec = pages.BY_PATH.get(page.url_path)
    page_menu(st_pages, spec.key if spec is not None else None)
    view = select_view(page.url_path)  # draws the shared sidebar
    if spec is pages.START_PAGE:
        first_visit_hint(model_example(view.model) or "")
    # stop_page, not st.stop: the URL must lose the previous page's parameters before the run stops
    if spec is not None and view.is_language_model and not spec.for_language_models:
        st.info(t("page.not_for_language_models", model=escape_md(model_label(view.model, current_lang()))),
                icon=":material/info:")
        stop_page()
    if spec is not None and spec.needs_decoder and not view.n_layers.get("decoder"):
        st.info(t("page.needs_decoder", model=escape_md(model_label(view.model, current_lang()))),
                icon=":material/info:")
        stop_page()
    page.run()
except RerunException:
    complete = False  # stopped before its later widgets were drawn: they are not stale
    raise
finally:
    # Also after st.stop() (e.g. empty input): the URL must still hold the view.
    sync_url()
    if complete:
        session_memory.after_run()  # the pages not shown keep no analysis alive
    trim_heap()  # what the run freed goes back to the system (model/run/runtime.py)
