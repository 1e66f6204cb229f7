"""`python -m model ...` as a user runs it: each command's ``main(argv)`` in this process, with its
own stdin/stdout/stderr and exit status (tests/cli_run.py), launched once by the module fixture
`cli`; the tests then check one result each. One end-to-end test runs real processes and checks
they print exactly what the in-process runs print.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from model.network.trace import resolve
from model.store.registry import REPO_ROOT, load_model
from tests.cli_run import Run, model_cli

WORDS = ["attention", "transformer", "keyboard", "zebra", "python", "lens", "abc"]
STDIN_WORDS = ["hello", "quickly", "encoder"]
LONG = "abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmn"  # 40 letters; the didactic max_len is 16
HTML = "<img src=x onerror=alert(1)>"
UNKNOWN = ["ab12cd", "zeb\N{GRINNING FACE}ra", HTML]


def _run(args: list[str], stdin: str = "", models_dir: Path | None = None) -> Run:
    return model_cli(args, stdin=stdin, models_dir=models_dir)


def _process(args: list[str], stdin: str = "") -> Run:
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_LENS_MODELS"}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    p = subprocess.run([sys.executable, "-m", "model", *args], cwd=REPO_ROOT, env=env, input=stdin,
                       capture_output=True, text=True, encoding="utf-8", timeout=180)
    return Run(args, p.returncode, p.stdout, p.stderr)


def _corrupt_copy(root: Path, corrupt) -> Path:
    """assets/models/reverse copied to root/models/reverse, then broken; returns root/models."""
    models = root / "models"
    shutil.copytree(REPO_ROOT / "assets" / "models" / "reverse", models / "reverse")
    corrupt(models / "reverse")
    return models


def _truncate(d: Path) -> None:
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 3])


@pytest.fixture(scope="module")
def cli_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def cli(cli_tmp) -> dict[str, Run]:
    tmp = cli_tmp
    rev = ["--model", "reverse"]
    jobs = {
        "list": (["list"], {}),
        # one process for the happy path, the over-long input and the unknown characters (in this order)
        "translate": (["translate", *rev, *WORDS, LONG, *UNKNOWN], {}),
        "stdin": (["translate", *rev], {"stdin": "".join(w + "\n" for w in STDIN_WORDS)}),
        "nope": (["translate", "--model", "nope", "attention"], {}),
        "blank": (["translate", *rev, "  \t  "], {}),
        "inspect": (["inspect", *rev, "--text", "attention", "--out", str(tmp / "inspect")], {}),
        "inspect_target": (["inspect", *rev, "--text", "attention", "--target", "hello",
                            "--out", str(tmp / "inspect_target")], {}),
        "inspect_layer": (["inspect", *rev, "--text", "attention", "--kind", "cross", "--layer", "1",
                           "--out", str(tmp / "inspect_layer")], {}),
        "inspect_head": (["inspect", *rev, "--text", "attention", "--kind", "cross", "--layer", "1",
                          "--head", "2", "--out", str(tmp / "inspect_head")], {}),
        "inspect_over": (["inspect", *rev, "--text", "attention", "--max-mb", "0.05",
                          "--out", str(tmp / "inspect_over")], {}),
        "inspect_no_layer": (["inspect", *rev, "--text", "attention", "--head", "1",
                              "--out", str(tmp / "x")], {}),
        "evaluate": (["evaluate", *rev, "-n", "50", "--threads", "1"], {}),
        "train_nope": (["train", "--preset", "nope", "--out", str(tmp / "train_nope")], {}),
        "truncated": (["translate", *rev, "attention"], {"models_dir": _corrupt_copy(tmp / "t", _truncate)}),
    }
    return {name: _run(args, **kw) for name, (args, kw) in jobs.items()}


@pytest.mark.e2e
def test_real_processes_print_what_the_in_process_runs_print(cli):
    """``python -m model`` as a new process: same output, warnings and exit status as ``main``."""
    for name, args, stdin in [("translate", ["translate", "--model", "reverse", *WORDS, LONG, *UNKNOWN], ""),
                              ("stdin", ["translate", "--model", "reverse"],
                               "".join(w + "\n" for w in STDIN_WORDS)),
                              ("nope", ["translate", "--model", "nope", "attention"], "")]:
        real = _process(args, stdin)
        assert (real.returncode, real.stdout, real.stderr) == (cli[name].returncode, cli[name].stdout,
                                                              cli[name].stderr), (real, cli[name])


def _clean_error(run: Run, *needles: str) -> str:
    """Exit 2 with exactly one stderr line, 'error: ...', containing every needle; no traceback."""
    assert run.returncode == 2, run
    assert "Traceback" not in run.stdout + run.stderr, run
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), run
    for needle in needles:
        assert needle in lines[0], (needle, run)
    return lines[0]


# ---------------------------------------------------------------- list


def test_list(cli):
    run = cli["list"]
    assert run.returncode == 0, run
    assert run.stderr == ""
    rows = [line.split("\t") for line in run.stdout.splitlines()]
    assert all(len(r) == 2 for r in rows), run
    names = [name for name, _ in rows]
    assert {"reverse", "copy", "sort"} <= set(names)
    assert len(names) == len(set(names))
    assert all(example.strip() for _, example in rows), run
    assert dict(rows)["reverse"] == "attention"


# ---------------------------------------------------------------- translate


def _translate_outputs(cli) -> list[str]:
    run = cli["translate"]
    assert run.returncode == 0, run
    assert "Traceback" not in run.stderr, run
    out = run.stdout.split("\n")
    assert out[-1] == "", run
    assert len(out) - 1 == len(WORDS) + 1 + len(UNKNOWN), run  # one line per input
    return out[:-1]


def _warnings(cli) -> list[str]:
    lines = cli["translate"].stderr.splitlines()
    assert all(line.startswith("warning: ") for line in lines), cli["translate"]
    return lines


def test_translate_reverses_each_argument(cli):
    out = _translate_outputs(cli)
    assert out[: len(WORDS)] == [w[::-1] for w in WORDS], cli["translate"]


def test_translate_warns_only_about_the_odd_inputs(cli):
    # plain lowercase words get no warning: one for the long input, one per unknown-character input,
    # one more for the HTML (28 characters: truncated too)
    assert len(_warnings(cli)) == 1 + len(UNKNOWN) + 1, cli["translate"]


def test_translate_reads_lines_from_stdin(cli):
    run = cli["stdin"]
    assert run.returncode == 0, run
    assert run.stdout.splitlines() == [w[::-1] for w in STDIN_WORDS], run


def test_unknown_model_is_a_clean_error_listing_the_models(cli):
    line = _clean_error(cli["nope"], "nope", "reverse", "copy", "sort")
    assert "Available models" in line
    assert cli["nope"].stdout == ""


def test_blank_text_is_a_clean_error(cli):
    line = _clean_error(cli["blank"])
    assert "empty" in line.lower(), line


def test_long_input_is_truncated_with_a_warning(cli):
    out = _translate_outputs(cli)[len(WORDS)]
    assert out.isalpha() and len(out) <= 15, out
    warning = _warnings(cli)[0]
    assert "truncated" in warning, warning
    assert "40" in warning and "15" in warning, warning  # from what length, to what length


def test_unknown_characters_warn_and_do_not_crash(cli):
    out = _translate_outputs(cli)[len(WORDS) + 1 :]
    assert all(line == "" or (line.isalpha() and line.isascii()) for line in out), out  # no <unk>, no HTML
    assert "<" not in cli["translate"].stdout
    warnings = _warnings(cli)[1:]
    unknown = [w for w in warnings if "unknown" in w]
    assert len(unknown) == len(UNKNOWN), warnings
    assert "'1'" in unknown[0] and "'2'" in unknown[0], unknown
    assert "\N{GRINNING FACE}" in unknown[1], unknown
    assert "'<'" in unknown[2] and "'='" in unknown[2] and "' '" in unknown[2], unknown
    assert "28" in warnings[2] and "truncated" in warnings[2], warnings  # the HTML is also too long


# ---------------------------------------------------------------- inspect


@pytest.fixture(scope="module")
def reverse_bundle():
    return load_model("reverse")


def _inspected(cli, cli_tmp: Path, name: str):
    run = cli[name]
    assert run.returncode == 0, run
    out = cli_tmp / name
    with np.load(out / "activations.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    return arrays, meta


def test_inspect_writes_every_hook_as_float32(cli, cli_tmp, reverse_bundle):
    arrays, meta = _inspected(cli, cli_tmp, "inspect")
    model, task = reverse_bundle.model, reverse_bundle.task
    assert sorted(arrays) == sorted(model.hook_names())
    assert all(a.dtype == np.float32 for a in arrays.values())
    # The same pass, run directly: same shapes (batch axis 1) and the same numbers.
    prepared = task.prepare("attention", model.cfg.max_len)
    target = prepared.prefix + task.tokenizer.encode("noitnetta")
    _, cache = model.run_with_cache(torch.tensor([prepared.source_ids]), torch.tensor([target]))
    for name, tensor in cache.items():
        assert arrays[name].shape == tuple(tensor.shape), name
        if not name.endswith("hook_pos_embed"):  # [pos, d_model]: one table for the whole batch
            assert arrays[name].shape[0] == 1, name
        np.testing.assert_allclose(arrays[name], tensor.numpy(), atol=1e-5, err_msg=name)


def test_inspect_meta_matches_the_arrays_and_the_model(cli, cli_tmp, reverse_bundle):
    arrays, meta = _inspected(cli, cli_tmp, "inspect")
    model = reverse_bundle.model
    src, tgt = meta["source_tokens"], meta["target_tokens"]
    assert src == list("attention") + ["<eos>"]
    assert tgt == ["<bos>"] + list("noitnetta")
    h = model.cfg.n_heads
    for i in range(model.cfg.n_enc_layers):
        assert arrays[f"encoder.blocks.{i}.attn.hook_pattern"].shape == (1, h, len(src), len(src))
    for i in range(model.cfg.n_dec_layers):
        assert arrays[f"decoder.blocks.{i}.self_attn.hook_pattern"].shape == (1, h, len(tgt), len(tgt))
        assert arrays[f"decoder.blocks.{i}.cross_attn.hook_pattern"].shape == (1, h, len(tgt), len(src))
    assert arrays["hook_logits"].shape == (1, len(tgt), model.cfg.vocab_size)
    # output_text is what `translate` prints for the same input
    assert meta["output_text"] == _translate_outputs(cli)[WORDS.index("attention")] == "noitnetta"
    assert meta["teacher_forced"] is False
    assert meta["config"] == model.cfg.to_dict()
    assert sum(meta["parameters"].values()) == model.num_parameters() == meta["total_parameters"]
    sizes = meta["shape_symbols"]
    assert sizes["L_src"] == len(src) and sizes["L_tgt"] == len(tgt) and sizes["B"] == 1
    trace = meta["shape_trace"]
    assert len(trace) > 20
    for step in trace:
        assert tuple(step["out_shape"]) == resolve(tuple(step["out_symbol"]), sizes), step
        assert [tuple(s) for s in step["in_shapes"]] == [
            resolve(tuple(s), sizes) for s in step["in_symbols"]
        ], step
        if step["hook"]:
            assert tuple(step["out_shape"]) == arrays[step["hook"]].shape, step
    # steps: one per output letter plus the final <eos>, each choosing the next target token
    assert [s["token"] for s in meta["steps"]] == list("noitnetta") + ["<eos>"]


def test_inspect_with_target_teacher_forces(cli, cli_tmp):
    arrays, meta = _inspected(cli, cli_tmp, "inspect_target")
    assert meta["teacher_forced"] is True
    assert meta["target_tokens"] == ["<bos>"] + list("hello")
    assert meta["output_text"] == "hello"
    assert meta["source_tokens"] == list("attention") + ["<eos>"]
    assert arrays["decoder.blocks.0.cross_attn.hook_pattern"].shape[2:] == (6, 10)
    assert meta["shape_symbols"]["L_tgt"] == 6


def test_inspect_of_one_layer_or_head_holds_that_part_of_the_whole(cli, cli_tmp):
    whole, _ = _inspected(cli, cli_tmp, "inspect")
    layer, meta = _inspected(cli, cli_tmp, "inspect_layer")
    assert meta["scope"]["kind"] == "cross" and meta["scope"]["layer"] == 1 and meta["scope"]["head"] is None
    squares = ("raw_scores", "scores", "pattern")
    # the block's hooks; of the squares, cross-attention's only
    assert set(layer) == {name for name in whole if name.startswith("decoder.blocks.1.")
                          and ("cross_attn" in name or not name.endswith(squares))}
    for name, value in layer.items():
        np.testing.assert_array_equal(value, whole[name])
    head, meta = _inspected(cli, cli_tmp, "inspect_head")
    assert meta["scope"]["head"] == 2
    squares = {n for n in head if ".head" in n}
    assert squares == {f"decoder.blocks.1.cross_attn.hook_{w}.head2" for w in ("raw_scores", "scores",
                                                                             "pattern")}
    for name in squares:
        np.testing.assert_array_equal(head[name], whole[name.removesuffix(".head2")][:, 2:3])


def test_inspect_past_its_limit_writes_nothing_and_names_a_part_that_fits(cli, cli_tmp):
    run = cli["inspect_over"]
    assert run.returncode == 2 and not (cli_tmp / "inspect_over").exists()
    assert "past the limit of 0.05 MiB (--max-mb)" in run.stderr, run.stderr
    suggested = run.stderr.split("e.g. ", 1)[1].split(" (", 1)[0].split()
    again = _run(["inspect", "--model", "reverse", "--text", "attention", "--max-mb", "0.05", *suggested,
                  "--out", str(cli_tmp / "inspect_suggested")])
    assert again.returncode == 0, again
    arrays, _ = _inspected({"inspect_suggested": again}, cli_tmp, "inspect_suggested")
    size = sum(a.nbytes for a in arrays.values())
    assert size <= 0.05 * 2**20
    no_layer = cli["inspect_no_layer"]
    assert no_layer.returncode == 2 and "--head needs --layer" in no_layer.stderr


# ---------------------------------------------------------------- evaluate, train


def test_evaluate_prints_chrf(cli):
    run = cli["evaluate"]
    assert run.returncode == 0, run
    line = next(line for line in run.stdout.splitlines() if "chrF" in line)
    fields = line.split()
    chrf = float(fields[fields.index("chrF") + 1])
    assert chrf >= 95, line


def test_train_unknown_preset(cli, cli_tmp):
    _clean_error(cli["train_nope"], "nope", "reverse")
    assert not (cli_tmp / "train_nope").exists()


# ---------------------------------------------------------------- corrupt checkpoints


def test_corrupt_weights_are_a_clean_error_naming_the_file(cli, cli_tmp):
    run = cli["truncated"]
    line = _clean_error(run, "model.safetensors")
    assert str(cli_tmp / "t" / "models" / "reverse") in line  # the copy ATTENTION_LENS_MODELS points at
    assert run.stdout == ""
