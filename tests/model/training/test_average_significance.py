"""Checkpoint averaging and the paired significance test used to decide whether a retrained model ships."""

import json

import pytest
import torch
from safetensors.torch import load_file

from model.__main__ import main
from model.data.tasks import SyntheticTask
from model.network.config import ModelConfig, TrainConfig
from model.store.formats.own import load_checkpoint
from model.store.problems import CheckpointError
from model.training.average import average_last, kept_checkpoints
from model.training.significance import paired_bootstrap
from model.training.train import train


@pytest.fixture(scope="module")
def run_with_kept_checkpoints(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    task = SyntheticTask("copy", min_len=3, max_len=6)
    mc = ModelConfig(vocab_size=task.tokenizer.vocab_size, d_model=32, n_heads=2, d_ff=64, n_enc_layers=1,
                     n_dec_layers=1, dropout=0.0, max_len=10)
    tc = TrainConfig(lr=3e-3, warmup_steps=5, max_steps=30, batch_tokens=256, eval_every=0, save_every=10,
                     log_every=10)
    steps_seen = {}

    def remember(step, model):
        if step % 10 == 0:
            steps_seen[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}

    train(mc, tc, task, out, on_step=remember, keep_checkpoints=True)
    return out, steps_seen


def test_every_checkpoint_is_kept_with_the_weights_of_its_step(run_with_kept_checkpoints):
    out, seen = run_with_kept_checkpoints
    assert [s for s, _ in kept_checkpoints(out)] == [10, 20, 30]
    bundle = load_checkpoint(out)
    model, steps = average_last(bundle, out, 1)
    assert steps == [30]
    for name, value in model.state_dict().items():
        assert torch.equal(value, seen[30][name]), name


def test_the_average_is_the_mean_of_the_last_checkpoints_and_keeps_tied_weights(run_with_kept_checkpoints):
    out, seen = run_with_kept_checkpoints
    model, steps = average_last(load_checkpoint(out), out, 2)
    assert steps == [20, 30]
    for name, value in model.state_dict().items():
        torch.testing.assert_close(value, (seen[20][name] + seen[30][name]) / 2, rtol=0, atol=1e-6)
    if model.cfg.tie_embeddings:
        assert model.unembed.weight.data_ptr() == model.token_embed.weight.data_ptr()
    with pytest.raises(CheckpointError, match="3 kept checkpoint"):
        average_last(load_checkpoint(out), out, 4)


def test_average_cli_writes_a_loadable_checkpoint_and_never_into_a_used_folder(run_with_kept_checkpoints,
                                                                                tmp_path, capsys):
    out, _ = run_with_kept_checkpoints
    dest = tmp_path / "avg"
    assert main(["average", "--run", str(out), "--last", "3", "--out", str(dest)]) == 0
    info = json.loads((dest / "config.json").read_text())
    assert info["averaged_steps"] == [10, 20, 30]
    load_checkpoint(dest)
    half = tmp_path / "half"
    assert main(["average", "--run", str(out), "--last", "2", "--out", str(half), "--dtype", "float16"]) == 0
    stored = load_file(str(half / "model.safetensors"))
    assert {v.dtype for v in stored.values()} == {torch.float16}
    averaged, _ = average_last(load_checkpoint(out), out, 2)
    for name, value in averaged.state_dict().items():
        if name in stored:
            assert torch.equal(stored[name], value.to(torch.float16)), name
    before = (dest / "model.safetensors").read_bytes()
    assert main(["average", "--run", str(out), "--last", "1", "--out", str(dest)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (dest / "model.safetensors").read_bytes() == before


@pytest.mark.parametrize("flag,value", [("--lr", "0"), ("--lr", "-1e-3"), ("--lr", "nan"), ("--lr", "x"),
                                        ("--warmup", "-1"), ("--warmup", "1.5")])
def test_train_refuses_meaningless_learning_rates_and_warmups(flag, value, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--preset", "copy", "--out", str(tmp_path / "never"), flag, value])
    assert exit_.value.code == 2
    assert not (tmp_path / "never").exists()


REFS = ["the cat sat on the mat", "a dog ran in the park", "hello world again", "she reads a long book",
        "we went home early", "it rains every day here"] * 15
WORSE = ["the cat sat mat", "a dog ran", "hello word", "she read book", "we home", "it rains"] * 15


def test_a_clearly_better_system_is_significant_and_an_equal_one_is_not():
    better = paired_bootstrap(WORSE, REFS, REFS, "en", n_samples=200)
    for metric in ("chrf", "bleu"):
        assert better[metric]["delta"] > 0 and better[metric]["p_value"] < 0.05
        assert better[metric]["candidate"] == pytest.approx(100.0)
    same = paired_bootstrap(WORSE, list(WORSE), REFS, "en", n_samples=200)
    assert all(same[m]["delta"] == 0 and same[m]["p_value"] == 1.0 for m in same)
    # a single changed sentence among 90 is no evidence
    one_fixed = list(WORSE)
    one_fixed[0] = REFS[0]
    weak = paired_bootstrap(WORSE, one_fixed, REFS, "en", n_samples=200)
    assert weak["chrf"]["delta"] > 0 and weak["chrf"]["p_value"] > 0.05


def test_paired_bootstrap_refuses_unpaired_inputs():
    with pytest.raises(ValueError, match="equally many"):
        paired_bootstrap(WORSE[:3], REFS[:4], REFS[:4], "en")
