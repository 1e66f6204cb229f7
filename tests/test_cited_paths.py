"""Every file path the project's code, tests and documents cite still exists: a path in a docstring,
a comment or the README that names a moved or deleted file sends a reader nowhere."""

from __future__ import annotations

import re
import subprocess

from tests.paths import REPO_ROOT

#: A path into one of the project's folders, ending in a file name (no placeholders: ``<key>``, ``*``).
FOLDERS = "model|viz|app_support|app_pages|strings|tests|bench|assets|attention_lens|examples|docs"
CITED = re.compile(rf"(?<![\w./-])((?:{FOLDERS})/[\w./-]*\w\.(?:py|md|json|toml|ipynb))")


def _tracked_texts() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return [f for f in listed.stdout.split() if f.endswith((".py", ".md", ".toml"))]


def test_every_cited_path_exists():
    missing = {
        f"{cited} (cited in {name})"
        for name in _tracked_texts()
        for cited in CITED.findall((REPO_ROOT / name).read_text(encoding="utf-8", errors="replace"))
        if not (REPO_ROOT / cited).exists()
    }
    assert not missing, sorted(missing)


def test_the_citation_pattern_finds_paths_and_leaves_placeholders():
    text = "see model/run/analysis.py, `viz/<key>.py`, app_pages/glue/*.py and tests/app/test_deck.py."
    assert CITED.findall(text) == ["model/run/analysis.py", "tests/app/test_deck.py"]
