"""Weight snapshots during training, the shipped snapshot model, and the "Training, step by step" page: the
numbers the page shows equal a direct run of the saved weights."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from streamlit.testing.v1 import AppTest

from app_support.i18n import text as tr
from app_support.i18n.check import untranslated
from app_support.reverse_models import clamp_head
from model.data.tasks import SyntheticTask
from model.lab.training import reverse_alignment, snapshot_exact_match, step_run, timeline
from model.network.config import ModelConfig, TrainConfig
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.formats.own import load_checkpoint
from model.store.problems import CheckpointError
from model.store.registry import REPO_ROOT, load_model
from model.training.evaluate import evaluate_model
from model.training.presets import PRESETS, SNAPSHOT_MODEL
from model.training.snapshots import (
    SNAPSHOT_DIR,
    SnapshotSaver,
    available_steps,
    copy_snapshots,
    load_snapshot,
    read_snapshot,
    snapshot_bundle,
    snapshot_files,
    snapshot_steps,
)
from model.training.train import step_series, train
from tests.strings.test_strings import _visible_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGE = str(REPO_ROOT / "app_pages" / "training.py")


# --------------------------------------------------------------------------- saving and loading


@pytest.mark.parametrize("max_steps,n", [(600, 10), (20, 10), (7, 3), (3, 10)])
def test_snapshot_steps_are_evenly_spaced_from_zero_to_the_end(max_steps, n):
    steps = snapshot_steps(max_steps, n)
    assert steps[0] == 0 and steps[-1] == max_steps and steps == sorted(set(steps))
    assert len(steps) == min(n, max_steps) + 1
    gaps = np.diff(steps)
    assert gaps.max() - gaps.min() <= 1  # as even as whole steps allow


def test_snapshot_steps_refuse_nonsense():
    with pytest.raises(ValueError):
        snapshot_steps(0, 10)
    with pytest.raises(ValueError):
        snapshot_steps(10, 0)


def _tiny(steps: int = 6):
    task = SyntheticTask("reverse", max_len=6)
    mc = ModelConfig(vocab_size=task.tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32, n_enc_layers=1,
                     n_dec_layers=1, dropout=0.0, max_len=10)
    tc = TrainConfig(lr=3e-3, warmup_steps=2, max_steps=steps, batch_tokens=256, eval_every=0, save_every=0,
                     log_every=3, num_threads=1)
    return mc, tc, task


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 6-step run saving snapshots at 0, 3, 6; and the weights it started from."""
    out = tmp_path_factory.mktemp("run")
    mc, tc, task = _tiny()
    torch.manual_seed(tc.seed)  # train() seeds the same way before building the network
    start = {k: v.clone() for k, v in Transformer(mc).state_dict().items()}
    model = train(mc, tc, task, out, on_step=SnapshotSaver(out, snapshot_steps(6, 2)))
    return out, start, model


def test_snapshots_hold_the_weights_of_their_step(tiny_run):
    out, start, model = tiny_run
    files = snapshot_files(out)
    assert list(files) == [0, 3, 6]
    bundle = load_checkpoint(out)
    with safe_open(str(files[3]), framework="pt") as f:
        assert {f.get_slice(k).get_dtype() for k in f.keys()} == {"F16"}
    first = read_snapshot(files[0], bundle.cfg).state_dict()
    last = read_snapshot(files[6], bundle.cfg).state_dict()
    middle = read_snapshot(files[3], bundle.cfg).state_dict()
    for k, v in model.state_dict().items():
        # float16 copies of the start and of the end of training
        torch.testing.assert_close(first[k], start[k].half().float(), rtol=0, atol=0)
        torch.testing.assert_close(last[k], v.half().float(), rtol=0, atol=0)
    assert any(not torch.equal(middle[k], first[k]) for k in first)
    assert any(not torch.equal(middle[k], last[k]) for k in last)


def test_load_snapshot_gives_the_final_weights_without_a_file_and_names_missing_steps(tiny_run, tmp_path):
    out, _, model = tiny_run
    bundle = load_checkpoint(out)
    assert available_steps(bundle) == [0, 3, 6]
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    assert copy_snapshots(out, shipped, bundle.info["step"]) == [0, 3]  # the final step is the model itself
    assert sorted(p.name for p in (shipped / SNAPSHOT_DIR).iterdir()) == [
        "step-000000.safetensors", "step-000003.safetensors"]
    bundle.directory = shipped
    assert available_steps(bundle) == [0, 3, 6]
    final = load_snapshot(bundle, 6).state_dict()
    for k, v in bundle.model.state_dict().items():
        assert torch.equal(final[k], v)
    assert load_snapshot(bundle, 6) is not bundle.model  # a copy: the page never touches the loaded model
    with pytest.raises(CheckpointError, match=r"no snapshot at step 4.*\[0, 3, 6\]"):
        load_snapshot(bundle, 4)
    moved = snapshot_bundle(bundle, 3)
    assert moved.info["step"] == 3 and moved.task is bundle.task


