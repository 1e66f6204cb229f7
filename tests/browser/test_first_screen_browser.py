"""Where do I type? In Chromium at a laptop's 1366 x 768 and a projector's 1024 x 768, without scrolling:
the model picker, the sidebar's text box and the page's own first control are on the first screen of
every page (the deck: its own controls; presentation mode: the folded controls' header), and a
section's menu opens whole within the screen.

One server, one browser: every page at 1366 x 768 in English, six pages at 1024 x 768 in both
languages. Screenshots of the start page and of an open menu go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import pytest

from app_support import pages as page_registry
from app_support.i18n import text as tr
from tests.browser.test_browser import SCREENSHOTS, app_in_chromium, save_small_png

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP = {"width": 1366, "height": 768}
PROJECTOR = {"width": 1024, "height": 768}
#: Pages checked at the projector's size in both languages: the start page, a grid, a decoder page, a
#: page with its own text boxes, a lab page and the page with the most controls of its own.
PROJECTOR_PAGES = ("single", "heads", "decoding", "compare", "positional", "pitfalls")
#: Widgets a page's "own first control" may be (Streamlit's test ids).
CONTROLS = ("stSelectbox", "stTextInput", "stTextArea", "stSlider", "stRadio", "stCheckbox", "stNumberInput",
            "stMultiSelect", "stButton", "stSegmentedControl", "stButtonGroup", "stFileUploader",
            "stSelectSlider", "stToggle")

#: The page has finished its run and drawn the sidebar's box.
SETTLED_JS = """() => document.querySelector('[data-test-script-state="notRunning"]') !== null
  && !document.querySelector('[data-testid="stSkeleton"]')
  && document.querySelector('[data-testid="stMain"] h1') !== null
  && document.querySelector('[data-testid="stSidebar"] [data-testid="stTextInput"]') !== null"""

#: Bottom edges (px, in the viewport) of the sidebar's model picker and text box, and of the page's own
#: first control after the menu (null where the page has none). A page that draws a figure before any
#: control of its own (all heads: the grid, then its options) shows that figure first: then the
#: figure's top (and its title, 40 px) must be on the first screen instead.
BOXES_JS = """(controls) => {
  const bottom = (el) => el ? Math.round(el.getBoundingClientRect().bottom) : null;
  const side = document.querySelector('[data-testid="stSidebar"]');
  const main = document.querySelector('[data-testid="stMain"]');
  const chart = '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], [data-testid="stDataFrame"]';
  const wanted = controls.map(c => `[data-testid="${c}"]`).concat([chart]).join(',');
  const own = Array.from(main.querySelectorAll(wanted))
    .filter(el => !el.closest('.st-key-page_menu') && el.getBoundingClientRect().height > 0)
    .map(el => el.matches(chart) ? {top: el.getBoundingClientRect().top + 40} : el.getBoundingClientRect());
  return {picker: bottom(side.querySelector('[data-testid="stSelectbox"]')),
          box: bottom(side.querySelector('[data-testid="stTextInput"]')),
          own: own.length ? Math.round(own[0].bottom || own[0].top) : null,
          sidebarOpen: side.getBoundingClientRect().width > 50};
}"""


def _open(page, base: str, spec, lang: str) -> dict:
    page.goto(f"{base}/{spec.url_path}?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_function(SETTLED_JS, timeout=300_000, polling=200)
    page.wait_for_timeout(600)  # the last layout pass after the run
    return page.evaluate(BOXES_JS, list(CONTROLS))


def _first_screen_problems(found: dict, spec, size: dict, lang: str) -> list[str]:
    """What is not on the first screen of ``spec`` at ``size`` (empty: all is)."""
    where = f"{spec.key} at {size['width']}x{size['height']} ({lang}): {found}"
    height = size["height"]
    if spec.key == "deck":  # the deck folds the sidebar on purpose: its own controls count
        return [] if found["own"] is not None and found["own"] <= height else [where]
    ok = (found["sidebarOpen"] and found["picker"] is not None and found["picker"] <= height
          and found["box"] is not None and found["box"] <= height
          and (found["own"] is None or found["own"] <= height))
    return [] if ok else [where]


def _menu_opens_within_the_screen(page, size: dict, lang: str) -> None:
    """Every section's popover opens with all its pages' links inside the viewport."""
    for section in page_registry.SECTIONS:
        members = [p for p in page_registry.PAGES if p.section == section]
        page.locator(".st-key-page_menu button", has_text=tr(lang, f"section.{section}")).first.click()
        popover = page.locator('[data-testid="stPopoverBody"]')
        popover.wait_for(state="visible", timeout=20_000)
        links = popover.locator('[data-testid="stPageLink-NavLink"]')
        # The popover's body shows before its links are drawn: wait for them, then count.
        links.nth(len(members) - 1).wait_for(state="visible", timeout=20_000)
        assert links.count() == len(members), (section, links.count())
        for i in range(links.count()):
            box = links.nth(i).bounding_box()
            assert box is not None and box["y"] + box["height"] <= size["height"], (section, i, box)
            assert box["x"] + box["width"] <= size["width"], (section, i, box)
        if section == "how":
            save_small_png(page, SCREENSHOTS / f"first_screen_menu_{size['width']}_{lang}.png")
        page.keyboard.press("Escape")
        popover.wait_for(state="hidden", timeout=20_000)


def test_the_picker_and_the_text_box_are_on_the_first_screen_of_every_page():
    with app_in_chromium("streamlit_first_screen.log") as (page, base, errors):
        page.set_viewport_size(LAPTOP)
        problems = []
        for spec in page_registry.PAGES:
            if spec.key != "deck":  # the deck folds the sidebar for the rest of the visit: own visit below
                problems += _first_screen_problems(_open(page, base, spec, "en"), spec, LAPTOP, "en")
        for lang in ("en", "zh"):
            for size in (LAPTOP, PROJECTOR):
                page.set_viewport_size(size)
                for key in PROJECTOR_PAGES:
                    spec = page_registry.BY_KEY[key]
                    problems += _first_screen_problems(_open(page, base, spec, lang), spec, size, lang)
                    if key == "single":
                        save_small_png(page, SCREENSHOTS / f"first_screen_{size['width']}_{lang}.png")
                        _menu_opens_within_the_screen(page, size, lang)
        deck = page.context.browser.new_page(viewport=LAPTOP)
        problems += _first_screen_problems(_open(deck, base, page_registry.BY_KEY["deck"], "en"),
                                           page_registry.BY_KEY["deck"], LAPTOP, "en")
        deck.close()
        assert not problems, "\n".join(problems)
        # presentation mode folds the controls: the fold's header is on the first screen
        page.set_viewport_size(PROJECTOR)
        page.goto(f"{base}/?lang=en&present=1", wait_until="domcontentloaded")
        page.wait_for_function("""() => !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
          && document.querySelector('[data-testid="stSidebar"] [data-testid="stExpander"]') !== null""",
                               timeout=300_000)
        header = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first
        box = header.bounding_box()
        assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"], box
        assert not errors, errors


def test_a_page_chosen_in_the_menu_opens_with_the_menu_closed():
    """Two pages of one section, then one of another, chosen from the menu: each opens with no popover
    over its title (a popover kept from the last page stayed open after its link was clicked)."""
    from tests.browser.test_browser import menu_link

    with app_in_chromium("streamlit_menu_closes.log") as (page, base, errors):
        page.set_viewport_size(LAPTOP)
        page.goto(f"{base}/?lang=en&model=reverse&text=attention", wait_until="domcontentloaded")
        page.wait_for_function(SETTLED_JS, timeout=300_000)
        for key in ("masks", "worked", "single"):
            spec = page_registry.BY_KEY[key]
            menu_link(page, tr("en", f"section.{spec.section}"), tr("en", f"page.{key}.title")).click()
            path = f"/{spec.url_path}"
            page.wait_for_function(f"() => location.pathname === {path!r}", timeout=60_000)
            page.wait_for_timeout(500)  # the new page's run has started
            page.wait_for_function(SETTLED_JS, timeout=300_000)
            popovers = page.locator('[data-testid="stPopoverBody"]')
            assert not any(popovers.nth(i).is_visible() for i in range(popovers.count())), key
        assert not errors, errors
