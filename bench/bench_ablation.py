"""Time the 'Intervene & explain' computations on the default model, one torch thread, one sentence each:
rank_heads (every head ablated alone), ablate (several heads, re-decoded), rank_patches (every head
patched alone from A into B), attribute (integrated gradients, 32 steps) and the agreement over the
page's 12 sentences (16 steps).

    .venv/bin/python bench/bench_ablation.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.lab.ablation import ablate, rank_heads, sample_texts  # noqa: E402
from model.lab.attribution import agreement, attribute  # noqa: E402
from model.lab.choices import group_heads  # noqa: E402
from model.lab.patching import rank_patches  # noqa: E402
from model.store.registry import DEFAULT_MODEL, load_model

SENTENCES = ["他每天早上喝一杯茶", "我们明天去公园散步", "这本书非常有意思"]
PAIRS = [
    ("苹果公司发布新品", "我吃了一个苹果", "苹"),
    ("The bank raised interest rates.", "We sat on the river bank.", "▁bank"),
    ("我很忙。", "你好。", None),
]


def timed(fn, runs) -> tuple[float, list[float], object]:
    times, out = [], None
    for args in runs:
        start = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, out


def line(what: str, median: float, times: list[float]) -> None:
    print(f"  {what:<64} median {median:7.3f} s  (runs: {', '.join(f'{t:.3f}' for t in times)})")


def main() -> None:
    torch.set_num_threads(1)
    bundle = load_model(DEFAULT_MODEL)
    rank_heads(bundle, "你好")  # warm-up
    print(f"{DEFAULT_MODEL!r}, 1 torch thread, {len(SENTENCES)} sentences / pairs:")
    median, times, effects = timed(lambda s: rank_heads(bundle, s), [(s,) for s in SENTENCES])
    line(f"rank_heads: all {len(effects)} heads ablated alone", median, times)
    group = group_heads(bundle.cfg, "cross", 2)
    median, times, _ = timed(lambda s: ablate(bundle, s, None, group), [(s,) for s in SENTENCES])
    line(f"ablate: {len(group)} heads, re-decoded + per-step changes", median, times)
    median, times, patches = timed(lambda a, b, tok: rank_patches(bundle, a, b, tok), PAIRS)
    line(f"rank_patches: all {len(patches)} heads patched alone A -> B", median, times)
    median, times, _ = timed(lambda s: attribute(bundle, s, None, 32), [(s,) for s in SENTENCES])
    line("attribute: IG (32 steps) + gradient x input, every output step", median, times)
    texts = sample_texts(bundle, 12)
    median, times, _ = timed(lambda: agreement(bundle, texts, 16), [()])
    line(f"agreement: {len(texts)} sentences, IG 16 steps", median, times)


if __name__ == "__main__":
    main()
