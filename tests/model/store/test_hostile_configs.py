"""Model folders whose JSON Python's parser cannot turn into values (an integer of 5,000 digits is
past int's string-conversion limit and raises ValueError, not JSONDecodeError), and command-line
options whose values would take the machine: each a one-line message, and nothing else breaks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model.store.bundle import read_json
from model.store.formats.own import load_checkpoint
from model.store.problems import CheckpointError
from model.store.sources import shipped
from tests.cli_run import model_cli
from tests.model.store.test_hostile_input import assert_clean_error
from tests.paths import REPO_ROOT

REVERSE = REPO_ROOT / "assets" / "models" / "reverse"
HUGE_INT = "9" * 5000


def _with_huge_int(folder: Path, file: str = "config.json") -> Path:
    text = (folder / file).read_text(encoding="utf-8")
    if file == "config.json":
        text = text.replace('"d_model": 64', f'"d_model": {HUGE_INT}', 1)
        assert HUGE_INT in text
    else:
        text = f'{{"v": {HUGE_INT}}}'
    (folder / file).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def models(tmp_path) -> Path:
    """A models folder with a good model and one whose config holds a 5,000-digit integer."""
    root = tmp_path / "models"
    shutil.copytree(REVERSE, root / "reverse")
    shutil.copytree(REVERSE, root / "aaa_huge")  # sorts first: a broken first folder once stopped the listing
    _with_huge_int(root / "aaa_huge")
    return root


@pytest.mark.parametrize("file", ["config.json", "tokenizer.json", "history.json", "metrics.json"])
def test_a_5000_digit_integer_is_a_checkpoint_error_naming_the_file(tmp_path, file):
    folder = shutil.copytree(REVERSE, tmp_path / "reverse")
    _with_huge_int(folder, file)
    with pytest.raises(CheckpointError, match=file) as err:
        load_checkpoint(folder)
    assert "\n" not in str(err.value) and "4300" in str(err.value)


def test_read_json_turns_every_parse_failure_into_one_line(tmp_path):
    for name, data in {"huge": f"[{HUGE_INT}]".encode(), "latin1": b'{"a": "\xe9"}',
                       "nan_word": b"{oops}", "deep": b"[" * 100_000 + b"]" * 100_000}.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        with pytest.raises(CheckpointError, match=f"{name}.json") as err:
            read_json(path)
        assert "\n" not in str(err.value), name


def test_translate_from_such_a_folder_is_one_line(models):
    run = model_cli(["translate", "--model-dir", str(models / "aaa_huge"), "abc"])
    assert_clean_error(run.returncode, run.stdout, run.stderr, "aaa_huge/config.json", "4300")


def test_list_skips_such_a_folder_with_a_warning_and_lists_the_rest(models):
    run = model_cli(["list"], models_dir=models)
    assert run.returncode == 0, run
    assert "Traceback" not in run.stderr
    assert "reverse\tattention" in run.stdout.splitlines()
    assert "aaa_huge" not in run.stdout
    assert run.stderr.startswith("warning: model 'aaa_huge' is broken"), run.stderr


def test_the_pages_still_open_with_such_a_folder_among_the_models(models, monkeypatch):
    monkeypatch.setattr(shipped, "MODELS_DIR", models)
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=300)
    at.query_params.update({"model": "reverse", "text": "attention"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    at.switch_page("app_pages/single.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.get("plotly_chart"), "the single-head page drew no figure"
    # The broken model is offered last, and choosing it says what is wrong instead of failing.
    picker = at.sidebar.selectbox[0]
    assert picker.options[-1] == "aaa_huge", picker.options
    picker.set_value("aaa_huge").run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped
    assert len(errors) == 1 and "aaa_huge" in errors[0] and "4300" in errors[0], errors


# ---------------------------------------------------------------- the command line's bounds


def test_train_from_a_model_of_another_config_writes_nothing(tmp_path):
    out = tmp_path / "run"
    run = model_cli(["train", "--preset", "reverse", "--out", str(out), "--steps", "1",
                     "--init-from", str(REPO_ROOT / "assets" / "models" / "default")])
    assert_clean_error(run.returncode, run.stdout, run.stderr, "another config", "d_model")
    assert not out.exists()  # not even the run folder or its tokenizer.json


def test_train_from_a_folder_that_is_no_checkpoint_writes_nothing(tmp_path):
    out = tmp_path / "run"
    run = model_cli(["train", "--preset", "reverse", "--out", str(out), "--steps", "1",
                     "--init-from", str(tmp_path / "nothing-here")])
    assert_clean_error(run.returncode, run.stdout, run.stderr, "nothing-here", "config.json")
    assert not out.exists()


@pytest.mark.parametrize("command", [["atlas", "--model", "reverse"],
                                     ["train", "--preset", "reverse", "--steps", "1"],
                                     ["train-pitfalls"], ["train-variants"],
                                     ["evaluate", "--model", "reverse"]])
def test_thread_counts_past_the_machines_cores_are_refused(command, tmp_path):
    from model.cli.common import machine_cores

    too_many = machine_cores() + 1
    for value in (str(too_many), "100000"):
        run = model_cli([*command, "--threads", value, *(["--out", str(tmp_path / "r")]
                                                         if command[0] == "train" else [])])
        assert run.returncode == 2, run
        assert f"at most this machine's {machine_cores()} cores" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
    assert not (tmp_path / "r").exists()


def test_a_file_with_the_longest_legal_name_is_written_whole(tmp_path):
    """The temporary file beside it must not need a longer name than the target's."""
    from model.core.files import atomic_write

    target = tmp_path / ("n" * 255)
    atomic_write(target, b"payload")
    assert target.read_bytes() == b"payload"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left
