"""The fixture both command-line test files of viz share: a real inspect folder in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.viz.test_cli import _inspect_files


@pytest.fixture
def inspect_dir(tmp_path) -> Path:
    """``python -m model inspect``'s two files for the reverse model, written into tmp_path/out."""
    d = tmp_path / "out"
    d.mkdir()
    for name, data in _inspect_files().items():
        (d / name).write_bytes(data)
    return d
