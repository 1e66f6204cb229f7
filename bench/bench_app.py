"""Server-side cost of the app for one new sentence, and the size of what it sends.

    .venv/bin/python bench/bench_app.py [--model NAME] [--repeat N]

Measures, for a new ~12-token sentence on the default model (or a didactic model when the
default one is not shipped yet, which it says):

* tokenize (task.prepare), greedy decode, the hooked forward pass with the activation cache,
  and the whole ``analyze`` call the app makes (they include each other: analyze = tokenize +
  decode + cached forward + numpy conversion);
* building every figure of the main page (single head) and of the other pages, each with its
  plotly JSON serialisation (what ``st.plotly_chart`` does) and the JSON size;
* the bytes of the all-heads figure JSON at 32 tokens.

Prints tables; asserts nothing about time (machines differ).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import plotly.io as pio  # noqa: E402
import torch  # noqa: E402

import viz  # noqa: E402
from model.decoding.decoders import greedy_decode  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.registry import DEFAULT_MODEL, available_models, load_model  # noqa: E402

SENTENCES = {
    # 12 source tokens + <eos> each (checked and printed below).
    "translation": "我们明天早上去公园散步吧",
    "didactic": "benchmarking",
}


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """(first call seconds, median of the next `repeat` calls, last result)."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        runs.append(time.perf_counter() - t0)
    return first, statistics.median(runs) if runs else first, out


def fig_cost(build: Callable[[], object], repeat: int) -> tuple[float, float, int]:
    """(median build seconds, median to_json seconds, JSON bytes) of one figure."""
    builds, dumps, size = [], [], 0
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fig = build()
        t1 = time.perf_counter()
        js = pio.to_json(fig, validate=False)
        t2 = time.perf_counter()
        builds.append(t1 - t0)
        dumps.append(t2 - t1)
        size = len(js.encode("utf-8"))
    return statistics.median(builds), statistics.median(dumps), size


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print(row(header, widths))
    print(row(["-" * w for w in widths], widths))
    for r in rows:
        print(row(r, widths))


