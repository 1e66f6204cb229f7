"""Head similarity (pairwise Jensen-Shannon over 72 heads) at growing input lengths, before/after.

"before" is the first algorithm: for each head, the full JS divergence (three entropies, in
float64) against every other head, over every query row. "after" is ``viz.head_divergence``: row
entropies once, the mixture entropy over the upper triangle only, a sampled row at a time over the
keys some head weights (float32, pairwise float32 sums), and at most ``viz.MAX_DIVERGENCE_ROWS``
evenly spaced query rows. Both run in this process, one after the other, on the same random
patterns; the ratio is what to compare. SmolLM2's shape is ``--heads 270 --lengths 1024``.

    python bench/bench_head_similarity.py [--lengths 64 128 256 512] [--heads 72]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import viz
from viz.stats import js_divergence


def before(p: np.ndarray) -> np.ndarray:
    n = p.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        out[i] = js_divergence(p[i][None], p, axis=-1).mean(axis=-1)
    return 0.5 * (out + out.T)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--heads", type=int, default=72)
    parser.add_argument("--before-up-to", type=int, default=256,
                        help="skip the slow baseline above this length")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    header = ("tokens", "before s", "after s", "ratio", "rows used", "max |diff| (all rows)")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (6, 9, 8, 6, 9, 22), strict=True)))
    for n in args.lengths:
        p = np.exp(rng.normal(size=(args.heads, n, n)) * 2)
        p /= p.sum(-1, keepdims=True)
        t0 = time.perf_counter()
        viz.head_divergence(p)
        after_s = time.perf_counter() - t0
        rows = len(viz.divergence_rows(n))
        if n <= args.before_up_to:
            t0 = time.perf_counter()
            old = before(p)
            before_s = time.perf_counter() - t0
            np.fill_diagonal(old, 0.0)
            diff = np.abs(viz.head_divergence(p, max_rows=None) - old).max()
            ratio = before_s / after_s
            print(f"{n:>6} {before_s:>9.2f} {after_s:>8.2f} {ratio:>6.1f} {rows:>9} {diff:>22.1e}")
        else:
            print(f"{n:>6} {'-':>9} {after_s:>8.2f} {'-':>6} {rows:>9} {'-':>22}")


if __name__ == "__main__":
    main()
