"""The layer the pages that work attention out by hand read (the worked example, the deck's first slide)."""

from __future__ import annotations

from app_support.gateway import lab
from model.lab.worked import LayerTensors


def get_layer_tensors(name: str, text: str, direction: str | None, kind: str, layer: int) -> LayerTensors:
    """q, k, v, scores, pattern and z of one attention layer for this input, shared by every session.

    Same text and ``direction`` as :func:`app_support.gateway.get_analysis` (``View.direction_arg``:
    None lets the task detect it), plus the kind and layer; raises ``InputError`` for unusable input.
    """
    return lab.worked.layer_tensors_for(name, text, direction, kind, int(layer))
