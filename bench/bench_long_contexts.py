"""SmolLM2 at 1,024 and 2,048 tokens: our analysis beside transformers' eager forward with
``output_attentions=True`` on the same ids, one torch thread, side by side in one run.

    .venv/bin/python bench/bench_long_contexts.py [--rounds 2] [--parts 1 2 3 4 5] [--length 1024] [--new 32]
                                                  [--page-lengths 1024 2048]
    .venv/bin/python bench/bench_long_contexts.py --random-weights --length 8192 --device cuda

Every measured case runs in a fresh process (peak memory is its own), rounds interleaved (A, B, C,
A, B, C) so a busy machine slows every case alike, with the C library's mmap threshold the app sets
(model/run/runtime.py: a decoding step's growing key/value cache otherwise fragments the heap). In
each: the model is loaded, freed memory is
given back (gc, malloc_trim), the resident set is read ("loaded"), the peak is reset
(/proc/self/clear_refs), then the case runs; "peak" is the peak since loading (VmHWM), "increase" =
peak - loaded, "whole" the process's peak including the load (getrusage ru_maxrss).

Part 1 (``--length``, 1,024, and ``--new``, 32): transformers (the same GGUF,
``attn_implementation="eager"``, float32) one forward over ``length + new`` ids (1,056) keeping every
head's weights; ours: the whole analysis ``analyze(keep=attention_only, max_new=new)`` of the
``length``-token prompt (one pass: the recorded prompt pass is the prefill, model/run/one_pass.py), the
same with ``max_new=0`` (the prompt alone), the two passes it replaced (``whole_trace=True``: decode,
then the hooked pass over prompt + output), and the hooked pass alone as analyze runs it
(``record_attention`` + ``trace_shapes``). The ratios to read: analyze / transformers (target <= 0.6x),
analyze (new=0) / the pass alone (target <= 1.0x), increase / transformers' increase (target <= 0.3x).
Part 2: one head's (scores, pattern) recomputed from the recorded inputs (``head_attention``), wall
and CPU ms (medians of 5 calls), after the analyses of parts 1 and 3 and after the pass alone at both
lengths.
Part 3: the first analysis at 2,048 tokens (the budget's limit): wall time and peak.
Part 4: the hooked pass, fused vs explicit, at 128-512 tokens: where ``FUSED_FROM_CELLS`` sits.
Part 5 (``--page-lengths``, 1,024 and 2,048): the first view, as a user sees it, through Streamlit's
AppTest in a fresh process per length: the model loaded first (a short text opened), then the app opened
on a link with a text of that many tokens (the single-head page, the start page, with the sidebar's
default new tokens): "first view" is that run, from the typed input to the drawn chart (the analysis
inside it timed apart); "second page" the all-heads page on the same input, its analysis already there.
CPU seconds of the process (every thread) and wall; the targets: first view <= 6 s at 1,024, <= 15 s at
2,048, a second page <= 1.5 s. The tokens column is what the analysis read (prompt + output; the
model's input limit may cut a long prompt).
``--random-weights``: a Transformer of SmolLM2's shape and transformers' Llama of the same shape, both
random (no GGUF, no tokenizer: random ids), on ``--device``; parts 1 (without analyze) and 2 only.
Prints figures and ratios (ours / transformers); asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 2**20
HEADS_TIMED = ((0, 0), (7, 3), (15, 5), (29, 8))  # (layer, head) recomputed in part 2
THRESHOLD_LENGTHS = (128, 256, 384, 512)
#: SmolLM2-135M's shape, for --random-weights (what model/store/formats/gguf.py reads from its file).
SMOLLM2_SHAPE = dict(vocab_size=49152, d_model=576, n_heads=9, n_kv_heads=3, d_ff=1536, n_enc_layers=0,
                     n_dec_layers=30, decoder_only=True, dropout=0.0, norm_first=True, pad_id=2,
                     scale_embeddings=False, mask_padding=False, norm="rmsnorm", norm_eps=1e-5,
                     activation="silu", gated_ffn=True, pos_encoding="rope", rope_theta=1e5, qkv_bias=False,
                     out_bias=False, ffn_bias=False, tie_embeddings=True)
PARAGRAPH = (
    "The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz "
    "combined movable metal type with an oil-based ink and a wooden press adapted from the ones used to "
    "make wine. Within fifty years, presses in more than two hundred cities had printed millions of "
    "books, and the price of a copy fell so far that students, merchants and priests could own the "
    "texts they once had to borrow or copy by hand. ")


# ---- the child: one case in its own process -------------------------------------------------------

def _peak() -> int:
    """The whole process's peak: ru_maxrss also holds the peaks of threads that have exited, which
    clear_refs does not reset (a load that ran threads keeps its peak there)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _peak_since_reset() -> int:
    """The address space's peak (VmHWM) since /proc/self/clear_refs reset it."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def _settle_and_reset() -> tuple[int, int]:
    """(the load's peak, RSS after loading once freed memory went back); then the peak is reset."""
    import ctypes
    import gc

    import psutil

    load_peak = _peak()
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    loaded = psutil.Process().memory_info().rss
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")  # VmHWM restarts from the current RSS
    return load_peak, loaded


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def _load(case: str, args):
    """(the model to run, the bundle or None)."""
    import torch

    if case == "hf":
        import transformers

        if args.random_weights:
            s = SMOLLM2_SHAPE
            config = transformers.LlamaConfig(
                vocab_size=s["vocab_size"], hidden_size=s["d_model"], intermediate_size=s["d_ff"],
                num_hidden_layers=s["n_dec_layers"], num_attention_heads=s["n_heads"],
                num_key_value_heads=s["n_kv_heads"], max_position_embeddings=args.length,
                rope_theta=s["rope_theta"], rms_norm_eps=s["norm_eps"], tie_word_embeddings=True)
            config._attn_implementation = "eager"
            torch.manual_seed(0)
            return transformers.LlamaForCausalLM(config).eval().to(args.device), None
        from model.store.sources.packages import PRETRAINED, pretrained_path

        gguf = pretrained_path(next(e for e in PRETRAINED if e.name == "smollm2"))
        hf = transformers.AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, attn_implementation="eager", dtype=torch.float32)
        return hf.eval(), None
    if args.random_weights:
        from model.network.config import ModelConfig
        from model.network.transformer import Transformer

        torch.manual_seed(0)
        model = Transformer(ModelConfig(**SMOLLM2_SHAPE, max_len=args.length)).eval().to(args.device)
        return model, None
    from model.store.registry import load_model

    bundle = load_model("smollm2")
    return bundle.model, bundle


