"""Every page of the app on MiniLM at 512 tokens: server-side seconds per page (AppTest).

    .venv/bin/python bench/bench_long_inputs.py [--model minilm] [--tokens 512] [--pages single heads ...]
                                                [--repeat 2] [--profile PAGE]

For each page (those that need a decoder are skipped on an encoder-only model): one AppTest session
opens the start page ("start": computes and caches the sentence's analysis the first time, reads
the cache after), then the page; "first" is the page's first run (its own computations, the
analysis already cached), "again" the median of ``--repeat`` further runs (a widget change reruns
the whole script: this is what every click costs). All include the sidebar and building and
serialising every figure, as a server run does; not the browser's drawing. Wall seconds stretch
with the machine's load; CPU seconds (this process) are what the run costs on an idle core.

``--profile PAGE ...`` prints the top functions of one rerun of each page (cProfile, cumulative).
Prints a table; asserts nothing about time (machines differ).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.runtime.scriptrunner.script_runner import ScriptRunner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from app_support import pages as page_registry  # noqa: E402
from model.store.registry import load_model  # noqa: E402
from tests.app_harness import scan_installed_components_once  # noqa: E402

scan_installed_components_once()  # the server scans once, at its start: not part of a page's seconds

APP = str(ROOT / "app.py")
PROJECT_CODE = f"{ROOT}/(?!\\.venv)"  # profile rows of the project's own code
#: Words of plain English; the text repeats them in a fixed pseudo-random order.
WORDS = ("the bank raised interest rates again while we sat on the river bank and watched "
         "boats drift slowly past old houses under a grey autumn sky").split()


def long_text(model: str, tokens: int) -> str:
    """English text of exactly ``tokens`` tokens for ``model`` ([CLS]/[SEP] included), or its
    maximum when ``tokens`` is more than it reads."""
    bundle = load_model(model)
    n = min(tokens, bundle.cfg.max_len)
    words: list[str] = []
    while not words or len(bundle.task.prepare(" ".join(words), bundle.cfg.max_len).source_ids) < n:
        words.append(WORDS[(len(words) * 7) % len(WORDS)])
    while len(bundle.task.prepare(" ".join(words), bundle.cfg.max_len).source_ids) > n:
        words.pop()
    return " ".join(words)


class Clock:
    """Wall and CPU seconds (this process, all threads: AppTest runs the script in a thread) of a block.

    On a busy machine the wall time stretches with the load; the CPU time is what the run itself
    costs (the pages run on one thread: the torch thread count is 1), i.e. its wall time on an
    idle core."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def open_page(page: page_registry.PageSpec, model: str, text: str,
              **params: str) -> tuple[AppTest, Clock, Clock]:
    """(session on the page, the start page's first run, the page's first run); ``params``: more of
    the link's parameters."""
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"model": model, "text": text, **params})
    with Clock() as start:
        at.run()
    with Clock() as first:
        if page is page_registry.START_PAGE:
            at.run()
        else:
            at.switch_page(page.file).run()
    return at, start, first


def problems(at: AppTest) -> str:
    errors = [e.message for e in at.exception] + [e.value for e in at.error]
    return ("; ".join(str(e) for e in errors))[:80]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--pages", nargs="*", help="page keys (default: every page that fits the model)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", nargs="+", help="profile one rerun of each of these pages")
    args = parser.parse_args()

    bundle = load_model(args.model)
    text = long_text(args.model, args.tokens)
    n = len(bundle.task.prepare(text, bundle.cfg.max_len).source_ids)
    print(f"model {args.model}, {n} tokens ({len(text):,} characters), "
          f"torch threads {os.environ.get('ATTENTION_LENS_TORCH_THREADS', '1')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    encoder_only = bundle.cfg.encoder_only
    chosen = [p for p in page_registry.PAGES
              if (not args.pages or p.key in args.pages) and not (encoder_only and p.needs_decoder)]
    for key in args.profile or ():
        page = page_registry.page(key)
        at, _, _ = open_page(page, args.model, text)
        profiler = cProfile.Profile()
        original = ScriptRunner._run_script

        def profiled(self, rerun_data, profiler=profiler, original=original):
            # the script runs in its own thread: profile it there
            profiler.enable()
            try:
                return original(self, rerun_data)
            finally:
                profiler.disable()

        ScriptRunner._run_script = profiled
        try:
            at.run()
        finally:
            ScriptRunner._run_script = original
        print(f"--- {key}: one rerun")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(PROJECT_CODE, 30)
    if args.profile:
        return

    print(f"{'':<12} {'wall seconds':^26}  {'CPU seconds':^26}")
    columns = " ".join(f"{c:>8}" for c in ("start", "first", "again"))
    print(f"{'page':<12} {columns}  {columns}  problems")
    worst = 0.0
    for page in chosen:
        at, start, first = open_page(page, args.model, text)
        again: list[Clock] = []
        for _ in range(args.repeat):
            with Clock() as c:
                at.run()
            again.append(c)
        wall = statistics.median(c.wall for c in again) if again else float("nan")
        cpu = statistics.median(c.cpu for c in again) if again else float("nan")
        worst = max(worst, first.cpu, cpu)
        print(f"{page.key:<12} {start.wall:>8.3f} {first.wall:>8.3f} {wall:>8.3f}  "
              f"{start.cpu:>8.3f} {first.cpu:>8.3f} {cpu:>8.3f}  {problems(at)}", flush=True)
    print(f"slowest page run (CPU): {worst:.2f} s")


if __name__ == "__main__":
    main()
