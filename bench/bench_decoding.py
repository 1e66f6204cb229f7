"""Time the decoding strategies on the default model, one torch thread: one sentence as the app decodes
it (greedy, beam search of width 2 / 4 / 8, sampling), and a batch of test sentences per strategy as
`evaluate` decodes them (sentences per second). Prints figures; asserts nothing.

    .venv/bin/python bench/bench_decoding.py [-n 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.decoding.beam import beam_search  # noqa: E402
from model.decoding.decoders import greedy_decode, sample_decode  # noqa: E402
from model.decoding.strategy import Strategy  # noqa: E402
from model.store.registry import DEFAULT_MODEL, load_model
from model.training.evaluate import translate_batch  # noqa: E402

SENTENCES = ["我吃了一个苹果", "苹果公司今天发布了一款新手机", "他每天早上喝一杯茶", "I ate an apple.",
             "The weather is nice today, so we walk."]
STRATEGIES = [Strategy(), Strategy.make("beam", beam=2), Strategy.make("beam", beam=4),
              Strategy.make("beam", beam=8), Strategy.make("sample", temperature=0.8, top_k=40, top_p=0.9)]


def one_sentence(bundle, strategy: Strategy, text: str) -> float:
    p = bundle.task.prepare(text, bundle.cfg.max_len)
    eos = bundle.tokenizer.eos_id
    start = time.perf_counter()
    if strategy.kind == "beam":
        beam_search(bundle.model, [p.source_ids], [p.prefix], eos, strategy.beam, strategy.length_penalty,
                    trace=True)
    elif strategy.kind == "sample":
        sample_decode(bundle.model, p.source_ids, p.prefix, eos, strategy)
    else:
        greedy_decode(bundle.model, [p.source_ids], [p.prefix], eos)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="test pairs per direction for the batch figures")
    args = parser.parse_args()
    torch.set_num_threads(1)
    bundle = load_model(DEFAULT_MODEL)
    print(f"model {DEFAULT_MODEL}, 1 torch thread")
    print("one sentence, as the app decodes it (median over the sentences, 3 runs each):")
    for strategy in STRATEGIES:
        times = [min(one_sentence(bundle, strategy, s) for _ in range(3)) for s in SENTENCES]
        print(f"  {strategy.param:<24} median {statistics.median(times) * 1000:7.1f} ms  "
              f"(max {max(times) * 1000:.1f} ms)")
    refs = bundle.task.references("test", args.n)
    texts, directions = [s for s, _, _ in refs], [d for _, _, d in refs]
    print(f"batch of {len(texts)} test sentences, as evaluate decodes them:")
    for strategy in STRATEGIES:
        start = time.perf_counter()
        translate_batch(bundle.model, bundle.task, texts, directions, strategy=strategy)
        took = time.perf_counter() - start
        print(f"  {strategy.param:<24} {took:7.1f} s  ({len(texts) / took:6.1f} sentences/s)")


if __name__ == "__main__":
    main()
