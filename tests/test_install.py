"""``pip install -e .`` from this clone into someone else's environment: the ``attention-lens`` command
and the packages work from a fresh interpreter started outside the clone, the install takes the
top-level names docs/api.md lists, and ``attention-lens app`` away from a clone says so in one line.

The throw-away environment is a venv without pip of its own whose dependencies come from the project's
environment (a ``.pth`` line naming its site-packages); the project's pip installs into it
(``pip --python``), editable, without touching the project's environment.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from attention_lens import cli
from tests.paths import REPO_ROOT

#: The top-level names an install of the project puts on a user's path (docs/api.md says the same).
TOP_LEVEL = {"attention_lens", "model", "viz", "app_support", "strings"}


@pytest.mark.slow  # slow: whole suite only (~5 s: a venv and an editable install); quick keeps the unit below
def test_an_editable_install_elsewhere_runs_from_any_folder(tmp_path):
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    before = sorted(p.name for p in Path(sysconfig.get_paths()["purelib"]).iterdir())
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                           "--disable-pip-version-check", "--no-deps", "--no-build-isolation", "-e",
                           str(REPO_ROOT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ours = Path(sysconfig.get_paths()["purelib"])
    assert sorted(p.name for p in ours.iterdir()) == before  # the project's environment untouched
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    command = env_dir / "bin" / "attention-lens"
    shown = subprocess.run([str(command), "--help"], cwd=outside, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "attention-lens app" in shown.stdout
    listed = subprocess.run([str(command), "list"], cwd=outside, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and "reverse" in listed.stdout.split(), listed.stderr[-2000:]
    probe = ("import attention_lens.cli as c, model, viz; "
             "print(c.CLONE, model.__file__, c.clone_problem() is None)")
    found = subprocess.run([str(python), "-c", probe], cwd=outside, capture_output=True, text=True,
                           timeout=120)
    clone, model_file, has_app = found.stdout.split()
    assert Path(clone) == REPO_ROOT and Path(model_file).is_relative_to(REPO_ROOT) and has_app == "True"
    finder = next(Path(purelib).glob("__editable___attention_lens_*_finder.py")).read_text()
    mapping = finder.split("MAPPING", 1)[1].split("\n", 1)[0]
    assert {name for name in TOP_LEVEL if f"'{name}'" in mapping} == TOP_LEVEL, mapping


def test_the_app_away_from_a_clone_says_so_in_one_line(tmp_path, capsys):
    assert cli.clone_problem(REPO_ROOT) is None
    assert cli.main(["app"], root=tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "app.py" in err and "pip install -e ." in err
    assert cli.main(["notebook"], root=tmp_path) == 2
    assert "\n" not in capsys.readouterr().err.strip()


def test_the_command_hands_model_commands_to_python_m_model(capsys):
    assert cli.main(["list"]) == 0
    assert "reverse" in capsys.readouterr().out.split()
    assert cli.main([]) == 2 and "attention-lens app" in capsys.readouterr().out