def hooked_pass(model, ids: list[int], device: str = "cpu") -> dict:
    """The hooked pass as analyze() runs it on a decoder-only model: attention inputs recorded, no hook
    tensor kept, the shape trace on, logits of the last row only; returns what it recorded."""
    import torch

    from model.network.recorded import record_attention
    from model.network.trace import trace_shapes
    from model.run.analysis import attention_only

    x = torch.tensor([ids], device=device)
    with trace_shapes(), record_attention() as recorded:
        model.run_with_cache(x, names_filter=attention_only, logits_from=len(ids) - 1)
    return recorded


def _head_ms(compute_head, reps: int = 5) -> list[tuple[float, float]]:
    """(wall, CPU) milliseconds of each HEADS_TIMED head's recomputation, medians of ``reps``."""
    times = []
    for layer, head in HEADS_TIMED:
        runs = []
        for _ in range(reps):
            start, cpu = time.perf_counter(), time.process_time()
            compute_head(layer, head)
            runs.append(((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000))
        times.append((statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)))
    return times


def _threshold(model, ids: list[int], rounds: int = 3) -> dict:
    """Part 4: wall and CPU seconds of the hooked pass at each length, fused and explicit (medians of
    ``rounds``, interleaved)."""
    from model.network import attention

    out = {}
    for n in THRESHOLD_LENGTHS:
        times: dict[str, list[tuple[float, float]]] = {"fused": [], "explicit": []}
        for _ in range(rounds):
            for path, cells in (("fused", 0), ("explicit", 2**62)):
                attention.FUSED_FROM_CELLS = cells
                start, cpu = time.perf_counter(), time.process_time()
                hooked_pass(model, ids[:n])
                times[path].append((time.perf_counter() - start, time.process_time() - cpu))
        out[str(n)] = {f"{path}_{clock}": statistics.median(t[i] for t in runs)
                       for path, runs in times.items() for i, clock in enumerate(("wall", "cpu"))}
    return out


