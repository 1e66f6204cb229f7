"""Greedy decoding (batched) and teacher-forced scoring.

What each decoding step saw is read off one hooked pass over the output (model/analysis.py):
the decoder is causal, so row t of that pass is exactly step t (tests/test_decoding.py checks it).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .network.transformer import Transformer


def pad_batch(seqs: list[list[int]], pad_id: int) -> torch.Tensor:
    """Right-pad id lists into [batch, pos]."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


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
            rows, memory, nxt = rows[sel], memory[sel], nxt[sel]
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
    logp = F.log_softmax(model(src, tgt_in), dim=-1)  # [batch, tgt_pos, vocab]
    tok = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # [batch, tgt_pos]
    return (tok * (tgt_out != model.cfg.pad_id)).sum(-1)
