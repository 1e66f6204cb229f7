"""What the lab's pages choose from and are told, as plain values (no torch): the heads of a model as a
link names them, a patch site, the models and bounds of the families page, the lengths the cost page
times, the atlas's continuation. The pages read them through ``model.public``; the experiments that
use them import them from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..network.kinds import KINDS, get_kind, hook_name, layer_counts

# --------------------------------------------------------------------------- ablation: heads

ABLATION_MODES = ("zero", "mean")

Head = tuple[str, int, int]  # (attention kind, layer, head)


def all_heads(cfg) -> list[Head]:
    """Every head of a model, in kind, layer, head order."""
    counts = layer_counts(cfg)
    return [(k, i, h) for k in KINDS for i in range(counts[k]) for h in range(cfg.n_heads)]


def group_heads(cfg, kind: str, layer: int) -> list[Head]:
    """All heads of one attention kind and layer (ValueError when the model has no such layer)."""
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; expected one of {list(KINDS)}")
    n = layer_counts(cfg)[kind]
    if not 0 <= layer < n:
        raise ValueError(f"{kind} attention has layers 0..{n - 1}, got {layer}")
    return [(kind, layer, h) for h in range(cfg.n_heads)]


def format_heads(heads) -> str:
    """Heads as a link parameter: `cross.1.0,cross.1.2` (sorted, no repeats)."""
    order = {k: i for i, k in enumerate(KINDS)}
    unique = sorted(set(heads), key=lambda x: (order[x[0]], x[1], x[2]))
    return ",".join(f"{k}.{i}.{h}" for k, i, h in unique)


def parse_heads(text: str, cfg) -> tuple[list[Head], list[str]]:
    """(heads of this model, the parts that are not) from a `kind.layer.head,...` parameter; never raises."""
    valid = set(all_heads(cfg))
    heads: list[Head] = []
    bad: list[str] = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        pieces = part.split(".")
        head = None
        if len(pieces) == 3 and all(p.isascii() and p.isdigit() for p in pieces[1:]):
            head = (pieces[0], int(pieces[1]), int(pieces[2]))
        if head in valid:
            if head not in heads:
                heads.append(head)
        else:
            bad.append(part)
    return heads, bad


# --------------------------------------------------------------------------- patching: where


SITE_KINDS = ("head", "resid")


@dataclass(frozen=True)
class Site:
    """What is patched: one head's output z (what="head") or the residual stream after one block
    (what="resid"; kind "encoder" = an encoder block, "decoder" or "cross" = a decoder block)."""

    what: str
    kind: str
    layer: int
    head: int | None = None  # only for what="head"

    def __post_init__(self) -> None:
        if self.what not in SITE_KINDS:
            raise ValueError(f"patch site must be one of {SITE_KINDS}, got {self.what!r}")
        if self.kind not in KINDS:
            raise ValueError(f"unknown attention kind {self.kind!r}; expected one of {list(KINDS)}")
        if (self.head is None) != (self.what == "resid"):
            raise ValueError('a head is given exactly when patching a head (what="head")')

    @property
    def side(self) -> str:
        return get_kind(self.kind).queries

    @property
    def hook(self) -> str:
        if self.what == "head":
            return hook_name(self.kind, self.layer, "z")
        return f"{get_kind(self.kind).stack}.blocks.{self.layer}.hook_resid_post"


# --------------------------------------------------------------------------- families page

#: family -> the model that stands for it on the page (registry names).
FAMILY_MODELS: dict[str, str] = {"encoder_only": "minilm", "encoder_decoder": "default",
                                 "decoder_only": "smollm2"}
#: Most tokens of the sentence each model reads on this page (fewer where the model's own limit is
#: lower). Three models answer one sentence at once here: SmolLM2 at its own 2,048 took a minute of
#: two cores, and a word's row is read in a sentence, not in a book.
FAMILY_MAX_TOKENS = 256
#: Words (runs of letters or digits) and single Chinese characters: what a learner can pick.
_WORD = re.compile(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+")


def sentence_words(text: str) -> list[tuple[str, int]]:
    """The words of ``text`` a learner can pick: (word, how many times it came before, any case)."""
    seen: dict[str, int] = {}
    out = []
    for w in _WORD.findall(text):
        out.append((w, seen.get(w.lower(), 0)))
        seen[w.lower()] = seen.get(w.lower(), 0) + 1
    return out


# --------------------------------------------------------------------------- cost page, atlas

#: Input lengths the cost page times, shortest first.
COST_LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
#: New tokens the model writes after each prompt; its attention is read over prompt + continuation.
ATLAS_NEW_TOKENS = 16
