"""Time the corpus atlas (model/lab/atlas_shards.py) on SmolLM2, side by side: 1 worker (this process), a
local process pool of 2 workers, and Ray started locally with 2 CPUs; every run from scratch (its own
runs folder), one torch thread per worker. Prints wall time, prompts/s, the speed-up over 1 worker (target
>= 1.7x at 2 workers), what each run spent before its first shard came back (workers starting, the model
loading once per worker), Ray's per-task overhead (round trip of an empty task on warm workers), and the
estimate for 100,000 prompts on N machines that docs/cluster.md quotes.

    .venv/bin/python bench/bench_corpus.py [--model smollm2] [--prompts 64] [--shard-size 8]

The corpus is the Tatoeba test sentences the model's prompt set reads (Chinese and English alternating),
written to a temporary text file.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.lab.atlas import held_out_dataset  # noqa: E402
from model.lab.atlas_corpus import read_corpus  # noqa: E402
from model.lab.atlas_shards import ModelSpec, run_corpus, start_ray  # noqa: E402
from model.store.registry import load_model  # noqa: E402


def timed_run(bundle, spec, corpus, folder: Path, **kw) -> tuple[float, float, object]:
    """(wall seconds, seconds to the first finished shard, the run) in a fresh runs folder."""
    os.environ["ATTENTION_LENS_ATLAS_DIR"] = str(folder)
    first: list[float] = []
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done and not first:
            first.append(time.perf_counter() - start)

    run = run_corpus(bundle, spec, corpus, progress=progress, **kw)
    return time.perf_counter() - start, first[0] if first else float("nan"), run


def ray_task_overhead(n: int = 200) -> float:
    """Seconds per empty Ray task, submitted all at once and gathered, on workers already started."""
    import ray

    @ray.remote(num_cpus=1)
    def nothing(i: int) -> int:
        return i

    ray.get([nothing.remote(i) for i in range(20)])  # warm the workers
    start = time.perf_counter()
    ray.get([nothing.remote(i) for i in range(n)])
    return (time.perf_counter() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--shard-size", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    bundle = load_model(args.model)
    spec = ModelSpec(name=args.model)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        texts = held_out_dataset(bundle, args.prompts).texts
        path = tmp / "corpus.txt"
        path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        corpus = read_corpus(path)
        kw = dict(shard_size=args.shard_size)
        rows = []
        serial, first, run1 = timed_run(bundle, spec, corpus, tmp / "one", **kw)
        rows.append(("1 worker (this process)", serial, first))
        pool, first, run2 = timed_run(bundle, spec, corpus, tmp / "pool", workers=2, **kw)
        rows.append(("2 pool workers (spawn)", pool, first))
        import ray

        start_ray(None, 2)
        try:
            ray_wall, first, run3 = timed_run(bundle, spec, corpus, tmp / "ray", engine="ray", workers=2,
                                              **kw)
            rows.append(("Ray, local, 2 CPUs", ray_wall, first))
            overhead = ray_task_overhead()
        finally:
            ray.shutdown()
    for a, b in ((run1, run2), (run1, run3)):
        for stat, by_kind in a.atlas.stats.items():
            for kind, values in by_kind.items():
                torch.testing.assert_close(torch.tensor(values), torch.tensor(b.atlas.stats[stat][kind]),
                                           equal_nan=True, rtol=0, atol=1e-9)
    n = len(texts)
    per_prompt = serial / n
    print(f"{args.model}, {n} prompts read once each, shards of {args.shard_size}, "
          "one torch thread per worker, "
          f"{os.cpu_count()} cores on this machine")
    print("| engine | wall | prompts/s | speed-up over 1 worker | first shard back after |")
    print("|---|---:|---:|---:|---:|")
    for name, wall, first in rows:
        print(f"| {name} | {wall:.1f} s | {n / wall:.2f} | {serial / wall:.2f}x | {first:.1f} s |")
    print(f"\nRay per-task overhead (empty task, warm workers): {overhead * 1000:.1f} ms")
    start_cost = rows[2][2] - args.shard_size * per_prompt  # first shard back minus one shard's compute
    print(f"Per-prompt cost (1 worker): {per_prompt:.3f} s; "
          f"a Ray worker's start + model load: ~{start_cost:.1f} s")
    print("\nEstimate for 100,000 prompts (per-prompt cost x prompts / workers + start + per-task overhead):")
    print("| machines x cores | estimate |")
    print("|---|---:|")
    shards = 100_000 / args.shard_size
    for machines, cores in ((1, 2), (1, 16), (4, 16), (16, 16)):
        workers = machines * cores
        seconds = per_prompt * 100_000 / workers + max(start_cost, 0.0) + overhead * shards / workers
        print(f"| {machines} x {cores} | {seconds / 3600:.2f} h |")


if __name__ == "__main__":
    main()
