"""What the head-ablation page needs beyond what it asks the gateway for (``lab.ablation``): the
size of the exact-match measurement and the ranking laid out as head matrices (on a language model
computed a slice of layers at a time, so the page can show its progress: :mod:`app_support.interventions`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app_support import lab
from app_support.interventions import chunks, work_done
from model.lab.ablation import HeadEffect, effect_matrices

#: Test words the exact match is measured on (didactic models; the first of their test split).
EXACT_MATCH_N = 200
def rank_heads_lm(model: str, text: str, direction: str | None, mode: str, max_new: int, n_layers: int,
                  on_progress: Callable[[float], None]) -> list[HeadEffect]:
    """``lab.ablation.rank_heads`` of a language model, a slice of layers per (cached) call, most
    harmful first; ``on_progress(share)`` after each slice."""
    ids = lab.ablation.continuation(model, text, direction, max_new)
    out: list[HeadEffect] = []
    for start, stop in chunks(n_layers):
        out += lab.ablation.rank_heads(model, text, direction, mode, True, max_new, (start, stop), ids)
        on_progress(work_done(n_layers, stop))
    return sorted(out, key=lambda e: -e.mean_kl)


def kl_matrices(effects: list[HeadEffect], n_layers: dict[str, int], n_heads: int) -> dict[str, np.ndarray]:
    """Attention kind -> [layer, head] mean KL of each head removed alone (NaN where none was)."""
    return effect_matrices(effects, n_layers, n_heads)
