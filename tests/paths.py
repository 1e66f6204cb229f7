"""Where the repository is, for tests in any folder below tests/."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
