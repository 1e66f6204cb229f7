"""Glue of the head detectors page: the roles and their thresholds, links that open a head on the input it
was scored on, the table of the best heads, and the detectors of the corpus runs in runs/atlas/. No torch:
the scores come through the gateway."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np

from app_support import lab, pages
from app_support.sidebar import corpus_run_label
from model.lab.atlas import Atlas
from model.lab.atlas_shards import CorpusDetectors, corpus_runs
from model.lab.detectors import ON_ANY_INPUT, PROBE_COUNT, PROBE_LENGTH, ROLES, THRESHOLDS

__all__ = ["MAX_SEED", "ON_ANY_INPUT", "PROBE_COUNT", "PROBE_LENGTH", "ROLES", "THRESHOLDS", "CorpusScores",
           "corpus_scores", "head_link", "is_signed", "top_rows"]

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


def top_rows(values: np.ndarray, role: str, model: str, text: str | Callable[[int, int], str], kind: str,
             lang: str, n: int = TOP_N) -> list[dict]:
    """The ``n`` best heads of ``role``: layer, head, score, whether it reaches the threshold, a link that
    opens ``text`` (or ``text(layer, head)``: each head its own input)."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(-np.where(np.isfinite(v), v, -np.inf), axis=None, kind="stable")
    rows = []
    for k in (int(k) for k in order[:n]):
        layer, head = divmod(k, v.shape[1])
        if not np.isfinite(v[layer, head]):
            continue
        rows.append({"layer": layer, "head": head, "score": float(v[layer, head]),
                     "above": bool(v[layer, head] >= THRESHOLDS[role]),
                     "link": head_link(model, text(layer, head) if callable(text) else text, kind, layer,
                                       head, lang)})
    return rows


@dataclass(frozen=True)
class CorpusScores:
    """The detectors of one corpus run (``python -m model atlas --corpus``), with the run's atlas: what the
    corpus is and how it was computed (``atlas.source``), and its prompts."""

    atlas: Atlas
    detectors: CorpusDetectors

    def label(self) -> str:
        """The run as the data choice lists it: the corpus's name and how many prompts it read."""
        return corpus_run_label(self.atlas.source, len(self.atlas.texts))

    def top_prompt(self, kind: str, layer: int, head: int) -> str:
        """The corpus prompt where the head's attention is most peaked (the atlas's top example)."""
        return self.atlas.texts[self.atlas.top_sentences(kind, layer, head, 1)[0]]


def corpus_scores(name: str) -> list[CorpusScores]:
    """The detectors over a corpus of this model's current weights in runs/atlas/ (computed here or on
    another machine whose run folder was copied in), by corpus name."""
    weights = lab.atlas.weights_key(name)
    found = []
    for path in corpus_runs(name):
        scores_path = path.parent / "detectors.npz"
        try:
            mtimes = path.stat().st_mtime_ns, scores_path.stat().st_mtime_ns
        except OSError:
            continue
        atlas = lab.atlas.read_atlas(str(path), mtimes[0])
        if atlas is None or atlas.source.get("weights") != weights:
            continue
        detectors = lab.atlas_shards.read_detectors(str(scores_path), mtimes[1])
        if detectors is not None:
            found.append(CorpusScores(atlas, detectors))
    return sorted(found, key=lambda c: (c.atlas.source.get("corpus", ""), c.atlas.key))
