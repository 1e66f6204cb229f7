"""Timing of the shipped models: load, plain forward vs run_with_cache, greedy decoding, analyze().

    .venv/bin/python bench/bench_model.py                    # every model under assets/models/
    .venv/bin/python bench/bench_model.py --models reverse,copy --seconds 3

Each model runs on a fixed, realistic input: its example sentence (model.store.registry.example_input),
prepared by its task, with its own greedy output as the decoder input. After a warm-up the measurements are
interleaved (forward, run_with_cache, run_with_cache, forward, ... then one greedy decode and one analyze(),
round after round) so that the machine's noise hits all of them alike, and medians are reported. On a shared
machine compare the ratios within one run, not absolute times across runs.

run_with_cache target: <= 1.10 x the plain forward pass.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from model.decoding.decoders import greedy_decode  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.registry import available_models, example_input, load_model

RATIO_TARGET = 1.10


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def bench_model(name: str, seconds: float, max_rounds: int, loads: int, pairs: int) -> dict:
    # load: cold-ish first load, then the median of a few more (file cache warm, as in the app)
    load_times = []
    for _ in range(loads):
        start = time.perf_counter()
        bundle = load_model(name)
        load_times.append(time.perf_counter() - start)
    model, task, tok = bundle.model, bundle.task, bundle.tokenizer
    text = example_input(name) or task.example
    prepared = task.prepare(text, model.cfg.max_len)
    generated = greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id)[0]
    target = (prepared.prefix + generated)[: model.cfg.max_len]
    src = torch.tensor([prepared.source_ids])
    tgt = torch.tensor([target])

    def forward():
        with torch.no_grad():
            model(src, tgt)

    def with_cache():
        model.run_with_cache(src, tgt)

    def greedy():
        greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id)

    def end_to_end():
        analyze(bundle, text)

    fns = {"forward": forward, "run_with_cache": with_cache, "greedy": greedy, "analyze": end_to_end}
    # warm-up, and a first estimate of one round's cost to size the run
    start = time.perf_counter()
    for _ in range(3):
        for _ in range(pairs):
            forward()
            with_cache()
        greedy()
        end_to_end()
    per_round = (time.perf_counter() - start) / 3
    rounds = max(5, min(max_rounds, int(seconds / max(per_round, 1e-9))))

    # One round: `pairs` x (forward, run_with_cache), their order flipped every pair, then one greedy decode
    # and one analyze(). Interleaving spreads the machine's noise evenly over what is compared.
    times: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        for i in range(pairs):
            keys = ("forward", "run_with_cache") if (r + i) % 2 == 0 else ("run_with_cache", "forward")
            for key in keys:
                t0 = time.perf_counter()
                fns[key]()
                times[key].append(time.perf_counter() - t0)
        for key in ("greedy", "analyze") if r % 2 == 0 else ("analyze", "greedy"):
            t0 = time.perf_counter()
            fns[key]()
            times[key].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    paired = statistics.median(c / f for c, f in zip(times["run_with_cache"], times["forward"], strict=True))
    return {
        "name": name,
        "text": text,
        "src_len": src.shape[1],
        "tgt_len": tgt.shape[1],
        "params": model.num_parameters(),
        "rounds": rounds,
        "samples": len(times["forward"]),
        "load_first": load_times[0],
        "load": statistics.median(load_times[1:]) if len(load_times) > 1 else load_times[0],
        **med,
        "ratio": med["run_with_cache"] / med["forward"],
        "paired_ratio": paired,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=None, help="comma-separated names (default: every shipped model)")
    p.add_argument("--seconds", type=float, default=4.0, help="measuring time per model (after warm-up)")
    p.add_argument("--max-rounds", type=int, default=200)
    p.add_argument("--pairs", type=int, default=10, help="(forward, run_with_cache) pairs per round")
    p.add_argument("--loads", type=int, default=5, help="load_model calls per model")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (0 = torch's default)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    names = args.models.split(",") if args.models else available_models()
    if not names:
        print("no models found", file=sys.stderr)
        return 1

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), ~{args.seconds:g} s per model; "
          f"medians over interleaved rounds\n")
    rows = []
    for name in names:
        try:
            rows.append(bench_model(name, args.seconds, args.max_rounds, args.loads, args.pairs))
        except Exception as e:  # a half-written model folder (e.g. during training) must not stop the bench
            print(f"{name}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
    if not rows:
        return 1

    print(
        "| model | params | L_src x L_tgt | fwd/rwc pairs | load ms | forward ms | run_with_cache ms | ratio "
        "| paired ratio | greedy decode ms | analyze ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        flag = "" if r["ratio"] <= RATIO_TARGET else " (!)"
        print(
            f"| {r['name']} | {r['params']:,} | {r['src_len']} x {r['tgt_len']} | {r['samples']} "
            f"| {_ms(r['load'])} | {_ms(r['forward'])} | {_ms(r['run_with_cache'])} "
            f"| {r['ratio']:.3f}{flag} | {r['paired_ratio']:.3f} "
            f"| {_ms(r['greedy'])} | {_ms(r['analyze'])} |"
        )
    print()
    for r in rows:
        print(f"{r['name']}: input {r['text']!r}; first load {_ms(r['load_first'])} ms")
    print(f"\nratio = median run_with_cache / median forward (target <= {RATIO_TARGET:.2f}; (!) = above); "
          "paired ratio = median of the per-round ratios.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
