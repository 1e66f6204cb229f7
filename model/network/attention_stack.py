"""One attention kind's ``[layer, head, query_pos, key_pos]`` weights, computed when they are indexed.

An analysis records what each layer's softmax saw (:mod:`model.network.recorded`), not the L² weights.
:class:`AttentionStack` reads like the stacked array a page used to get: ``stack[layer, head]`` computes
one head, ``stack[layer, :, row]`` one query row of every head of a layer, ``stack[layer]`` one layer;
``np.asarray(stack)`` computes every head (what a short input's page may still do, and what a long
input's page must not: those stream with :meth:`layers` instead).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .recorded import AttentionInputs

#: What a stack holds: the softmax's weights, the scaled scores (-inf where masked) or the mask.
WHATS = ("pattern", "scores", "mask")


def _as_rows(key: object, n: int) -> tuple[slice, object]:
    """(the block of rows to compute, the index to apply to that block afterwards)."""
    if isinstance(key, int | np.integer):
        i = range(n)[int(key)]
        return slice(i, i + 1), 0
    if isinstance(key, slice) and key.step in (None, 1):
        start, stop, _ = key.indices(n)
        return slice(start, max(start, stop)), slice(None)
    return slice(None), key


class AttentionStack:
    """``[layer, head, query_pos, key_pos]`` of sentence ``batch``, computed from ``layers`` on demand."""

    ndim = 4

    def __init__(self, layers: Sequence[AttentionInputs], what: str = "pattern", batch: int = 0):
        if what not in WHATS:
            raise ValueError(f"what must be one of {WHATS}, got {what!r}")
        if not layers:
            raise ValueError("an attention stack needs at least one layer")
        self.layers, self.what, self.batch = list(layers), what, batch
        first = self.layers[0]
        self.shape = (len(self.layers), first.n_heads, first.n_queries, first.n_keys)
        self.dtype = np.dtype(bool) if what == "mask" else np.dtype(np.float32)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"AttentionStack({self.what}, shape={self.shape})"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        """What :func:`np.asarray` of the whole stack would take."""
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def layer(self, i: int, heads: int | slice | Sequence[int] = slice(None),
              rows: slice = slice(None)) -> np.ndarray:
        """[head, query rows, key_pos] of layer ``i`` (the chosen heads and block of rows)."""
        rec = self.layers[i]
        if self.what == "mask":
            n_heads = len(np.atleast_1d(np.arange(rec.n_heads)[heads]))
            start, stop, _ = rows.indices(rec.n_queries)
            m = rec.mask(self.batch, rows)
            if m is None:
                return np.zeros((n_heads, stop - start, rec.n_keys), dtype=bool)
            return np.broadcast_to(m.numpy(), (n_heads, stop - start, rec.n_keys)).copy()
        scores, pattern = rec.compute(heads, self.batch, rows)
        return (pattern if self.what == "pattern" else scores).numpy()

    def block_max(self, i: int, block: int,
                  rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray | None] | None:
        """``(values [head, row cells, key cells], masked [1, row cells, key cells] or None)`` of layer
        ``i``: each ``block x block`` cell's largest weight, NaN where the whole cell is masked
        (:meth:`AttentionInputs.block_max`); None where that does not apply (not the softmax's own
        weights, or a softmax over queries)."""
        rec = self.layers[i]
        if type(self) is not AttentionStack or self.what != "pattern" or rec.softmax_dim != -1:
            return None
        values, masked = rec.block_max(block, self.batch, rows)
        return values.numpy(), None if masked is None else masked.numpy()[None]

    def layers_iter(self) -> Iterator[np.ndarray]:
        """Each layer's [head, query_pos, key_pos] in turn: one layer alive at a time."""
        for i in range(len(self.layers)):
            yield self.layer(i)

    def __getitem__(self, key: object) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        if any(k is Ellipsis for k in key) or len(key) > 4:
            return np.asarray(self)[key]
        key = key + (slice(None),) * (4 - len(key))
        layer_key, head_key, row_key, key_key = key
        if isinstance(layer_key, int | np.integer):
            layers, squeeze_layer = [range(len(self))[int(layer_key)]], True
        else:
            layers, squeeze_layer = list(np.arange(len(self))[layer_key]), False
        heads = int(head_key) if isinstance(head_key, np.integer) else head_key
        if not isinstance(heads, int | slice):
            heads = list(np.arange(self.shape[1])[heads])
        rows, after_rows = _as_rows(row_key, self.shape[2])
        out = [self.layer(i, heads, rows)[:, after_rows][..., key_key] for i in layers]
        if isinstance(heads, int):
            out = [o[0] for o in out]
        if squeeze_layer:
            return out[0]
        if not out:
            return np.zeros((0, *self.shape[1:]), dtype=self.dtype)[(slice(None), head_key, row_key, key_key)]
        return np.stack(out)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        whole = self[:, :, :, :]
        return whole if dtype is None else whole.astype(dtype)

    def astype(self, dtype) -> np.ndarray:
        return np.asarray(self, dtype=dtype)

    def copy(self) -> np.ndarray:
        return np.asarray(self)
