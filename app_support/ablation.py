"""What the head-ablation page needs from torch, cached per input: the ablation of the chosen heads
(re-decoded output, per-step changes), the teacher-forced attention with the heads removed, the
single-head ranking and the exact match of the didactic tasks under the ablation.

Heads travel as tuples of (kind, layer, head) so they key the caches.
"""

from __future__ import annotations

import streamlit as st

from app_support import models as M
from model.ablation import Ablation, HeadEffect, ablate, exact_match, head_edits, rank_heads
from model.analysis import Analysis, analyze

#: Test words the exact match is measured on (didactic models; the first of their test split).
EXACT_MATCH_N = 200


def _dir(direction: str | None) -> str | None:
    return None if direction == "auto" else direction


@st.cache_data(max_entries=32, show_spinner=False)
def _ablation(name: str, stamp: int, text: str, direction: str | None, heads: tuple, mode: str) -> Ablation:
    return ablate(M.get_bundle(name), text, direction, heads, mode)


def get_ablation(name: str, text: str, direction: str | None, heads: tuple, mode: str) -> Ablation:
    return _ablation(name, M._stamp(name), text, _dir(direction), tuple(heads), mode)


@st.cache_data(max_entries=32, show_spinner=False)
def _ranking(name: str, stamp: int, text: str, direction: str | None, mode: str) -> list[HeadEffect]:
    return rank_heads(M.get_bundle(name), text, direction, mode)


def get_ranking(name: str, text: str, direction: str | None, mode: str) -> list[HeadEffect]:
    """Every head removed alone, most harmful first (model.ablation.rank_heads)."""
    return _ranking(name, M._stamp(name), text, _dir(direction), mode)


def ablated_analysis(bundle, text: str, direction: str | None, target: str, heads, mode: str) -> Analysis:
    """The teacher-forced pass over `target` (the intact output) with the heads removed."""
    return analyze(bundle, text, _dir(direction), target, edits=head_edits(heads, mode))


@st.cache_data(max_entries=32, show_spinner=False)
def _ablated(name: str, stamp: int, text: str, direction: str | None, target: str, heads: tuple,
             mode: str) -> Analysis:
    return M.attention_hooks_only(ablated_analysis(M.get_bundle(name), text, direction, target, heads, mode))


def get_ablated_analysis(name: str, text: str, direction: str | None, target: str, heads: tuple,
                         mode: str) -> Analysis:
    return _ablated(name, M._stamp(name), text, _dir(direction), target, tuple(heads), mode)


@st.cache_data(max_entries=32, show_spinner=False)
def _exact(name: str, stamp: int, heads: tuple, mode: str) -> float | None:
    return exact_match(M.get_bundle(name), head_edits(heads, mode), EXACT_MATCH_N)


def get_exact_match(name: str, heads: tuple, mode: str) -> float | None:
    """Exact match on the first test words with the heads removed (None for translation)."""
    return _exact(name, M._stamp(name), tuple(heads), mode)
