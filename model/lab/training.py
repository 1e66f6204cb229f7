"""The training scrubber: a model at a chosen training step (its weights as saved during training), its
cross-attention on a word, and how much of that attention sits on the letter the reverse task must
copy at each step.

Every figure comes from a real forward pass of the snapshot's weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..run.analysis import Analysis, analyze, attention_only
from ..store.bundle import Bundle
from ..training.snapshots import available_steps, snapshot_bundle
from ..training.train import step_series
from . import entry

#: The attention kind shown: where the reverse task's alignment lives.
KIND = "cross"


def reverse_alignment(pattern: np.ndarray, n_letters: int) -> np.ndarray:
    """Mean weight each head puts on the right source letter, for the reverse task.

    ``pattern`` is cross-attention ``[..., query_pos, key_pos]`` of a teacher-forced pass over the
    correct output: query row t (``<bos>`` then the letters written so far) predicts output letter t,
    which is source letter ``n_letters - 1 - t``. Returns ``[...]``: the mean over t < n_letters of
    ``pattern[..., t, n_letters - 1 - t]`` (1 = every row entirely on its letter).
    """
    p = np.asarray(pattern)
    if p.ndim < 2 or n_letters < 1 or p.shape[-2] < n_letters or p.shape[-1] < n_letters:
        raise ValueError(f"pattern {p.shape} has no room for {n_letters} letters on both axes")
    rows = np.arange(n_letters)
    return p[..., rows, n_letters - 1 - rows].astype(np.float64).mean(-1)


def snapshot_exact_match(metrics: object) -> dict[int, float]:
    """step -> test exact match of each snapshot, as ``metrics.json`` stores them ({} when absent)."""
    rows = metrics.get("snapshots") if isinstance(metrics, Mapping) else None
    out: dict[int, float] = {}
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and isinstance(row.get("step"), int) and isinstance(
                row.get("exact_match"), int | float):
            out[int(row["step"])] = float(row["exact_match"])
    return out


@entry
def steps(bundle: Bundle) -> list[int]:
    """Every step the model can be shown at (its snapshots and its final weights)."""
    return available_steps(bundle)


@dataclass
class StepRun:
    """The word through the model as it was at one training step."""

    step: int
    answer: str  # the correct output (the task's own function), teacher-forced in ``analysis``
    analysis: Analysis  # teacher-forced on ``answer``: the same rows at every step
    output: str  # what this snapshot writes on its own (greedy)
    alignment: np.ndarray  # [layer, head]: reverse_alignment of the cross-attention


def _teacher_forced(at: Bundle, word: str) -> tuple[str, Analysis, np.ndarray]:
    """The correct output of ``word``, the pass teacher-forced on it, and that pass's alignment."""
    answer = at.task.target_text(word)
    analysis = analyze(at, word, target=answer, keep=attention_only)
    return answer, analysis, reverse_alignment(analysis.attention(KIND), len(word))


@entry
def step_run(bundle: Bundle, step: int, word: str) -> StepRun:
    at = snapshot_bundle(bundle, step)
    answer, analysis, alignment = _teacher_forced(at, word)
    output = analyze(at, word, keep=attention_only).output_text
    return StepRun(step, answer, analysis, output, alignment)


@dataclass
class Timeline:
    """What the whole run shows, whatever the step."""

    steps: list[int]  # every step the page can show (snapshots and the final weights)
    series: dict[str, list]  # step_series(history): loss and gradient norm of every optimiser step
    exact_match: dict[int, float]  # step -> test exact match of that snapshot (metrics.json)
    alignment: np.ndarray  # [step, layer, head] reverse_alignment on the word at each step


@entry
def timeline(bundle: Bundle, word: str) -> Timeline:
    shown = available_steps(bundle)
    # the teacher-forced passes only: no step's own greedy output is needed here
    alignment = np.stack([_teacher_forced(snapshot_bundle(bundle, s), word)[2] for s in shown])
    return Timeline(shown, step_series(bundle.history), snapshot_exact_match(bundle.metrics), alignment)
