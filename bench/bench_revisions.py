"""One bench script on two revisions of the code, interleaved: the earlier revision vs the working tree.

    .venv/bin/python bench/bench_revisions.py --before REV [--rounds 5] -- bench/bench_long_inputs.py [ARGS]

The earlier revision is exported (``git archive``) into a temporary folder, and the working tree's copy
of the bench script replaces its own there (one way of measuring for both; ``--own-scripts`` runs each
tree's own copy instead); each round runs the script once in each tree, in alternating order, in a fresh
process (same Python, same installed packages), so the machine's load hits both alike. Every table row
of the script's output (a label followed by numbers only) is collected; the medians over the rounds are
printed side by side with their ratio (working tree / earlier revision) for every column. Asserts
nothing about time: it prints figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export_revision(rev: str, into: Path) -> Path:
    """The files of ``rev`` under ``into`` (nothing of the repository or the working tree is changed)."""
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, stdout=out, check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def number(word: str) -> float | None:
    try:
        return float(word.rstrip("x%"))
    except ValueError:
        return None


def table_rows(output: str) -> dict[str, list[float]]:
    """``label -> numbers`` for every line that is a label followed by at least two numbers only."""
    rows = {}
    for line in output.splitlines():
        words = line.split()
        values = [number(w) for w in words]
        first = next((i for i, v in enumerate(values) if v is not None), None)
        if first is None or first == 0 or len(words) - first < 2 or None in values[first:]:
            continue
        rows[" ".join(words[:first])] = [float(v) for v in values[first:]]
    return rows


def run(tree: Path, script: list[str]) -> str:
    # git commands in the script (e.g. a baseline read with `git show`) still find this repository
    env = {**os.environ, "GIT_DIR": str(ROOT / ".git"), "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, *script], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{script[0]} failed in {tree} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="git revision to compare the working tree with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--own-scripts", action="store_true", help="run each tree's own copy of the script")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- the bench script and its arguments")
    args = ap.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    if not script or args.rounds < 1:
        ap.error("give --rounds >= 1 and a bench script after --")
    samples: dict[str, dict[str, list[list[float]]]] = {"before": defaultdict(list), "now": defaultdict(list)}
    with tempfile.TemporaryDirectory(prefix="attention-lens-bench-") as tmp:
        trees = {"before": export_revision(args.before, Path(tmp)), "now": ROOT}
        if not args.own_scripts:
            shutil.copyfile(ROOT / script[0], trees["before"] / script[0])
        for i in range(args.rounds):
            order = ("before", "now") if i % 2 == 0 else ("now", "before")
            for which in order:
                for label, values in table_rows(run(trees[which], script)).items():
                    samples[which][label].append(values)
            print(f"round {i + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"{' '.join(script)}: median of {args.rounds} interleaved rounds, {args.before} vs working tree")
    print(f"{'row':<24}{'column':>7}{'before':>10}{'now':>10}{'ratio':>8}")
    for label, before_runs in samples["before"].items():
        now_runs = samples["now"].get(label)
        if not now_runs:
            continue
        for col in range(min(len(before_runs[0]), len(now_runs[0]))):
            b = statistics.median(r[col] for r in before_runs if col < len(r))
            n = statistics.median(r[col] for r in now_runs if col < len(r))
            ratio = f"{n / b:8.2f}" if b else f"{'-':>8}"
            print(f"{label[:24]:<24}{col + 1:>7}{b:10.3f}{n:10.3f}{ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