def open_pages(text: str) -> dict:
    """Part 5, in this (fresh) process: the first view of ``text`` on the single-head page and the all-heads
    page after it, through AppTest; their wall and CPU seconds, the analysis's, and the tokens it read."""
    import torch
    from streamlit.testing.v1 import AppTest

    from app_support import gateway
    from app_support import pages as page_registry
    from tests.app_harness import scan_installed_components_once

    scan_installed_components_once()  # the server scans once, at its start: not part of a page view

    analyses: list[tuple[int, float, float]] = []  # (tokens read, wall, CPU) of each analysis computed
    analyze = gateway.analyze

    def timed(*args, **kwargs):
        start, cpu = time.perf_counter(), time.process_time()
        result = analyze(*args, **kwargs)
        analyses.append((len(result.target_tokens), time.perf_counter() - start, time.process_time() - cpu))
        return result

    gateway.analyze = timed
    torch.set_num_threads(1)
    app = str(ROOT / "app.py")
    warm = AppTest.from_file(app, default_timeout=600)
    warm.query_params.update({"model": "smollm2", "text": "The model is loaded first."})
    start = time.perf_counter()
    warm.run()  # the model loaded, the app's modules imported: not what a first view costs
    load_s = time.perf_counter() - start
    analyses.clear()
    at = AppTest.from_file(app, default_timeout=600)
    at.query_params.update({"model": "smollm2", "text": text})
    figures: dict = {"load_s": load_s}
    for name, run in (("first", at.run), ("second", lambda: at.switch_page(
            page_registry.page("heads").file).run())):
        start, cpu = time.perf_counter(), time.process_time()
        run()
        figures[f"{name}_wall"] = time.perf_counter() - start
        figures[f"{name}_cpu"] = time.process_time() - cpu
        errors = [e.message for e in at.exception] + [e.value for e in at.error]
        figures[f"{name}_charts"] = len(at.get("plotly_chart"))
        figures[f"{name}_problems"] = "; ".join(str(e) for e in errors)[:120]
    figures["analyses"] = analyses
    return figures


def run_case(case: str, args) -> dict:
    """Load, settle, run ``case`` once; its figures."""
    import torch

    if case == "page":
        return {"case": case, **open_pages(json.loads(Path(args.ids).read_text())["text"])}

    from model.run.runtime import configure_malloc

    torch.set_num_threads(1)
    configure_malloc()  # the app's setting (model/run/runtime.py), for every case alike
    spec = json.loads(Path(args.ids).read_text()) if args.ids else {}
    start = time.perf_counter()
    model, bundle = _load(case, args)
    load_s = time.perf_counter() - start
    ids = spec.get("ids") or torch.randint(0, SMOLLM2_SHAPE["vocab_size"], (args.length,),
                                           generator=torch.Generator().manual_seed(0)).tolist()
    if args.device == "cuda":  # CUDA's first kernels and handles: not what a pass costs
        if case == "hf":
            with torch.no_grad():
                model(torch.tensor([ids[:128]], device=args.device))
        else:
            hooked_pass(model, ids[:128], args.device)
        _sync(args.device)
    load_peak, loaded = _settle_and_reset()
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    figures: dict = {}
    start, cpu = time.perf_counter(), time.process_time()
    if case == "hf":
        with torch.no_grad():
            out = model(torch.tensor([ids], device=args.device), output_attentions=True)
        _sync(args.device)
        figures["weights_bytes"] = sum(a.numel() * a.element_size() for a in out.attentions)
        n = len(ids)
    elif case in ("analyze", "analyze0", "twopass"):
        from model.run.analysis import analyze, attention_only

        new = 0 if case == "analyze0" else args.new
        two = case == "twopass"
        result = analyze(bundle, spec["text"], keep=attention_only, max_new=new, whole_trace=two)
        n = len(result.target_tokens)
        figures["same_ids"] = result.prepared.prefix == ids
        figures["kept_bytes"] = sum(r.nbytes for r in result.attention_inputs.values())
    elif case == "threshold":
        figures["threshold"] = _threshold(model, ids)
        n = len(ids)
    else:
        if case == "explicit":
            from model.network import attention

            attention.FUSED_FROM_CELLS = 2**62
        recorded = hooked_pass(model, ids, args.device)
        _sync(args.device)
        n = len(ids)
        figures["kept_bytes"] = sum(r.nbytes for r in recorded.values())
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = _peak_since_reset()
    if case.startswith("analyze"):
        figures["head_ms"] = _head_ms(lambda layer, head: result.head_attention("decoder", layer, head))
    elif case == "pass":
        layers = list(recorded.values())
        figures["head_ms"] = _head_ms(lambda layer, head: layers[layer].compute(head))
    device_peak = torch.cuda.max_memory_allocated() if args.device == "cuda" else None
    return {"case": case, "tokens": n, "load_s": load_s, "wall_s": wall, "cpu_s": cpu, "loaded": loaded,
            "peak": peak, "whole": max(load_peak, peak, _peak()), "device_peak": device_peak, **figures}