def random_patterns(n_layers: int, n_heads: int, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n_layers, n_heads, n, n)).astype(np.float32)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="model name (default: the translation model if shipped)")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions after the first call")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: what the app uses, ATTENTION_LENS_TORCH_THREADS or 1)")
    args = ap.parse_args()
    import os

    torch.set_num_threads(
        max(1, args.threads or int(os.environ.get("ATTENTION_LENS_TORCH_THREADS", "1") or 1))
    )

    models = available_models()
    if not models:
        print("no model in assets/models; nothing to measure", file=sys.stderr)
        return 1
    name = args.model or (DEFAULT_MODEL if DEFAULT_MODEL in models else models[0])
    if args.model is None and name != DEFAULT_MODEL:
        print(
            f"NOTE: assets/models/{DEFAULT_MODEL} is not shipped yet; "
            f"measuring the didactic model {name!r} instead."
        )
    t0 = time.perf_counter()
    bundle = load_model(name)
    load_s = time.perf_counter() - t0
    cfg, task, tok = bundle.cfg, bundle.task, bundle.tokenizer
    text = SENTENCES["translation" if task.directions else "didactic"]
    print(
        f"model {name}: {cfg.n_enc_layers}+{cfg.n_dec_layers} layers x {cfg.n_heads} heads, "
        f"d_model {cfg.d_model}, "
        f"max_len {cfg.max_len}; torch threads {torch.get_num_threads()}; load {load_s:.2f} s"
    )

    # ---- model side: tokenize, decode, cached forward, analyze
    prep_first, prep_med, prepared = timed(lambda: task.prepare(text, cfg.max_len, None), args.repeat)
    model = bundle.model
    with torch.no_grad():
        dec_first, dec_med, generated = timed(
            lambda: greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id)[0], args.repeat
        )
        full = (prepared.prefix + generated)[: cfg.max_len]
        src, tgt = torch.tensor([prepared.source_ids]), torch.tensor([full])
        fwd_first, fwd_med, _ = timed(lambda: model.run_with_cache(src, tgt), args.repeat)
    an_first, an_med, result = timed(lambda: analyze(bundle, text), args.repeat)
    n_src, n_tgt = len(result.source_tokens), len(result.target_tokens)
    print(f"sentence {text!r}: {n_src} source tokens (incl. <eos>), {n_tgt} decoder positions, "
          f"output {result.output_text!r}")
    print_table(
        "Model side (seconds)",
        ["step", "first call", f"median of {args.repeat}"],
        [
            ["tokenize (task.prepare)", f"{prep_first:.4f}", f"{prep_med:.4f}"],
            [f"greedy decode ({len(generated)} new tokens)", f"{dec_first:.3f}", f"{dec_med:.3f}"],
            ["forward with activation cache", f"{fwd_first:.3f}", f"{fwd_med:.3f}"],
            ["analyze (all of the above + numpy)", f"{an_first:.3f}", f"{an_med:.3f}"],
        ],
    )

    # ---- figures
    rep = max(1, args.repeat)
    enc, enc_s = result.attention("encoder"), result.attention("encoder", "scores")
    dec, dec_s = result.attention("decoder"), result.attention("decoder", "scores")
    cross = result.attention("cross")
    q_enc, k_enc = result.tokens_for("encoder")
    q_dec, _ = result.tokens_for("decoder")
    step = result.steps[min(2, len(result.steps) - 1)]
    figs: list[tuple[str, Callable[[], object]]] = [
        (
            "MAIN single head heatmap (encoder L0 H0)",
            lambda: viz.attention_heatmap(enc[0, 0], q_enc, k_enc, scores_2d=enc_s[0, 0], title="x"),
        ),
        (
            "single head heatmap (decoder, masked)",
            lambda: viz.attention_heatmap(dec[0, 0], q_dec, q_dec, scores_2d=dec_s[0, 0], title="x"),
        ),
        ("all heads grid (encoder)", lambda: viz.all_heads_grid(enc, q_enc, k_enc, mask=~np.isfinite(enc_s))),
        (
            "all heads grid (decoder, masked)",
            lambda: viz.all_heads_grid(dec, q_dec, q_dec, mask=~np.isfinite(dec_s)),
        ),
        (
            "token focus grid",
            lambda: viz.token_focus_grid(enc, 0, "from", query_tokens=q_enc, key_tokens=k_enc),
        ),
        ("attention arcs", lambda: viz.attention_arcs(enc[0, 0], q_enc, 0, key_tokens=k_enc)),
        (
            "decoding: cross-attention at a step",
            lambda: viz.cross_attention_step(cross[:, :, step.position, :], result.source_tokens, step=2),
        ),
        (
            "decoding: top-k bar",
            lambda: viz.topk_bar(step.top_tokens, np.asarray(step.top_probs, dtype=np.float32)),
        ),
        ("head stats scatter", lambda: viz.head_stats_scatter(viz.head_stats(enc))),
        (
            "head similarity heatmap",
            lambda: viz.head_similarity_heatmap(viz.head_similarity(enc), viz.flatten_heads(enc)[1]),
        ),
        ("mean over heads", lambda: viz.mean_over_heads_figure(enc, q_enc, k_enc, 0)),
        ("attention rollout", lambda: viz.attention_rollout_figure(enc, q_enc)),
    ]
    rows, main_total = [], 0.0
    for label, build in figs:
        b, d, size = fig_cost(build, rep)
        if label.startswith("MAIN"):
            main_total += b + d
        rows.append([label, f"{b * 1000:.1f}", f"{d * 1000:.1f}", f"{size / 1024:.1f}"])
    print_table(
        "Figures (median ms; JSON = what st.plotly_chart sends)",
        ["figure", "build ms", "to_json ms", "JSON KiB"],
        rows,
    )
    print(
        f"\nmain page, server side for a new sentence: analyze {an_med * 1000:.0f} ms "
        f"+ figure {main_total * 1000:.0f} ms "
        f"= {(an_med + main_total) * 1000:.0f} ms (median; a cached sentence skips analyze)"
    )

    # ---- all-heads JSON at 32 tokens (synthetic softmax patterns of this model's shape,
    # and the default preset's)
    shapes = [(f"{name} ({cfg.n_enc_layers}x{cfg.n_heads})", cfg.n_enc_layers, cfg.n_heads)]
    try:
        from model.training.presets import PRESETS

        d = PRESETS["default"].model
        if (d.n_enc_layers, d.n_heads) != (cfg.n_enc_layers, cfg.n_heads):
            shapes.append((f"default preset ({d.n_enc_layers}x{d.n_heads})", d.n_enc_layers, d.n_heads))
    except (ImportError, KeyError):
        pass
    shapes.append(("6 layers x 8 heads", 6, 8))
    toks = [f"t{i}" for i in range(32)]
    causal = np.triu(np.ones((32, 32), dtype=bool), 1)
    rows = []
    for label, n_layers, n_heads in shapes:
        p = random_patterns(n_layers, n_heads, 32)
        for hover in ("head", "full"):
            b, d, size = fig_cost(
                lambda p=p, hover=hover: viz.all_heads_grid(p, toks, toks, hover=hover), rep
            )
            rows.append(
                [f"{label}, hover={hover}", f"{b * 1000:.1f}", f"{d * 1000:.1f}", f"{size / 1024:.1f}"]
            )
        pm = np.where(causal, 0, p)
        b, d, size = fig_cost(lambda pm=pm: viz.all_heads_grid(pm, toks, toks, mask=causal), rep)
        rows.append(
            [f"{label}, causal mask overlay", f"{b * 1000:.1f}", f"{d * 1000:.1f}", f"{size / 1024:.1f}"]
        )
    print_table("All-heads figure at 32 tokens (the app uses hover='head')",
                ["grid", "build ms", "to_json ms", "JSON KiB"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
