"""Greedy decoding (batched) and teacher-forced scoring.

What each decoding step saw is read off one hooked pass over the output (model/analysis.py):
the decoder is causal, so row t of that pass is exactly step t (tests/test_decoding.py checks it).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

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
    limit = cfg.max_len if max_new is None else min(cfg.max_len, max(len(p) for p in prefixes) + max_new)
    # Rows keep their own write position, so prefixes of different lengths share one batch.
    tgt = torch.full((n, cfg.max_len), cfg.pad_id, dtype=torch.long)  # [batch, tgt_pos]
    lengths = torch.tensor([len(p) for p in prefixes])
    for i, p in enumerate(prefixes):
        tgt[i, : len(p)] = torch.tensor(p)
    done = lengths >= limit + 1  # a full row still gets one last step, which may only say eos
    out: list[list[int]] = [[] for _ in range(n)]
    while not bool(done.all()):
        # Finished rows leave the batch, so a few long outputs do not keep the whole batch busy.
        active = (~done).nonzero().squeeze(1)  # [active]
        width = int(lengths[active].max())
        pad = None if src_pad is None else src_pad[active]
        logits = model.decode(tgt[active, :width], memory[active], pad)  # [active, tgt_pos, vocab]
        nxt = logits[torch.arange(len(active)), lengths[active] - 1].argmax(-1)  # [active]
        for j, i in enumerate(active.tolist()):
            tok = int(nxt[j])
            if tok == eos_id or lengths[i] >= limit:
                done[i] = True  # stopped by eos, or out of room (no eos)
            else:
                out[i].append(tok)
                tgt[i, lengths[i]] = tok
                lengths[i] += 1
    return out


@torch.no_grad()
def score_batch(model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Teacher-forced log-probability of each target sentence: [batch] (padding ignored)."""
    model.eval()
    logp = F.log_softmax(model(src, tgt_in), dim=-1)  # [batch, tgt_pos, vocab]
    tok = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)  # [batch, tgt_pos]
    return (tok * (tgt_out != model.cfg.pad_id)).sum(-1)
