"""What the head-ablation page needs from torch, cached per input: the ablation of the chosen heads
(re-decoded output, per-step changes), the teacher-forced attention with the heads removed, the
single-head ranking and the exact match of the didactic tasks under the ablation.

Heads travel as tuples of (kind, layer, head) so they key the caches.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from app_support import gateway as G
from model.analysis import Analysis, analyze, attention_only
from model.lab.ablation import Ablation, HeadEffect, ablate, exact_match, head_edits, rank_heads

#: Test words the exact match is measured on (didactic models; the first of their test split).
EXACT_MATCH_N = 200


def _dir(direction: str | None) -> str | None:
    return None if direction == "auto" else direction


@st.cache_data(max_entries=32, show_spinner=False)
def _ablation(name: str, stamp: int, text: str, direction: str | None, heads: tuple, mode: str) -> Ablation:
    return ablate(G.get_bundle(name), text, direction, heads, mode)


def get_ablation(name: str, text: str, direction: str | None, heads: tuple, mode: str) -> Ablation:
    return _ablation(name, G.stamp(name), text, _dir(direction), tuple(heads), mode)


@st.cache_data(max_entries=32, show_spinner=False)
def _ranking(name: str, stamp: int, text: str, direction: str | None, mode: str) -> list[HeadEffect]:
    return rank_heads(G.get_bundle(name), text, direction, mode)


def get_ranking(name: str, text: str, direction: str | None, mode: str) -> list[HeadEffect]:
    """Every head removed alone, most harmful first (model.lab.ablation.rank_heads)."""
    return _ranking(name, G.stamp(name), text, _dir(direction), mode)


def ablated_analysis(bundle, text: str, direction: str | None, target: str, heads, mode: str) -> Analysis:
    """The teacher-forced pass over `target` (the intact output) with the heads removed."""
    return analyze(bundle, text, _dir(direction), target, edits=head_edits(heads, mode), keep=attention_only)


@st.cache_data(max_entries=32, show_spinner=False)
def _ablated(name: str, stamp: int, text: str, direction: str | None, target: str, heads: tuple,
             mode: str) -> Analysis:
    return ablated_analysis(G.get_bundle(name), text, direction, target, heads, mode)


def get_ablated_analysis(name: str, text: str, direction: str | None, target: str, heads: tuple,
                         mode: str) -> Analysis:
    return _ablated(name, G.stamp(name), text, _dir(direction), target, tuple(heads), mode)


@st.cache_data(max_entries=32, show_spinner=False)
def _exact(name: str, stamp: int, heads: tuple, mode: str) -> float | None:
    return exact_match(G.get_bundle(name), head_edits(heads, mode), EXACT_MATCH_N)


def get_exact_match(name: str, heads: tuple, mode: str) -> float | None:
    """Exact match on the first test words with the heads removed (None for translation)."""
    return _exact(name, G.stamp(name), tuple(heads), mode)


def clicked_head(event) -> tuple[int, int] | None:
    """(layer, head) of a click on a head matrix (viz.interventions.head_matrix), or None.

    The click target's x is the head and y the layer; its customdata [layer, head] reaches the server
    as a list or, from a typed array, as {"0": layer, "1": head}.
    """
    def get(obj, name):
        return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

    for point in get(get(event, "selection"), "points") or []:
        data = point.get("customdata")
        if isinstance(data, Mapping) and {"0", "1"} <= set(data):
            return int(data["0"]), int(data["1"])
        if isinstance(data, list | tuple) and len(data) >= 2:
            return int(data[0]), int(data[1])
        if point.get("x") is not None and point.get("y") is not None:
            return int(round(float(point["y"]))), int(round(float(point["x"])))
    return None
