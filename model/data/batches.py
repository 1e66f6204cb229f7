"""Id lists into padded batches: shared by training, decoding and the atlas."""

from __future__ import annotations

import torch


def pad_batch(seqs: list[list[int]], pad_id: int) -> torch.Tensor:
    """Right-pad id lists into [batch, pos]."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out
