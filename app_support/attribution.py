"""What the attribution page needs from torch, cached: the attributions of one sentence and the
agreement between attention and attribution over a set of sentences (per model, computed on demand)."""

from __future__ import annotations

import streamlit as st

from app_support import gateway as G
from model.lab.ablation import sample_texts
from model.lab.attribution import Agreement, Attribution, agreement, attribute

#: Integration steps offered (the midpoint rule's error shrinks as they grow; the page prints it).
STEP_CHOICES = (8, 16, 32, 64, 128)
DEFAULT_STEPS = 32
#: Sentences and integration steps of the agreement measurement.
AGREEMENT_SENTENCES = 12
AGREEMENT_STEPS = 16


def _dir(direction: str | None) -> str | None:
    return None if direction == "auto" else direction


@st.cache_data(max_entries=32, show_spinner=False)
def _attribution(name: str, stamp: int, text: str, direction: str | None, n_steps: int) -> Attribution:
    return attribute(G.get_bundle(name), text, direction, n_steps)


def get_attribution(name: str, text: str, direction: str | None, n_steps: int) -> Attribution:
    return _attribution(name, G.stamp(name), text, _dir(direction), int(n_steps))


def agreement_texts(name: str) -> list[str]:
    return sample_texts(G.get_bundle(name), AGREEMENT_SENTENCES)


@st.cache_data(max_entries=8, show_spinner=False)
def _agreement(name: str, stamp: int) -> Agreement:
    bundle = G.get_bundle(name)
    return agreement(bundle, sample_texts(bundle, AGREEMENT_SENTENCES), AGREEMENT_STEPS)


def get_agreement(name: str) -> Agreement:
    """Per cross-attention head: rank agreement with |integrated gradients| over the model's sentences."""
    return _agreement(name, G.stamp(name))


def has_agreement(name: str) -> bool:
    """Whether this process has measured the agreement of `name` already (the page then shows it at once)."""
    return name in st.session_state.get("_attr_measured", set())
