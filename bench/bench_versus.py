"""Model vs model: the page's first visit, and the comparison itself, one torch thread.

    .venv/bin/python bench/bench_versus.py [--text attention]

"page": a fresh process opens the page by link (the page script with its sidebar, as the page tests run
it: AppTest.from_file) and times its first run, model loading, both analyses and every head pair
included; "again" is a rerun of the same session (everything cached). Model A is the sidebar's, and the
sidebar lists the shipped models only, so the page is measured with A = reverse (the shipped
letter-reversal model) against a pitfall and a variant. "lab" times the comparison alone
(``model.lab.versus.compare``, models already loaded, nothing cached) for the pairs themselves:
pitfall-correct vs pitfall-no-scaling and variant-base vs variant-rope, on every attention kind, and
prints which heads moved most. Asserts nothing about time (machines differ).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE_CASES = (("reverse", "pitfall-no-scaling", "cross"), ("reverse", "variant-rope", "cross"))
LAB_PAIRS = (("pitfall-correct", "pitfall-no-scaling"), ("variant-base", "variant-rope"))


def _page_visit(model: str, other: str, kind: str, text: str) -> dict:
    import torch
    torch.set_num_threads(1)
    from streamlit.testing.v1 import AppTest

    from tests.app_harness import scan_installed_components_once

    scan_installed_components_once()  # the server scans once, at its start: not part of a page view
    at = AppTest.from_file(str(ROOT / "app_pages" / "versus.py"), default_timeout=600)
    at.query_params.update({"model": model, "text": text, "kind": kind, "lang": "en", "other": other})
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    start = time.perf_counter()
    at.run()
    again = time.perf_counter() - start
    errors = [e.message for e in at.exception]
    return {"first_s": round(first, 2), "again_s": round(again, 2), "errors": errors,
            "charts": len(at.get("plotly_chart"))}


def _lab(a_name: str, b_name: str, text: str) -> list[str]:
    import numpy as np
    import torch
    torch.set_num_threads(1)
    from model.lab.versus import compare
    from model.store.registry import load_model

    a, b = load_model(a_name), load_model(b_name)
    compare(a, b, text, None, "encoder")  # warm the code paths once
    lines = []
    for kind in ("encoder", "decoder", "cross"):
        start = time.perf_counter()
        r = compare(a, b, text, None, kind)
        seconds = time.perf_counter() - start
        m = r.match
        same = m.same_position
        order = np.argsort(-same, axis=None)[:3]
        top = ", ".join(f"L{i}H{h} {same[i, h]:.3f}" for i, h in zip(*np.unravel_index(order, same.shape),
                                                                         strict=True))
        moved = [f"L{i}H{h}->L{m.nearest[i, h, 0]}H{m.nearest[i, h, 1]}" for i in range(same.shape[0])
                 for h in range(same.shape[1]) if tuple(m.nearest[i, h]) != (i, h)]
        lines.append(f"  {kind:8s} {seconds * 1000:6.1f} ms  same-place distance mean {same.mean():.3f} "
                     f"(min {same.min():.3f}, max {same.max():.3f}); moved most: {top}; nearest elsewhere: "
                     f"{len(moved)}/{same.size} {' '.join(moved)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default="attention")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one page visit, in a fresh process
    args = parser.parse_args()
    if args.case:
        model, other, kind = args.case.split(",")
        print(json.dumps(_page_visit(model, other, kind, args.text)))
        return
    print(f"page, first visit in a fresh process (text {args.text!r}):")
    for model, other, kind in PAGE_CASES:
        command = [sys.executable, __file__, "--case", f"{model},{other},{kind}", "--text", args.text]
        out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=900)
        ok = out.returncode == 0
        result = json.loads(out.stdout.strip().splitlines()[-1]) if ok else {"error": out.stderr[-2000:]}
        print(f"  A={model} B={other} ({kind}): {result}")
    for a, b in LAB_PAIRS:
        print(f"lab, A={a} B={b} (models loaded, nothing cached):")
        print("\n".join(_lab(a, b, args.text)))


if __name__ == "__main__":
    main()
