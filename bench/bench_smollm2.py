"""SmolLM2-135M-Instruct, ours (read from its GGUF into our Transformer) beside transformers' own
reading of the same file, one torch thread, on the same prompts in one run.

    .venv/bin/python bench/bench_smollm2.py [--rounds 5] [--new 32]

Rows (medians over the rounds, seconds):
  load                      ours: from the converted-weights cache; transformers: from the GGUF
  forward 32 tokens         one plain forward pass of a 32-token prompt
  hooked analysis 32 tok    ours only: analyze() of the same prompt, every hook recorded, no new token
  generate N tokens         greedy, with the key/value cache (transformers: generate(do_sample=False))
The first load of ours (dequantizing and writing the cache) is timed once, in a fresh cache folder.
Prints figures and ratios (ours / transformers); asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROMPT = ("The history of the printing press begins in the fifteenth century, when a goldsmith in "
          "Mainz combined movable metal type with an oil-based ink and a wooden press adapted from the ones "
          "used to make wine, and within fifty years")


def _timed(fn, rounds: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def first_load_seconds() -> float:
    """Our first load, in a fresh process and an empty cache folder."""
    with tempfile.TemporaryDirectory() as cache:
        code = ("import time; t = time.perf_counter(); from model.store.registry import load_model; "
                "load_model('smollm2'); print(time.perf_counter() - t)")
        env = {**os.environ, "ATTENTION_LENS_CACHE": cache, "OMP_NUM_THREADS": "1"}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                             check=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--new", type=int, default=32, help="tokens to generate")
    args = parser.parse_args()

    import torch
    import transformers

    from model.decoding.decoders import greedy_decode
    from model.run.analysis import analyze
    from model.store.registry import load_model
    from model.store.sources.packages import PRETRAINED, pretrained_path

    torch.set_num_threads(1)
    entry = next(e for e in PRETRAINED if e.name == "smollm2")
    gguf = pretrained_path(entry)
    first = first_load_seconds()
    load_model("smollm2")  # the cache exists from here on
    ours_load, bundle = _timed(lambda: load_model("smollm2"), args.rounds)
    theirs_load, hf = _timed(lambda: transformers.AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, attn_implementation="eager", dtype=torch.float32).eval(), 1)
    ids = bundle.task.prepare(PROMPT, bundle.cfg.max_len).source_ids[:32]
    text = bundle.tokenizer.decode(ids)
    x = torch.tensor([ids])
    with torch.no_grad():
        ours_fwd, _ = _timed(lambda: bundle.model(x), args.rounds)
        theirs_fwd, _ = _timed(lambda: hf(x), args.rounds)
    ours_hooked, _ = _timed(lambda: analyze(bundle, text, target=" ."), args.rounds)
    eos = bundle.tokenizer.eos_id
    ours_gen, mine = _timed(lambda: greedy_decode(bundle.model, [ids], [ids], -1, max_new=args.new)[0],
                            args.rounds)
    with torch.no_grad():
        def generate():
            out = hf.generate(x, max_new_tokens=args.new, min_new_tokens=args.new, do_sample=False,
                              pad_token_id=eos)
            return out[0, len(ids):].tolist()

        theirs_gen, ref = _timed(generate, args.rounds)
    print(f"SmolLM2-135M-Instruct (Q4_1 GGUF), one torch thread, {len(ids)}-token prompt, "
          f"{args.rounds} rounds (medians); load average {os.getloadavg()[0]:.1f}")
    print(f"{'':28} {'ours s':>8} {'transformers s':>15} {'ratio':>6}")
    rows = (("load", ours_load, theirs_load), (f"forward {len(ids)} tokens", ours_fwd, theirs_fwd),
            (f"generate {args.new} tokens", ours_gen, theirs_gen))
    for label, a, b in rows:
        print(f"{label:28} {a:8.3f} {b:15.3f} {a / b:6.2f}")
    print(f"{'hooked analysis ' + str(len(ids)) + ' tok':28} {ours_hooked:8.3f} {'-':>15}")
    print(f"{'first load (empty cache)':28} {first:8.3f} {'-':>15}")
    print(f"same {args.new} generated tokens: {mine == ref}")


if __name__ == "__main__":
    main()
