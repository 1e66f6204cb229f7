"""The decoding page's data: beam search as tree nodes and per-step tables, one sampling step's
distribution, and the teacher-forced losses of a reference (no Streamlit display here). Token ids
become text through the model's target-side tokenizer (the decoder's vocabulary), looked up by model name."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app_support import gateway as G
from model.core.protocols import Tokenizer
from model.decoding.results import BeamResult, BeamStep, SampleStep
from model.run.analysis import Analysis
from model.run.token_losses import TokenLosses, token_losses, training_smoothing


def _tokenizer(name: str) -> Tokenizer:
    """Every id here is one the decoder wrote: the target side names it."""
    return G.get_bundle(name).target_tokenizer


def token_text(name: str, token_id: int) -> str:
    """The text of one output token of model ``name``."""
    return _tokenizer(name).id_to_token(token_id)


@dataclass(frozen=True)
class BeamNodes:
    """Beam search as the parallel lists viz.beam_tree draws: node 0 is the decoder's prefix."""

    steps: list[int]  # 0 for the start, t + 1 for an extension made at step t
    parents: list[int]  # index of the extended node, -1 for the start
    tokens: list[str]
    logps: np.ndarray  # [node] cumulative log-probability
    statuses: list[str]
    chosen: list[int]  # the output's nodes, start first


def beam_nodes(name: str, search: BeamResult, start_token: str) -> BeamNodes:
    """Every candidate of every step as a node linked to the hypothesis it extends."""
    tokenizer = _tokenizer(name)
    steps, parents, tokens, logps, statuses = [0], [-1], [start_token], [0.0], ["start"]
    beam_nodes_now = [0]  # node of each live hypothesis at the current step
    chosen = [0]
    best = search.best
    for t, step in enumerate(search.steps):
        next_nodes = []
        for c in step.candidates:
            node = len(steps)
            steps.append(t + 1)
            parents.append(beam_nodes_now[c.parent])
            tokens.append(tokenizer.id_to_token(c.token_id))
            logps.append(c.logp)
            statuses.append(c.status)
            if c.status == "kept":
                next_nodes.append(node)
            # The output's path: its t-th token (or its eos right after its last token) from the chosen node.
            on_path = parents[node] == chosen[-1] and len(chosen) == t + 1
            if on_path and t < len(best.ids) and c.token_id == best.ids[t] and c.status == "kept":
                chosen.append(node)
            elif on_path and t == len(best.ids) and best.ended and c.status == "finished":
                chosen.append(node)
        beam_nodes_now = next_nodes
    return BeamNodes(steps, parents, tokens, np.array(logps, dtype=np.float64), statuses, chosen)


def beam_rows(name: str, step: BeamStep) -> list[dict]:
    """One row per candidate of a beam-search step: the hypothesis it extends, the new token, its
    cumulative log-probability and length-normalised score, and what became of it."""
    tokenizer = _tokenizer(name)
    rows = []
    for rank, c in enumerate(step.candidates):
        rows.append({
            "rank": rank,
            "beam": c.parent,
            "hypothesis": " ".join(tokenizer.tokens(step.beams[c.parent])) or "∅",
            "token": tokenizer.id_to_token(c.token_id),
            "logp": c.logp,
            "score": c.score,
            "status": c.status,
        })
    return rows


@dataclass(frozen=True)
class SampleView:
    tokens: list[str]  # the most likely kept tokens (and the drawn one, wherever it ranks)
    filtered: np.ndarray  # [token] probability in the distribution sampled from
    raw: np.ndarray  # [token] probability under the model (temperature 1)
    drawn: int  # index of the drawn token in `tokens`
    n_kept: int  # size of the whole kept set


def sample_view(name: str, step: SampleStep, shown: int = 12) -> SampleView:
    """The ``shown`` most likely tokens of one sampling step, with the drawn token always among them."""
    tokenizer = _tokenizer(name)
    ids = list(step.kept_ids[:shown])
    filtered = list(step.kept_probs[:shown])
    raw = list(step.kept_raw[:shown])
    if step.token_id not in ids:
        ids.append(step.token_id)
        filtered.append(step.token_prob)
        raw.append(step.raw_prob)
    return SampleView(tokenizer.tokens(ids), np.array(filtered), np.array(raw), ids.index(step.token_id),
                      step.n_kept)


def losses_of(name: str, teacher_forced: Analysis) -> TokenLosses:
    """Per-token losses of a teacher-forced analysis, with model ``name``'s own training label smoothing."""
    return token_losses(teacher_forced, training_smoothing(G.get_bundle(name)))
