"""Glue of the head detectors page: the roles and their thresholds, links that open a head on the input it
was scored on, and the table of the best heads. No torch: the scores come through the gateway."""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np

from app_support import pages
from model.lab.detectors import ON_ANY_INPUT, PROBE_COUNT, PROBE_LENGTH, ROLES, THRESHOLDS

__all__ = ["MAX_SEED", "ON_ANY_INPUT", "PROBE_COUNT", "PROBE_LENGTH", "ROLES", "THRESHOLDS", "head_link",
           "is_signed", "top_rows"]

MAX_SEED = 9999  # the probe seeds a link may ask for (probe=0..MAX_SEED)
TOP_N = 8  # heads listed per role


def is_signed(role: str) -> bool:
    """Whether the role's score may be negative (the copying score is a logit effect; the rest weights)."""
    return role == "copying"


def head_link(model: str, text: str, kind: str, layer: int, head: int, lang: str) -> str:
    """A relative link that opens ``text`` in the single-head page at (kind, layer, head)."""
    params = {"lang": lang, "model": model, "text": text, "kind": kind, "layer": str(layer),
              "head": str(head)}
    unknown = set(params) - set(pages.APP_PARAMS)
    if unknown:  # pragma: no cover - a renamed app-wide parameter must be renamed here too
        raise ValueError(f"not app-wide URL parameters: {sorted(unknown)}")
    return f"./{pages.START_PAGE.url_path}?{urlencode(params)}"


def top_rows(values: np.ndarray, role: str, model: str, text: str, kind: str, lang: str,
             n: int = TOP_N) -> list[dict]:
    """The ``n`` best heads of ``role``: layer, head, score, whether it reaches the threshold, a link."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(-np.where(np.isfinite(v), v, -np.inf), axis=None, kind="stable")
    rows = []
    for k in (int(k) for k in order[:n]):
        layer, head = divmod(k, v.shape[1])
        if not np.isfinite(v[layer, head]):
            continue
        rows.append({"layer": layer, "head": head, "score": float(v[layer, head]),
                     "above": bool(v[layer, head] >= THRESHOLDS[role]),
                     "link": head_link(model, text, kind, layer, head, lang)})
    return rows