def test_a_broken_snapshot_is_a_checkpoint_error_naming_the_file(tiny_run, tmp_path):
    out, _, _ = tiny_run
    bundle = load_checkpoint(out)
    state = {k: v.half() for k, v in bundle.model.state_dict().items() if k != "unembed.weight"}
    wrong = dict(state)
    name = next(iter(wrong))
    wrong[name] = torch.zeros(3, 3, dtype=torch.float16)
    save_file(wrong, str(tmp_path / "wrong.safetensors"))
    with pytest.raises(CheckpointError, match="does not match its config"):
        read_snapshot(tmp_path / "wrong.safetensors", bundle.cfg)
    nan = dict(state)
    nan[name] = torch.full_like(state[name], float("nan"))
    save_file(nan, str(tmp_path / "nan.safetensors"))
    with pytest.raises(CheckpointError, match="NaN"):
        read_snapshot(tmp_path / "nan.safetensors", bundle.cfg)
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointError, match="junk.safetensors"):
        read_snapshot(tmp_path / "junk.safetensors", bundle.cfg)


@pytest.mark.e2e
def test_train_command_ships_the_snapshots_with_their_test_figures(tmp_path):
    env = {**os.environ, "ATTENTION_LENS_MODELS": str(tmp_path / "models"), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO_ROOT)}
    p = subprocess.run([sys.executable, "-m", "model", "train", "--preset", SNAPSHOT_MODEL, "--steps", "4",
                        "--threads", "1", "--ship", "--test-sentences", "20"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    shipped = tmp_path / "models" / SNAPSHOT_MODEL
    # 4 steps: snapshot_steps(4, 10) = 0..4; the last is the shipped weights, not a file
    assert sorted(snapshot_files(shipped)) == [0, 1, 2, 3]
    assert sorted(snapshot_files(tmp_path / "runs" / SNAPSHOT_MODEL)) == [0, 1, 2, 3, 4]
    metrics = json.loads((shipped / "metrics.json").read_text())
    rows = metrics["snapshots"]
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4] and all(r["n"] == 20 for r in rows)
    assert rows[-1]["exact_match"] == metrics["results"]["task"]["exact_match"]
    # shipped for whoever runs the app: readable by all, not private like its staging folder
    for path in [shipped, *shipped.rglob("*")]:
        assert path.stat().st_mode & 0o777 == (0o755 if path.is_dir() else 0o644), path


# --------------------------------------------------------------------------- the shipped snapshot model


@functools.cache
def bundle():
    return load_model(SNAPSHOT_MODEL)


def test_the_shipped_snapshot_model_has_evenly_spaced_float16_snapshots():
    b = bundle()
    preset = PRESETS[SNAPSHOT_MODEL]
    assert b.cfg == preset.model and b.info["step"] == preset.train.max_steps
    want = snapshot_steps(preset.train.max_steps, preset.snapshots)
    assert available_steps(b) == want and len(want) == preset.snapshots + 1
    assert sorted(snapshot_files(b.directory)) == want[:-1]
    assert [r["step"] for r in b.metrics["snapshots"]] == want
    # the last snapshot is the shipped model: the same figure as the model's own test result
    assert snapshot_exact_match(b.metrics)[want[-1]] == b.metrics["results"]["task"]["exact_match"]


def test_a_stored_snapshot_figure_is_what_its_weights_score():
    b = bundle()
    stored = b.metrics["snapshots"][5]
    fresh = evaluate_model(load_snapshot(b, stored["step"]), b.task, "test", n=stored["n"])["task"]
    assert fresh["exact_match"] == pytest.approx(stored["exact_match"], abs=0.01)


def test_reverse_alignment_is_the_weight_on_the_anti_diagonal():
    n = 5
    perfect = np.zeros((n + 1, n + 1))
    perfect[np.arange(n), n - 1 - np.arange(n)] = 1.0
    assert reverse_alignment(perfect, n) == pytest.approx(1.0)
    uniform = np.full((2, 3, n + 1, n + 1), 1.0 / (n + 1))
    np.testing.assert_allclose(reverse_alignment(uniform, n), np.full((2, 3), 1.0 / (n + 1)))
    diagonal = np.eye(n + 1)  # copy, not reverse: only the middle letter of an odd word is right
    assert reverse_alignment(diagonal, n) == pytest.approx(1.0 / n)
    with pytest.raises(ValueError):
        reverse_alignment(perfect, n + 3)


def test_the_alignment_appears_during_training():
    # measured on the shipped run: uniform-like at step 0, one head near the anti-diagonal at the end
    line = timeline(bundle(), "attention")
    chance = 1.0 / (len("attention") + 1)  # uniform over the letters and <eos>
    assert np.abs(line.alignment[0] - chance).max() < 0.05
    assert line.alignment[-1].max() > 0.6
    best = np.unravel_index(np.argmax(line.alignment[-1]), line.alignment.shape[1:])
    assert line.alignment[-1][best] > line.alignment[0][best] + 0.4


# --------------------------------------------------------------------------- the page


def page_texts(at: AppTest) -> list[str]:
    """What a reader sees on the page itself (tests/strings/test_strings.py checks the shared sidebar)."""
    sidebar = set(_visible_texts(at.sidebar))
    return [s for s in _visible_texts(at) if s not in sidebar]


def open_page(params: dict) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array(value, dtype=float)  # None (a gap) becomes NaN


def by_meta(fig: dict, meta: str) -> dict:
    found = [tr for tr in fig["data"] if tr.get("meta") == meta]
    assert found, [tr.get("meta") for tr in fig["data"]]
    return found[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model,text,layer,head,step", [
    ("reverse", "lens", 1, 1, 240), ("default", "我吃了一个苹果", 2, 7, 0)])
