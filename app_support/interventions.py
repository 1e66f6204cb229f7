"""What the three intervention pages (ablation, patching, attribution) share: a language model's default
continuation bound, and a ranking computed a slice of layers per (cached) call so a page can show its
progress (the slices and each one's share of the work)."""

from __future__ import annotations

from model.lab.ablation import LM_NEW_TOKENS

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
