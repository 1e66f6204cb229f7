"""What the patching page needs from torch, cached per input: one patch (a head or a block's residual
stream from sentence A into sentence B) and the ranking of every head patched alone."""

from __future__ import annotations

import streamlit as st

from app_support import gateway as G
from model.lab.patching import Patch, PatchEffect, Site, patch, rank_patches

#: Session key the compare page fills (sentence A, sentence B, token) before opening the patching page.
FROM_COMPARE = "_patch_from_compare"


def _dir(direction: str | None) -> str | None:
    return None if direction == "auto" else direction


@st.cache_data(max_entries=32, show_spinner=False)
def _patch(
    name: str, stamp: int, a: str, b: str, site: Site, token: str | None, direction: str | None
) -> Patch:
    return patch(G.get_bundle(name), a, b, site, token, direction)


def get_patch(name: str, a: str, b: str, site: Site, token: str | None, direction: str | None) -> Patch:
    return _patch(name, G.stamp(name), a, b, site, token or None, _dir(direction))


@st.cache_data(max_entries=32, show_spinner=False)
def _ranking(
    name: str, stamp: int, a: str, b: str, token: str | None, direction: str | None
) -> list[PatchEffect]:
    return rank_patches(G.get_bundle(name), a, b, token, direction)


def get_patch_ranking(
    name: str, a: str, b: str, token: str | None, direction: str | None
) -> list[PatchEffect]:
    """Every head patched alone from A into B, most moving first (model.lab.patching.rank_patches)."""
    return _ranking(name, G.stamp(name), a, b, token or None, _dir(direction))
