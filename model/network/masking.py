"""Where a query may not look, and the softmax that respects it: shared by the attention module and by
the recomputation of a head from its recorded inputs (model/network/recorded.py), so both are one code."""

from __future__ import annotations

import torch


def build_mask(
    key_padding: torch.Tensor | None,
    n_query: int,
    n_key: int,
    causal: bool,
    device=None,
    offset: int = 0,
    reversed_causal: bool = False,
    window: int = 0,
) -> torch.Tensor | None:
    """Boolean mask, True where a query may NOT look: [batch or 1, 1, query_pos, key_pos].

    offset: absolute position of the first query (when earlier keys come from a decoding cache).
    reversed_causal: hide the past instead of the future (each query sees itself and later keys).
    window (> 0, with causal): a sliding window; query i also may not look at keys more than window - 1
    positions back, so it sees ``window`` keys, itself included (transformers: kv > q - window).
    None when nothing is hidden.
    """
    mask = None
    if reversed_causal:
        # [query_pos, key_pos]; query i sits at position offset + i and may see keys from there on.
        past = torch.ones(n_query, n_key, dtype=torch.bool, device=device).tril(offset - 1)
        mask = past[None, None]
    elif causal and n_key - 1 <= offset and (window <= 0 or n_query - 1 + offset - window < 0):
        pass  # every query sees every key (a decoding step's one query): no causal mask to build
    elif causal:
        # [query_pos, key_pos]; query i sits at position offset + i, so it may see keys up to there.
        future = torch.ones(n_query, n_key, dtype=torch.bool, device=device).triu(1 + offset)
        if window > 0:  # and the keys at offset + i - window and before: j - i <= offset - window
            future |= torch.ones(n_query, n_key, dtype=torch.bool, device=device).tril(offset - window)
        mask = future[None, None]
    if key_padding is not None:
        pad = key_padding[:, None, None, :]  # [batch, 1, 1, key_pos]
        mask = pad if mask is None else (mask | pad)
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """Softmax over the key axis (dim=-1; -2 is the query axis, the classic bug); masked cells are
    exactly 0 and a fully masked row (column) is all 0, not NaN."""
    if mask is None:
        return torch.softmax(scores, dim=dim)
    # -inf -> the lowest finite float so a fully masked row gives a finite (uniform) softmax,
    # which the final where() then zeroes; no NaN reaches values or gradients.
    finite = scores.clamp(min=torch.finfo(scores.dtype).min)
    return torch.where(mask, 0.0, torch.softmax(finite, dim=dim))
