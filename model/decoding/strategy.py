"""How the decoder picks each output token: :class:`Strategy` (greedy, beam search or sampling) and the
bounds of its fields. Plain values, no torch: the app's pages read them through ``model.public``."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: New tokens a decoder-only model writes when no bound is given: a language model rarely says
#: end-of-text soon, and every token is one more decoding step and one more row to show.
DEFAULT_NEW_TOKENS = 32


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
