"""Time the head atlas (model/lab/atlas.py): the didactic models' whole test split (500 words each) and a
sample of the translation model's test split, computed from scratch (not read from disk), one torch
thread. Also times reading a stored atlas back. Targets: didactic <= 10 s, 200 default sentences <= 60 s.

    .venv/bin/python bench/bench_atlas.py [--sentences 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.lab.atlas import compute_atlas, held_out_dataset, load_atlas, save_atlas  # noqa: E402
from model.store.registry import load_model

DIDACTIC = ("reverse", "copy", "sort")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=200, help="sample of the default model's test split")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = [(name, None) for name in DIDACTIC] + [("default", args.sentences)]
    print("| model | sentences | compute (median) | runs | read back from disk | target |")
    print("|---|---:|---:|---|---:|---:|")
    for name, n in cases:
        bundle = load_model(name)
        data = held_out_dataset(bundle, n)
        times, atlas = [], None
        for _ in range(args.repeats):
            start = time.perf_counter()
            atlas = compute_atlas(bundle, data)
            times.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "atlas.npz"
            save_atlas(atlas, path)
            start = time.perf_counter()
            load_atlas(path)
            read = time.perf_counter() - start
        target = "10 s" if n is None else "60 s"
        print(f"| {name} | {len(data.texts)} | {statistics.median(times):.2f} s | "
              f"{', '.join(f'{t:.2f}' for t in times)} | {read * 1000:.0f} ms | {target} |")


if __name__ == "__main__":
    main()
