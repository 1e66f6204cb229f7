"""Time merging word pieces and hiding [CLS]/[SEP] on MiniLM (app_support.token_display.shown_attention),
at the sentence lengths the pages draw, one torch thread; prints the median of 5 runs per length.

    .venv/bin/python bench/bench_wordpieces.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app_support.token_display import TokenDisplay, shown_attention  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.registry import load_model

BASE = "Tokenizers split unbelievably long embeddings into word pieces. "  # 15 tokens a sentence


def main() -> None:
    torch.set_num_threads(1)
    bundle = load_model("minilm")
    for repeat in (1, 8, 33):  # ~17, ~122, ~497 tokens
        result = analyze(bundle, BASE * repeat)
        n = len(result.source_tokens)
        units = shown_attention(result, "encoder", TokenDisplay(merge=True, special="renorm")).queries.n_units
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            shown_attention(result, "encoder")  # what every page pays without the option
            times.append(time.perf_counter() - t0)
        print(f"{n:4d} tokens, as tokenized (baseline: stacking the layers' patterns and scores) "
              f"| {statistics.median(times) * 1000:7.1f} ms")
        for display in (TokenDisplay(merge=True), TokenDisplay(special="renorm"),
                        TokenDisplay(merge=True, special="renorm")):  # all 72 heads (heads, focus, compare)
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                shown_attention(result, "encoder", display)
                times.append(time.perf_counter() - t0)
            ms = statistics.median(times) * 1000
            t0 = time.perf_counter()
            shown_attention(result, "encoder", display, heads=(2, 5))  # the single-head page
            one = (time.perf_counter() - t0) * 1000
            print(f"{n:4d} tokens -> {units:4d} words | merge={display.merge!s:5} "
                  f"special={display.special:6} | {ms:7.1f} ms (72 heads) | {one:6.1f} ms (one head)")


if __name__ == "__main__":
    main()
