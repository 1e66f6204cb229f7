"""The layer the pages that work attention out by hand read (the worked example, the deck's first slide)."""

from __future__ import annotations

from app_support.gateway import lab
from app_support.view import View
from model.lab.worked import LayerTensors


def get_layer_tensors(view: View) -> LayerTensors:
    """q, k, v, scores, pattern and z of the sidebar's attention layer for its input, shared by every
    session: the same text, direction, strategy and new-token bound as the page's analysis
    (:func:`app_support.messages.current_analysis`); raises ``InputError`` for unusable input."""
    return lab.worked.layer_tensors_for(view.model, view.text, view.direction_arg, view.kind, int(view.layer),
                                        view.strategy, view.max_new)
