"""The documentation: a README short enough to read, whose links all lead somewhere, and the MkDocs site
(docs/, mkdocs.yml) built as ``python3 run.py docs`` builds it, with --strict (a broken internal link, a
missing anchor or a page left out of the menu fails), offline, loading nothing from the network."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
README_MAX_LINES = 300
IMAGES_MAX_BYTES = 2_500_000  # every picture of the README and the site together, kept in git


def _relative_links(text: str) -> list[str]:
    return [t for t in LINK.findall(text) if not t.startswith(("http://", "https://", "mailto:", "#"))]


def test_readme_is_short_and_its_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    links = _relative_links(text)
    assert links, "the README links its documentation"
    missing = [t for t in links if not (REPO_ROOT / t.split("#")[0]).exists()]
    assert not missing, missing


def test_the_chinese_quick_start_is_linked_from_the_top_of_the_readme():
    top = "\n".join(README.read_text(encoding="utf-8").splitlines()[:5])
    assert "(docs/zh/index.md)" in top
    zh = (DOCS / "zh" / "index.md").read_text(encoding="utf-8")
    for step in ("python3 run.py app", "python3 run.py test", "我吃了一个苹果", "交叉注意力", "束搜索"):
        assert step in zh


def test_pictures_stay_small():
    total = sum(p.stat().st_size for p in (DOCS / "images").glob("*.png"))
    assert 0 < total <= IMAGES_MAX_BYTES, total


@pytest.mark.slow  # about 3 s: MkDocs with the Material theme; the quick subset keeps the README checks
def test_site_builds_strict_and_offline(tmp_path: Path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HTTP_PROXY": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9"}  # any attempt to reach the network fails the build
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    for page in ("index.html", "zh/index.html", "guide/attention.html", "design.html", "performance.html"):
        assert page in pages
    # Each page of the guide shows its picture, and the picture was copied into the site.
    for guide in (DOCS / "guide").glob("*.md"):
        for target in _relative_links(guide.read_text(encoding="utf-8")):
            if target.endswith(".png"):
                assert (site / "guide" / target).resolve().exists(), (guide.name, target)
    # Read offline: no page loads a script, a style sheet or a font from elsewhere.
    remote = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.IGNORECASE)
    loading = [p for p in pages if remote.search((site / p).read_text(encoding="utf-8"))]
    assert not loading, loading
