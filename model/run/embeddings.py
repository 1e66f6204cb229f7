"""Sentence vectors of an encoder-only model: its encoder states, mean-pooled as
sentence-transformers does, and the cosine between two of them."""

from __future__ import annotations

import numpy as np
import torch

from ..store.bundle import Bundle


def mean_pool(hidden: torch.Tensor, keep: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """Mean of hidden [batch, pos, d_model] over the positions where keep [batch, pos] is True
    (every real token, [CLS] and [SEP] included, as sentence-transformers does), then divided by
    its L2 norm if ``normalize``: [batch, d_model]."""
    w = keep.to(hidden.dtype)[..., None]  # [batch, pos, 1]
    pooled = (hidden * w).sum(1) / w.sum(1).clamp(min=1e-9)  # [batch, d_model]
    if normalize:
        pooled = pooled / pooled.norm(dim=-1, keepdim=True).clamp(min=1e-12)  # [batch, d_model]
    return pooled


def sentence_embeddings(bundle: Bundle, texts: list[str], max_len: int | None = None) -> np.ndarray:
    """[n, d_model] float32: each text's mean-pooled (and, as the model's pooling says, normalised)
    encoder output, in one padded batch; each text read to at most ``max_len`` tokens (None: the
    model's max_len)."""
    if not bundle.cfg.encoder_only:
        raise ValueError(f"{bundle.name} is not an encoder-only model; it has no sentence embedding")
    limit = bundle.cfg.max_len if max_len is None else min(bundle.cfg.max_len, max_len)
    rows = [bundle.task.prepare(t, limit).source_ids for t in texts]
    width = max(len(r) for r in rows)
    pad = bundle.cfg.pad_id
    ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])  # [n, pos]
    keep = torch.tensor([[True] * len(r) + [False] * (width - len(r)) for r in rows])  # [n, pos]
    with bundle.model.lock, torch.no_grad():
        hidden = bundle.model(ids)  # [n, pos, d_model]
    normalize = bundle.info.get("pooling", {}).get("normalize", True)
    return mean_pool(hidden, keep, normalize).numpy().astype(np.float32)
