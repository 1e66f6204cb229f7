"""The decoders: greedy, sampling, teacher-forced scoring, and :func:`decode`, which runs the one a
:class:`~model.decoding.strategy.Strategy` names (beam search is :mod:`model.decoding.beam`).

What each decoding step saw is read off one hooked pass over the output (model/run/analysis.py):
the decoder is causal, so row t of that pass is exactly step t (tests/model/decoding/test_decoding.py
checks it). An analysis that keeps no hook tensor records the steps themselves instead: its hooked pass over
the prompt (a translation's: the encoder's pass, ``encode``, then the decoder's prefix) is the first decoder
call, and each later call adds its rows (``step``, model/run/one_pass.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..data.batches import pad_batch
from ..network.attention import select_cache_rows
from ..network.transformer import Transformer
from .beam import EncodeFn, StepFn, beam_search, plain_step
from .results import SHOWN_KEPT, SampleResult, SampleStep
from .strategy import GREEDY, Strategy

__all__ = ["decode", "filtered_distribution", "greedy_decode", "sample_decode", "score_batch"]


@torch.inference_mode()
def greedy_decode(
    model: Transformer,
    sources: list[list[int]],
    prefixes: list[list[int]],
    eos_id: int,
    max_new: int | None = None,
    step: StepFn | None = None,
    encode: EncodeFn | None = None,
) -> list[list[int]]:
    """Greedy continuation of each prefix, batched; returns the generated ids (prefix and eos excluded).

    The encoder runs once; the decoder keeps each self-attention's keys and values, so a step
    feeds only the newest token. Rows that finish leave the batch. All prefixes must have the
    same length (every task here starts from one tag or <bos> token). ``step``: runs each decoder
    call (:data:`~model.decoding.beam.StepFn`; the analysis records its calls), plain when None; ``encode``:
    runs the encoder (:data:`~model.decoding.beam.EncodeFn`), model.encode when None.
    """
    if len({len(p) for p in prefixes}) != 1:
        raise ValueError("greedy_decode needs prefixes of one length")
    model.eval()
    cfg = model.cfg
    src = pad_batch(sources, cfg.pad_id)  # [batch, src_pos]
    memory, src_pad = (encode or model.encode)(src)
    start = len(prefixes[0])
    limit = cfg.max_len if max_new is None else min(cfg.max_len, start + max_new)
    out: list[list[int]] = [[] for _ in range(len(sources))]
    rows = torch.arange(len(sources))  # sentence index of each row still decoding
    caches: list[dict] = [{} for _ in model.decoder.blocks]
    run = step or plain_step(model)
    step_in = torch.tensor(prefixes)  # [batch, new_pos]
    position = 0
    while len(rows):
        logits = run(step_in, memory, src_pad, caches, position)  # [row, vocab], the last position's
        position += step_in.shape[1]
        nxt = model.named_logits(logits).argmax(-1)  # [row], an id the tokenizer names
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
            select_cache_rows(caches, sel)
        step_in = nxt[:, None]  # [row, 1]
    return out


@torch.inference_mode()
def score_batch(
    model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor
) -> torch.Tensor:
    """Teacher-forced log-probability of each target sentence: [batch] (padding ignored)."""
    model.eval()
    logp = F.log_softmax(model.teacher_forced(src, tgt_in), dim=-1)  # [batch, tgt_pos, vocab]
    tok = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # [batch, tgt_pos]
    return (tok * (tgt_out != model.cfg.pad_id)).sum(-1)


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


@torch.inference_mode()
def sample_decode(
    model: Transformer,
    source: list[int],
    prefix: list[int],
    eos_id: int,
    strategy: Strategy,
    max_new: int | None = None,
    step: StepFn | None = None,
    encode: EncodeFn | None = None,
) -> SampleResult:
    """One sampled output for one source; the generator is seeded with strategy.seed, so the same
    (model, input, strategy) always gives the same sample, alone or inside a batch of sentences.
    ``step`` and ``encode``: as for :func:`greedy_decode`."""
    model.eval()
    cfg = model.cfg
    gen = torch.Generator().manual_seed(strategy.seed)
    memory, src_pad = (encode or model.encode)(torch.tensor([source]))  # [1, src_pos, d_model]
    limit = cfg.max_len if max_new is None else min(cfg.max_len, len(prefix) + max_new)
    caches: list[dict] = [{} for _ in model.decoder.blocks]
    run = step or plain_step(model)
    step_in = torch.tensor([prefix])  # [1, new_pos]
    position = 0
    ids: list[int] = []
    steps: list[SampleStep] = []
    while True:
        last = run(step_in, memory, src_pad, caches, position)  # [1, vocab], the last position's
        position += step_in.shape[1]
        logits = model.named_logits(last[0]).float()  # [named vocab]
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
