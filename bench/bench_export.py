"""Time the exports: server-side PNG/SVG through kaleido and the system's Chromium (one figure; the six
deck figures in one browser session), offline HTML (one figure; the deck), and the attention CSV
(the default model at 32 tokens, and a table near the 1 M-row limit). Medians of ``--repeats`` runs.

    .venv/bin/python bench/bench_export.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.export.archive import inspect_meta  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.registry import load_model
from viz import export as E  # noqa: E402
from viz.deck import deck_figures, for_projector, heatmap_figure  # noqa: E402


def median_s(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bundle = load_model("default")
    text = "我们明天早上一起去公园散步，然后在湖边的小咖啡馆吃早饭。"
    result = analyze(bundle, text)
    meta = json.loads(json.dumps(inspect_meta(bundle, result, text)))
    head = heatmap_figure(result.activations, meta, "cross", 1, 2)
    figs = [for_projector(f) for f in deck_figures(result.activations, meta)]
    patterns = {k: result.attention(k) for k in ("encoder", "decoder", "cross")}
    tokens = {k: result.tokens_for(k) for k in patterns}
    rng = np.random.default_rng(0)
    big = {"encoder": rng.random((6, 8, 128, 128), dtype=np.float32)}  # 786,432 rows
    big_tokens = {"encoder": ([str(i) for i in range(128)],) * 2}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"slide-{i}.png" for i in range(len(figs))]
        cases = [
            ("one heatmap, PNG 2x (kaleido + Chromium)", lambda: E.figure_image(head, "png")),
            ("one heatmap, SVG", lambda: E.figure_image(head, "svg")),
            ("six deck figures, PNG 2x, one browser session",
             lambda: E.write_figure_images(figs, paths, "png")),
            ("one heatmap, offline HTML", lambda: E.standalone_html(head)),
            ("the deck, offline HTML", lambda: E.deck_html([(str(i), [], f) for i, f in enumerate(figs)],
                                                          title="deck")),
            (f"attention CSV, {E.csv_row_count(patterns):,} rows (default model, "
             f"{len(result.source_tokens)} source tokens)", lambda: E.attention_csv(patterns, tokens)),
            (f"attention CSV, {E.csv_row_count(big):,} rows", lambda: E.attention_csv(big, big_tokens)),
        ]
        for name, fn in cases:
            seconds, out = median_s(fn, args.repeats)
            size = len(out) if isinstance(out, (bytes, str)) else sum(p.stat().st_size for p in paths)
            rows.append((name, seconds, size))
    print(f"| export (median of {args.repeats}) | time | size |")
    print("|---|---:|---:|")
    for name, seconds, size in rows:
        print(f"| {name} | {seconds:.2f} s | {size / 1e6:.2f} MB |")


if __name__ == "__main__":
    main()
