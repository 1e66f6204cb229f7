"""The talk deck and the exports in a real browser (Debian's Chromium via Playwright, against
``streamlit run app.py``): stepping through the slides with the keyboard, a shared slide link opened in a
fresh browser, font sizes on a 1024x768 projector, the sidebar folded, the way to the explorer and back,
the charts' PNG/SVG buttons, the dark theme, and the deck's HTML file opened with the network blocked.

Run with ``pytest -m browser tests/browser/test_deck_browser.py``.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.browser.test_browser import ARTIFACTS, CHROMIUM_ARGS, ensure_chromium, running_app
from tests.paths import REPO_ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = REPO_ROOT
SENTENCE = "我吃了一个苹果"
N_SLIDES = 7

# JavaScript: the slide's title, its text sizes, and the smallest font of the figures' texts.
SLIDE_JS = """() => {
  const h1 = document.querySelector('.st-key-deck_body h1');
  const body = document.querySelector('.st-key-deck_body');
  const ps = body ? Array.from(body.querySelectorAll('[data-testid="stMarkdownContainer"] p')) : [];
  const texts = (body ? Array.from(body.querySelectorAll('[data-testid="stPlotlyChart"] svg text')) : [])
    .filter(t => t.textContent.trim() && t.getBBox().width > 0);
  return {
    title: h1 ? h1.textContent : null,
    textPx: ps.filter(p => p.textContent.trim()).map(p => parseFloat(getComputedStyle(p).fontSize)),
    figurePx: texts.map(t => parseFloat(getComputedStyle(t).fontSize)),
    smallest: texts.map(t => [parseFloat(getComputedStyle(t).fontSize), t.textContent])
      .sort((a, b) => a[0] - b[0]).slice(0, 3),
    charts: document.querySelectorAll('.st-key-deck_body [data-testid="stPlotlyChart"] .main-svg').length,
    search: location.search,
  };
}"""
TITLE_IS_JS = """(prefix) => {
  const h1 = document.querySelector('.st-key-deck_body h1');
  const running = document.querySelector('[data-testid="stStatusWidget"] '
    + '[data-testid="stStatusWidgetRunningIcon"]');
  const chart = document.querySelector('.st-key-deck_body [data-testid="stPlotlyChart"] .main-svg');
  return h1 && h1.textContent.startsWith(prefix) && chart !== null && !running;
}"""

SIDEBAR_FOLDED_JS = ("() => document.querySelector('[data-testid=\"stSidebar\"]')"
                     ".getAttribute('data-collapsed') === 'true'")
SLIDE_IN_LINK_JS = "(n) => new URLSearchParams(location.search).get('slide') === String(n)"


def slide_prefix(n: int) -> str:
    from app_support.i18n import text

    return f"{n} · " if n < N_SLIDES else text("en", "deck.7.title")


def start_server(*extra: str):
    """``streamlit run app.py`` on a free port (with ``extra`` options); yields (chromium, base URL)."""
    chromium = ensure_chromium()
    log_name = f"streamlit_deck_server{'_' if extra else ''}{'_'.join(extra)[-20:]}.log"
    with running_app(log_name, *extra) as port:
        yield chromium, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def server():
    yield from start_server()


@pytest.fixture(scope="module")
def dark_server():
    yield from start_server("--theme.base", "dark")


def test_deck_in_chromium(server, tmp_path):
    from playwright.sync_api import sync_playwright

    chromium, base = server
    link = f"{base}/deck?" + urllib.parse.urlencode({"model": "default", "text": SENTENCE, "kind": "encoder",
                                                     "layer": "1", "head": "2", "slide": "1"})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1024, "height": 768}, accept_downloads=True)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(link, wait_until="domcontentloaded")
            page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(1), timeout=180_000)
            # the sidebar starts folded
            page.wait_for_function(SIDEBAR_FOLDED_JS, timeout=30_000)

            # 1) step through every slide with the keys a clicker sends; fonts for a 1024x768 projector
            seen = {}
            for n in range(1, N_SLIDES + 1):
                if n > 1:
                    page.keyboard.press("ArrowRight" if n % 2 else "PageDown")
                    page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(n), timeout=120_000)
                # the link follows (the address is written at the end of the run)
                page.wait_for_function(SLIDE_IN_LINK_JS, arg=n, timeout=30_000)
                page.wait_for_timeout(400)
                assert page.evaluate(SIDEBAR_FOLDED_JS), f"the sidebar opened on slide {n}"
                state = page.evaluate(SLIDE_JS)
                assert state["charts"] >= 1, state
                assert state["textPx"] and min(state["textPx"]) >= 24, (n, state["textPx"])
                assert state["figurePx"] and min(state["figurePx"]) >= 16, (n, state["smallest"])
                seen[n] = state["title"]
                page.screenshot(path=str(ARTIFACTS / "screenshots" / f"deck_slide_{n}.png"))
            assert len(set(seen.values())) == N_SLIDES
            for key, n in (("ArrowLeft", N_SLIDES - 1), ("PageUp", N_SLIDES - 2)):
                page.keyboard.press(key)
                page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(n), timeout=120_000)
            # typing in the sentence box does not turn the slides
            box = page.locator('.st-key-deck_text input')
            box.click()
            box.press("ArrowLeft")
            page.wait_for_timeout(500)
            assert page.evaluate(SLIDE_JS)["title"].startswith(slide_prefix(N_SLIDES - 2))
            page.locator("h1").first.click()

            # 2) a shared link of slide 4 opens slide 4 in a fresh browser
            page.keyboard.press("PageUp")
            page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(4), timeout=120_000)
            page.wait_for_function("() => location.search.includes('slide=4')", timeout=30_000)
            shared = page.url
            fresh = browser.new_context(viewport={"width": 1920, "height": 1080})
            try:
                other = fresh.new_page()
                other.goto(shared, wait_until="domcontentloaded")
                other.wait_for_function(TITLE_IS_JS, arg=slide_prefix(4), timeout=180_000)
                there = other.evaluate(SLIDE_JS)
                assert there["title"] == seen[4]
                assert "slide=4" in there["search"] and urllib.parse.quote(SENTENCE) in there["search"]
            finally:
                fresh.close()

            # 3) the charts' PNG and SVG buttons download in the browser (no server renderer)
            with page.expect_download(timeout=60_000) as svg_download:
                page.locator(".al-export-svg").first.click()
            svg_path = tmp_path / "figure.svg"
            svg_download.value.save_as(svg_path)
            assert svg_path.read_text(encoding="utf-8").lstrip().startswith("<svg")
            assert svg_download.value.suggested_filename == "attention-lens-deck-figure-residual.svg"
            with page.expect_download(timeout=60_000) as png_download:
                page.locator(".al-export-png").first.click()
            png_path = tmp_path / "figure.png"
            png_download.value.save_as(png_path)
            data = png_path.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            chart_width = page.evaluate("() => document.querySelector('.st-key-deck_body .main-svg')"
                                        ".getBoundingClientRect().width")
            assert int.from_bytes(data[16:20], "big") >= 2 * int(chart_width) - 2  # 2x pixel ratio

            # 4) the whole deck as one HTML file, then opened with every network request refused
            with page.expect_download(timeout=120_000) as deck_download:
                page.locator(".st-key-deck_html button").first.click()
            deck_path = tmp_path / "deck.html"
            deck_download.value.save_as(deck_path)

            # 5) from a slide to the explorer page behind it, and back
            page.keyboard.press("ArrowRight")  # two presses in a row, as a hurried presenter does:
            page.keyboard.press("PageDown")  # the second waits for the first slide, none is lost
            page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(6), timeout=120_000)
            page.wait_for_function(SLIDE_IN_LINK_JS, arg=6, timeout=30_000)
            page.locator('[data-testid="stMainBlockContainer"] [data-testid="stPageLink-NavLink"]',
                         has_text="Single head").first.click()
            page.wait_for_function("() => location.pathname === '/' && document.querySelector('h1')"
                                   " && document.querySelector('[data-testid=\"stPlotlyChart\"]')",
                                   timeout=120_000)
            back = page.locator('[data-testid="stPageLink-NavLink"]', has_text="Back to the talk: slide 6")
            back.wait_for(timeout=60_000)
            back.click()
            page.wait_for_function(TITLE_IS_JS, arg=slide_prefix(6), timeout=120_000)
            assert not errors, errors

            # 6) the deck file works offline: every chart draws, no request leaves the file
            offline = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
            try:
                requests: list[str] = []
                def only_the_file(route):
                    requests.append(route.request.url)
                    if route.request.url.startswith("file:"):
                        route.continue_()
                    else:
                        route.abort()

                offline.route("**/*", only_the_file)
                opage = offline.new_page()
                offline_errors: list[str] = []
                opage.on("pageerror", lambda e: offline_errors.append(str(e)))
                opage.goto(deck_path.as_uri(), wait_until="load")
                opage.wait_for_function(
                    "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 6",
                    timeout=60_000)
                assert opage.locator("section").count() == 7
                assert not offline_errors, offline_errors
                assert [u for u in requests if not u.startswith("file:")] == [], requests
                opage.keyboard.press("ArrowRight")
            finally:
                offline.close()
        finally:
            browser.close()


def test_deck_in_the_dark_theme(dark_server):
    """The app in its dark theme: the slide text is light on a dark page, and nothing breaks."""
    from playwright.sync_api import sync_playwright

    chromium, base = dark_server
    link = f"{base}/deck?" + urllib.parse.urlencode({"model": "default", "text": SENTENCE, "slide": "6"})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            dpage = browser.new_page(viewport={"width": 1024, "height": 768})
            errors: list[str] = []
            dpage.on("pageerror", lambda e: errors.append(str(e)))
            dpage.goto(link, wait_until="domcontentloaded")
            dpage.wait_for_function(TITLE_IS_JS, arg=slide_prefix(6), timeout=180_000)
            dpage.wait_for_timeout(500)
            colours = dpage.evaluate("""() => {
              const lum = c => { const m = c.match(/[0-9.]+/g).map(Number);
                return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]; };
              const app = document.querySelector('[data-testid="stApp"]');
              const p = document.querySelector('.st-key-deck_body [data-testid="stMarkdownContainer"] p');
              const b = document.querySelector('.al-export button');
              return [lum(getComputedStyle(app).backgroundColor), lum(getComputedStyle(p).color),
                      lum(getComputedStyle(b).color)];
            }""")
            assert colours[0] < 80 and colours[1] > 170 and colours[2] > 170, colours  # light on dark
            state = dpage.evaluate(SLIDE_JS)
            assert min(state["textPx"]) >= 24 and min(state["figurePx"]) >= 16
            dpage.screenshot(path=str(ARTIFACTS / "screenshots" / "deck_dark.png"))
            assert not errors, errors
        finally:
            browser.close()
