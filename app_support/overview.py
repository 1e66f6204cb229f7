"""What the pages that draw every head take from a long input, streamed one layer at a time.

An analysis keeps each layer's queries and keys, not every head's L x L pattern
(:class:`~model.network.attention_stack.AttentionStack`): SmolLM2's 270 heads at 1,024 tokens would be 1.1 GB.
The all-heads tiles, one token's row or column of every head (token focus) and the heads ranked by
change between two sentences (compare) are computed here one layer, or one block of query rows, at a
time, and what a page keeps of them per input is small (:func:`app_support.gateway.derived`).

Every function takes a :class:`~app_support.token_display.ShownAttention` whose ``pattern`` and
``mask`` are either stacks (the model's own tokens: computed when indexed) or arrays (word pieces
merged, [CLS]/[SEP] hidden, or an analysis that kept its hook tensors): the same numbers either way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from app_support.gateway import derived
from app_support.token_display import ShownAttention
from model.network.attention_stack import AttentionStack
from model.network.kinds import get_kind
from model.network.stack_rows import BLOCK_BYTES, layer_rows, mask_rows, row_blocks
from model.run.analysis import Analysis
from viz.compare import change_pairs, head_change, head_change_table
from viz.focus import token_focus_values
from viz.grid import pool_tiles


def pool_layer(shown: ShownAttention, layer: int, block: int, pool: str = "max",
               max_bytes: int = BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray | None]:
    """One layer's pooled tiles ``(values [head, query_cell, key_cell], mask or None)``, pooled a block
    of rows at a time: blocks of a multiple of ``block`` rows pool to exactly the cells of the whole."""
    computed = isinstance(shown.pattern, AttentionStack)  # each block a new array: NaN is written into it
    values, masks = [], []
    for rows in _pool_blocks(shown, layer, block, pool, max_bytes):
        # the model's own weights, max-pooled in torch from the scores (no pattern NaN-filled in numpy)
        direct = shown.pattern.block_max(layer, block, rows) if computed and pool == "max" else None
        if direct is not None:
            v, m = direct
            if not shown.any_masked:  # nothing masked: no mask layer
                m = None
            elif m is None:  # this layer masks nothing where another does
                m = np.zeros((1, *v.shape[1:]), dtype=bool)
            m = None if m is None else np.broadcast_to(m, v.shape)
        else:
            mask = mask_rows(shown.mask, layer, rows) if shown.any_masked else None  # nothing masked: none
            v, m = pool_tiles(layer_rows(shown.pattern, layer, rows), mask, block, pool, overwrite=computed)
        values.append(v)
        masks.append(m)
    joined_mask = None if masks[0] is None else np.concatenate(masks, axis=-2)
    return np.concatenate(values, axis=-2), joined_mask


#: Row blocks a layer is at least cut into when its cells are pooled from the scores: under a causal mask
#: a block scores only the keys up to its last query, so more blocks skip more of the masked triangle; a
#: block has at least CAUSAL_MIN_ROWS rows (a short input is one block: its products are the whole layer's).
CAUSAL_BLOCKS = 8
CAUSAL_MIN_ROWS = 64


def _pool_blocks(shown: ShownAttention, layer: int, block: int, pool: str, max_bytes: int) -> list[slice]:
    """The row blocks :func:`pool_layer` computes (each a multiple of ``block`` rows but the last)."""
    blocks = list(row_blocks(shown.pattern, layer, block, max_bytes))
    n = shown.pattern.shape[2]
    if pool != "max" or not isinstance(shown.pattern, AttentionStack) or len(blocks) >= CAUSAL_BLOCKS:
        return blocks
    rec = shown.pattern.layers[layer]
    if rec.causal != "causal" or rec.softmax_dim != -1:
        return blocks
    step = -(-max(CAUSAL_MIN_ROWS, -(-n // CAUSAL_BLOCKS)) // block) * block
    return [slice(start, min(start + step, n)) for start in range(0, n, step)]


def pooled_tiles(result: Analysis, kind: str, shown: ShownAttention, block: int, pool: str = "max",
                 layers: range | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The pooled tiles of every head of ``layers`` (all by default) ``(values [layer, head, query_cell,
    key_cell] float32, mask or None)``, computed once per input, kind, display, block, pool and block of
    layers, one layer at a time: the all-heads page computes the page of layers it shows, and a page
    looked at before is drawn from what was kept.

    Kept per input: at most ``n_layers x n_heads x MAX_TILE_CELLS²`` cells of 5 bytes (float32 weight,
    bool mask): 5.5 MB for SmolLM2's 270 heads at any length (4.3 MB of weights at 1,024 tokens, where
    the unpooled patterns would be 1.1 GB), 1.5 MB for MiniLM's 72."""
    layers = range(shown.pattern.shape[0]) if layers is None else layers

    def compute() -> tuple[np.ndarray, np.ndarray | None]:
        pooled = [pool_layer(shown, i, block, pool) for i in layers]
        values = np.stack([v for v, _ in pooled])
        mask = None if pooled[0][1] is None else np.stack([m for _, m in pooled])
        values.setflags(write=False)  # shared by every session that shows this input
        return values, mask

    key = ("all_heads_tiles", get_kind(kind).name, shown.display, block, pool, layers.start, layers.stop)
    return derived(result, key, compute)


