"""The tasks our decoder-only models train on, and training a decoder-only model end to end."""

from __future__ import annotations

import numpy as np
import torch

from model.data.lm_training import InductionTask
from model.data.tasks import task_from_dict
from model.lab.induction import scores_of
from model.network.config import TrainConfig
from model.run.analysis import analyze
from model.store.formats.own import load_checkpoint
from model.training.presets import PRESETS
from model.training.train import train


def test_induction_texts_are_a_sequence_written_twice():
    task = InductionTask()
    for s, (src, text) in zip(task.sequences("valid", 50), task.examples("valid", 50), strict=True):
        assert src == [] and 5 <= len(s) <= 20
        tok = task.tokenizer
        assert text == [tok.bos_id, *tok.encode(s + s), tok.eos_id]
    assert set(task.sequences("train", 100)).isdisjoint(task.sequences("test", 100))


def test_a_prompt_is_bos_and_its_letters_as_both_source_and_prefix():
    task = InductionTask()
    p = task.prepare("QHZ", 48)
    assert p.source_ids == p.prefix == [task.tokenizer.bos_id, *task.tokenizer.encode("qhz")]
    assert [n.code for n in p.notes] == ["input_lowercased"]
    long = task.prepare("a" * 60, 48)
    assert len(long.source_ids) == 48 and long.notes[-1].code == "input_truncated"
    again = task_from_dict(task.to_dict(), _saved(task))
    assert again.prepare("qhz", 48).source_ids == p.source_ids


def _saved(task):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    task.save_tokenizer(folder)
    return folder


def test_the_scores_read_the_positions_they_name():
    k, length = 4, 9  # <bos> s s
    patterns = np.zeros((2, 2, length, length))
    for q in range(1, length):
        patterns[0, 0, q, q - 1] = 1.0  # a perfect previous-token head
    for q in range(1 + k, 2 * k):
        patterns[1, 1, q, q - k + 1] = 1.0  # a perfect induction head
    induction, previous = scores_of(patterns, k)
    assert induction[1, 1] == 1.0 and induction[0, 0] == 0.0
    assert previous[0, 0] == 1.0 and previous[1, 1] < 0.5


def test_a_decoder_only_model_trains_saves_and_reloads(tmp_path):
    preset = PRESETS["induction"]
    task = InductionTask()
    tc = TrainConfig(**{**preset.train.__dict__, "max_steps": 30, "eval_every": 30, "log_every": 10,
                        "warmup_steps": 5})
    torch.manual_seed(0)
    train(preset.model, tc, task, tmp_path, info={"example": task.example})
    bundle = load_checkpoint(tmp_path)
    assert bundle.cfg.decoder_only and isinstance(bundle.task, InductionTask)
    first, last = bundle.history[0], bundle.history[-1]
    assert last["valid_loss"] < np.log(30)  # better than guessing among the 30 tokens
    assert last["loss"] < first["loss"]
    result = analyze(bundle, "qhzmqhz", max_new=3)
    assert result.layer_counts == {"encoder": 0, "decoder": 2, "cross": 0}
    assert len(result.target_tokens) == 8 + len(result.output_text)
