"""A Run is the app's analysis; its figures, files and interventions are the pages' and the CLI's."""

from __future__ import annotations

import json

import numpy as np
import pytest

import attention_lens as al
from model.cli.main import main as cli
from model.run.analysis import analyze, attention_only
from model.store.registry import REPO_ROOT


def test_a_run_holds_the_analysis_the_pages_draw(reverse, reverse_run):
    theirs = analyze(reverse.bundle, "attention", keep=attention_only)
    assert reverse_run.output == theirs.output_text == "noitnetta"
    assert reverse_run.tokens == theirs.source_tokens and reverse_run.target_tokens == theirs.target_tokens
    assert reverse_run.kinds == ("encoder", "decoder", "cross") and reverse_run.hooks == {}
    for kind in reverse_run.kinds:
        whole = reverse_run.attention(kind)
        np.testing.assert_array_equal(whole, np.asarray(theirs.attention(kind)))
        np.testing.assert_array_equal(reverse_run.pattern(kind, 1, 3), whole[1, 3])
        np.testing.assert_array_equal(
            reverse_run.scores(kind, 1, 3), np.asarray(theirs.attention(kind, "scores"))[1, 3]
        )
    assert [step["name"] for step in reverse_run.trace] == [step["name"] for step in theirs.trace]


def test_keep_all_records_every_hook_by_name(reverse):
    run = reverse.run("abc", keep="all")
    assert (
        "encoder.blocks.1.attn.hook_pattern" in run.hooks and "decoder.blocks.0.hook_resid_post" in run.hooks
    )
    np.testing.assert_array_equal(
        run.hook("decoder.blocks.1.cross_attn.hook_pattern")[0], run.attention("cross")[1]
    )
    lean = reverse.run("abc")  # attention only: the attention hooks are computed when asked
    np.testing.assert_allclose(
        lean.hook("decoder.blocks.1.cross_attn.hook_pattern"),
        run.hook("decoder.blocks.1.cross_attn.hook_pattern"),
        atol=1e-6,
    )


def test_the_figures_draw_the_runs_numbers(reverse_run):
    fig = al.head_view(reverse_run, kind="decoder", layer=1, head=2)
    z = np.asarray(fig.data[-1].z, dtype=np.float32)
    p = reverse_run.pattern("decoder", 1, 2)
    future = np.isneginf(reverse_run.scores("decoder", 1, 2))
    assert future.any() and np.isnan(z[future]).all()
    np.testing.assert_array_equal(z[~future], p[~future])
    grid = al.attention_heads(reverse_run, kind="cross")
    assert grid.layout.meta["attention_grid"]["n_layers"] == 2
    focus = al.token_focus(reverse_run, 0, kind="cross")
    np.testing.assert_allclose(
        np.asarray(focus.data[0].z, dtype=np.float32),
        reverse_run.attention("cross")[:, :, 0].max(-1),
        atol=1e-6,
    )  # one row computed alone


def test_the_logit_lens_ends_in_the_models_own_choice(reverse_run):
    fig = al.logit_lens(reverse_run, value="final")
    z = np.asarray(fig.data[0].z, dtype=np.float32)  # [row, position]: the final choice's probability
    assert z.shape == (3, len(reverse_run.target_tokens))
    probs = [s.prob for s in reverse_run.analysis.steps][: z.shape[1]]
    np.testing.assert_allclose(z[-1], probs, atol=1e-5)


def test_an_encoder_only_run_has_no_lens(monkeypatch):
    class Fake:
        analysis = object()
        model = type("M", (), {"config": type("C", (), {"encoder_only": True})(), "name": "enc"})()

    with pytest.raises(al.ArgumentError, match="encoder-only"):
        al.logit_lens(Fake())


def test_head_detectors_draw_the_pages_scores():
    from model.lab.detectors import probe_scores

    m = al.load("induction")
    fig = al.head_detectors(m, "previous")
    np.testing.assert_allclose(
        np.asarray(fig.data[0].z, dtype=float), probe_scores(m.bundle).scores["previous"]
    )


def test_save_writes_what_inspect_writes(reverse, tmp_path):
    reverse.run("abc").save(tmp_path / "api")
    assert cli(["inspect", "--model", "reverse", "--text", "abc", "--out", str(tmp_path / "cli")]) == 0
    ours = np.load(tmp_path / "api" / "activations.npz")
    theirs = np.load(tmp_path / "cli" / "activations.npz")
    assert sorted(ours.files) == sorted(theirs.files) and len(ours.files) > 20
    for name in theirs.files:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    meta = [json.loads((tmp_path / d / "meta.json").read_text(encoding="utf-8")) for d in ("api", "cli")]
    assert meta[0] == meta[1]
    with pytest.raises(al.ArgumentError, match="max_mb: the archive of every hook would hold"):
        reverse.run("abc").save(tmp_path / "small", max_mb=0.001)
    assert not (tmp_path / "small").exists()


def test_load_opens_a_checkpoint_folder_and_a_gguf_file_as_the_command_line_does(tmp_path):
    folder = al.load(REPO_ROOT / "assets" / "models" / "copy")  # a path: opened as --model-dir
    assert folder.family == "encoder-decoder" and folder.run("abc").output == "abc"
    from tests.model.store.test_smollm2 import write_tiny

    write_tiny(tmp_path / "tiny.gguf")
    gguf = al.load(str(tmp_path / "tiny.gguf"))
    assert gguf.name == "tiny" and gguf.family == "decoder-only" and gguf.kinds == ("decoder",)
    run = gguf.run("ab", max_new_tokens=2)
    assert run.tokens == run.target_tokens and run.attention().shape[:2] == (2, 4)


def test_load_opens_a_hugging_face_folder(tmp_path):
    from tests.model.store.test_hf_decoder import _save

    _save("gpt2", tmp_path / "gpt2")
    m = al.load(tmp_path / "gpt2")
    assert m.family == "decoder-only" and m.config.n_heads == 4
    assert al.head_view(m.run("ab", max_new_tokens=1), layer=1, head=3).data[-1].z.shape[0] >= 2


def test_interventions_are_the_pages_functions(reverse):
    from model.lab import ablation

    heads = (("cross", 1, 0), ("cross", 1, 1))
    ours = al.ablate(reverse, "attention", heads=heads)
    theirs = ablation.ablate(reverse.bundle, "attention", None, heads)
    assert ours == theirs
    assert al.ablate("reverse", "abc").output == "cba"  # a name is loaded
    off = al.head_edits(reverse, heads)
    assert reverse.run("attention", edits=off).output == ours.output
    assert reverse.run("attention", edits=off).analysis.edits == tuple(e.label for e in off)


def test_decoding_options_reach_the_analysis(reverse):
    run = reverse.run("attention", strategy="sample-t0.8-k5-p0.9-s3")
    assert run.analysis.strategy == "sample-t0.8-k5-p0.9-s3"
    forced = reverse.run("abc", target="xyz")
    assert forced.output == "xyz" and forced.analysis.teacher_forced
    assert reverse.run("attention", max_new_tokens=3).output == "noi"
