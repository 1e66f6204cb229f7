"""The training loop learns, resumes exactly, and its pieces behave."""

import io
import json
import subprocess
import sys

import pytest
import torch

from model.data.tasks import SyntheticTask
from model.decoding.decoders import greedy_decode
from model.network.config import ModelConfig, TrainConfig
from model.store.formats.own import load_checkpoint
from model.training.train import Progress, TqdmProgress, lr_at, make_batches, train
from tests.paths import REPO_ROOT


def small_setup(steps: int, **train_overrides):
    task = SyntheticTask("copy", min_len=3, max_len=6)
    mc = ModelConfig(vocab_size=task.tokenizer.vocab_size, d_model=32, n_heads=2, d_ff=64, n_enc_layers=1,
                     n_dec_layers=1, dropout=0.0, max_len=10)
    settings = dict(lr=3e-3, warmup_steps=20, max_steps=steps, batch_tokens=512, eval_every=0, save_every=0,
                    log_every=10)
    tc = TrainConfig(**{**settings, **train_overrides})
    return mc, tc, task


@pytest.mark.slow
def test_a_tiny_model_learns_to_copy_from_scratch(tmp_path):
    mc, tc, task = small_setup(600)
    seen: list[Progress] = []
    model = train(mc, tc, task, tmp_path, callback=seen.append)
    assert [p.step for p in seen][-1] == 600
    assert seen[-1].loss < seen[0].loss * 0.5
    assert all(p.tokens_per_s > 0 for p in seen)
    ex = task.examples("test", 100)
    out = greedy_decode(model, [s for s, _ in ex], [[task.tokenizer.bos_id]] * len(ex), task.tokenizer.eos_id)
    accuracy = sum(o == t[1:-1] for o, (_, t) in zip(out, ex, strict=True)) / len(ex)
    assert accuracy >= 0.9
    saved = load_checkpoint(tmp_path)
    assert saved.info["step"] == 600 and len(saved.history) == 60


def test_overfits_a_single_batch():
    """The seeds' sanity check: a model that cannot memorise one batch has a bug."""
    torch.manual_seed(0)
    task = SyntheticTask("reverse", 4, 6)
    from model.network.transformer import Transformer
    from model.training.train import collate, loss_fn

    mc = ModelConfig(vocab_size=task.tokenizer.vocab_size, d_model=32, n_heads=2, d_ff=64, n_enc_layers=1,
                     n_dec_layers=1, dropout=0.0, max_len=10)
    model = Transformer(mc)
    ex = task.examples("train", 8)
    src, tgt_in, tgt_out = collate(ex, list(range(8)), 0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = None
    for _ in range(150):
        loss = loss_fn(model(src, tgt_in), tgt_out, 0, 0.0)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.05 < first


class _Interrupted(Exception):
    pass


def _interrupt_at(step: int):
    def callback(p: Progress) -> None:
        if p.step >= step:
            raise _Interrupted

    return callback


def test_resume_continues_exactly_like_an_uninterrupted_run(tmp_path):
    mc, tc, task = small_setup(40, save_every=20)
    straight = train(mc, tc, task, tmp_path / "a")
    # A run killed at step 30 leaves its step-20 checkpoint behind.
    with pytest.raises(_Interrupted):
        train(mc, tc, task, tmp_path / "b", callback=_interrupt_at(30))
    assert json.loads((tmp_path / "b" / "trainer.json").read_text())["step"] == 20
    resumed = train(mc, tc, task, tmp_path / "b", resume=True)
    for (name, a), (_, b) in zip(straight.state_dict().items(), resumed.state_dict().items(), strict=True):
        assert torch.allclose(a, b, atol=1e-5), name
    assert len(load_checkpoint(tmp_path / "b").history) == len(load_checkpoint(tmp_path / "a").history)


def test_resume_refuses_another_config(tmp_path):
    mc, tc, task = small_setup(10, save_every=10)
    train(mc, tc, task, tmp_path)
    other = ModelConfig(**{**mc.to_dict(), "d_model": 64})
    with pytest.raises(ValueError, match="another config"):
        train(other, tc, task, tmp_path, resume=True)


def test_lr_schedule_warms_up_then_decays():
    tc = TrainConfig(lr=1e-3, warmup_steps=10, max_steps=100, min_lr_ratio=0.1)
    lrs = [lr_at(s, tc) for s in range(100)]
    assert lrs[:10] == sorted(lrs[:10]) and abs(lrs[9] - 1e-3) < 1e-12
    assert lrs[10:] == sorted(lrs[10:], reverse=True)
    assert abs(lrs[-1] - 1e-4) < 2e-6


def test_batches_cover_every_example_once_within_the_token_budget():
    task = SyntheticTask("sort")
    ex = task.examples("train", 2000)
    batches = make_batches(ex, batch_tokens=300, max_batch_size=64, seed=3)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(2000))
    for b in batches:
        width = max(len(ex[i][0]) + len(ex[i][1]) for i in b)
        assert width * len(b) <= 300 or len(b) == 1
        assert len(b) <= 64
    assert make_batches(ex, 300, 64, seed=3) == batches


def test_init_from_starts_a_new_run_from_saved_weights(tmp_path):
    mc, tc, task = small_setup(30, save_every=30)
    first = train(mc, tc, task, tmp_path / "first")
    seen: list[Progress] = []
    again = train(mc, TrainConfig(**{**tc.to_dict(), "lr": 0.0, "warmup_steps": 1, "max_steps": 10}), task,
                  tmp_path / "second", callback=seen.append, init_from=tmp_path / "first")
    # With a zero learning rate the weights stay exactly those of the first run.
    for (name, a), (_, b) in zip(first.state_dict().items(), again.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    history = load_checkpoint(tmp_path / "second").history
    assert len(history) == 3 + 1 and history[0]["note"].startswith("from ")


def test_tqdm_progress_shows_steps_and_validation_then_closes():
    stream = io.StringIO()
    with TqdmProgress(stream) as progress:
        progress(Progress(10, 40, 2.5, 1e-3, 1000.0, 3.0, 0))
        assert progress.bar is not None and progress.bar.n == 10
        progress(Progress(20, 40, 2.0, 1e-3, 1000.0, 2.0, 0, {"valid_loss": 1.234}))
        progress(Progress(40, 40, 1.5, 1e-4, 1000.0, 0.0, 1))
        assert progress.bar is None  # closed at the last step
    out = stream.getvalue()
    assert "10/40" in out and "40/40" in out
    assert "step 20: valid_loss 1.234" in out
    assert "loss 1.500" in out


def test_tqdm_progress_closes_when_training_stops_early():
    stream = io.StringIO()
    with pytest.raises(KeyboardInterrupt), TqdmProgress(stream) as progress:
        progress(Progress(10, 40, 2.5, 1e-3, 1000.0, 3.0, 0))
        raise KeyboardInterrupt
    assert progress.bar is None
    assert "10/40" in stream.getvalue()


@pytest.mark.e2e
def test_cli_train_shows_a_tqdm_bar_on_stderr(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "model", "train", "--preset", "copy", "--steps", "20", "--out", str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "20/20" in out.stderr and "step" in out.stderr, out.stderr
    assert out.stdout == ""
