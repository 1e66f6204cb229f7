"""Beam search, batched, with a trace of every step for the decoding page (its trace's value types are
:mod:`model.decoding.results`; :func:`model.decoding.decoders.decode` runs it for a beam strategy).

Every sentence's live hypotheses are rows of one decoder batch; the encoder runs once and each
self-attention keeps its keys and values, so a step feeds only the newest token of each row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..data.batches import pad_batch
from ..network.attention import select_cache_rows
from ..network.transformer import Transformer
from .results import BeamCandidate, BeamResult, BeamStep, Hypothesis


def length_normalised(logp: float, length: int, length_penalty: float) -> float:
    """The beam score of a hypothesis of ``length`` tokens (eos counted): logp / length**alpha."""
    return logp / max(1, length) ** length_penalty


#: One decoder call of a decoding loop: (new ids [row, new_pos], encoder output or None, source padding or
#: None, the blocks' key/value caches (extended in place), position of the first new id) -> logits
#: [row, vocab] of each row's last position. The analysis passes its own, which records the call.
StepFn = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor | None, list[dict], int], torch.Tensor]

#: The encoder call of a decoding: source ids [batch, src_pos] -> (encoder output or None, source padding or
#: None), as :meth:`~model.network.transformer.Transformer.encode`; the analysis passes its own, which records
#: the encoder's pass (model/run/one_pass.py).
EncodeFn = Callable[[torch.Tensor], tuple[torch.Tensor | None, torch.Tensor | None]]


def plain_step(model: Transformer) -> StepFn:
    """The decoder call of :data:`StepFn`, recording nothing."""

    def run(step_in: torch.Tensor, memory: torch.Tensor | None, src_pad: torch.Tensor | None,
            caches: list[dict], position: int) -> torch.Tensor:
        hidden = model.decoder(step_in, memory, None, src_pad, caches, position)  # [row, new_pos, d_model]
        # Only the last position's distribution is needed: projecting it alone skips most of the
        # vocabulary matmul, the largest single cost of a step.
        return model.unembed(hidden[:, -1])  # [row, vocab]

    return run


#: A live hypothesis, one decoder row: (sentence index, generated ids, cumulative logp).
_Live = tuple[int, list[int], float]


@torch.inference_mode()
def beam_search(
    model: Transformer,
    sources: list[list[int]],
    prefixes: list[list[int]],
    eos_id: int,
    width: int = 4,
    length_penalty: float = 1.0,
    max_new: int | None = None,
    trace: bool = False,
    step: StepFn | None = None,
    encode: EncodeFn | None = None,
) -> list[BeamResult]:
    """Beam search for each source, batched (every sentence's live hypotheses are rows of one batch).

    Each step extends every live hypothesis by every token and keeps the ``width`` best extensions
    (by cumulative log-probability); the rest are pruned (the trace also lists the next ``width``,
    the nearest misses). A kept extension ending in eos is finished and leaves the beam, which
    shrinks by one. A sentence is done when its beam is empty, or earlier when no live hypothesis
    can still beat its best finished one (exact: a live hypothesis only loses log-probability and
    its length is bounded); at max_len its live ones are finished as they are (cut), as greedy
    decoding cuts. The output is the finished hypothesis with the best logp / length**length_penalty.
    With width 1 this is greedy decoding, token for token. ``step``: runs each decoder call
    (:data:`StepFn`), plain when None; ``encode``: runs the encoder (:data:`EncodeFn`), model.encode when
    None.
    """
    if len({len(p) for p in prefixes}) != 1:
        raise ValueError("beam_search needs prefixes of one length")
    if width < 1:
        raise ValueError(f"beam width must be at least 1 (got {width})")
    model.eval()
    cfg = model.cfg
    n = len(sources)
    src = pad_batch(sources, cfg.pad_id)  # [batch, src_pos]
    memory, src_pad = (encode or model.encode)(src)
    start = len(prefixes[0])
    limit = cfg.max_len if max_new is None else min(cfg.max_len, start + max_new)
    search = _Search.start(n, width, eos_id, length_penalty, limit - start + 1, trace)
    # One live hypothesis per sentence to begin with.
    live: list[_Live] = [(i, [], 0.0) for i in range(n)]
    caches: list[dict] = [{} for _ in model.decoder.blocks]
    run = step or plain_step(model)
    step_in = torch.tensor(prefixes)  # [row, new_pos]
    position = 0
    while live:
        last = run(step_in, memory, src_pad, caches, position)  # [row, vocab]
        position += step_in.shape[1]
        logits = model.named_logits(last)  # [row, vocab the tokenizer names]
        logp = torch.log_softmax(logits.float(), dim=-1)  # [row, vocab]
        live, parents = search.step(live, logp, at_limit=position >= limit)
        if not live:
            break
        # Each next row continues its parent's row: the encoder output and the kept keys and values follow.
        sel = torch.tensor(parents, dtype=torch.long)
        memory = None if memory is None else memory[sel]  # a decoder-only model has no encoder output
        src_pad = None if src_pad is None else src_pad[sel]
        select_cache_rows(caches, sel)
        step_in = torch.tensor([ids[-1] for _, ids, _ in live], dtype=torch.long)[:, None]  # [row, 1]
    return search.results()


@dataclass
class _Search:
    """What beam search keeps of each sentence between steps, and how it scores a hypothesis."""

    eos_id: int
    length_penalty: float
    longest: int  # most tokens a hypothesis can have, eos included
    trace: bool
    finished: list[list[Hypothesis]]
    slots: list[int]  # the beam's width for each sentence: one less for every finished hypothesis
    traces: list[list[BeamStep]]

    @classmethod
    def start(cls, n: int, width: int, eos_id: int, length_penalty: float, longest: int,
              trace: bool) -> _Search:
        return cls(eos_id, length_penalty, longest, trace, [[] for _ in range(n)], [width] * n,
                   [[] for _ in range(n)])

    def score(self, logp: float, length: int) -> float:
        return length_normalised(logp, length, self.length_penalty)

    def step(self, live: list[_Live], logp: torch.Tensor, at_limit: bool) -> tuple[list[_Live], list[int]]:
        """One step of every sentence, given each live row's next-token log-probabilities [row, vocab]:
        (the next live hypotheses, the row each extends). A sentence that is done leaves the batch."""
        rows_of: dict[int, list[int]] = {}
        for r, (i, _, _) in enumerate(live):
            rows_of.setdefault(i, []).append(r)
        next_live: list[_Live] = []
        parents: list[int] = []
        for i, rows in rows_of.items():
            kept = self._extend(i, live, rows, logp, at_limit)
            if not self._done(i, kept, at_limit):
                next_live += [(i, ids, lp) for ids, lp, _ in kept]
                parents += [parent for _, _, parent in kept]
        return next_live, parents

    def _extend(self, i: int, live: list[_Live], rows: list[int], logp: torch.Tensor,
                at_limit: bool) -> list[tuple[list[int], float, int]]:
        """Sentence ``i``'s step over its live ``rows``: its best extensions, the finished ones (and
        at max_len the cut ones) recorded; returns the kept ones as (ids, logp, parent row)."""
        base = torch.tensor([live[r][2] for r in rows], dtype=logp.dtype)  # [beam]
        total = (base[:, None] + logp[rows]).reshape(-1)  # [beam * vocab]
        survivors = self.slots[i]
        values, flat = total.topk(min(2 * survivors, total.numel()))  # best first
        vocab = logp.shape[-1]
        candidates: list[BeamCandidate] = []
        kept: list[tuple[list[int], float, int]] = []
        ended_rows = set()
        for rank, (v, f) in enumerate(zip(values.tolist(), flat.tolist(), strict=True)):
            b, tok = divmod(f, vocab)
            ids = live[rows[b]][1]
            status = "pruned"
            if rank < survivors and tok == self.eos_id:
                status = "finished"
                self.finished[i].append(Hypothesis(list(ids), v, self.score(v, len(ids) + 1), True))
                self.slots[i] -= 1
                ended_rows.add(rows[b])
            elif rank < survivors and at_limit:
                status = "cut"
            elif rank < survivors:
                status = "kept"
                kept.append(([*ids, tok], v, rows[b]))
            candidates.append(BeamCandidate(b, tok, v, self.score(v, len(ids) + 1), status))
        if self.trace:
            self.traces[i].append(BeamStep([list(live[r][1]) for r in rows], [live[r][2] for r in rows],
                                           candidates))
        if at_limit:
            # Cut at max_len: the live hypotheses end as they are (no eos), as greedy's output does.
            for r in rows:
                if r not in ended_rows:
                    _, ids, lp = live[r]
                    self.finished[i].append(Hypothesis(list(ids), lp, self.score(lp, len(ids)), False))
        return kept

    def _done(self, i: int, kept: list[tuple[list[int], float, int]], at_limit: bool) -> bool:
        """Sentence ``i`` is done: at max_len, its beam empty, or nothing live can beat its best finished."""
        # A live hypothesis can only lose log-probability, so its best possible score is its logp
        # over the longest length it could still reach (its logp itself when length_penalty is 0).
        best_live = max((lp / self.longest**self.length_penalty for _, lp, _ in kept), default=-math.inf)
        best_done = max((h.score for h in self.finished[i]), default=-math.inf)
        return at_limit or not kept or best_done >= best_live

    def results(self) -> list[BeamResult]:
        """Each sentence's finished hypotheses, best score first (ties: in the order they finished)."""
        results = []
        for done, steps in zip(self.finished, self.traces, strict=True):
            ranked = sorted(done, key=lambda h: h.score, reverse=True)
            results.append(BeamResult(ranked[0], ranked, steps))
        return results
