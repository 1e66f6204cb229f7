"""What the training scrubber needs from torch: the snapshot model at a chosen step (its weights as saved
during training), its cross-attention on a word, and how much of that attention sits on the letter the
reverse task must copy at each step.

Every figure comes from a real forward pass of the snapshot's weights; the page draws the plain data
classes below (cached per step and word).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_support import gateway as G
from model.analysis import Analysis, analyze, attention_only
from model.store.bundle import Bundle
from model.training.presets import SNAPSHOT_MODEL
from model.training.snapshots import available_steps, snapshot_bundle
from model.training.train import step_series

#: The model the page scrubs through (the reverse recipe retrained with snapshots).
MODEL = SNAPSHOT_MODEL
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


def clamp_head(bundle: Bundle, layer: int, head: int) -> tuple[int, int]:
    """The sidebar's layer and head, clamped to what this model's decoder has."""
    cfg = bundle.cfg
    return max(0, min(int(layer), cfg.n_dec_layers - 1)), max(0, min(int(head), cfg.n_heads - 1))


def snapshot_exact_match(metrics: object) -> dict[int, float]:
    """step -> test exact match of each snapshot, as ``metrics.json`` stores them ({} when absent)."""
    rows = metrics.get("snapshots") if isinstance(metrics, Mapping) else None
    out: dict[int, float] = {}
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and isinstance(row.get("step"), int) and isinstance(
                row.get("exact_match"), int | float):
            out[int(row["step"])] = float(row["exact_match"])
    return out


@dataclass
class StepRun:
    """The word through the model as it was at one training step."""

    step: int
    answer: str  # the correct output (the task's own function), teacher-forced in ``analysis``
    analysis: Analysis  # teacher-forced on ``answer``: the same rows at every step
    output: str  # what this snapshot writes on its own (greedy)
    alignment: np.ndarray  # [layer, head]: reverse_alignment of the cross-attention


def step_run(bundle: Bundle, step: int, word: str) -> StepRun:
    at = snapshot_bundle(bundle, step)
    answer = bundle.task.target_text(word)
    analysis = analyze(at, word, target=answer, keep=attention_only)
    output = analyze(at, word, keep=attention_only).output_text
    return StepRun(step, answer, analysis, output, reverse_alignment(analysis.attention(KIND), len(word)))


@dataclass
class Timeline:
    """What the whole run shows, whatever the step."""

    steps: list[int]  # every step the page can show (snapshots and the final weights)
    series: dict[str, list]  # step_series(history): loss and gradient norm of every optimiser step
    exact_match: dict[int, float]  # step -> test exact match of that snapshot (metrics.json)
    alignment: np.ndarray  # [step, layer, head] reverse_alignment on the word at each step


def timeline(bundle: Bundle, word: str, runs: Mapping[int, StepRun] | None = None) -> Timeline:
    steps = available_steps(bundle)
    runs = runs or {}
    alignment = np.stack([(runs.get(s) or step_run(bundle, s, word)).alignment for s in steps])
    return Timeline(steps, step_series(bundle.history), snapshot_exact_match(bundle.metrics), alignment)


def loss_at(series: Mapping[str, list], step: int) -> float | None:
    """The training loss of optimiser step ``step`` (None before the first step, or not finite)."""
    try:
        i = list(series["step"]).index(step)
    except ValueError:
        return None
    value = series["loss"][i]
    return None if value is None else float(value)


def nearest_step(steps: list[int], wanted: int | None) -> int | None:
    """The available step closest to ``wanted`` (a link may carry any number); None if no steps."""
    if not steps or wanted is None:
        return None
    return min(steps, key=lambda s: (abs(s - wanted), s))


# --------------------------------------------------------------------------- cached for the app


@st.cache_data(max_entries=64, show_spinner=False)
def _step_run(name: str, stamp: int, step: int, word: str) -> StepRun:
    return step_run(G.get_bundle(name), step, word)


def get_step_run(step: int, word: str) -> StepRun:
    return _step_run(MODEL, G.stamp(MODEL), step, word)


@st.cache_data(max_entries=16, show_spinner=False)
def _timeline(name: str, stamp: int, word: str) -> Timeline:
    bundle = G.get_bundle(name)
    return timeline(bundle, word, {s: _step_run(name, stamp, s, word) for s in available_steps(bundle)})


def get_timeline(word: str) -> Timeline:
    return _timeline(MODEL, G.stamp(MODEL), word)
