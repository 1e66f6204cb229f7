"""What the patching page needs beyond what it asks the gateway for (``lab.patching``): which
positions of B take A's activation (shown before the patch runs), a language model's prompt pair, and
on a language model the rankings a slice of blocks per (cached) call, so the page can show its progress."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app_support import lab
from app_support.interventions import chunks, work_done
from model.lab.patching import Alignment, align

#: A language model's clean and corrupted prompts (model input, not interface text; equal token counts on
#: SmolLM2, 9 each). SmolLM2 answers no Chinese prompt pair we tried sensibly, so both languages use these.
LM_PRESET = ("The Eiffel Tower is in the city of", "The Colosseum is in the city of", "")


def alignment(tokens_a: list[str], tokens_b: list[str], side: str, token: str | None) -> Alignment:
    """The positions of B paired with positions of A on one side (model.lab.patching.align)."""
    return align(tokens_a, tokens_b, side, token or None)


def rank_lm(model: str, text_a: str, text_b: str, direction: str | None, what: str, n_layers: int,
            on_progress: Callable[[float], None]) -> list:
    """``lab.patching_lm.rank_heads`` (what="head") or ``rank_residual`` ("resid"), a slice of blocks per
    call; ``on_progress(share)`` after each slice."""
    rank = lab.patching_lm.rank_heads if what == "head" else lab.patching_lm.rank_residual
    out: list = []
    for start, stop in chunks(n_layers):
        out += rank(model, text_a, text_b, direction, (start, stop))
        on_progress(work_done(n_layers, stop))
    return out


def recovered_matrix(effects: list, n_layers: int, n_columns: int, column: str) -> np.ndarray:
    """[layer, head or position] of each effect's ``recovered`` (NaN where none); column: "head" or
    "position"."""
    out = np.full((n_layers, n_columns), np.nan)
    for e in effects:
        if e.recovered is not None:
            out[e.layer, getattr(e, column)] = e.recovered
    return out
