"""Time the head detectors (model/lab/detectors.py), one torch thread: every head's five role scores on
the page's probes (seeded random tokens written twice), and the three weight roles on a long user text,
which streams each layer in blocks of rows. Target: all 270 SmolLM2 heads on the probes <= 5 s.
Prints each model's best heads per role too.

    .venv/bin/python bench/bench_detectors.py [--models induction smollm2] [--repeats 3] [--long 1024]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.lab.detectors import ROLES, probe_scores, text_scores  # noqa: E402
from model.store.registry import load_model  # noqa: E402

TARGET_S = 5.0  # SmolLM2's 270 heads on the probes


def _timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["induction", "smollm2"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--long", type=int, default=1024, help="tokens of the long user text (0: skip)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.models:
        bundle = load_model(name)
        scores, times = _timed(lambda b=bundle: probe_scores(b, 0), args.repeats)
        heads = scores.scores["previous"].size
        verdict = ""
        if name == "smollm2":
            verdict = f"  (target <= {TARGET_S:.0f} s: {'met' if min(times) <= TARGET_S else 'MISSED'})"
        print(f"{name}: {heads} heads x {len(scores.scores)} roles on {len(scores.texts)} probes of "
              f"{len(scores.tokens[0])} tokens: best {min(times):.2f} s, "
              f"median {statistics.median(times):.2f} s{verdict}")
        for role in ROLES:
            if role in scores.scores:
                top = ", ".join(f"L{la}H{h} {v:.3f}" for la, h, v in scores.top(role, 3))
                print(f"  {role:<10} {top}")
            else:
                print(f"  {role:<10} not defined ({scores.copying_note})")
        if args.long and bundle.cfg.max_len >= args.long:
            words = " ".join(f"word{i % 97}" for i in range(args.long))
            ids = bundle.task.prepare(words, bundle.cfg.max_len).source_ids
            _, times = _timed(lambda b=bundle, w=words: text_scores(b, w), 1)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the process's peak so far
            print(f"  user text of {len(ids)} tokens, previous/first/duplicate: {times[0]:.2f} s, "
                  f"process peak {peak:.0f} MB (all heads' patterns at once would be "
                  f"{heads * len(ids) ** 2 * 4 / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
