"""Server time of the first answer for a new sentence: today's code vs a baseline, interleaved.

    .venv/bin/python bench/bench_first_answer.py [--model default] [--runs 25] [--baseline REV]

What the server does when a user types a new sentence on the main page: ``analyze`` (tokenize,
greedy decoding, one hooked and traced forward pass, numpy conversion) + the single-head figure
(build + ``plotly.io.to_json``, what ``st.plotly_chart`` sends).

Protocol (machines here are noisy): every run uses a sentence not seen before, and each run of
today's code is followed by the same request on the baseline in the same process, so load on
the machine hits both alike; medians over ``--runs`` (>= 20) rounds and their ratio are printed,
with the breakdown of today's request. The baseline is the code at ``--baseline`` (default: the
commit before this work) for the parts that changed: the shape trace's conversion to rows, the
heatmap module and the figure theme, loaded from git into this process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import plotly.io as pio  # noqa: E402
import torch  # noqa: E402

import viz  # noqa: E402
from model.network import trace as trace_module  # noqa: E402
from model.run import analysis  # noqa: E402
from model.store.registry import load_model  # noqa: E402

#: The last commit before the first-answer work (trace rows, heatmap hover).
DEFAULT_BASELINE = "d122d7a"

SUBJECTS = ["我们", "你们", "他们", "老师", "学生", "朋友", "孩子", "妈妈", "爸爸", "同学"]
PLACES = ["公园", "学校", "商店", "图书馆", "医院", "车站", "海边", "山上"]
TIMES = ["明天早上", "今天下午", "周末", "晚上", "下个月"]


def new_sentences(n: int) -> list[str]:
    """n different 12-or-so-character sentences (no cache can help: each is new)."""
    out = []
    for i in range(n):
        s, p, t = SUBJECTS[i % len(SUBJECTS)], PLACES[(i // 2) % len(PLACES)], TIMES[(i // 3) % len(TIMES)]
        out.append(f"{s}{t}去{p}散步吧")
    assert len(set(out)) == n, "sentences must all differ"
    return out


def _module_at(rev: str, path: str, name: str) -> types.ModuleType:
    """The source of ``path`` at git revision ``rev``, run as a module named ``name``."""
    show = ["git", "show", f"{rev}:{path}"]
    source = subprocess.run(show, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while the source runs
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102 - our own history
    return module


def baseline_heatmap(rev: str) -> types.ModuleType:
    """The heatmap module at ``rev``, drawing with the theme of ``rev`` (both changed since)."""
    heatmap = _module_at(rev, "viz/heatmap.py", "viz._baseline_heatmap")
    heatmap.theme = _module_at(rev, "viz/theme.py", "viz._baseline_theme")
    return heatmap


def asdict_rows(self) -> list[dict]:
    """The baseline's trace conversion (dataclasses.asdict per step)."""
    from dataclasses import asdict

    rows = []
    for step in self.steps:
        d = asdict(step)
        d["in_shapes"] = [list(s) for s in step.in_shapes]
        d["out_shape"] = list(step.out_shape)
        d["in_symbols"] = [list(s) for s in step.in_symbols]
        d["out_symbol"] = list(step.out_symbol)
        rows.append(d)
    return rows


def request(bundle, text: str, heatmap, baseline: bool) -> dict[str, float]:
    """One main-page request; seconds per part."""
    current_rows = trace_module.ShapeTrace.to_dicts
    if baseline:
        trace_module.ShapeTrace.to_dicts = asdict_rows
    try:
        t0 = time.perf_counter()
        result = analysis.analyze(bundle, text)
        t1 = time.perf_counter()
    finally:
        trace_module.ShapeTrace.to_dicts = current_rows
    pattern = result.attention("encoder")[0, 0]
    scores = result.attention("encoder", "scores")[0, 0]
    queries, keys = result.tokens_for("encoder")
    fig = heatmap.attention_heatmap(pattern, queries, keys, scores_2d=scores, title="x", subtitle="y")
    t2 = time.perf_counter()
    pio.to_json(fig, validate=False)
    t3 = time.perf_counter()
    return {"analyze": t1 - t0, "figure build": t2 - t1, "figure to_json": t3 - t2, "total": t3 - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision of the baseline")
    args = ap.parse_args()
    if args.runs < 20:
        ap.error("--runs must be at least 20 (the protocol's median)")
    torch.set_num_threads(1)  # as the app
    bundle = load_model(args.model)
    old_heatmap = baseline_heatmap(args.baseline)
    sentences = new_sentences(2 * args.runs + 2)
    # Warm-up (first-call costs of torch and plotly), not counted.
    request(bundle, sentences.pop(), viz, baseline=False)
    request(bundle, sentences.pop(), old_heatmap, baseline=True)
    now: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    for i in range(args.runs):
        # Alternate which goes first, so neither always runs on a warmer cache.
        pair = [(False, now), (True, base)] if i % 2 == 0 else [(True, base), (False, now)]
        for is_baseline, sink in pair:
            sink.append(request(bundle, sentences.pop(), old_heatmap if is_baseline else viz, is_baseline))

    def med(runs: list[dict[str, float]], part: str) -> float:
        return statistics.median(r[part] for r in runs) * 1000

    print(f"model {args.model}, {args.runs} rounds, new sentence each request, torch threads 1, "
          f"baseline {args.baseline}")
    print(f"{'part (median ms)':<18}{'today':>9}{'baseline':>10}{'ratio':>8}")
    for part in ("analyze", "figure build", "figure to_json", "total"):
        a, b = med(now, part), med(base, part)
        print(f"{part:<18}{a:9.1f}{b:10.1f}{a / b:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
