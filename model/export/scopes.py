"""What one exported file of an input holds (:class:`Scope`: everything, one attention kind, one layer or one
head) and the most bytes it may hold. Plain values, no torch: the app's pages read them through
``model.public``; :mod:`model.export.archive` writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..network.kinds import get_kind

#: The hooks whose tensors are [batch, head, query_pos, key_pos]: computed while writing, never kept.
SQUARES = ("raw_scores", "scores", "pattern")
#: What the export page's NPZ holds (the weights and the scores the pages draw).
PAGE_SQUARES = ("scores", "pattern")
#: Most bytes of tensors one file holds (the NPZ is stored uncompressed, so its size is this plus headers):
#: one SmolLM2 layer's three squares at 1,024 tokens (113 MB) fit; all 30 layers (3.4 GB) do not.
LIMIT_BYTES = 256 * 2**20


def per_position(hook: str) -> bool:
    """``keep`` for :func:`~model.run.analysis.analyze` of an archive: every hook but the squares."""
    return hook.rsplit(".hook_", 1)[-1] not in SQUARES


@dataclass(frozen=True)
class Scope:
    """What one file holds: everything (kind None), one attention kind, one of its layers, or one head."""

    kind: str | None = None
    layer: int | None = None
    head: int | None = None

    @property
    def slug(self) -> str:
        """For file names: "all", "cross", "cross-layer1", "cross-layer1-head2"."""
        parts = [self.kind or "all"]
        parts += [] if self.layer is None else [f"layer{self.layer}"]
        parts += [] if self.head is None else [f"head{self.head}"]
        return "-".join(parts)

    def holds_hook(self, hook: str) -> bool:
        """Whether a per-position hook belongs to this scope (a kind: its stack; a layer: its block)."""
        if self.kind is None:
            return True
        stack = get_kind(self.kind).stack
        prefix = f"{stack}." if self.layer is None else f"{stack}.blocks.{self.layer}."
        return hook.startswith(prefix)


ALL = Scope()


def scopes(size, kinds: dict[str, tuple[int, int]], limit: int = LIMIT_BYTES) -> list[Scope]:
    """The largest scopes within ``limit`` bytes: everything, else each kind that fits, else each layer of it
    that fits, else each head (offered whatever its size). ``size(scope)`` gives the bytes of a scope,
    ``kinds`` maps each kind to (layers, heads)."""
    if size(ALL) <= limit:
        return [ALL]
    out: list[Scope] = []
    for kind, (n_layers, n_heads) in kinds.items():
        if size(Scope(kind)) <= limit:
            out.append(Scope(kind))
            continue
        for layer in range(n_layers):
            if size(Scope(kind, layer)) <= limit:
                out.append(Scope(kind, layer))
            else:
                out.extend(Scope(kind, layer, head) for head in range(n_heads))
    return out
