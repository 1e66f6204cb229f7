"""What a head atlas holds (model/lab/atlas.py computes it): the statistics, the roles, the result.

Plain data only (numpy, no torch): atlas_files.py reads and writes it, atlas.py computes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..network.kinds import KINDS

#: The statistics of every head, in display order (see model/lab/atlas.py's docstring).
STATS = ("entropy", "entropy_norm", "max_weight", "mean_distance", "diagonal", "previous", "next",
         "special_share", "punct_share", "sink_share", "first_share", "alignment")

#: Role names, in the order a head's roles are listed.
ROLES = ("previous", "next", "self", "alignment", "sink", "first", "broad")


@dataclass(frozen=True)
class RoleThresholds:
    """When a head earns a role label; every label shows the figure and the threshold it passed."""

    positional: float = 0.5  # previous / next / self: mean weight on that one key >= this
    alignment: float = 0.5  # mean weight on the ground-truth source position(s) >= this
    sink: float = 0.5  # mean weight on special + punctuation tokens >= this
    first: float = 0.5  # mean weight on the sequence's first token >= this (language models' sink)
    broad: float = 0.75  # normalised entropy >= this (spread over most of what the row may see)

    def by_role(self) -> dict[str, float]:
        """The threshold each role's figure must reach (ROLES order)."""
        return {"previous": self.positional, "next": self.positional, "self": self.positional,
                "alignment": self.alignment, "sink": self.sink, "first": self.first, "broad": self.broad}


#: Which statistic each role reads.
ROLE_STAT = {"previous": "previous", "next": "next", "self": "diagonal", "alignment": "alignment",
             "sink": "sink_share", "first": "first_share", "broad": "entropy_norm"}


@dataclass(frozen=True)
class Role:
    name: str  # one of ROLES
    value: float  # the head's figure for it (ROLE_STAT)
    threshold: float  # the figure it had to reach


class AtlasError(ValueError):
    """An atlas that cannot be computed (e.g. an empty dataset); the message says why."""


@dataclass
class Dataset:
    """What the atlas runs over: texts as the app's text box would hold them."""

    texts: list[str]
    directions: list[str | None]  # per text; None = the task decides (didactic tasks have none)
    references: list[str]  # the split's reference output of each text
    description: str  # e.g. "test split: 200 of 3156 sentences, evenly spaced"
    total: int  # sentences in the whole split


@dataclass
class Atlas:
    model: str
    key: str  # hash of weights + config + dataset + version: the disk cache's key
    task: str  # "translation" or the didactic task
    dataset: str  # Dataset.description
    texts: list[str]  # the sentences, as typed into the app
    directions: list[str | None]
    outputs: list[str]  # the model's greedy output of each
    references: list[str]
    layer_counts: dict[str, int]  # kind -> layers (kinds without layers left out)
    n_heads: int
    stats: dict[str, dict[str, np.ndarray]]  # statistic -> kind -> [layer, head] float64 (NaN: n/a)
    n_rows: dict[str, np.ndarray]  # kind -> [layer, head] query rows averaged over
    per_sentence: dict[str, np.ndarray]  # kind -> [sentence, layer, head] mean max weight (float32)
    js: dict[str, np.ndarray]  # kind -> [layer*head, layer*head] mean JS divergence, nats
    order: dict[str, list[int]]  # kind -> flattened head indices in clustering order
    seconds: float  # time the computation took
    thresholds: RoleThresholds = field(default_factory=RoleThresholds)
    #: a corpus atlas's origin (model/lab/atlas_shards.py): corpus name, size, sample, seed, hash, engine,
    #: workers, shards, weights; empty for an atlas of the held-out data
    source: dict = field(default_factory=dict)

    @property
    def kinds(self) -> list[str]:
        return [k for k in KINDS if self.layer_counts.get(k, 0)]

    @property
    def exact(self) -> list[bool]:
        """Per sentence: the model's output equals the reference."""
        return [o == r for o, r in zip(self.outputs, self.references, strict=True)]

    def stat(self, name: str, kind: str, layer: int, head: int) -> float:
        return float(self.stats[name][kind][layer, head])

    def roles(self, kind: str, layer: int, head: int) -> list[Role]:
        """Every role the head earns, with the figure and the threshold it passed (ROLES order)."""
        limits = self.thresholds.by_role()
        out = []
        for role in ROLES:
            value = self.stat(ROLE_STAT[role], kind, layer, head)
            if np.isfinite(value) and value >= limits[role]:
                out.append(Role(role, value, limits[role]))
        return out

    def head_labels(self, kind: str) -> list[str]:
        return [f"L{li}H{h}" for li in range(self.layer_counts[kind]) for h in range(self.n_heads)]

    def similarity(self, kind: str) -> np.ndarray:
        """1 − JS / log 2 in [0, 1] (1 = the two heads attend alike on every row)."""
        return 1.0 - self.js[kind] / math.log(2.0)

    def top_sentences(self, kind: str, layer: int, head: int, k: int = 10) -> list[int]:
        """Indices of the ``k`` sentences where the head's mean max weight is highest (ties: first)."""
        values = self.per_sentence[kind][:, layer, head]
        return [int(i) for i in np.argsort(-values, kind="stable")[:k]]
