"""Figure payload and build time: Attention Lens vs BertViz on the same random attention.

Run: ``.venv/bin/python bench/bench_vs_bertviz.py [--reps 5]`` (BertViz is in the dev extras).

For 6 layers x 12 heads at 19, 128 and 512 tokens, on the same random row-stochastic arrays:
our all-heads figure and our single-head heatmap (build + ``plotly.io.to_json``) against
BertViz ``head_view`` and ``model_view`` with ``html_action="return"`` (their ``.data`` is the
HTML page the notebook would receive). Repetitions are interleaved (A, B, C, D, A, B, ...) so a
busy machine slows every contender alike; times are medians, bytes are UTF-8 lengths.

At 1,024 and 2,048 tokens (``--long``), our side only, as the pages work now that an analysis keeps
each layer's queries and keys instead of every head's L x L weights: random q and k (6 layers x 12
heads of 32, scores of the same spread as above) recorded as ``AttentionInputs``; the all-heads
tiles are computed layer by layer in blocks of query rows (each within ``BLOCK_BYTES``) and max-pooled
as they come (``viz.pool_tiles``), then drawn (``viz.pooled_heads_grid``, as the all-heads page
does); one head is recomputed and drawn through the single-head page's default
64-position window, and (as at 512 above) with every cell. BertViz is not run there: it takes the
whole [layer, head, L, L] array and sends it whole (its HTML at 512 tokens is in the table). At 512 the
streamed tiles are checked against pooling the full pattern, and their figure's bytes against the
figure built from the full pattern.
"""

from __future__ import annotations

import argparse
import math
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
from model.network.recorded import BLOCK_BYTES, AttentionInputs  # noqa: E402
from viz.grid import grid_block, pool_tiles, pooled_heads_grid  # noqa: E402
from viz.pooling import pool_blocks  # noqa: E402

N_LAYERS, N_HEADS = 6, 12
LENGTHS = (19, 128, 512)
LONG_LENGTHS = (1024, 2048)
D_HEAD = 32  # MiniLM's
GRID_WIDTH = 1000  # all_heads_grid's default, as in the rows above
WINDOW = 64  # the single-head page's default window on a long axis (app_pages/glue/single.py)


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


def recorded_inputs(n: int, seed: int = 0) -> list[AttentionInputs]:
    """What an analysis of an unmasked encoder keeps per layer: q and k [1, head, n, d_head]; q . k /
    sqrt(d_head) then has a spread of 2, as random_attention's scores."""
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(N_LAYERS):
        q = rng.standard_normal((1, N_HEADS, n, D_HEAD), dtype=np.float32) * 2
        k = rng.standard_normal((1, N_HEADS, n, D_HEAD), dtype=np.float32)
        layers.append(AttentionInputs(q, k, math.sqrt(D_HEAD), "", 0, -1))
    return layers


