"""The page menu and the first visit's line, driven headless through the router (AppTest).

The menu is a row of one popover per section holding its pages' links, every page of the registry
listed once under its own section; the first visit's line shows on the start page until the user types,
and never when a link brings a text."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from tests.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def open_app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"model": "reverse", **params})
    return at.run()


def infos(at: AppTest) -> list[str]:
    return [str(i.value) for i in at.info]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_menu_lists_every_page_once_under_its_section(lang):
    at = open_app(lang=lang)
    assert not at.exception
    links = at.get("page_link")
    labels = [link.proto.label for link in links]
    assert labels == [tr(lang, f"page.{spec.key}.title") for section in page_registry.SECTIONS
                      for spec in page_registry.PAGES if spec.section == section]
    assert len(set(labels)) == len(page_registry.PAGES)
    popovers = at.get("popover")
    assert [p.proto.popover.label for p in popovers][:len(page_registry.SECTIONS)] == [
        tr(lang, f"section.{s}") for s in page_registry.SECTIONS]


def test_the_first_visit_says_where_to_type_until_the_user_types():
    at = open_app(lang="en")
    line = tr("en", "menu.first_visit")
    assert line in infos(at)
    at.text_input(key="text").set_value("tensor").run()
    assert line not in infos(at)
    at.text_input(key="text").set_value(at.session_state["text"]).run()  # and it does not come back
    assert line not in infos(at)


def test_a_link_with_a_text_never_shows_the_first_visit_line():
    at = open_app(lang="zh", text="attention")
    assert tr("zh", "menu.first_visit") not in infos(at)


def test_the_first_visit_line_is_for_the_start_page_only():
    at = open_app(lang="en")
    at.switch_page(page_registry.BY_KEY["heads"].file).run()
    assert tr("en", "menu.first_visit") not in infos(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_to_a_model_this_session_lacks_says_which_model_is_shown_instead(lang):
    asked = "user-0a1b2c-<script>alert(1)</script>" + "x" * 200
    at = open_app(model=asked, text="attention", lang=lang)
    assert not at.exception
    shown = at.session_state["model"]
    assert shown != asked
    # escape_md puts a backslash before markdown's characters: read the text as shown
    warned = [str(w.value).replace("\\", "") for w in at.warning
              if tr(lang, "sidebar.model_missing").split("{")[0] in str(w.value)]
    assert len(warned) == 1
    assert "user-0a1b2c-<script>alert(1)</script>" in warned[0] and shown in warned[0]
    assert "x" * 100 not in warned[0]  # a long name is cut when quoted back
    # the note goes once another model is chosen
    at.selectbox(key="model").set_value("reverse" if shown != "reverse" else "default").run()
    assert not [w for w in at.warning if tr(lang, "sidebar.model_missing").split("{")[0] in str(w.value)]


def test_a_link_to_a_listed_model_has_no_such_note():
    at = open_app(text="attention")
    assert at.session_state["model"] == "reverse"
    assert not [w for w in at.warning if tr("en", "sidebar.model_missing").split("{")[0] in str(w.value)]
