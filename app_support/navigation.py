"""The page menu: one button per section along the top of the page, each opening its section's pages.

Streamlit's own menu sits at the top of the sidebar: with 27 pages it pushed the model picker and the
text box 1,382 px down, two screens below a laptop's first one; its top-bar form shows 4 sections and
"7 more" at 1,024 px even with one-word section names. So the app hides Streamlit's menu
(``st.navigation(position="hidden")``) and draws this one: every page is two clicks away (its section,
then the page), a section's list is at most ten links (it fits on a 768 px screen), and the sidebar
starts with the language, the model and the text.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from app_support import pages
from app_support.i18n import t

#: Each section's icon on its menu button.
SECTION_ICONS: Mapping[str, str] = {
    "attention": ":material/grid_on:",
    "decoding": ":material/play_circle:",
    "probe": ":material/search_insights:",
    "how": ":material/school:",
    "intervene": ":material/content_cut:",
    "hood": ":material/memory:",
}


def page_menu(st_pages: Mapping[str, st.Page], current_key: str | None) -> None:
    """The menu row: a popover per section (the open page's section highlighted) with its pages' links.

    Each popover's key names the open page: a popover kept from the last page would stay open over the
    new page's title after its link was clicked; a new one starts closed."""
    with st.container(horizontal=True, gap="small", key="page_menu"):
        for section in pages.SECTIONS:
            members = [p for p in pages.PAGES if p.section == section]
            here = any(p.key == current_key for p in members)
            with st.popover(t(f"section.{section}"), icon=SECTION_ICONS[section],
                            type="primary" if here else "tertiary", key=f"page_menu_{section}_{current_key}"):
                for spec in members:
                    st.page_link(st_pages[spec.key], label=t(f"page.{spec.key}.title"), icon=spec.icon)


#: Session key: the first-visit line is done with (the user typed, or came by a link with a text).
HINT_DONE = "_first_visit_done"


def first_visit_hint(model_example: str) -> None:
    """One line on the start page of a first visit: where to type, and how the menu is grouped. It does
    not come back once the sidebar's text differs from the model's example, and a link that brings a
    text never shows it."""
    state = st.session_state
    if HINT_DONE not in state:  # the session's first run: the address is still the link that opened it
        state[HINT_DONE] = "text" in st.query_params
    if not state[HINT_DONE] and state.get("text") not in (None, model_example):
        state[HINT_DONE] = True
    if not state[HINT_DONE]:
        st.info(t("menu.first_visit"), icon=":material/waving_hand:")
