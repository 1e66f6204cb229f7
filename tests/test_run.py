"""`python3 run.py test` sets up the Debian packages the suite needs before pytest starts: checked
against a fake ``apt-get`` on PATH that records its calls and "installs" into a folder of the
test's own (``ATTENTION_LENS_SYSTEM_ROOT``), so nothing on the machine is touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import run

FAKE_APT = """#!{python}
import os, sys, time
with open(os.environ["FAKE_APT_LOG"], "a") as log:
    log.write(" ".join(a for a in sys.argv[1:] if not a.startswith("DPkg::")).replace("-o ", "") + "\\n")
command = next(a for a in sys.argv[1:] if not a.startswith("-") and "::" not in a)
if command == os.environ.get("FAKE_APT_FAIL"):
    print("E: Unable to locate package chromium", file=sys.stderr)
    sys.exit(100)
if command == "update":
    time.sleep(0.5)  # long enough for a second start to arrive while the first is busy
if command == "install":
    markers = dict(m.split("=", 1) for m in os.environ["FAKE_APT_MARKERS"].split(";"))
    root = os.environ["ATTENTION_LENS_SYSTEM_ROOT"]
    for name in sys.argv[sys.argv.index("install") + 1:]:
        if name in markers:
            path = os.path.join(root, markers[name])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
"""


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    """A fake apt-get first on PATH, an empty system root, and a lock folder of this test's own;
    returns a function reading the calls it recorded."""
    bin_dir, root, log = tmp_path / "bin", tmp_path / "root", tmp_path / "apt.log"
    bin_dir.mkdir()
    root.mkdir()
    script = bin_dir / "apt-get"
    script.write_text(FAKE_APT.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_APT_LOG", str(log))
    monkeypatch.setenv("FAKE_APT_MARKERS", ";".join(f"{n}={m}" for n, m in run.SYSTEM_PACKAGES))
    monkeypatch.setenv("ATTENTION_LENS_SYSTEM_ROOT", str(root))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the machine-wide lock, here inside the test's folder
    monkeypatch.setattr(run.tempfile, "tempdir", None)

    def calls() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    calls.root = root
    return calls


def _install_markers(root: Path) -> None:
    for _, marker in run.SYSTEM_PACKAGES:
        (root / marker).parent.mkdir(parents=True, exist_ok=True)
        (root / marker).touch()


def test_missing_packages_are_installed_with_one_update_and_one_install(fake_apt):
    assert run.ensure_system_packages(is_root=True) is None
    assert fake_apt() == ["update -qq", "install -y -qq chromium fonts-noto-cjk"]
    assert run.missing_system_packages(fake_apt.root) == []
    # a second start finds everything and calls nothing
    assert run.ensure_system_packages(is_root=True) is None
    assert len(fake_apt()) == 2


def test_only_what_is_missing_is_installed(fake_apt):
    (fake_apt.root / "usr/bin").mkdir(parents=True)
    (fake_apt.root / "usr/bin/chromium").touch()
    assert run.ensure_system_packages(is_root=True) is None
    assert fake_apt() == ["update -qq", "install -y -qq fonts-noto-cjk"]


def test_two_starts_at_the_same_moment_install_once(fake_apt):
    code = ("import sys, run; problem = run.ensure_system_packages(is_root=True); print(problem); "
            "sys.exit(bool(problem))")
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=run.ROOT, env=dict(os.environ),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert fake_apt() == ["update -qq", "install -y -qq chromium fonts-noto-cjk"]


def test_everything_present_calls_nothing(fake_apt):
    _install_markers(fake_apt.root)
    assert run.ensure_system_packages(is_root=True) is None
    assert fake_apt() == []


@pytest.mark.parametrize("failing", ["update", "install"])
def test_a_failing_apt_get_is_one_line_and_the_whole_suite_does_not_start(fake_apt, monkeypatch, capsys,
                                                                           failing):
    monkeypatch.setenv("FAKE_APT_FAIL", failing)
    started = []
    monkeypatch.setattr(run, "ensure_env", lambda: None)
    monkeypatch.setattr(run.subprocess, "call", lambda cmd, **kw: started.append((cmd, kw)) or 0)
    monkeypatch.setattr(run.os, "geteuid", lambda: 0)
    assert run.main(["test"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"apt-get {failing}" in err[0] and "Unable to locate package" in err[0], err
    assert "apt-get install -y chromium fonts-noto-cjk" in err[0] and "--quick" in err[0], err
    assert started == [], "pytest must not start without the browser the whole suite needs"
    # tests chosen by hand still run; the ones needing the browser fail with the same line
    assert run.main(["test", "tests/viz/test_numbers.py"]) == 0
    (cmd, kw), = started
    assert kw["env"][run.SETUP_PROBLEM_ENV] == err[0]


def test_without_root_or_apt_get_it_says_what_to_run(fake_apt, monkeypatch):
    line = run.ensure_system_packages(is_root=False)
    assert line and "\n" not in line and "root" in line
    assert "apt-get install -y chromium fonts-noto-cjk" in line
    monkeypatch.setenv("PATH", str(fake_apt.root))  # no apt-get anywhere
    line = run.ensure_system_packages(is_root=True)
    assert line and "no apt-get" in line
    assert fake_apt() == []


def test_the_quick_subset_needs_no_system_packages(fake_apt, monkeypatch):
    started = []
    monkeypatch.setattr(run, "ensure_env", lambda: None)
    monkeypatch.setattr(run.subprocess, "call", lambda cmd, **kw: started.append((cmd, kw)) or 0)
    assert run.main(["test", "--quick"]) == 0
    assert fake_apt() == [], "the quick subset installs nothing"
    (cmd, kw), = started
    assert cmd[cmd.index("-m", 2) + 1] == run.QUICK_MARKERS and "--quick" not in cmd
    assert kw["env"]["ATTENTION_LENS_TEST_LANGUAGES"] == "en"


def test_tests_never_install_system_packages():
    for path in (run.ROOT / "tests").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name == Path(__file__).name:
            continue
        assert '"apt-get", "install"' not in text and "apt-get install -y -qq" not in text, path


def test_notebook_opens_jupyterlab_on_the_examples_with_the_projects_python(monkeypatch):
    calls = []
    monkeypatch.setattr(run, "ensure_env", lambda: calls.append("env"))
    monkeypatch.setattr(run, "ensure_notebook", lambda: calls.append("notebook"))
    monkeypatch.setattr(run.subprocess, "call", lambda cmd, **kw: calls.append(cmd) or 0)
    monkeypatch.setattr(run.os, "chdir", lambda path: None)
    monkeypatch.setattr(run.os, "geteuid", lambda: 0)
    assert run.main(["notebook", "--no-browser"]) == 0
    assert calls[:2] == ["env", "notebook"]  # the extra is installed before anything starts
    examples = str(run.ROOT / "examples")
    assert calls[2] == [str(run.PY), "-m", "jupyterlab", examples, "--allow-root", "--no-browser"]
