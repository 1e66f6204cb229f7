"""One layer of ``[layer, head, query, key]`` attention read a block of query rows at a time, from an
:class:`~model.network.attention_stack.AttentionStack` (computed when indexed) or an array (already held).

Numpy only, no torch: the app's all-heads and focus pages (app_support/overview.py) and the Python API's
figures of attention computed elsewhere (attention_lens/figures.py) read layers through it alike. A stack
is recognised by what it offers (``layers``, ``layer``), so this module imports none of it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Bytes of float32 squares one block of rows holds at most: the pages stream a layer in blocks of query
#: rows, so no step holds one layer's L² for every head at once.
BLOCK_BYTES = 32 * 2**20


def is_stack(x: object) -> bool:
    """Whether ``x`` computes its layers when indexed (an AttentionStack) rather than holding them."""
    return hasattr(x, "layers") and hasattr(x, "layer")


def layer_rows(x, layer: int, rows: slice) -> np.ndarray:
    """[head, rows, key] of one layer: computed for a stack, a view of an array."""
    if is_stack(x):
        return x.layer(layer, rows=rows)
    return np.asarray(x[layer, :, rows])


def mask_rows(mask, layer: int, rows: slice) -> np.ndarray:
    """[head, rows, key] bool of one layer; a stack's mask is the same for every head: [1, rows, key]."""
    if is_stack(mask):
        return mask.layer(layer, heads=[0], rows=rows)
    return np.asarray(mask[layer, :, rows])


def row_blocks(x, layer: int, multiple: int = 1, max_bytes: int = BLOCK_BYTES) -> Iterator[slice]:
    """Blocks of query rows of one layer, each a multiple of ``multiple`` rows (but the last): a stack's
    blocks keep one step within about ``max_bytes`` (:meth:`AttentionInputs.row_blocks`); an array,
    already held, is one block."""
    n = x.shape[2]
    if not is_stack(x):
        yield slice(0, n)
        return
    first = next(x.layers[layer].row_blocks(x.shape[1], max_bytes))
    if first.stop >= n:  # one block (short inputs, or a softmax over queries: rows are not independent)
        yield slice(0, n)
        return
    step = max(multiple, (first.stop - first.start) // multiple * multiple)
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))
