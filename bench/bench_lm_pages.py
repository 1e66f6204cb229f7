"""Every page of the app on a decoder-only language model (default SmolLM2) at two lengths, side by side:
server-side CPU seconds per page (AppTest), and the all-heads figure the app sends painted in Chromium.

    .venv/bin/python bench/bench_lm_pages.py [--model smollm2] [--tokens 32 256] [--pages single heads ...]
                                             [--repeat 2] [--no-paint]

A length is the sequence the model reads: the prompt plus the tokens it writes (the sidebar's "new
tokens": half the length, at most 32). For each page, one AppTest session opens the start page (the
analysis, computed once per length and cached), then the page: "first" is the page's first run (its
own computations), "again" the median of ``--repeat`` further runs (what every widget change costs,
the target being <= 2 s at 256 tokens). CPU seconds of this process are what a run costs on an idle
core; wall seconds stretch with the machine's load. Pages that re-run the model many times (ablation,
patching, attribution) are measured at their default settings by bench/bench_interventions_lm.py.

The paint: the all-heads page's figure, exactly as the server sent it, drawn by the plotly.js that
ships with plotly after the browser-side work Streamlit does (bench/bench_grid_paint.py's page),
median of ``--repeat`` draws. Asserts nothing about time (machines differ).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from app_support import pages as page_registry  # noqa: E402
from bench.bench_grid_paint import CHROMIUM, PAGE, PLOTLY_JS  # noqa: E402
from bench.bench_long_inputs import Clock, long_text, open_page, problems  # noqa: E402
from model.store.registry import load_model  # noqa: E402

#: Pages measured elsewhere (many model runs per click, bounded by their own settings).
INTERVENTIONS = ("ablation", "patching", "attribution")


def new_tokens(length: int) -> int:
    return min(32, length // 2)


def grid_spec(at: AppTest) -> str | None:
    """The all-heads page's grid figure, as the server serialised it (the largest chart on the page)."""
    specs = [el.proto.spec for el in at.get("plotly_chart")]
    return max(specs, key=len) if specs else None


def paint_ms(specs: list[str], repeat: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    page_file = ROOT / "test-artifacts" / "bench_lm_pages.html"
    page_file.parent.mkdir(parents=True, exist_ok=True)
    page_file.write_text(PAGE % PLOTLY_JS.read_text())
    out = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
            page = browser.new_page(viewport={"width": 1440, "height": 1100})
            page.goto(page_file.as_uri())
            for spec in specs:
                page.evaluate("(s) => window.draw(s)", spec)  # warm-up
                out.append(statistics.median(page.evaluate("(s) => window.draw(s)", spec)
                                             for _ in range(repeat)))
            browser.close()
    finally:
        page_file.unlink()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, nargs=2, default=[32, 256])
    parser.add_argument("--pages", nargs="*", help="page keys (default: every LM page)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-paint", action="store_true", help="skip the all-heads paint")
    args = parser.parse_args()

    bundle = load_model(args.model)
    texts = {n: long_text(args.model, n - new_tokens(n)) for n in args.tokens}
    for n, text in texts.items():
        prompt = len(bundle.task.prepare(text, bundle.cfg.max_len).source_ids)
        print(f"{n} tokens: a {prompt}-token prompt + {new_tokens(n)} new tokens")
    print(f"model {args.model}, torch threads {os.environ.get('ATTENTION_LENS_TORCH_THREADS', '1')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    chosen = [p for p in page_registry.PAGES if p.for_language_models and p.key not in INTERVENTIONS
              and (not args.pages or p.key in args.pages)]
    a, b = args.tokens
    print(f"{'':<13}{'CPU s, ' + str(a) + ' tokens':^27} {'CPU s, ' + str(b) + ' tokens':^27}  again")
    header = " ".join(f"{c:>8}" for c in ("start", "first", "again") * 2)
    print(f"{'page':<13}{header}    ratio  problems")
    grids: dict[int, str] = {}
    worst = 0.0
    for page in chosen:
        cells, notes = [], []
        for n in args.tokens:
            at, start, first = open_page(page, args.model, texts[n], new=str(new_tokens(n)))
            again = []
            for _ in range(args.repeat):
                with Clock() as c:
                    at.run()
                again.append(c.cpu)
            cells.append((start.cpu, first.cpu, statistics.median(again)))
            notes.append(problems(at))
            if page.key == "heads":
                grids[n] = grid_spec(at)
        worst = max(worst, cells[1][2])
        ratio = cells[1][2] / cells[0][2] if cells[0][2] else float("nan")
        row = " ".join(f"{v:>8.3f}" for cell in cells for v in cell)
        print(f"{page.key:<13}{row}  {ratio:>6.1f}x  {' | '.join(x for x in notes if x)}", flush=True)
    print(f"slowest rerun at {b} tokens (CPU): {worst:.2f} s (target <= 2 s)")
    if grids and not args.no_paint:
        lengths = [n for n in args.tokens if grids.get(n)]
        times = paint_ms([grids[n] for n in lengths], args.repeat)
        for n, ms in zip(lengths, times, strict=True):
            print(f"all-heads figure at {n} tokens: {len(grids[n]) / 1e6:.2f} MB of JSON, painted in "
                  f"{ms:.0f} ms in Chromium (targets: <= 3 MB, <= 1500 ms)")


if __name__ == "__main__":
    main()
