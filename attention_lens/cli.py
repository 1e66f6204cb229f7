"""``attention-lens``: the command an install puts on the PATH (``pip install -e .`` from a clone).

    attention-lens app [STREAMLIT OPTIONS]     start the app (http://localhost:8501), from any folder
    attention-lens notebook                    JupyterLab on the clone's examples/ (needs the notebook extra)
    attention-lens figure ...                  figures from an inspect folder (``python -m viz``)
    attention-lens COMMAND ...                 every ``python -m model`` command (list, inspect, ...)

The app's script, its pages and the shipped weights live in the clone, not in the installed packages:
the install is editable only. Run from an install that cannot find them, ``app`` and ``notebook`` say
so in one line and exit with status 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The clone this package was installed from (an editable install imports it from there).
CLONE = Path(__file__).resolve().parent.parent
APP_FILES = ("app.py", "app_pages", "assets")


def clone_problem(root: Path = CLONE) -> str | None:
    """One line when ``root`` is not a clone that holds the app (None: it is)."""
    missing = [name for name in APP_FILES if not (root / name).exists()]
    if missing:
        return (f"error: the app is not next to this install ({', '.join(missing)} missing under {root}): "
                "install with `pip install -e .` from a clone of the project, or run "
                "`python3 run.py app` there")
    return None


def _run_app(args: list[str], root: Path) -> int:
    problem = clone_problem(root)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--browser.gatherUsageStats",
           "false", *args]
    return subprocess.call(cmd, cwd=root)


def _run_notebook(args: list[str], root: Path) -> int:
    problem = clone_problem(root)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        print("error: JupyterLab is not installed here: `pip install -e '.[notebook]'` from the clone, "
              "or run `python3 run.py notebook` there", file=sys.stderr)
        return 2
    paths = [str(root), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # refused without it
    cmd = [sys.executable, "-m", "jupyterlab", str(root / "examples"), *as_root, *args]
    return subprocess.call(cmd, cwd=root, env=env)


def main(argv: list[str] | None = None, *, root: Path = CLONE) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if args[0] == "app":
        return _run_app(args[1:], root)
    if args[0] == "notebook":
        return _run_notebook(args[1:], root)
    if args[0] == "figure":
        from viz.__main__ import main as figure_main

        return figure_main(args[1:])
    from model.cli.main import main as model_main

    return model_main(args)


if __name__ == "__main__":
    sys.exit(main())
