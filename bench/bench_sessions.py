"""Server memory with several browser sessions at once: MiniLM, ~500-token inputs (real server, RSS).

    .venv/bin/python bench/bench_sessions.py [--sessions 4] [--rounds 10] [--tokens 500]
                                             [--model minilm] [--pages single heads stats]

Starts ``streamlit run app.py`` on a free local port and opens ``--sessions`` tabs (one browser
context each: separate Streamlit sessions) in Debian's Chromium. In every round each session, all
at the same time, opens its next page of ``--pages`` from the sidebar, then types a new sentence of
~``--tokens`` tokens (its own: different per session and per round) and waits until the server has
finished that run and the page's chart is painted. After each round the resident memory of the
server (the streamlit process and its children, psutil) is sampled; then again after every tab
has closed (+ a few seconds), and after one new session has opened a page. Prints the table and
the peak; asserts nothing (the target, 4 sessions <= 1.5 GB, is in docs/performance.md with what was
measured).
The server's log goes to test-artifacts/bench_sessions.log.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app_support.i18n import text as _text  # noqa: E402
from app_support.pages import BY_KEY, SECTIONS  # noqa: E402
from bench.bench_long_inputs import long_text  # noqa: E402
from bench.bench_memory import variant  # noqa: E402

MB = 2**20
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LOG = ROOT / "test-artifacts" / "bench_sessions.log"
PATHS = {"single": "", "heads": "heads", "stats": "stats"}  # app_support/pages.py url_path
SECTION_LABELS = {s: _text("en", f"section.{s}") for s in SECTIONS}  # the menu's buttons, in English
TIMEOUT_MS = 600_000
# A page counts as painted when the run is over (no stale element left) and its first chart is drawn
# (a heatmap's image where the page draws one).
PAINTED_JS = """(heatmap) => {
  if (document.querySelector('[data-stale="true"]')) return false;
  const plot = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg');
  if (!plot) return false;
  return !heatmap || document.querySelector('[data-testid="stPlotlyChart"] .heatmaplayer image') !== null;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(port: int) -> Iterator[subprocess.Popen]:
    """``streamlit run app.py`` on ``port`` (as tests/browser/test_browser.py starts it), healthy."""
    LOG.parent.mkdir(exist_ok=True)
    with open(LOG, "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while True:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"error: streamlit did not serve on port {port} (see {LOG})")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.3)
            yield server
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=5)


def rss_mb(server: subprocess.Popen) -> float:
    """Resident memory of the server and its children, in MB."""
    proc = psutil.Process(server.pid)
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total / MB


class PeakSampler(threading.Thread):
    """The highest RSS seen between the table's samples (every ``interval`` seconds)."""

    def __init__(self, server: subprocess.Popen, interval: float = 0.5):
        super().__init__(daemon=True)
        self.server, self.interval, self.peak = server, interval, 0.0
        self.phase, self.peak_phase = "start", "start"  # what the sessions were doing at the peak
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.interval):
            with contextlib.suppress(psutil.Error):
                now = rss_mb(self.server)
                if now > self.peak:
                    self.peak, self.peak_phase = now, self.phase


class Session:
    """One browser tab = one Streamlit session; counts the server's finished runs from its websocket."""

    def __init__(self, index: int, page, base: str):
        self.index, self.page, self.base = index, page, base
        self.finished = 0
        self.errors: list[str] = []
        page.on("websocket", self._watch)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _watch(self, ws) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        def on_frame(payload) -> None:
            if isinstance(payload, str):
                return
            with contextlib.suppress(Exception):
                msg = ForwardMsg.FromString(payload)
                if (msg.WhichOneof("type") == "script_finished"
                        and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY):
                    self.finished += 1
        ws.on("framereceived", on_frame)

    async def settle(self, runs_before: int, heatmap: bool) -> None:
        """Wait for a run that started after ``runs_before`` to finish and its chart to be painted."""
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while self.finished <= runs_before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"session {self.index}: no run finished")
            await asyncio.sleep(0.1)
        await self.page.wait_for_function(PAINTED_JS, arg=heatmap, timeout=TIMEOUT_MS, polling=250)

    async def open(self, model: str, text: str, page_key: str) -> None:
        before = self.finished
        await self.page.goto(f"{self.base}/{PATHS[page_key]}?model={model}&kind=encoder&text={quote(text)}",
                             wait_until="domcontentloaded")
        await self.settle(before, page_key != "stats")

    async def visit(self, page_key: str, text: str) -> None:
        """Open ``page_key`` from the page menu (its section's popover), then type ``text`` into the box."""
        before = self.finished
        href = f'{self.base}/{PATHS[page_key]}'
        section = SECTION_LABELS[BY_KEY[page_key].section]
        await self.page.locator(".st-key-page_menu button", has_text=section).first.click()
        await self.page.locator(f'[data-testid="stPopoverBody"] a[href="{href}"]').click()
        await self.settle(before, page_key != "stats")
        box = self.page.get_by_role("textbox", name="Input sentence", exact=True)
        before = self.finished
        await box.fill(text)
        await box.press("Enter")
        await self.settle(before, page_key != "stats")
        if await self.page.locator('[data-testid="stException"]').count():
            self.errors.append(f"exception on /{PATHS[page_key]}")


