"""Regression tests for what a hostile-input probe found: each case once broke or leaked a traceback.

Command-line cases run real subprocesses (as a user would); checkpoint cases call the loader.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.store.formats.own import load_checkpoint
from model.store.problems import CheckpointError
from model.store.registry import REPO_ROOT, UnknownModelError, check_model_name, is_model_name
from tests.cli_run import model_cli

REVERSE = REPO_ROOT / "assets" / "models" / "reverse"


def run_cli(args: list[str], models_dir: Path | None = None, stdin: bytes = b"", shell: str | None = None):
    """``python -m model args``: in this process (tests/cli_run.py), or with ``shell`` as a real
    process whose output goes through the shell (e.g. ``| head -1``)."""
    if shell is None:
        run = model_cli(args, stdin=stdin, models_dir=models_dir)
        return run.returncode, run.stdout, run.stderr
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_LENS_MODELS"}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    if models_dir is not None:
        env["ATTENTION_LENS_MODELS"] = str(models_dir)
    cmd = [sys.executable, "-m", "model", *args]
    cmd = ["bash", "-c", " ".join(_quote(c) for c in cmd) + " " + shell]
    p = subprocess.run(cmd, cwd=REPO_ROOT, env=env, input=stdin, capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def assert_clean_error(rc: int, out: str, err: str, *needles: str) -> str:
    """Exit 2, one stderr line starting 'error:', holding every needle, no traceback."""
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


# ---------------------------------------------------------------- names and export


@pytest.mark.parametrize(
    "name",
    [
        "/",
        "..",
        "../../somewhere",
        "/tmp/x",
        "a/b",
        "a\\b",
        ".hidden",
        "",
        "a" * 65,
        "x..y",
        "name\x00",
        "new\nline",
        "é",
    ],
)
def test_bad_model_names_are_refused(name):
    assert not is_model_name(name)
    with pytest.raises(UnknownModelError):
        check_model_name(name)


@given(st.text(max_size=80))
def test_a_model_name_never_leaves_its_folder(name):
    if is_model_name(name):
        base = Path("/models")
        assert (base / name).parent == base and (base / name).name == name
        assert name not in (".", "..")


@pytest.fixture(scope="module")
def export_area(tmp_path_factory):
    """A models folder holding a copy of `reverse`, next to a sentinel folder that must survive."""
    root = tmp_path_factory.mktemp("export")
    models = root / "area" / "models"
    shutil.copytree(REVERSE, models / "reverse")
    sentinel = root / "area" / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("precious")
    return root, models, sentinel


@pytest.mark.parametrize(
    "name", ["/", "..", "../sentinel", "../../area", str(Path("/tmp")), "a/b", ".reverse"]
)
def test_export_refuses_names_that_are_paths(export_area, name):
    root, models, sentinel = export_area
    before = sorted(p.name for p in models.iterdir())
    rc, out, err = run_cli(
        ["export", "--run", str(REVERSE), "--name", name, "--force", "--test-sentences", "5"],
        models_dir=models,
    )
    assert_clean_error(rc, out, err, "not a model name")
    assert (sentinel / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in models.iterdir()) == before
    assert (models / "reverse" / "model.safetensors").exists()


def test_export_does_not_replace_a_model_without_force(export_area):
    _, models, _ = export_area
    stamp = (models / "reverse" / "config.json").stat().st_mtime_ns
    rc, out, err = run_cli(["export", "--run", str(REVERSE), "--name", "reverse", "--test-sentences", "5"],
                           models_dir=models)
    assert_clean_error(rc, out, err, "--force", "reverse")
    assert (models / "reverse" / "config.json").stat().st_mtime_ns == stamp


def test_export_with_force_replaces_only_inside_the_models_folder(export_area):
    root, models, sentinel = export_area
    outside_before = sorted(str(p.relative_to(root)) for p in root.rglob("*") if models not in p.parents)
    rc, out, err = run_cli(["export", "--run", str(REVERSE), "--name", "reverse", "--force",
                            "--test-sentences", "5"], models_dir=models)
    assert rc == 0, err
    assert "Traceback" not in err
    assert sorted(p.name for p in models.iterdir()) == ["reverse"]  # no temporary folder left behind
    assert load_checkpoint(models / "reverse").metrics["results"]
    outside_after = sorted(str(p.relative_to(root)) for p in root.rglob("*") if models not in p.parents)
    assert outside_after == outside_before
    assert (sentinel / "keep.txt").read_text() == "precious"


def test_train_ship_checks_the_name_before_training(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(REVERSE, models / "reverse")
    rc, out, err = run_cli(["train", "--preset", "reverse", "--ship", "--out", str(tmp_path / "run")],
                           models_dir=models)
    assert_clean_error(rc, out, err, "--force")
    assert not (tmp_path / "run").exists()  # refused before any training started


# ---------------------------------------------------------------- hostile model files


def _reverse_copy(tmp_path: Path) -> Path:
    d = tmp_path / "models" / "reverse"
    shutil.copytree(REVERSE, d)
    return d


@pytest.mark.parametrize("file", ["config.json", "tokenizer.json"])
def test_deeply_nested_json_is_a_checkpoint_error(tmp_path, file):
    d = _reverse_copy(tmp_path)
    (d / file).write_text(deep_json(), encoding="utf-8")
    with pytest.raises(CheckpointError, match=file):
        load_checkpoint(d)


@pytest.mark.parametrize("field,value", [("d_model", 1_048_576), ("n_enc_layers", 1_000_000), ("d_ff", 10**9),
                                         ("max_len", 10**8), ("vocab_size", 10**9), ("n_heads", 100_000)])
def test_huge_sizes_in_a_config_are_refused_before_building(tmp_path, field, value):
    d = _reverse_copy(tmp_path)
    config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    config["model"][field] = value
    (d / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CheckpointError, match=f"{field} must be <="):
        load_checkpoint(d)


def test_a_big_but_allowed_config_is_checked_against_the_weights_before_building(tmp_path):
    """d_model 8192 with 2+2 layers would be a ~9 GB network; the header check must stop it first."""
    d = _reverse_copy(tmp_path)
    config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    config["model"].update(d_model=8192, d_ff=8192, n_heads=8, n_enc_layers=2, n_dec_layers=2)
    (d / "config.json").write_text(json.dumps(config), encoding="utf-8")
    code = (
        "import resource, sys\n"
        "from model.store.bundle import CheckpointError\n"
        "from model.store.formats.own import load_checkpoint\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        f"    load_checkpoint({str(d)!r})\n"
        "except CheckpointError as e:\n"
        "    print('error', e)\n"
        "print('grew_kib', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    assert "does not match its config" in p.stdout, p.stdout
    grew_kib = int(p.stdout.split("grew_kib")[1])
    assert grew_kib < 512 * 1024, f"loading grew the process by {grew_kib / 1024:.0f} MiB"


def test_list_names_a_broken_model_and_lists_the_good_ones(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(REVERSE, models / "reverse")
    shutil.copytree(REVERSE, models / "aaa_broken")  # sorts first: it used to stop the listing
    (models / "aaa_broken" / "config.json").write_text(deep_json(), encoding="utf-8")
    rc, out, err = run_cli(["list"], models_dir=models)
    assert rc == 0, err
    assert "Traceback" not in err
    from model.store.sources.packages import pretrained_models

    installed = {entry.name for entry, _ in pretrained_models()}  # listed from their packages, not the folder
    from_folder = [line for line in out.splitlines() if line.split("\t")[0] not in installed]
    assert from_folder == ["reverse\tattention"]
    assert "aaa_broken" in err and err.startswith("warning:")


def test_translate_with_a_nested_config_is_a_clean_error(tmp_path):
    d = _reverse_copy(tmp_path)
    (d / "config.json").write_text(deep_json(), encoding="utf-8")
    rc, out, err = run_cli(["translate", "--model", "reverse", "abc"], models_dir=d.parent)
    assert_clean_error(rc, out, err, "config.json")


# ---------------------------------------------------------------- output paths and streams


def _bad_outs(tmp: Path) -> dict[str, Path]:
    a_file = tmp / "a_file"
    a_file.write_text("x")
    in_the_way = tmp / "in_the_way"
    (in_the_way / "meta.json").mkdir(parents=True)
    return {
        "proc": Path("/proc/x"),
        "an existing file": a_file,
        "under a file": a_file / "sub",
        "a folder where a file goes": in_the_way,
        "a name too long": tmp / ("n" * 300),
    }


def test_bad_out_paths_are_one_line_errors_and_write_nothing(tmp_path):
    outs = _bad_outs(tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for case, out_dir in outs.items():
        rc, out, err = run_cli(["inspect", "--model", "reverse", "--text", "abc", "--out", str(out_dir)])
        assert_clean_error(rc, out, err), case
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing half-written anywhere


def test_train_with_a_bad_out_is_a_clean_error(tmp_path):
    (tmp_path / "f").write_text("x")
    rc, out, err = run_cli(
        ["train", "--preset", "reverse", "--steps", "1", "--out", str(tmp_path / "f" / "run")]
    )
    assert_clean_error(rc, out, err)


@pytest.mark.e2e
def test_a_closed_pipe_ends_quietly():
    words = ["abc"] * 2000
    rc, out, err = run_cli(["translate", "--model", "reverse", *words], shell="| head -1")
    assert out == "cba\n"
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_invalid_utf8_on_stdin_is_an_error_for_that_line_only():
    rc, out, err = run_cli(["translate", "--model", "reverse"], stdin=b"abc\n\xff\xfeoops\nxyz\n")
    assert rc == 2
    assert out.split("\n") == ["cba", "", "zyx", ""]
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        "error: input 2: The input is not valid UTF-8 text (it holds undecodable bytes)."
    ]


@pytest.mark.parametrize("args", [["evaluate", "--model", "reverse", "-n", "-5"],
                                  ["evaluate", "--model", "reverse", "-n", "0"],
                                  ["train", "--preset", "reverse", "--steps", "-1"]])
def test_counts_below_one_are_refused(args):
    rc, out, err = run_cli(args)
    assert rc == 2
    assert "Traceback" not in err and "at least 1" in err, err
    assert out == ""


# ---------------------------------------------------------------- network exposure


def test_the_app_listens_on_localhost_by_default():
    config = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] in ("localhost", "127.0.0.1")
    run_py = (REPO_ROOT / "run.py").read_text(encoding="utf-8")
    assert "server.address" not in run_py  # run.py must not widen it behind the user's back


def test_the_cli_deletes_only_directly_inside_the_folder_it_owns(tmp_path):
    from model.core.files import delete_inside

    owned = tmp_path / "owned"
    owned.mkdir()
    (owned / "tmpdir").mkdir()
    (owned / "tmpdir" / "f").write_text("x")
    (owned / "tmpfile").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious")
    (owned / "link").symlink_to(outside)
    for bad in [Path("/"), owned / "..", owned, outside, owned / ".." / "outside", owned / "link",
                owned / "tmpdir" / "f"]:
        with pytest.raises(RuntimeError, match="refusing to delete"):
            delete_inside(bad, owned)
    assert (outside / "keep").read_text() == "precious"
    with pytest.raises(RuntimeError, match="not a folder this project owns"):
        delete_inside(Path("/etc"), "/")
    delete_inside(owned / "tmpdir", owned)
    delete_inside(owned / "tmpfile", owned)
    assert sorted(p.name for p in owned.iterdir()) == ["link"]
