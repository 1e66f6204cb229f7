"""The shipped Chinese<->English model: loads fast, translates held-out sentences sensibly, inspects."""

import json
import subprocess
import sys
import time

import numpy as np
import pytest
import sacrebleu

from model.run.analysis import analyze
from model.store.registry import load_model
from model.store.sources.shipped import MODELS_DIR
from model.training.evaluate import translate_batch
from tests.paths import REPO_ROOT

REPO = REPO_ROOT
# Held-out pairs (from the test split, never trained on); picked for being short everyday sentences.
N_FIXED = 40


@pytest.fixture(scope="module")
def bundle():
    return load_model("default")


@pytest.fixture(scope="module")
def fixed_test_pairs(bundle):
    pairs = bundle.task.splits()["test"]
    short = [p for p in pairs if len(p.en.split()) <= 6]
    return short[:N_FIXED]


def test_assets_budget_and_load_time():
    size = sum(f.stat().st_size for f in MODELS_DIR.parent.rglob("*") if f.is_file())
    # The budget for everything shipped (models of every group, screenshots): 45 MB, raised from 35 MB
    # for the two decoder-only models of our own (induction, tiny-gpt).
    assert size < 45 * 1024 * 1024, f"assets/ is {size / 2**20:.1f} MB"
    start = time.perf_counter()
    load_model("default")
    elapsed = time.perf_counter() - start
    print(f"default model loaded in {elapsed * 1000:.0f} ms")
    assert elapsed < 5.0  # the target is < 1 s; bench/ reports the figure, this only catches regressions


def test_translates_held_out_sentences_both_ways(bundle, fixed_test_pairs):
    zh = [p.zh for p in fixed_test_pairs]
    en = [p.en for p in fixed_test_pairs]
    to_en = translate_batch(bundle.model, bundle.task, zh, ["zh->en"] * len(zh))
    to_zh = translate_batch(bundle.model, bundle.task, en, ["en->zh"] * len(en))
    chrf_en = sacrebleu.corpus_chrf(to_en, [en]).score
    chrf_zh = sacrebleu.corpus_chrf(to_zh, [zh]).score
    print(f"chrF on {len(zh)} fixed test sentences: zh->en {chrf_en:.1f}, en->zh {chrf_zh:.1f}")
    assert chrf_en > 25
    assert chrf_zh > 12
    # The output is in the right language and script.
    assert all(not any("\u4e00" <= c <= "\u9fff" for c in s) for s in to_en)
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in s) for s in to_zh) >= 0.9 * len(to_zh)


def test_direction_is_detected_and_traditional_input_is_converted(bundle):
    r = analyze(bundle, "我吃了一个苹果")
    assert r.prepared.direction == "zh->en" and r.target_tokens[0] == "<2en>"
    r = analyze(bundle, "I ate an apple.")
    assert r.prepared.direction == "en->zh" and r.target_tokens[0] == "<2zh>"
    r = analyze(bundle, "我喜歡蘋果")
    assert "苹果" in r.prepared.text
    assert any(n.code == "input_script_converted" and n.severity == "info" for n in r.notes)


@pytest.mark.e2e
def test_cli_translates_both_ways():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "model",
            "translate",
            "--model",
            "default",
            "我吃了一个苹果",
            "I ate an apple.",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0] and not any("\u4e00" <= c <= "\u9fff" for c in lines[0])
    assert any("\u4e00" <= c <= "\u9fff" for c in lines[1])


@pytest.mark.e2e
def test_cli_inspect_on_the_default_model(tmp_path, bundle):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "model",
            "inspect",
            "--model",
            "default",
            "--text",
            "我吃了一个苹果",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    meta = json.loads((tmp_path / "meta.json").read_text())
    arrays = np.load(tmp_path / "activations.npz")
    assert sorted(arrays.files) == sorted(bundle.model.hook_names())
    cross = arrays["decoder.blocks.0.cross_attn.hook_pattern"]
    assert cross.dtype == np.float32
    assert cross.shape == (1, bundle.cfg.n_heads, len(meta["target_tokens"]), len(meta["source_tokens"]))
    assert meta["source_tokens"][:7] == list("我吃了一个苹果")
    assert np.allclose(cross.sum(-1), 1, atol=1e-5)