async def run(args, base_text: str, port: int, server: subprocess.Popen,
              sampler: PeakSampler) -> list[tuple[str, float, float]]:
    from playwright.async_api import async_playwright

    base = f"http://127.0.0.1:{port}"
    rows: list[tuple[str, float, float]] = []

    def sample(label: str, seconds: float) -> None:
        rows.append((label, rss_mb(server), seconds))
        sampler.phase = f"after {label}"
        print(f"{label:<28} {rows[-1][1]:>8.0f} {seconds:>7.1f}   load {os.getloadavg()[0]:.1f}", flush=True)

    def text_of(session: int, round_: int) -> str:
        return variant(base_text, 1000 * (session + 1) + round_)

    print(f"{'after':<28} {'RSS MB':>8} {'wall s':>7}")
    sample("server started", 0.0)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        contexts = [await browser.new_context(viewport={"width": 1440, "height": 1000})
                    for _ in range(args.sessions)]
        sessions = [Session(i, await c.new_page(), base) for i, c in enumerate(contexts)]
        t0 = time.perf_counter()
        await asyncio.gather(*(s.open(args.model, text_of(s.index, 0), args.pages[s.index % len(args.pages)])
                               for s in sessions))
        sample(f"{args.sessions} sessions opened", time.perf_counter() - t0)
        for r in range(1, args.rounds + 1):
            sampler.phase = f"round {r}"
            t0 = time.perf_counter()
            await asyncio.gather(*(s.visit(args.pages[(s.index + r) % len(args.pages)], text_of(s.index, r))
                                   for s in sessions))
            sample(f"round {r}", time.perf_counter() - t0)
        problems = [e for s in sessions for e in s.errors]
        for c in contexts:
            await c.close()
        await asyncio.sleep(args.settle)
        sample(f"all tabs closed (+{args.settle:.0f} s)", args.settle)
        context = await browser.new_context(viewport={"width": 1440, "height": 1000})
        fresh = Session(args.sessions, await context.new_page(), base)
        t0 = time.perf_counter()
        await fresh.open(args.model, text_of(args.sessions, 0), args.pages[0])
        sample("one new session, one page", time.perf_counter() - t0)
        await context.close()
        await browser.close()
    if problems:
        print(f"problems in the pages: {'; '.join(problems)[:300]}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=500)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--pages", nargs="+", default=list(PATHS), choices=list(PATHS))
    parser.add_argument("--settle", type=float, default=10.0, help="seconds to wait after the tabs close")
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"error: {CHROMIUM} is missing (apt-get install -y chromium)")

    base_text = long_text(args.model, args.tokens)
    print(f"model {args.model}, {args.sessions} sessions x {args.rounds} rounds, "
          f"~{args.tokens}-token inputs, "
          f"pages {' '.join(args.pages)}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    port = free_port()
    with running_app(port) as server:
        sampler = PeakSampler(server)
        sampler.start()
        rows = asyncio.run(run(args, base_text, port, server, sampler))
        sampler.stop.set()
    peak = max(rows, key=lambda row: row[1])
    print(f"peak of the samples: {peak[1]:.0f} MB ({peak[0]}); highest RSS seen (every 0.5 s): "
          f"{max(sampler.peak, peak[1]):.0f} MB ({sampler.peak_phase}); last round {rows[-3][1]:.0f} MB; "
          f"after the tabs closed {rows[-2][1]:.0f} MB")


if __name__ == "__main__":
    main()
