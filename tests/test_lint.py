"""The code follows the project's lint rules (pyproject.toml's [tool.ruff]): the suite runs ruff, so a
long line or an unused import is a failing test, not a count in a closing note. No cache: the test
writes nothing."""

import subprocess
import sys

from tests.paths import REPO_ROOT


def test_ruff_finds_nothing():
    command = [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "--no-cache", "."]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
