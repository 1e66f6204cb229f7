"""Decoding strategies (greedy, beam search, sampling) and teacher-forced scoring.

Beam search lives in model/beam.py; its names are importable from here, as every strategy's are.

What each decoding step saw is read off one hooked pass over the output (model/analysis.py):
the decoder is causal, so row t of that pass is exactly step t (tests/test_decoding.py checks it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .beam import BeamCandidate, BeamResult, BeamStep, Hypothesis, beam_search, length_normalised
from .data.batches import pad_batch
from .network.transformer import Transformer

__all__ = [
    "DEFAULT_NEW_TOKENS", "GREEDY", "MAX_BEAM", "MAX_LENGTH_PENALTY", "MAX_SEED", "MAX_TEMPERATURE",
    "SHOWN_KEPT", "BeamCandidate", "BeamResult", "BeamStep", "Hypothesis", "SampleResult", "SampleStep",
    "Strategy", "beam_search", "decode",
    "filtered_distribution", "greedy_decode", "length_normalised", "sample_decode", "score_batch",
]


#: New tokens a decoder-only model writes when no bound is given: a language model rarely says
#: end-of-text soon, and every token is one more decoding step and one more row to show.
DEFAULT_NEW_TOKENS = 32


@torch.no_grad()
def greedy_decode(
    model: Transformer,
    sources: list[list[int]],
    prefixes: list[list[int]],
    eos_id: int,
    max_new: int | None = None,
) -> list[list[int]]:
    """Greedy continuation of each prefix, batched; returns the generated ids (prefix and eos excluded).

    The encoder runs once; the decoder keeps each self-attention's keys and values, so a step
    feeds only the newest token. Rows that finish leave the batch. All prefixes must have the
    same length (every task here starts from one tag or <bos> token).
    """
    if len({len(p) for p in prefixes}) != 1:
        raise ValueError("greedy_decode needs prefixes of one length")
    model.eval()
    cfg = model.cfg
    src = pad_batch(sources, cfg.pad_id)  # [batch, src_pos]
    memory, src_pad = model.encode(src)
    start = len(prefixes[0])
    limit = cfg.max_len if max_new is None else min(cfg.max_len, start + max_new)
    out: list[list[int]] = [[] for _ in range(len(sources))]
    rows = torch.arange(len(sources))  # sentence index of each row still decoding
    caches: list[dict] = [{} for _ in model.decoder.blocks]
    step_in = torch.tensor(prefixes)  # [batch, new_pos]
    position = 0
    while len(rows):
        hidden = model.decoder(step_in, memory, None, src_pad, caches, position)  # [row, new_pos, d_model]
        position += step_in.shape[1]
        # Only the last position's distribution is needed: projecting it alone skips most of the
        # vocabulary matmul, the largest single cost of a step.
        nxt = model.unembed(hidden[:, -1]).argmax(-1)  # [row]
        keep = []
        for j, i in enumerate(rows.tolist()):
            tok = int(nxt[j])
            # Stop at eos, or when the output fills max_len (the last step may only say eos).
            if tok != eos_id and position < limit:
                out[i].append(tok)
                keep.append(j)
        if len(keep) < len(rows):
            sel = torch.tensor(keep, dtype=torch.long)
            rows, nxt = rows[sel], nxt[sel]
            memory = None if memory is None else memory[sel]  # a decoder-only model has no encoder output
            src_pad = None if src_pad is None else src_pad[sel]
            for cache in caches:
                for name in cache:
                    cache[name] = cache[name][sel]
        step_in = nxt[:, None]  # [row, 1]
    return out


@torch.no_grad()
def score_batch(
    model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor
) -> torch.Tensor:
    """Teacher-forced log-probability of each target sentence: [batch] (padding ignored)."""
    model.eval()
    logp = F.log_softmax(model.teacher_forced(src, tgt_in), dim=-1)  # [batch, tgt_pos, vocab]
    tok = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # [batch, tgt_pos]
    return (tok * (tgt_out != model.cfg.pad_id)).sum(-1)


# --------------------------------------------------------------------------- strategies

#: Bounds of every strategy field (checked by Strategy; the app's controls use the same numbers).
MAX_BEAM = 16
MAX_TEMPERATURE = 10.0
MAX_LENGTH_PENALTY = 5.0
MAX_SEED = 2**31 - 1

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_PARAM = {
    "greedy": re.compile(r"greedy"),
    "beam": re.compile(rf"beam([0-9]{{1,3}})-lp{_NUMBER}"),
    "sample": re.compile(rf"sample-t{_NUMBER}-k([0-9]{{1,6}})-p{_NUMBER}-s([0-9]{{1,10}})"),
}


@dataclass(frozen=True)
class Strategy:
    """How the decoder picks each output token. Hashable: part of every cache key of an analysis.

    Only the fields of ``kind`` matter; the others keep their defaults (``Strategy.make`` resets
    them), so two strategies that decode alike are equal.
    """

    kind: str = "greedy"  # "greedy" (the most likely token), "beam" (beam search) or "sample"
    beam: int = 4  # beam: hypotheses kept after each step (the beam width), 1..MAX_BEAM
    length_penalty: float = 1.0  # beam: a hypothesis scores log p / length**length_penalty (0 = plain sum)
    temperature: float = 1.0  # sample: logits are divided by this before the softmax (> 0)
    top_k: int = 0  # sample: keep only the k most likely tokens (0 = no limit)
    top_p: float = 1.0  # sample: keep the fewest most likely tokens whose probability reaches p (1 = all)
    seed: int = 0  # sample: seed of the random generator, so a link reproduces the same sample

    def __post_init__(self) -> None:
        if self.kind not in _PARAM:
            raise ValueError(f"decoding strategy must be greedy, beam or sample, not {self.kind!r}")
        if not 1 <= self.beam <= MAX_BEAM:
            raise ValueError(f"beam width must be 1 to {MAX_BEAM} (got {self.beam})")
        if not 0.0 <= self.length_penalty <= MAX_LENGTH_PENALTY:
            raise ValueError(f"length penalty must be 0 to {MAX_LENGTH_PENALTY:g} "
                             f"(got {self.length_penalty})")
        if not 0.0 < self.temperature <= MAX_TEMPERATURE:
            raise ValueError(f"temperature must be above 0 and at most {MAX_TEMPERATURE:g} "
                             f"(got {self.temperature})")
        if self.top_k < 0:
            raise ValueError(f"top-k must be 0 (no limit) or more (got {self.top_k})")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top-p must be above 0 and at most 1 (got {self.top_p})")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be 0 to {MAX_SEED} (got {self.seed})")

    @classmethod
    def make(cls, kind: str = "greedy", **fields) -> Strategy:
        """A strategy of ``kind`` with only that kind's fields taken from ``fields`` (ValueError if bad)."""
        own = {"greedy": (), "beam": ("beam", "length_penalty"),
               "sample": ("temperature", "top_k", "top_p", "seed")}.get(kind, ())
        return cls(kind, **{k: v for k, v in fields.items() if k in own and v is not None})

    @property
    def param(self) -> str:
        """The strategy as one URL-safe word: ``greedy``, ``beam4-lp1``, ``sample-t0.8-k40-p0.9-s3``."""
        if self.kind == "beam":
            return f"beam{self.beam}-lp{self.length_penalty:g}"
        if self.kind == "sample":
            return f"sample-t{self.temperature:g}-k{self.top_k}-p{self.top_p:g}-s{self.seed}"
        return "greedy"

    @classmethod
    def parse(cls, text: str) -> Strategy:
        """Inverse of :attr:`param`; ValueError (saying what is wrong) for anything else."""
        text = str(text).strip()
        for kind, pattern in _PARAM.items():
            m = pattern.fullmatch(text)
            if m is None:
                continue
            if kind == "beam":
                return cls.make("beam", beam=int(m[1]), length_penalty=float(m[2]))
            if kind == "sample":
                return cls.make("sample", temperature=float(m[1]), top_k=int(m[2]), top_p=float(m[3]),
                                seed=int(m[4]))
            return cls()
        raise ValueError(f"unknown decoding strategy {text!r}: use greedy, beamN-lpA or sample-tT-kK-pP-sS")

    def __str__(self) -> str:
        return self.param


