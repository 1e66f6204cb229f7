"""What the head-ablation page needs beyond what it asks the gateway for (``lab.ablation``): the
size of the exact-match measurement, the ranking laid out as head matrices, and which head a click
on a head matrix names."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from model.lab.ablation import HeadEffect, effect_matrices

#: Test words the exact match is measured on (didactic models; the first of their test split).
EXACT_MATCH_N = 200


def kl_matrices(effects: list[HeadEffect], n_layers: dict[str, int], n_heads: int) -> dict[str, np.ndarray]:
    """Attention kind -> [layer, head] mean KL of each head removed alone (NaN where none was)."""
    return effect_matrices(effects, n_layers, n_heads)


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
