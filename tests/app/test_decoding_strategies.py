"""The decoding strategy as a value (URL word, checks), in analyze and on the command line, and the
teacher-forced losses the decoding page shows against the training loss function."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import torch

from model.decoding.strategy import MAX_BEAM, Strategy
from model.run.analysis import analyze
from model.run.token_losses import token_losses, training_smoothing
from model.store.registry import load_model
from model.training.train import collate, loss_fn
from tests.cli_run import Run, model_cli


@functools.cache
def bundle(name: str):
    return load_model(name)


# --------------------------------------------------------------------------- the strategy value


@pytest.mark.parametrize("strategy", [
    Strategy(), Strategy.make("beam", beam=1, length_penalty=0.0),
    Strategy.make("beam", beam=7, length_penalty=0.6),
    Strategy.make("sample", temperature=0.8, top_k=40, top_p=0.9, seed=3), Strategy.make("sample"),
])
def test_the_url_word_round_trips(strategy):
    assert Strategy.parse(strategy.param) == strategy
    assert hash(Strategy.parse(strategy.param)) == hash(strategy)


def test_fields_of_another_kind_are_ignored_so_equal_decodings_are_equal():
    assert Strategy.make("greedy", beam=5, seed=3) == Strategy()
    assert Strategy.make("beam", beam=3, seed=9) == Strategy.make("beam", beam=3)


@pytest.mark.parametrize("bad", ["", "beam", "beam0-lp1", f"beam{MAX_BEAM + 1}-lp1", "beam4-lp9",
                                 "sample-t0-k0-p1-s0", "sample-t1-k0-p1.5-s0", "sample-t1-k0-p0-s0",
                                 "top", "greedy;drop", "beam4-lp1 extra"])
def test_bad_words_are_refused_with_a_reason(bad):
    with pytest.raises(ValueError) as e:
        Strategy.parse(bad)
    assert str(e.value)


@pytest.mark.parametrize("fields,match", [
    (dict(kind="nucleus"), "greedy, beam or sample"), (dict(kind="beam", beam=0), "beam width"),
    (dict(kind="sample", temperature=float("nan")), "temperature"), (dict(kind="sample", top_k=-1), "top-k"),
    (dict(kind="sample", seed=-1), "seed"), (dict(kind="beam", length_penalty=-0.5), "length penalty"),
])
def test_bad_fields_are_refused(fields, match):
    with pytest.raises(ValueError, match=match):
        Strategy(**fields)


def test_analyze_names_its_strategy_and_stays_greedy_by_default():
    b = bundle("reverse")
    plain = analyze(b, "attention")
    assert plain.strategy == "greedy" and plain.search is None
    beam = analyze(b, "attention", strategy=Strategy.make("beam", beam=3))
    assert beam.strategy == "beam3-lp1" and beam.search is not None
    assert beam.output_text == b.tokenizer.decode(beam.search.best.ids)
    # The hooked pass reads the chosen path: the decoder's tokens are the prefix and the beam's output.
    assert beam.target_tokens == b.tokenizer.tokens(beam.prepared.prefix + beam.search.best.ids)


# --------------------------------------------------------------------------- teacher forcing


@pytest.mark.parametrize("name,text,reference", [
    ("default", "我吃了一个苹果", "I ate an apple."),
    ("default", "I like apples.", "我喜欢苹果。"),
    ("reverse", "attention", "noitnetta"),
    ("reverse", "attention", "zzzz"),
])
def test_the_teacher_forced_loss_equals_the_training_loss_function(name, text, reference):
    b = bundle(name)
    result = analyze(b, text, target=reference)
    eps = training_smoothing(b)
    assert eps == b.info["train"]["label_smoothing"] > 0
    losses = token_losses(result, eps)
    # The training pair exactly as training builds it: source, then prefix + reference + eos.
    target_ids, _ = b.task.target_ids(reference, result.prepared.direction)
    example = [(result.prepared.source_ids, result.prepared.prefix + target_ids + [b.tokenizer.eos_id])]
    src, tgt_in, tgt_out = collate(example, [0], b.cfg.pad_id)
    with torch.no_grad():
        logits = b.model(src, tgt_in)  # [1, tgt_pos, vocab]
    assert losses.tokens == b.tokenizer.tokens(tgt_out[0].tolist())
    train_loss = float(loss_fn(logits, tgt_out, b.cfg.pad_id, eps))
    plain_loss = float(loss_fn(logits, tgt_out, b.cfg.pad_id, 0.0))
    assert abs(losses.mean_smoothed - train_loss) < 1e-4
    assert abs(losses.mean_nll - plain_loss) < 1e-4
    assert losses.mean_smoothed != pytest.approx(losses.mean_nll)
    # Where the model's own choice differs: its argmax at each teacher-forced position.
    argmax = logits[0].argmax(-1)
    np.testing.assert_array_equal(losses.differs, (argmax != tgt_out[0]).numpy())
    assert losses.model_tokens == b.tokenizer.tokens(argmax.tolist())


def test_a_wrong_reference_costs_more_and_differs_from_the_model():
    b = bundle("reverse")
    eps = training_smoothing(b)
    right = token_losses(analyze(b, "attention", target="noitnetta"), eps)
    wrong = token_losses(analyze(b, "attention", target="attention"), eps)
    assert not right.differs.any() and wrong.differs.any()
    assert wrong.mean_nll > right.mean_nll


# --------------------------------------------------------------------------- command line


def cli(*args: str, stdin: str | None = None) -> Run:
    """``python -m model args`` in this process (tests/cli_run.py: same exit status and output)."""
    return model_cli(list(args), stdin=stdin or "")


def test_the_command_line_decodes_with_each_strategy():
    words = "attention\ntransformer\nzebra\n"
    greedy = cli("translate", "--model", "reverse", stdin=words)
    beam1 = cli("translate", "--model", "reverse", "--beam", "1", stdin=words)
    sample = ["translate", "--model", "reverse", "--sample", "--temperature", "2", "--top-k", "3",
              "--top-p", "0.9", "--seed", "4"]
    first, again = cli(*sample, stdin=words), cli(*sample, stdin=words)
    assert greedy.returncode == beam1.returncode == first.returncode == 0, (greedy.stderr, first.stderr)
    assert beam1.stdout == greedy.stdout == "noitnetta\nremrofsnart\narbez\n"
    assert first.stdout == again.stdout and len(first.stdout.splitlines()) == 3
    b = bundle("reverse")
    strategy = Strategy.make("sample", temperature=2.0, top_k=3, top_p=0.9, seed=4)
    assert first.stdout.splitlines() == [analyze(b, w, strategy=strategy).output_text for w in words.split()]


@pytest.mark.parametrize("args,message", [
    (["--beam", "2", "--sample"], "one of --beam and --sample"),
    (["--top-k", "3"], "--top-k goes with --sample"),
    (["--length-penalty", "0.5"], "--length-penalty goes with --beam"),
    (["--sample", "--temperature", "0"], "temperature must be above 0"),
    (["--sample", "--top-p", "2"], "top-p"),
    (["--beam", "0"], "at least 1"),
])
def test_bad_strategy_flags_end_with_one_line_and_status_2(args, message):
    run = cli("translate", "--model", "reverse", *args, "abc")
    assert run.returncode == 2 and run.stdout == ""
    assert message in run.stderr and "Traceback" not in run.stderr


def test_translate_stops_after_max_new_tokens_as_the_analysis_does():
    """--max-new-tokens N: each line is the analysis' output capped at N (the app's `new=N`), with every
    strategy; without it, the whole translation (to the end token)."""
    words = ["attention", "transformer", "zebra", "ab"]
    b = bundle("reverse")
    for flags, strategy in (([], Strategy()), (["--beam", "3"], Strategy.make("beam", beam=3))):
        run = cli("translate", "--model", "reverse", "--max-new-tokens", "4", *flags, *words)
        assert run.returncode == 0 and "Traceback" not in run.stderr, run
        want = [analyze(b, w, strategy=strategy, max_new=4).output_text for w in words]
        assert run.stdout.splitlines() == want == ["noit", "remr", "arbe", "ba"], run
        assert run.stderr.count("stopped after 4 new tokens") == 3, run  # "ab" ends by itself
    whole = cli("translate", "--model", "reverse", *words)
    assert whole.stdout.splitlines() == [w[::-1] for w in words], whole


def test_a_cap_past_the_models_length_is_said_to_be_cut_once():
    long = "abcdefghijklmnopqrstuvwxyz"
    capped = cli("translate", "--model", "reverse", "--max-new-tokens", "1000", "abc", long)
    whole = cli("translate", "--model", "reverse", "abc", long)
    assert capped.returncode == whole.returncode == 0 and capped.stdout == whole.stdout, (capped, whole)
    room = bundle("reverse").cfg.max_len - 1  # the decoder's start token comes first
    said = [line for line in capped.stderr.splitlines() if "--max-new-tokens" in line]
    assert said == [f"warning: --max-new-tokens 1000 was cut to {room}: the model reads at most "
                    f"{room + 1} tokens, 1 of them before the output"], capped
    assert cli("translate", "--model", "reverse", "--max-new-tokens", str(room), "abc").stderr == ""


@pytest.mark.parametrize("value,reason", [
    ("0", "must be at least 1 (got 0)"), ("-3", "must be at least 1 (got -3)"),
    ("2.5", "'2.5' is not a whole number"), ("x", "'x' is not a whole number"),
])
def test_a_bad_max_new_tokens_ends_with_argparses_line(value, reason):
    run = cli("translate", "--model", "reverse", "--max-new-tokens", value, "abc")
    assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr, run
    last = run.stderr.splitlines()[-1]  # after argparse's usage lines
    assert last == f"python -m model translate: error: argument --max-new-tokens: {reason}", run


def test_evaluate_takes_the_strategy():
    run = cli("evaluate", "--model", "sort", "-n", "40", "--beam", "3")
    assert run.returncode == 0, run.stderr
    assert "beam3-lp1" in run.stderr and run.stdout.startswith("task\t")


def test_inspect_writes_the_strategys_output_and_names_it(tmp_path):
    run = cli("inspect", "--model", "default", "--text", "我吃了一个苹果", "--beam", "4",
              "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    meta = json.loads((tmp_path / "meta.json").read_text(encoding="utf-8"))
    beam = analyze(bundle("default"), "我吃了一个苹果", strategy=Strategy.make("beam", beam=4))
    assert meta["strategy"] == "beam4-lp1" and meta["output_text"] == beam.output_text
    assert meta["target_tokens"] == beam.target_tokens