GREEDY = Strategy()


# --------------------------------------------------------------------------- sampling


def filtered_distribution(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                          top_p: float = 1.0) -> torch.Tensor:
    """The distribution sampling draws from: softmax(logits / temperature), cut to the top-k tokens,
    renormalised, cut to the fewest most likely tokens whose probability reaches top_p, renormalised.

    logits: [vocab]; returns [vocab] probabilities, exactly 0 outside the kept set (never empty).
    """
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # [vocab]
    order = torch.sort(probs, descending=True, stable=True).indices  # [vocab], most likely first
    keep = torch.zeros_like(probs, dtype=torch.bool)
    n = probs.numel() if top_k <= 0 else min(top_k, probs.numel())
    keep[order[:n]] = True
    probs = torch.where(keep, probs, 0.0)
    probs = probs / probs.sum()
    if top_p < 1.0:
        cumulative = probs[order].cumsum(0)  # [vocab]
        # Tokens before the one where the sum first reaches top_p, and that one: never empty.
        n_p = int((cumulative < top_p).sum()) + 1
        nucleus = torch.zeros_like(keep)
        nucleus[order[: min(n_p, n)]] = True
        probs = torch.where(nucleus, probs, 0.0)
        probs = probs / probs.sum()
    return probs.float()


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


@torch.no_grad()
def sample_decode(
    model: Transformer,
    source: list[int],
    prefix: list[int],
    eos_id: int,
    strategy: Strategy,
    max_new: int | None = None,
) -> SampleResult:
    """One sampled output for one source; the generator is seeded with strategy.seed, so the same
    (model, input, strategy) always gives the same sample, alone or inside a batch of sentences."""
    model.eval()
    cfg = model.cfg
    gen = torch.Generator().manual_seed(strategy.seed)
    memory, src_pad = model.encode(torch.tensor([source]))  # [1, src_pos, d_model]
    limit = cfg.max_len if max_new is None else min(cfg.max_len, len(prefix) + max_new)
    caches: list[dict] = [{} for _ in model.decoder.blocks]
    step_in = torch.tensor([prefix])  # [1, new_pos]
    position = 0
    ids: list[int] = []
    steps: list[SampleStep] = []
    while True:
        hidden = model.decoder(step_in, memory, None, src_pad, caches, position)  # [1, new_pos, d_model]
        position += step_in.shape[1]
        logits = model.unembed(hidden[0, -1]).float()  # [vocab]
        probs = filtered_distribution(logits, strategy.temperature, strategy.top_k, strategy.top_p)
        raw = torch.softmax(logits, dim=-1)  # [vocab]
        tok = int(torch.multinomial(probs, 1, generator=gen))
        n_kept = int((probs > 0).sum())
        shown = torch.sort(probs, descending=True, stable=True).indices[: min(SHOWN_KEPT, n_kept)]
        steps.append(SampleStep(tok, float(probs[tok]), float(raw[tok]), n_kept, shown.tolist(),
                                probs[shown].tolist(), raw[shown].tolist()))
        if tok == eos_id or position >= limit:
            return SampleResult(ids, tok == eos_id, steps)
        ids.append(tok)
        step_in = torch.tensor([[tok]])  # [1, 1]


def decode(
    model: Transformer,
    sources: list[list[int]],
    prefixes: list[list[int]],
    eos_id: int,
    strategy: Strategy = GREEDY,
    max_new: int | None = None,
) -> list[list[int]]:
    """The generated ids (prefix and eos excluded) of each source under a strategy, batched where
    the strategy allows (sampling runs one sentence at a time, each with the strategy's seed)."""
    if strategy.kind == "beam":
        found = beam_search(model, sources, prefixes, eos_id, strategy.beam, strategy.length_penalty, max_new)
        return [r.best.ids for r in found]
    if strategy.kind == "sample":
        return [sample_decode(model, s, p, eos_id, strategy, max_new).ids
                for s, p in zip(sources, prefixes, strict=True)]
    return greedy_decode(model, sources, prefixes, eos_id, max_new)
