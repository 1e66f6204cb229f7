"""Time the three 'Intervene & explain' pages on SmolLM2 at their default settings, one torch thread (as
the app runs), from a cold cache: the model computations each page asks the gateway for, in the page's
order, with CPU seconds (this process) beside wall seconds (a shared machine inflates the latter).

    .venv/bin/python bench/bench_interventions_lm.py [--prompt "The capital of France is"]

    ablation     the page's analysis (6 new tokens), the continuation, rank_heads a slice of 10 layers at a
                 time (270 heads); no head chosen, as when the page opens
    patching     both prompts' token lists (1 new token each), patch (one head, 6 new tokens), every head
                 patched alone (270, a slice of 10 blocks at a time)
    attribution  the page's analysis, attribute (16 steps, the first 2 continuation tokens)

and the pieces: ranking all heads in one call, patching every head / every (block, position) in one call,
integrated gradients per output token (16 and 32 steps).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app_pages.glue.attribution import LM_DEFAULT_OUTPUTS, LM_DEFAULT_STEPS  # noqa: E402
from app_pages.glue.patching import LM_PRESET  # noqa: E402
from app_support.interventions import LM_DEFAULT_NEW, chunks  # noqa: E402
from model.lab import patching_lm  # noqa: E402
from model.lab.ablation import continuation, rank_heads  # noqa: E402
from model.lab.attribution import attribute  # noqa: E402
from model.lab.choices import Site  # noqa: E402
from model.lab.patching import patch  # noqa: E402
from model.run.analysis import analyze, attention_only  # noqa: E402
from model.run.runtime import configure  # noqa: E402
from model.store.registry import load_model  # noqa: E402

TARGET_S = 10.0


def measured(fn: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def ablation_page(bundle, prompt: str) -> None:
    analyze(bundle, prompt, keep=attention_only, max_new=LM_DEFAULT_NEW)
    ids = continuation(bundle, prompt, None, LM_DEFAULT_NEW)
    for part in chunks(bundle.cfg.n_dec_layers):
        rank_heads(bundle, prompt, None, "zero", True, LM_DEFAULT_NEW, part, ids)


def patching_page(bundle, a: str, b: str) -> None:
    for text in (a, b):
        analyze(bundle, text, keep=attention_only, max_new=1)
    patch(bundle, a, b, Site("head", "decoder", 0, 0), None, None, LM_DEFAULT_NEW)
    for part in chunks(bundle.cfg.n_dec_layers):
        patching_lm.rank_heads(bundle, a, b, None, part)


def attribution_page(bundle, prompt: str) -> None:
    analyze(bundle, prompt, keep=attention_only, max_new=LM_DEFAULT_NEW)
    attribute(bundle, prompt, None, LM_DEFAULT_STEPS, LM_DEFAULT_NEW, LM_DEFAULT_OUTPUTS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", default="The capital of France is")
    args = parser.parse_args()
    configure()  # one torch thread, as the app
    bundle = load_model("smollm2")
    a, b, _ = LM_PRESET
    analyze(bundle, "Warm up.", max_new=2)  # first-call costs (allocator, kernels) out of the figures
    rows = [
        ("ablation page (defaults)", lambda: ablation_page(bundle, args.prompt)),
        ("patching page (defaults)", lambda: patching_page(bundle, a, b)),
        ("attribution page (defaults)", lambda: attribution_page(bundle, args.prompt)),
        ("rank all 270 heads, one call (6 new)", lambda: rank_heads(bundle, args.prompt)),
        ("patch every head, one call", lambda: patching_lm.rank_heads(bundle, a, b)),
        ("patch every block x position, one call", lambda: patching_lm.rank_residual(bundle, a, b)),
        *((f"IG, {n} output token(s), {m} steps", lambda n=n, m=m: attribute(bundle, args.prompt, None, m,
                                                                            LM_DEFAULT_NEW, n))
          for n, m in ((1, 16), (1, 32), (2, 16))),
    ]
    print(f"smollm2, prompt {args.prompt!r}, pair {a!r} / {b!r}; target <= {TARGET_S:.0f} s per page")
    print(f"{'':42s} {'CPU s':>7s} {'wall s':>7s}")
    for name, fn in rows:
        cpu, wall = measured(fn)
        flag = "  (over)" if name.endswith("(defaults)") and cpu > TARGET_S else ""
        print(f"{name:42s} {cpu:7.2f} {wall:7.2f}{flag}")


if __name__ == "__main__":
    main()
