"""What the tests need from the system: Debian's Chromium (browser tests and image export)."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"


def require_chromium() -> str:
    """Debian's Chromium, which ``python3 run.py test`` installs before the tests start; a test never
    installs it. Missing: the test fails with the one line saying what to run."""
    found = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if found:
        return found
    problem = os.environ.get("ATTENTION_LENS_SETUP_PROBLEM")
    pytest.fail(problem or f"{CHROMIUM} is missing: run the tests with `python3 run.py test` (as root it "
                "installs chromium and fonts-noto-cjk first), "
                "or `apt-get install -y chromium fonts-noto-cjk`", pytrace=False)