def streamed_tiles(layers: list[AttentionInputs], block: int) -> np.ndarray:
    """[layer, head, cells, cells]: every head's pattern max-pooled in block x block blocks, computed one
    layer and one block of query rows (a multiple of ``block``, within BLOCK_BYTES) at a time."""
    tiles = []
    for rec in layers:
        per_row = 4 * 3 * rec.n_heads * rec.n_keys  # scores, pattern, slack: as row_blocks counts
        step = max(block, BLOCK_BYTES // per_row // block * block)
        parts = []
        for start in range(0, rec.n_queries, step):
            _, pattern = rec.compute(rows=slice(start, min(start + step, rec.n_queries)))  # [head, rows, key]
            parts.append(pool_tiles(pattern.numpy(), None, block, "max", overwrite=True)[0])
        tiles.append(np.concatenate(parts, axis=1))
    return np.stack(tiles)


def tiles_figure(tiles: np.ndarray, tokens: list[str], block: int) -> str:
    """The all-heads figure the page draws from pooled tiles, as JSON."""
    return pio.to_json(pooled_heads_grid(tiles, None, block, tokens, tokens), validate=False)


def long_contenders(layers: list[AttentionInputs], tokens: list[str]) -> dict[str, Callable[[], str]]:
    """name -> a function doing one step of what our pages do at a long length; figures return JSON."""
    n = len(tokens)
    block = grid_block(n, n, GRID_WIDTH, N_HEADS)
    made: dict[str, object] = {}

    def tiles() -> str:
        made["tiles"] = streamed_tiles(layers, block)
        return ""

    def head() -> str:
        made["head"] = layers[0].compute(0)
        return ""

    def window() -> str:
        scores, pattern = (t[0].numpy() for t in made["head"])
        fig = viz.attention_heatmap(pattern, tokens, tokens, scores_2d=scores, query_range=(0, WINDOW),
                                    key_range=(0, WINDOW))
        return pio.to_json(fig, validate=False)

    return {
        "ours: all heads, tiles streamed from q, k": tiles,
        "ours: all heads, figure of the tiles": lambda: tiles_figure(made["tiles"], tokens, block),
        "ours: one head recomputed from q, k": head,
        f"ours: one head, {WINDOW}-position window": window,
        "ours: one head, every cell": lambda: pio.to_json(
            viz.attention_heatmap(made["head"][1][0].numpy(), tokens, tokens), validate=False),
    }


def check_streaming(n: int = 512) -> str:
    """At ``n`` tokens: streamed tiles against pooling the full pattern, and their figures' bytes."""
    layers = recorded_inputs(n)
    full = np.stack([rec.compute()[1].numpy() for rec in layers])  # [layer, head, n, n]
    tokens = [f"tok{i}" for i in range(n)]
    block = grid_block(n, n, GRID_WIDTH, N_HEADS)
    tiles = streamed_tiles(layers, block)
    same = np.array_equal(tiles, pool_blocks(full, block, "max"))
    ours = len(tiles_figure(tiles, tokens, block).encode("utf-8"))
    whole = len(pio.to_json(viz.all_heads_grid(full, tokens, tokens), validate=False).encode("utf-8"))
    return (f"at {n} tokens: streamed tiles equal pooling the full pattern: {same}; figure of the tiles "
            f"{ours:,} bytes, figure built from the full pattern {whole:,} bytes")


def timed_rows(n: int, funcs: dict[str, Callable[[], str]], reps: int) -> list[tuple]:
    """(n, name, median seconds, bytes, every time) per contender, repetitions interleaved."""
    times: dict[str, list[float]] = {name: [] for name in funcs}
    sizes: dict[str, int] = {}
    for _ in range(reps):
        for name, build in funcs.items():
            t0 = time.perf_counter()
            out = build()
            times[name].append(time.perf_counter() - t0)
            sizes[name] = len(out.encode("utf-8"))
    return [(n, name, statistics.median(times[name]), sizes[name], times[name]) for name in funcs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions per length")
    parser.add_argument("--lengths", type=int, nargs="*", default=list(LENGTHS), help="BertViz side by side")
    parser.add_argument("--long", type=int, nargs="*", default=list(LONG_LENGTHS), help="ours only")
    args = parser.parse_args()
    rows = []
    for n in args.lengths:
        p = random_attention(n)
        tokens = [f"tok{i}" for i in range(n)]
        timed = timed_rows(n, contenders(p, tokens), args.reps)
        rows += timed
        med = {name: t for _, name, t, _, _ in timed}
        sizes = {name: size for _, name, _, size, _ in timed}
        pairs = (("ours: all heads", "BertViz model_view"), ("ours: one head", "BertViz head_view"))
        for ours, theirs in pairs:
            rows.append(
                (n, f"ratio {ours} / {theirs}", med[ours] / med[theirs], sizes[ours] / sizes[theirs], ())
            )
    for n in args.long:
        rows += timed_rows(n, long_contenders(recorded_inputs(n), [f"tok{i}" for i in range(n)]), args.reps)
    print(f"{N_LAYERS} layers x {N_HEADS} heads, random attention, median of {args.reps} interleaved runs")
    print()
    print("| tokens | figure | time | bytes | every run |")
    print("|---:|---|---:|---:|---|")
    for n, name, t, size, every in rows:
        if name.startswith("ratio"):
            print(f"| {n} | {name} | {t:.3f}× | {size:.4f}× | |")
        else:
            runs = ", ".join(f"{s * 1000:.0f}" for s in every)
            sent = f"{size / 1e6:.2f} MB" if size else "–"  # a computation: nothing sent
            print(f"| {n} | {name} | {t * 1000:.0f} ms | {sent} | {runs} ms |")
    if args.long:
        print()
        print(check_streaming())


if __name__ == "__main__":
    main()