# ---- the parent: inputs, the rounds, the table -----------------------------------------------------

def make_inputs(lengths: list[int], folder: Path) -> dict[int, Path]:
    """A file per length with a text of exactly that many SmolLM2 tokens and its ids."""
    from model.store.registry import load_model

    bundle = load_model("smollm2")
    words = (PARAGRAPH * 40).split(" ")

    def ids_of(m: int) -> list[int]:
        return bundle.task.prepare(" ".join(words[:m]), 10**6).source_ids

    files = {}
    for n in lengths:
        lo, hi = 1, len(words)  # the most words whose text is at most n tokens
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if len(ids_of(mid)) <= n else (lo, mid - 1)
        text = " ".join(words[:lo])
        ids = bundle.task.prepare(text, bundle.cfg.max_len).source_ids
        files[n] = folder / f"ids_{n}.json"
        files[n].write_text(json.dumps({"text": text, "ids": ids}))
    return files


def child(case: str, args, ids_file: Path | None, length: int) -> dict:
    command = [sys.executable, __file__, "--child", case, "--length", str(length), "--device", args.device,
               "--new", str(args.new)]
    if ids_file is not None:
        command += ["--ids", str(ids_file)]
    if args.random_weights:
        command.append("--random-weights")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        return {"case": case, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _row(r: dict) -> str:
    if "error" in r:
        return f"{r['case']:<10} failed: {r['error']}"
    device = f" {r['device_peak'] / MB:>8.0f}" if r.get("device_peak") is not None else ""
    heads = " ".join(f"{wall:.0f}/{cpu:.0f}" for wall, cpu in r.get("head_ms", ()))
    return (f"{r['case']:<10} {r['tokens']:>6} {r['load_s']:>7.1f} {r['wall_s']:>7.2f} {r['cpu_s']:>6.2f} "
            f"{r['loaded'] / MB:>7.0f} {r['peak'] / MB:>7.0f} {(r['peak'] - r['loaded']) / MB:>8.0f} "
            f"{r['whole'] / MB:>7.0f}{device}  {heads}")


def print_rounds(title: str, results: list[dict], device: bool) -> None:
    print(f"\n{title}")
    extra = f" {'dev MB':>8}" if device else ""
    heads = " ".join(f"L{li}H{hi}" for li, hi in HEADS_TIMED)
    print(f"{'case':<10} {'tokens':>6} {'load s':>7} {'wall s':>7} {'CPU s':>6} {'loaded':>7} {'peak':>7} "
          f"{'increase':>8} {'whole':>7}{extra}  head ms wall/CPU {heads}")
    for r in results:
        print(_row(r))
        if "same_ids" in r and not r["same_ids"]:
            print("           (the analysis read other ids than the file's)")


def print_ratios(results: list[dict]) -> None:
    """Ours / transformers, round by round (round i of each case against round i of hf)."""
    by_case: dict[str, list[dict]] = {}
    for r in results:
        if "error" not in r:
            by_case.setdefault(r["case"], []).append(r)
    theirs = by_case.get("hf", [])
    print("\nours / transformers, per round: wall, CPU, increase (peak - loaded), peak since loading, "
          "whole peak")
    for case, rows in by_case.items():
        if case == "hf":
            continue
        for i, (a, b) in enumerate(zip(rows, theirs, strict=False)):
            grow = (a["peak"] - a["loaded"]) / max(1, b["peak"] - b["loaded"])
            print(f"{case:<10} round {i + 1}: wall {a['wall_s'] / b['wall_s']:.2f}x, "
                  f"CPU {a['cpu_s'] / b['cpu_s']:.2f}x, increase {grow:.2f}x, "
                  f"peak {a['peak'] / b['peak']:.2f}x, whole {a['whole'] / b['whole']:.2f}x")
    alone = by_case.get("pass", [])
    for i, (a, b) in enumerate(zip(by_case.get("analyze0", []), alone, strict=False)):
        print(f"analyze (new=0) / the pass alone, round {i + 1}: wall {a['wall_s'] / b['wall_s']:.2f}x, "
              f"CPU {a['cpu_s'] / b['cpu_s']:.2f}x")
    for i, (a, b) in enumerate(zip(by_case.get("analyze", []), by_case.get("twopass", []), strict=False)):
        print(f"analyze (one pass) / two passes, round {i + 1}: wall {a['wall_s'] / b['wall_s']:.2f}x, "
              f"CPU {a['cpu_s'] / b['cpu_s']:.2f}x")
    if theirs:
        kept = next((r["kept_bytes"] for r in results if "kept_bytes" in r), 0)
        print(f"transformers' attentions output: {theirs[0]['weights_bytes'] / MB:.0f} MB; "
              f"our analysis keeps {kept / MB:.0f} MB (q and k)")


def print_threshold(results: list[dict]) -> None:
    from model.network.config import FUSED_FROM_CELLS

    heads = SMOLLM2_SHAPE["n_heads"]
    from_tokens = int((FUSED_FROM_CELLS / heads) ** 0.5) + 1
    print(f"\nPart 4: the hooked pass, fused vs explicit (median of 3 in each process); FUSED_FROM_CELLS = "
          f"{FUSED_FROM_CELLS:,} = heads x query x key: fused from {from_tokens} tokens for {heads} heads")
    print(f"{'tokens':>6} {'cells':>10} {'default':>8}  per process: CPU s fused / explicit = ratio "
          f"(wall s fused / explicit)")
    for n in THRESHOLD_LENGTHS:
        cells = heads * n * n
        cols = [r["threshold"][str(n)] for r in results if "threshold" in r]
        row = "  ".join(f"{c['fused_cpu']:.3f} / {c['explicit_cpu']:.3f} = "
                        f"{c['fused_cpu'] / c['explicit_cpu']:.2f} "
                        f"({c['fused_wall']:.3f} / {c['explicit_wall']:.3f})" for c in cols)
        path = "fused" if cells >= FUSED_FROM_CELLS else "explicit"
        print(f"{n:>6} {cells:>10,} {path:>8}  {row}")


def print_pages(results: list[dict]) -> None:
    print("\nPart 5: the first view (the single-head page on a link with the text; the model loaded before) "
          "and a second page (all heads) on the same input; seconds wall / CPU")
    print(f"{'prompt':>6} {'tokens':>6} {'first view':>14} {'its analysis':>14} {'second page':>14} "
          f"{'charts':>6}  problems")
    for r in results:
        if "error" in r:
            print(f"{r['prompt']:>6} failed: {r['error']}")
            continue
        tokens, a_wall, a_cpu = r["analyses"][0] if r["analyses"] else (0, float("nan"), float("nan"))
        more = f" (+{len(r['analyses']) - 1} more analyses)" if len(r["analyses"]) > 1 else ""
        problems = "; ".join(p for p in (r["first_problems"], r["second_problems"]) if p)
        print(f"{r['prompt']:>6} {tokens:>6} {r['first_wall']:>6.2f} / {r['first_cpu']:<5.2f} "
              f"{a_wall:>6.2f} / {a_cpu:<5.2f} {r['second_wall']:>6.2f} / {r['second_cpu']:<5.2f} "
              f"{r['first_charts']:>3},{r['second_charts']:<2}  {problems}{more}")


def interleaved(cases: list[str], rounds: int, args, ids_file: Path | None | dict, length: int) -> list[dict]:
    """``ids_file``: one file for every case, or case -> (file, length) where a case reads others."""
    results = []
    for _ in range(rounds):
        for case in cases:
            own = ids_file.get(case, (None, length)) if isinstance(ids_file, dict) else (ids_file, length)
            results.append(child(case, args, *own))
            print(".", end="", flush=True)
    return sorted(results, key=lambda r: cases.index(r["case"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="fresh processes per case")
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--length", type=int, default=1024, help="part 1's tokens")
    parser.add_argument("--long", type=int, default=2048, help="part 3's tokens")
    parser.add_argument("--new", type=int, default=32, help="part 1's new tokens")
    parser.add_argument("--page-lengths", type=int, nargs="+", default=[1024, 2048],
                        help="part 5's prompts, in tokens")
    parser.add_argument("--random-weights", action="store_true")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_case(args.child, args)))
        return
    print(f"SmolLM2-135M{' (random weights)' if args.random_weights else ' (Q4_1 GGUF, float32)'} on "
          f"{args.device}, one torch thread, {args.rounds} fresh processes per case, interleaved; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs. Memory in MB (2^20 bytes).")
    if args.random_weights:
        results = interleaved(["hf", "pass", "explicit"], args.rounds, args, None, args.length)
        print_rounds(f"Part 1: {args.length} random ids", results, args.device == "cuda")
        print_ratios(results)
        return
    with tempfile.TemporaryDirectory() as tmp:
        whole = args.length + args.new
        lengths = {args.length, whole, args.long - 1, args.long, max(THRESHOLD_LENGTHS), *args.page_lengths}
        files = make_inputs(sorted(lengths), Path(tmp))
        if 1 in args.parts:
            cases = ["hf", "analyze", "analyze0", "twopass", "pass"]
            own = {c: (files[args.length], args.length) for c in cases}
            own["hf"] = (files[whole], whole)  # transformers reads prompt + output at once
            results = interleaved(cases, args.rounds, args, own, args.length)
            print_rounds(f"Part 1 (and 2: head ms): a {args.length}-token prompt, {args.new} new tokens "
                         f"(transformers: {whole} ids; analyze0: new=0)", results, False)
            print_ratios(results)
        if 2 in args.parts:  # also timed in parts 1 and 3; here alone, with the pass at both lengths
            for n in (args.length, args.long):
                results = interleaved(["pass"], args.rounds, args, files[n], n)
                print_rounds(f"Part 2: the hooked pass at {n} tokens, then single heads recomputed", results,
                             False)
        if 3 in args.parts:
            # a prompt of one token less, one new token: the analysis reads prompt + its output token
            args.new = 1
            results = interleaved(["analyze"], args.rounds, args, files[args.long - 1], args.long)
            print_rounds(f"Part 3 (and 2): the first analysis at {args.long} tokens", results, False)
        if 4 in args.parts:
            results = interleaved(["threshold"], args.rounds, args, files[max(THRESHOLD_LENGTHS)], 512)
            print_threshold(results)
        if 5 in args.parts:
            results = []
            for _ in range(args.rounds):
                for n in args.page_lengths:
                    results.append({**child("page", args, files[n], n), "prompt": n})
                    print(".", end="", flush=True)
            print_pages(sorted(results, key=lambda r: r["prompt"]))


if __name__ == "__main__":
    main()
