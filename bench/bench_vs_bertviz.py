"""Figure payload and build time: Attention Lens vs BertViz on the same random attention.

Run: ``.venv/bin/python bench/bench_vs_bertviz.py [--reps 5]`` (BertViz is in the dev extras).

For 6 layers x 12 heads at 19, 128 and 512 tokens, on the same random row-stochastic arrays:
our all-heads figure and our single-head heatmap (build + ``plotly.io.to_json``) against
BertViz ``head_view`` and ``model_view`` with ``html_action="return"`` (their ``.data`` is the
HTML page the notebook would receive). Repetitions are interleaved (A, B, C, D, A, B, ...) so a
busy machine slows every contender alike; times are medians, bytes are UTF-8 lengths.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import plotly.io as pio
import torch
from bertviz import head_view, model_view

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import viz  # noqa: E402

N_LAYERS, N_HEADS = 6, 12
LENGTHS = (19, 128, 512)


def random_attention(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(N_LAYERS, N_HEADS, n, n)).astype(np.float32) * 2
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def contenders(p: np.ndarray, tokens: list[str]) -> dict[str, Callable[[], str]]:
    """name -> a function building one figure and returning what goes to the browser."""
    # BertViz wants one [batch, head, query, key] tensor per layer; building it is its input cost
    as_torch = tuple(torch.from_numpy(p[li][None]) for li in range(N_LAYERS))
    return {
        "ours: all heads": lambda: pio.to_json(viz.all_heads_grid(p, tokens, tokens), validate=False),
        "ours: one head": lambda: pio.to_json(viz.attention_heatmap(p[0, 0], tokens, tokens), validate=False),
        "BertViz head_view": lambda: head_view(as_torch, tokens, html_action="return").data,
        "BertViz model_view": lambda: model_view(as_torch, tokens, html_action="return").data,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions per length")
    args = parser.parse_args()
    rows = []
    for n in LENGTHS:
        p = random_attention(n)
        tokens = [f"tok{i}" for i in range(n)]
        funcs = contenders(p, tokens)
        times: dict[str, list[float]] = {name: [] for name in funcs}
        sizes: dict[str, int] = {}
        for _ in range(args.reps):
            for name, build in funcs.items():
                t0 = time.perf_counter()
                out = build()
                times[name].append(time.perf_counter() - t0)
                sizes[name] = len(out.encode("utf-8"))
        med = {name: statistics.median(ts) for name, ts in times.items()}
        for name in funcs:
            rows.append((n, name, med[name], sizes[name]))
        pairs = (("ours: all heads", "BertViz model_view"), ("ours: one head", "BertViz head_view"))
        for ours, theirs in pairs:
            rows.append(
                (n, f"ratio {ours} / {theirs}", med[ours] / med[theirs], sizes[ours] / sizes[theirs])
            )
    print(f"{N_LAYERS} layers x {N_HEADS} heads, random attention, median of {args.reps} interleaved runs")
    print()
    print("| tokens | figure | time | bytes |")
    print("|---:|---|---:|---:|")
    for n, name, t, size in rows:
        if name.startswith("ratio"):
            print(f"| {n} | {name} | {t:.3f}× | {size:.4f}× |")
        else:
            print(f"| {n} | {name} | {t * 1000:.0f} ms | {size / 1e6:.2f} MB |")


if __name__ == "__main__":
    main()
