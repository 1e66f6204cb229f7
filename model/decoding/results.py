"""What a decoding run returns with its trace: the steps of sampling and of beam search, for the decoding
page. Plain values, no torch: the app's pages read them through ``model.public``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SampleStep:
    """Step t of sampling: the filtered distribution and the token drawn from it."""

    token_id: int  # the sampled token
    token_prob: float  # its probability in the filtered distribution
    raw_prob: float  # its probability under the model (temperature 1, nothing cut)
    n_kept: int  # tokens left after temperature, top-k and top-p (the rest have probability 0)
    kept_ids: list[int]  # the most likely kept tokens (at most SHOWN_KEPT), most likely first
    kept_probs: list[float]  # their filtered probabilities
    kept_raw: list[float]  # their probabilities under the model


SHOWN_KEPT = 50  # kept tokens a trace stores per step (the page shows fewer)


@dataclass
class SampleResult:
    ids: list[int]  # generated ids, prefix and eos excluded
    ended: bool  # the sample chose eos (False: cut at max_len)
    steps: list[SampleStep]



@dataclass
class BeamCandidate:
    """One extension of a live hypothesis considered at a step, and what became of it."""

    parent: int  # index of the hypothesis it extends, in its BeamStep.beams
    token_id: int
    logp: float  # cumulative log-probability of the extended hypothesis
    score: float  # logp / length**length_penalty (length counts the new token)
    # "kept" (live at the next step), "finished" (among the kept, ended with eos), "pruned", or "cut"
    # (among the kept at max_len: the output ends without it)
    status: str


@dataclass
class BeamStep:
    """Step t of beam search: the live hypotheses it extended and the best extensions found."""

    beams: list[list[int]]  # live hypotheses (generated ids, prefix excluded), best first
    beam_logp: list[float]  # their cumulative log-probabilities
    candidates: list[BeamCandidate]  # the 2·w best extensions (w: the beam's width now), best first


@dataclass
class Hypothesis:
    ids: list[int]  # generated ids, prefix and eos excluded
    logp: float  # cumulative log-probability (eos included when it ended with eos)
    score: float  # logp / length**length_penalty, what hypotheses are ranked by
    ended: bool  # True: chose eos; False: cut at max_len


@dataclass
class BeamResult:
    best: Hypothesis  # the output: the finished hypothesis with the highest score
    finished: list[Hypothesis]  # every finished hypothesis, best first
    steps: list[BeamStep] = field(default_factory=list)  # filled when traced
