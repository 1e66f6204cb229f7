"""What the head-ablation page needs beyond what it asks the gateway for (``lab.ablation``): the
size of the exact-match measurement, the ranking laid out as head matrices (on a language model
computed a slice of layers at a time, so the page can show its progress), and which head a click on
a head matrix names."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app_support.gateway import lab
from app_support.selection import customdata_pair, selected_points
from model.lab.ablation import LM_NEW_TOKENS, HeadEffect, effect_matrices

#: Test words the exact match is measured on (didactic models; the first of their test split).
EXACT_MATCH_N = 200
#: A language model's continuation on the intervention pages: at most this many new tokens by default.
LM_DEFAULT_NEW = LM_NEW_TOKENS
#: Layers ranked per call on a language model (one step of the progress bar, cached on its own).
LAYER_CHUNK = 10


def lm_bound(sidebar_new: int | None) -> int:
    """The page's default continuation bound: the sidebar's, at most LM_DEFAULT_NEW."""
    return min(sidebar_new or LM_DEFAULT_NEW, LM_DEFAULT_NEW)


def chunks(n_layers: int, size: int = LAYER_CHUNK) -> list[tuple[int, int]]:
    """(start, stop) slices of the layers, and each slice's share of the work: a head of layer L runs
    the blocks from L on, so early slices cost more."""
    return [(s, min(s + size, n_layers)) for s in range(0, n_layers, size)]


def work_done(n_layers: int, stop: int) -> float:
    """Share of a whole ranking's block passes done once the layers before `stop` are ranked."""
    total = n_layers * (n_layers + 1) / 2
    return sum(n_layers - i for i in range(stop)) / total


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


def clicked_head(event) -> tuple[int, int] | None:
    """(layer, head) of a click on a head matrix (viz.interventions.head_matrix), or None: the click
    target's customdata [layer, head], else its x (the head) and y (the layer)."""
    for point in selected_points(event):
        pair = customdata_pair(point)
        if pair is not None:
            return pair
        if point.get("x") is not None and point.get("y") is not None:
            return int(round(float(point["y"]))), int(round(float(point["x"])))
    return None
