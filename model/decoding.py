"""Greedy decoding (batched, and step-by-step with what each step saw) and teacher-forced scoring."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .hooks import ActivationCache
from .transformer import Transformer


def pad_batch(seqs: list[list[int]], pad_id: int) -> torch.Tensor:
    """Right-pad id lists into [batch, pos]."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


@torch.no_grad()
def greedy_decode(
    model: Transformer, sources: list[list[int]], prefixes: list[list[int]], eos_id: int, max_new: int | None = None
) -> list[list[int]]:
    """Greedy continuation of each prefix, batched; returns the generated ids (prefix and eos excluded).

    The encoder runs once; each step re-runs the decoder on the whole prefix (no key/value cache),
    which keeps every step inspectable with the same code path the app hooks.
    """
    model.eval()
    cfg = model.cfg
    src = pad_batch(sources, cfg.pad_id)  # [batch, src_pos]
    memory, src_pad = model.encode(src)
    n = len(sources)
    start = max(len(p) for p in prefixes)
    budget = cfg.max_len - start if max_new is None else min(max_new, cfg.max_len - start)
    # Left-aligned prefixes of different lengths: keep one row per sentence and its own write position.
    tgt = torch.full((n, start + max(budget, 0)), cfg.pad_id, dtype=torch.long)
    lengths = torch.tensor([len(p) for p in prefixes])
    for i, p in enumerate(prefixes):
        tgt[i, : len(p)] = torch.tensor(p)
    done = torch.zeros(n, dtype=torch.bool)
    out: list[list[int]] = [[] for _ in range(n)]
    for _ in range(max(budget, 0)):
        width = int(lengths.max())
        logits = model.decode(tgt[:, :width], memory, src_pad)  # [batch, tgt_pos, vocab]
        last = logits[torch.arange(n), lengths - 1]  # [batch, vocab]
        nxt = last.argmax(-1)  # [batch]
        for i in range(n):
            if done[i]:
                continue
            tok = int(nxt[i])
            if tok == eos_id:
                done[i] = True
            else:
                out[i].append(tok)
                tgt[i, lengths[i]] = tok
                lengths[i] += 1
        if bool(done.all()):
            break
    return out


@dataclass
class DecodeStep:
    position: int  # decoder position whose output chose this token
    token_id: int  # the token chosen (greedy argmax)
    topk_ids: list[int]
    topk_probs: list[float]


@dataclass
class Translation:
    source_ids: list[int]
    target_ids: list[int]  # prefix + generated (+ eos if produced)
    generated: list[int]  # generated tokens only, eos excluded
    steps: list[DecodeStep]
    cache: ActivationCache  # hooked teacher-forced pass over source_ids -> target_ids
    logits: torch.Tensor  # [tgt_pos, vocab]
    stopped: bool  # True if the model produced eos within max_len


@torch.no_grad()
def translate_with_cache(
    model: Transformer, source_ids: list[int], prefix: list[int], eos_id: int, top_k: int = 5
) -> Translation:
    """Greedy translation of one sentence plus a hooked pass over its output.

    Because the decoder is causal, the teacher-forced pass over the final output gives at row t exactly
    what decoding step t computed: its masked self-attention, its cross-attention and its next-token
    distribution. tests/test_decoding.py checks that equivalence against a step-by-step run.
    """
    generated = greedy_decode(model, [source_ids], [prefix], eos_id)[0]
    target = prefix + generated
    stopped = len(target) < model.cfg.max_len
    if stopped:
        target = target + [eos_id]
    # The output row of the last position predicts past the end; run over target[:-1] if eos closes it.
    inputs = target[:-1] if stopped else target
    src = torch.tensor([source_ids])
    tgt = torch.tensor([inputs])
    logits, cache = model.run_with_cache(src, tgt)
    probs = F.softmax(logits[0], dim=-1)  # [tgt_pos, vocab]
    top = probs.topk(min(top_k, probs.shape[-1]), dim=-1)
    steps = []
    for pos in range(len(prefix) - 1, len(inputs)):
        chosen = target[pos + 1] if pos + 1 < len(target) else int(probs[pos].argmax())
        steps.append(
            DecodeStep(pos, chosen, top.indices[pos].tolist(), [float(x) for x in top.values[pos]])
        )
    return Translation(source_ids, target, generated, steps, cache, logits[0], stopped)


@torch.no_grad()
def score_batch(model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Teacher-forced log-probability of each target sentence: [batch] (padding ignored)."""
    model.eval()
    logp = F.log_softmax(model(src, tgt_in), dim=-1)  # [batch, tgt_pos, vocab]
    tok = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # [batch, tgt_pos]
    return (tok * (tgt_out != model.cfg.pad_id)).sum(-1)
