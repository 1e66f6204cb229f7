"""Every page of the app on MiniLM at 512 tokens: server-side seconds per page (AppTest).

    .venv/bin/python bench/bench_long_inputs.py [--model minilm] [--tokens 512] [--pages single heads ...]
                                                [--repeat 2] [--profile PAGE]

For each page (those that need a decoder are skipped on an encoder-only model): one AppTest session
opens the start page (which computes and caches the sentence's analysis: "analysis s" below, the
model's hooked pass), then the page; "first s" is the page's first run (its own computations,
the analysis already cached), "again s" the median of ``--repeat`` further runs (a widget change
reruns the whole script: this is what every click costs). Both include the sidebar and building
and serialising every figure, as a server run does; not the browser's drawing.

``--profile PAGE`` prints the top functions of one rerun of that page (cProfile, cumulative).
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

from streamlit.testing.v1 import AppTest  # noqa: E402

from app_support import pages as page_registry  # noqa: E402
from model.registry import load_model  # noqa: E402

APP = str(ROOT / "app.py")
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


def open_page(page: page_registry.PageSpec, model: str, text: str) -> tuple[AppTest, float, float]:
    """(session on the page, seconds of the start page's run, seconds of the page's first run)."""
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"model": model, "text": text})
    t0 = time.perf_counter()
    at.run()
    start = time.perf_counter() - t0
    if page is page_registry.START_PAGE:
        t0 = time.perf_counter()
        at.run()
        return at, start, time.perf_counter() - t0
    t0 = time.perf_counter()
    at.switch_page(page.file).run()
    return at, start, time.perf_counter() - t0


def problems(at: AppTest) -> str:
    errors = [e.message for e in at.exception] + [e.value for e in at.error]
    return ("; ".join(str(e) for e in errors))[:80]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--pages", nargs="*", help="page keys (default: every page that fits the model)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", help="profile one rerun of this page key")
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
    if args.profile:
        page = page_registry.page(args.profile)
        at, _, _ = open_page(page, args.model, text)
        profiler = cProfile.Profile()
        profiler.enable()
        at.run()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        return

    print(f"{'page':<12} {'start s':>8} {'first s':>8} {'again s':>8}  problems")
    worst = 0.0
    for page in chosen:
        at, start, first = open_page(page, args.model, text)
        again = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            at.run()
            again.append(time.perf_counter() - t0)
        med = statistics.median(again) if again else float("nan")
        worst = max(worst, first, med)
        print(f"{page.key:<12} {start:>8.2f} {first:>8.2f} {med:>8.2f}  {problems(at)}", flush=True)
    print(f"slowest page run: {worst:.2f} s")


if __name__ == "__main__":
    main()