def test_the_page_shows_what_the_snapshot_computes(model, text, layer, head, step, lang):
    at = open_page({"model": model, "text": text, "layer": str(layer), "head": str(head), "kind": "cross",
                    "lang": lang, "step": str(step)})
    b = bundle()
    word = text if model == "reverse" else "attention"
    L, H = clamp_head(b.cfg, layer, head)
    assert at.select_slider(key="training_step").value == step
    assert at.query_params["step"] == str(step)
    timeline_fig, heatmap, alignment_fig = figures(at)
    # the loss curve is the model's own log, the exact match points its stored figures, the step marked
    series = step_series(b.history)
    np.testing.assert_allclose(arr(by_meta(timeline_fig, "loss")["y"]), series["loss"], rtol=1e-6)
    em = snapshot_exact_match(b.metrics)
    np.testing.assert_allclose(arr(by_meta(timeline_fig, "exact_match")["y"]),
                               [em[s] for s in available_steps(b)])
    assert arr(by_meta(timeline_fig, "current_exact_match")["x"]).tolist() == [step]
    loss_marks = [tr for tr in timeline_fig["data"] if tr.get("meta") == "current_loss"]
    if step == 0:
        assert not loss_marks  # no optimiser step yet
    else:
        assert arr(loss_marks[0]["y"])[0] == pytest.approx(series["loss"][series["step"].index(step)])
    # the heatmap: that step's weights, teacher-forced on the right answer, recomputed here
    direct = analyze(snapshot_bundle(b, step), word, target=b.task.target_text(word))
    np.testing.assert_allclose(arr(heatmap["data"][-1]["z"]), direct.attention("cross")[L, H], atol=1e-6)
    own = analyze(snapshot_bundle(b, step), word).output_text
    assert any(f"`{own}`" in str(m.value) for m in at.markdown) or not own.strip()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[tr(lang, "training.metric.em")] == f"{em[step]:.3f}"
    # each head's line over training is the alignment of the snapshots' cross-attention
    line = timeline(b, word)
    for layer_ in range(line.alignment.shape[1]):
        for head_ in range(line.alignment.shape[2]):
            np.testing.assert_allclose(arr(by_meta(alignment_fig, f"{layer_},{head_}")["y"]),
                                       line.alignment[:, layer_, head_], atol=1e-9)
    run = step_run(b, step, word)
    np.testing.assert_allclose(run.alignment, line.alignment[line.steps.index(step)])
    if lang == "zh":
        tokens = [word, own, run.answer, *direct.source_tokens, *direct.target_tokens, text]
        left = {s: untranslated(s, tokens) for s in page_texts(at)}
        assert not {s: f for s, f in left.items() if f}, left


def test_moving_the_slider_changes_the_weights_shown():
    at = open_page({"model": "reverse", "text": "attention", "layer": "1", "head": "1", "lang": "en",
                    "step": "0"})
    before = arr(figures(at)[1]["data"][-1]["z"])
    at.select_slider(key="training_step").set_value(600).run()
    assert not at.exception
    after = arr(figures(at)[1]["data"][-1]["z"])
    final = analyze(bundle(), "attention", target="noitnetta").attention("cross")[1, 1]
    np.testing.assert_allclose(after, final, atol=1e-6)
    assert np.abs(after - before).max() > 0.3


def test_a_link_with_an_unsaved_step_opens_the_nearest_saved_one():
    at = open_page({"model": "reverse", "text": "attention", "lang": "en", "step": "250"})
    assert at.select_slider(key="training_step").value == 240
    at = open_page({"model": "reverse", "text": "attention", "lang": "en", "step": "nonsense"})
    assert at.select_slider(key="training_step").value == 600
    assert not at.error


def test_without_the_snapshot_model_the_page_says_how_to_make_it(tmp_path, monkeypatch):
    from model.store.sources import shipped as registry

    models = tmp_path / "models"
    models.mkdir()
    (models / "reverse").symlink_to(REPO_ROOT / "assets" / "models" / "reverse")
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    at = open_page({"model": "reverse", "text": "attention", "lang": "en"})
    assert tr("en", "training.missing", name=SNAPSHOT_MODEL) in [str(i.value) for i in at.info]
    assert not at.get("plotly_chart")
