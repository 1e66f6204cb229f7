#!/usr/bin/env python3
"""One entry point for a fresh machine (Python 3.11 + pip, nothing else):

    python3 run.py app     start the app (http://localhost:8501)
    python3 run.py test    run the test suite (spread over up to 4 cores; extra arguments go to pytest)

Both create ./.venv on first use and install what they need into it. torch is pinned to the
CPU build (2.13.0) before anything else, so no other package can pull a multi-GB CUDA build.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".installed"
TORCH = "torch==2.13.0"


def _requirements_key() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_env() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py may be started by an older python3
        sys.exit(f"Python 3.11 or newer is needed (this is {sys.version.split()[0]}).")
    if not PY.exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _requirements_key():
        return
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    print("installing dependencies into .venv (first run only) ...", flush=True)
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(_requirements_key())


def _workers(args: list[str]) -> list[str]:
    """Spread the tests over the machine's cores, one file per worker at a time (a file's servers and
    models load once), unless the command line chooses (``-n N``, ``-p no:xdist``)."""
    if any(a == "-n" or a.startswith(("-n", "--numprocesses")) or a == "no:xdist" for a in args):
        return []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return ["-n", str(max(1, min(cores, 4))), "--dist", "loadfile"] if cores > 1 else []


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("app", "test"):
        print(__doc__)
        return 2
    ensure_env()
    os.chdir(ROOT)
    if argv[0] == "app":
        cmd = [str(PY), "-m", "streamlit", "run", "app.py", "--browser.gatherUsageStats", "false", *argv[1:]]
    else:
        cmd = [str(PY), "-m", "pytest", *_workers(argv[1:]), *argv[1:]]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
