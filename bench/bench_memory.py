"""Server memory over a long session: MiniLM at 512 tokens, 50 different inputs (AppTest, RSS).

    .venv/bin/python bench/bench_memory.py [--model minilm] [--inputs 50] [--tokens 512]
                                           [--pages single heads focus aggregates stats]

The app runs in this process (Streamlit's AppTest drives the same scripts a server runs, with
the same process-wide caches), so this process's resident memory is the server's. One session
types ``--inputs`` different sentences of ``--tokens`` tokens into the sidebar, one after the
other, each on the next page of ``--pages`` in turn; after each, the resident set size (VmRSS),
the analysis cache's size (bytes it counts, entries) and the seconds of that run are recorded.
Prints every 5th input, then the peak and the last RSS. Asserts nothing (the target,
<= 1.5 GB, is in docs/performance.md with what was measured).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from app_support import gateway as G  # noqa: E402
from app_support import pages as page_registry  # noqa: E402
from bench.bench_long_inputs import WORDS, long_text  # noqa: E402

APP = str(ROOT / "app.py")
MB = 2**20


def rss_bytes(field: str = "VmRSS") -> int:
    """Resident set size of this process (Linux /proc; "VmHWM" = its peak so far)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def variant(text: str, i: int) -> str:
    """``text`` with its first word replaced: a different input of (nearly) the same length."""
    _, _, rest = text.partition(" ")
    return f"{WORDS[i % len(WORDS)]}{i} {rest}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--inputs", type=int, default=50)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--pages", nargs="+", default=["single", "heads", "focus", "aggregates", "stats"])
    args = parser.parse_args()

    base = long_text(args.model, args.tokens)
    print(f"model {args.model}, {args.inputs} inputs of ~{args.tokens} tokens, pages {' '.join(args.pages)}; "
          f"analysis cache bound {G.RESULTS.max_bytes / MB:.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"RSS before the app: {rss_bytes() / MB:.0f} MB")
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"model": args.model, "text": variant(base, 0)})
    at.run()
    print(f"RSS with the model loaded and one analysis: {rss_bytes() / MB:.0f} MB")
    print(f"{'input':>5} {'page':<11} {'run s':>6} {'RSS MB':>7} {'cache MB':>9} {'entries':>7}  problems")
    rss = []
    for i in range(1, args.inputs + 1):
        page = page_registry.page(args.pages[i % len(args.pages)])
        t0 = time.perf_counter()
        at.switch_page(page.file)
        at.session_state["text"] = variant(base, i)
        at.run()
        seconds = time.perf_counter() - t0
        rss.append(rss_bytes())
        problems = "; ".join([str(e.message) for e in at.exception] + [str(e.value) for e in at.error])[:60]
        if i % 5 == 0 or i <= len(args.pages) or problems:
            cache = G.RESULTS.nbytes / MB
            print(f"{i:>5} {page.key:<11} {seconds:>6.1f} {rss[-1] / MB:>7.0f} {cache:>9.0f} "
                  f"{len(G.RESULTS):>7}  {problems}", flush=True)
    print(f"RSS after each input: max {max(rss) / MB:.0f} MB, last {rss[-1] / MB:.0f} MB, "
          f"at input 10 {rss[min(9, len(rss) - 1)] / MB:.0f} MB; "
          f"peak within any run (VmHWM): {rss_bytes('VmHWM') / MB:.0f} MB")


if __name__ == "__main__":
    main()
