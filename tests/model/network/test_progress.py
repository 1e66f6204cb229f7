"""The progress an analysis reports: only when asked, never backwards, from the first block to done."""

from __future__ import annotations

from model.network import progress
from model.run.analysis import analyze, attention_only
from model.run.interventions import CausalMask
from model.run.one_pass import PROMPT_SHARE
from model.store.registry import load_model


def test_an_analysis_reports_each_stage_forward_to_the_end():
    # one pass (model/run/one_pass.py): the prompt is read first, then each new token is a decoding step
    told = []
    with progress.reporting(lambda fraction, stage: told.append((fraction, stage))):
        analyze(load_model("induction"), "a b c d a b", keep=attention_only, max_new=4)
    fractions = [f for f, _ in told]
    assert fractions == sorted(fractions) and len(set(fractions)) == len(fractions)
    assert fractions[-1] == 1.0 and 0.0 < fractions[0] <= PROMPT_SHARE
    stages = [s for _, s in told]
    assert stages.index("decode") > stages.index("read") and set(stages) == {"decode", "read"}
    assert all(f <= PROMPT_SHARE for f, s in told if s == "read")
    assert sum(PROMPT_SHARE < f < 1.0 for f, s in told if s == "decode") >= 2  # the steps move the bar


def test_two_passes_report_decoding_then_reading():
    # under an edit that makes the decoding cache stale: decode first, then the hooked pass over it all
    told = []
    with progress.reporting(lambda fraction, stage: told.append((fraction, stage))):
        analyze(load_model("induction"), "a b c d a b", keep=attention_only, max_new=4,
                edits=(CausalMask("reversed"),))
    fractions = [f for f, _ in told]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    stages = [s for _, s in told]
    assert stages.index("read") > stages.index("decode") and set(stages) == {"decode", "read"}
    assert all(f <= 0.5 for f, s in told if s == "decode") and any(0.5 < f < 1.0 for f, s in told)


def test_nothing_is_reported_outside_a_reporting_block():
    told = []
    with progress.reporting(told.append):
        pass
    analyze(load_model("induction"), "a b c", keep=attention_only, max_new=1)  # no reporter: no call
    progress.step(1, 2)
    assert told == []


def test_an_encoder_only_analysis_reports_its_one_stage():
    told = []
    with progress.reporting(lambda fraction, stage: told.append((fraction, stage))):
        analyze(load_model("minilm"), "a short sentence", keep=attention_only)
    assert told[-1] == (1.0, "read") and {s for _, s in told} == {"read"}


def test_small_moves_are_told_once_per_percent_and_the_end_always():
    told = []
    with progress.reporting(lambda fraction, stage: told.append((fraction, stage))):
        with progress.stage(0.0, 0.5, "read"):
            for i in range(1, 1001):
                progress.step(i, 1000)  # 1,000 moves of 0.05 %
        with progress.stage(0.5, 1.0, "decode"):
            progress.step(1, 1000)  # a new stage is told, however small its move
            progress.step(999, 1000)
    fractions = [f for f, _ in told]
    assert len(told) <= 2 + 0.5 / progress.LEAST_MOVE + 3 and fractions == sorted(fractions)
    pairs = zip(told, told[1:], strict=False)
    assert all(b - a >= progress.LEAST_MOVE for (a, s), (b, t) in pairs if s == t and b < 1.0)
    assert told[-1] == (1.0, "decode") and any(s == "decode" and abs(f - 0.5005) < 1e-9 for f, s in told)