def focus_values(result: Analysis, kind: str, shown: ShownAttention, side: str,
                 index: int) -> tuple[np.ndarray, np.ndarray]:
    """``viz.token_focus_values`` of shown row (``side="from"``) or column (``"to"``) ``index`` of every
    head, ``(values, partners)`` [layer, head], computed once per input, kind, display, side and index:
    a row is one query row of each layer's heads, a column needs every row's softmax (blocks of rows).
    Kept per token looked at: 12 bytes a head (3 KB for SmolLM2)."""

    def one_layer(layer: int) -> tuple[np.ndarray, np.ndarray]:
        if side == "from":
            rows = layer_rows(shown.pattern, layer, slice(index, index + 1))  # [head, 1, key]
            return token_focus_values(rows[None], 0, "from")
        column = np.concatenate([layer_rows(shown.pattern, layer, rows)[:, :, index]
                                 for rows in row_blocks(shown.pattern, layer)], axis=-1)  # [head, query]
        return token_focus_values(column[None, :, :, None], 0, "to")

    def compute() -> tuple[np.ndarray, np.ndarray]:
        layers = [one_layer(i) for i in range(shown.pattern.shape[0])]
        return np.concatenate([v for v, _ in layers]), np.concatenate([p for _, p in layers])

    return derived(result, ("focus", get_kind(kind).name, shown.display, side, int(index)), compute)


def _query_rows(shown: ShownAttention, layer: int, queries: np.ndarray) -> np.ndarray:
    """[head, len(queries), key] of one layer: only the rows asked for."""
    return np.stack([layer_rows(shown.pattern, layer, slice(int(q), int(q) + 1))[:, 0] for q in queries],
                    axis=1)


def rank_heads_streamed(shown_a: ShownAttention, shown_b: ShownAttention, token: str | None = None,
                        occurrence: int = 0) -> pd.DataFrame:
    """``viz.rank_heads_by_change`` of two sentences' attention, one layer at a time: per layer only the
    compared query rows of A and B are computed (one row each for one token), never all heads' L²."""
    heads_a, heads_b = shown_a.pattern.shape[:2], shown_b.pattern.shape[:2]
    if heads_a != heads_b:
        raise ValueError(f"A has {heads_a} (layer, head) but B has {heads_b}")
    pairs = change_pairs(shown_a.query_tokens, shown_a.key_tokens, shown_b.query_tokens, shown_b.key_tokens,
                         token, occurrence)
    scores, counts = [], []
    for layer in range(shown_a.pattern.shape[0]):
        score, n = head_change(_query_rows(shown_a, layer, pairs.query_a),
                               _query_rows(shown_b, layer, pairs.query_b), pairs)
        scores.append(score)
        counts.append(n)
    return head_change_table(np.stack(scores), np.stack(counts))
