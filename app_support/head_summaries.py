"""What the statistics and aggregates pages draw of one analysis, streamed over its heads and remembered.

An analysis of a long input computes a head's weights when they are read (``Analysis.attention``
returns a lazy stack): SmolLM2's 270 heads at 1,024 tokens would hold 1.1 GB at once. These summaries
read one block of query rows of one layer at a time (the analysis's own blocks, within
``model.network.recorded.BLOCK_BYTES``), keep only what they are (a table, a head x head matrix, one
[query, key] matrix) and are remembered per input with :func:`app_support.gateway.derived`, so a rerun
of a page reads them instead of computing every head again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

import viz
from app_support.gateway import derived
from app_support.token_display import ShownAttention, TokenDisplay, page_attention
from model.network.kinds import get_kind
from viz.aggregates import Blocks, stack_shape
from viz.stats import LN2
from viz.wordpieces import merge_mask, merge_pieces


@dataclass(frozen=True)
class HeadSummaries:
    """One attention kind's head statistics and head similarity, from one pass over its heads."""

    stats: pd.DataFrame  # viz.head_stats's table, one row per head
    similarity: np.ndarray  # [head, head] 1 − JS / log 2, heads flattened layer-major
    labels: list[str]  # "L0H0", ... one per row of `similarity`
    n_queries: int  # query rows of the input
    rows_compared: int  # query rows the similarity averages over (viz.divergence_rows)

    @property
    def n_pairs(self) -> int:
        n = len(self.labels)
        return n * (n - 1) // 2


def row_blocks(result: object, kind: str) -> Blocks | None:
    """The analysis's own row blocks of each layer (every row at once under a softmax over queries),
    for a lazy stack; None (viz's blocks) when the analysis holds plain arrays."""
    if not viz.is_lazy(result.attention(kind)):
        return None
    inputs = result.layer_inputs(kind)
    return lambda layer: inputs[layer].row_blocks(inputs[layer].n_heads)


def _compute_summaries(result: object, kind: str) -> HeadSummaries:
    patterns = result.attention(kind)  # [layer, head, query, key]: an array, or computed when read
    shape = stack_shape(patterns)
    key_mask = result.attention(kind, "mask") if result.masks_anything(kind) else None
    keys = result.tokens_for(kind)[1]
    key_special = result.kind_attention(kind).key_special
    stats = viz.HeadStatsStream(shape, key_mask=key_mask, special_tokens=key_special,
                                sink_tokens=viz.sink_keys(keys, key_special))
    sample = viz.RowSample(shape)  # the rows the similarity compares, taken as the blocks go by
    for layer, rows, block in viz.stream_layers(patterns, row_blocks(result, kind)):
        stats.add(layer, rows, block)
        sample.add(layer, rows, block)
    similarity = 1.0 - sample.divergence() / LN2
    return HeadSummaries(stats.table(), similarity, viz.head_labels(*shape[:2]), shape[2], len(sample.rows))


def head_summaries(result: object, kind: str) -> HeadSummaries:
    """Head statistics and similarity of ``kind``, computed once per analysis (one pass over the heads)."""
    return derived(result, ("head_summaries", get_kind(kind).name), lambda: _compute_summaries(result, kind))


def shown_layout(result: object, kind: str, display: TokenDisplay, layer: int = 0) -> ShownAttention:
    """The page's tokens and units under ``display`` (one head computed, for its groupings and labels)."""
    # page_attention asks once per analysis whether anything is masked; answered here from the recorded
    # mask descriptions, so that question never computes every head's scores of a long input
    derived(result, ("any_masked", get_kind(kind).name), lambda: result.masks_anything(kind))
    return page_attention(result, kind, display, heads=(layer, 0))


def layer_mean(result: object, kind: str, layer: int, shown: ShownAttention) -> tuple[np.ndarray, np.ndarray]:
    """(mean over the heads of ``layer`` [shown query, shown key] float32, masked in every head [same] bool),
    computed for that layer only; merged into words / with tokens hidden as ``shown`` is."""
    patterns = result.attention(kind)
    masked = result.masks_anything(kind)
    if not shown.display.active:  # the model's own tokens: a block of rows at a time
        mean = viz.mean_over_heads(patterns, layer, blocks=row_blocks(result, kind))
        mask = np.asarray(result.attention(kind, "mask")[layer]).all(axis=0) if masked else None
        return mean, np.zeros(mean.shape, dtype=bool) if mask is None else mask
    heads = merge_pieces(np.asarray(patterns[layer]), shown.queries, shown.keys,
                         renormalise=shown.display.renormalise)  # [head, shown query, shown key]
    mean = heads.mean(axis=0, dtype=np.float64).astype(np.float32)
    if not masked:
        return mean, np.zeros(mean.shape, dtype=bool)
    mask = merge_mask(np.asarray(result.attention(kind, "mask")[layer]), shown.queries, shown.keys)
    return mean, mask.all(axis=0)


def rollout(result: object, kind: str, add_residual: bool,
            shown: ShownAttention) -> tuple[np.ndarray, list[str]]:
    """(attention rollout [unit, unit] float32, labels): streamed, one layer's mean over heads at a time,
    over the model's tokens, then merged as ``shown`` is; computed once per analysis and choice."""
    display = shown.display

    def compute() -> tuple[np.ndarray, list[str]]:
        tokens, _ = result.tokens_for(kind)
        return viz.merged_rollout(result.attention(kind), tokens, add_residual=add_residual,
                                  units=shown.queries if display.active else None,
                                  renormalise=display.renormalise, blocks=row_blocks(result, kind))

    return derived(result, ("rollout", get_kind(kind).name, bool(add_residual), display), compute)
