"""Time rank_heads (model/ablation.py) on the default model: every head, one sentence, one torch thread.

    .venv/bin/python bench/bench_ablation.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.ablation import rank_heads  # noqa: E402
from model.registry import DEFAULT_MODEL, load_model  # noqa: E402

SENTENCES = ["他每天早上喝一杯茶", "我们明天去公园散步", "这本书非常有意思"]


def main() -> None:
    torch.set_num_threads(1)
    bundle = load_model(DEFAULT_MODEL)
    rank_heads(bundle, "你好")  # warm-up
    times = []
    for text in SENTENCES:
        start = time.perf_counter()
        effects = rank_heads(bundle, text)
        times.append(time.perf_counter() - start)
    print(f"rank_heads on {DEFAULT_MODEL!r}: {len(effects)} heads, median {statistics.median(times):.3f} s "
          f"over {len(SENTENCES)} sentences (runs: {', '.join(f'{t:.3f}' for t in times)}), 1 torch thread")


if __name__ == "__main__":
    main()
