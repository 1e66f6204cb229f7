"""What one analysis of a model may hold, and the longest input that follows from it.

The config's size limits bound each number alone (at most 64 layers, 256 heads, 8,192 positions),
not what running the model costs. An analysis keeps, per attention layer, the queries and keys its
softmax saw (width x L, :mod:`model.network.recorded`); a page computes one head's L² scores and
pattern, or a block of rows of a layer, when it looks. So every model gets an input budget from its
config before its weights are read: the longest input whose analysis and the largest step computing
it fit in ``ANALYSIS_BUDGET_BYTES``. A model that allows more is clamped to it (the cut input gets the
usual note, and the model says why it reads less than its config); one whose smallest useful input
does not fit is refused. SmolLM2 (30 layers, 9 + 3 heads of 64, 8,192 positions) gets 2,048 tokens.
"""

from __future__ import annotations

import dataclasses
import os

import torch

from ..core.messages import Message
from ..network.config import FUSED_FROM_CELLS, ModelConfig
from ..network.positional import LearnedPositions, SinusoidalPositions
from ..network.recorded import BLOCK_BYTES
from .bundle import Bundle
from .problems import CheckpointError

MiB = 2**20
#: Bytes one analysis of one input may hold, with the largest step computing or reading it. The
#: app's result cache holds 320 MiB, so any one analysis fits in it; a server operator may set
#: another figure (in MiB).
ANALYSIS_BUDGET_BYTES = int(os.environ.get("ATTENTION_LENS_ANALYSIS_MB", "320")) * MiB
#: The shortest input worth showing: a model that cannot take this many tokens is refused.
MIN_USEFUL_TOKENS = 16
#: Square tensors per head alive while one attention layer runs its explicit steps: Q K^T, its
#: scaling, the mask, the masked scores, the softmax's exponentials, the pattern, and the allocator's
#: slack around them (seven is what bench/bench_budget.py measured the peak at). Past
#: FUSED_FROM_CELLS an unhooked pass uses the fused kernel, which holds no square per head.
PASSING_SQUARES = 7
#: Square tensors of one head a page computes at once: its scores, its pattern, the mask.
PAGE_SQUARES = 3
#: Output rows whose logits a decoder-only analysis holds at most (its output tokens, and one more).
LM_OUTPUT_ROWS = 256
FLOAT32 = 4


def attention_layers(cfg: ModelConfig) -> int:
    """Attention layers one pass runs: every encoder layer, and each decoder layer's self-attention
    plus, with an encoder, its cross-attention."""
    per_decoder_layer = 1 if cfg.decoder_only else 2
    return cfg.n_enc_layers + per_decoder_layer * cfg.n_dec_layers


def kept_bytes(cfg: ModelConfig, length: int) -> int:
    """What an analysis keeps at ``length`` tokens: each attention layer's queries and keys, and each
    head's value norm per key (the weight x value-norm view)."""
    per_layer = (cfg.n_heads + cfg.kv_heads) * cfg.d_head + cfg.n_heads
    return FLOAT32 * length * attention_layers(cfg) * per_layer


def pass_bytes(cfg: ModelConfig, length: int) -> int:
    """What the hooked pass holds besides: the layer being computed (its per-position tensors, its
    squares while they are explicit, the mask) and the logits of the rows read."""
    # x, its norm, q, k, v, z, the merged heads, the output: d_model wide each, or the heads' width
    # where that is larger (cfg.head_dim: Gemma-3-270M's 4 x 256 heads on a width of 640)
    width = max(cfg.d_model, cfg.n_heads * cfg.d_head)
    per_position = FLOAT32 * length * (8 * width + 2 * cfg.d_ff)
    squares = FLOAT32 * PASSING_SQUARES * min(cfg.n_heads * length * length, FUSED_FROM_CELLS)
    rows = min(length, LM_OUTPUT_ROWS) if cfg.decoder_only else length
    logits = 0 if cfg.encoder_only else FLOAT32 * rows * cfg.output_vocab_size
    return per_position + squares + length * length + logits


def page_bytes(cfg: ModelConfig, length: int) -> int:
    """The most a page computes at once: one head's squares, or a block of rows of a layer."""
    return max(FLOAT32 * PAGE_SQUARES * length * length, min(BLOCK_BYTES, FLOAT32 * PAGE_SQUARES
                                                             * cfg.n_heads * length * length))


def analysis_bytes(cfg: ModelConfig, length: int) -> int:
    """Bytes at the peak of one analysis at ``length`` tokens (source and output alike): what it keeps,
    and the larger of the pass computing it and a page reading it."""
    return kept_bytes(cfg, length) + max(pass_bytes(cfg, length), page_bytes(cfg, length))


def input_limit(cfg: ModelConfig, budget: int | None = None) -> int:
    """The longest input (at most the config's max_len) whose analysis fits in ``budget`` bytes;
    0 when not even one token does."""
    budget = ANALYSIS_BUDGET_BYTES if budget is None else budget
    low, high = 0, cfg.max_len
    while low < high:  # analysis_bytes grows with length: the last length within the budget
        mid = (low + high + 1) // 2
        if analysis_bytes(cfg, mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def check_budget(cfg: ModelConfig, where: object) -> int:
    """The input limit of a model with config ``cfg`` (read from ``where``, named in the message);
    CheckpointError when its shortest useful input does not fit in the budget."""
    limit = input_limit(cfg)
    if limit < min(MIN_USEFUL_TOKENS, cfg.max_len):
        need = analysis_bytes(cfg, min(MIN_USEFUL_TOKENS, cfg.max_len))
        raise CheckpointError(
            f"{where}: one analysis of a {MIN_USEFUL_TOKENS}-token input would hold {need / MiB:,.0f} MiB "
            f"({attention_layers(cfg)} attention layers x {cfg.n_heads} heads), over the "
            f"{ANALYSIS_BUDGET_BYTES // MiB:,} MiB an analysis may take here"
        )
    return limit


def within_budget(bundle: Bundle, limit: int) -> Bundle:
    """``bundle`` reading at most ``limit`` tokens: its model's config clamped (learned position
    rows past the limit dropped), and the reason kept in ``bundle.info["budget"]``."""
    model = bundle.model
    cfg = model.cfg
    if limit >= cfg.max_len:
        return bundle
    for module in model.modules():
        if isinstance(module, LearnedPositions):  # a Parameter: replaced, so its rows are freed
            module.table = torch.nn.Parameter(module.table.detach()[:limit].clone())
        elif isinstance(module, SinusoidalPositions):
            module.table = module.table[:limit].clone()
    model.cfg = dataclasses.replace(cfg, max_len=limit)
    bundle.info["budget"] = {"config_max_len": cfg.max_len, "max_len": limit,
                             "full_mib": round(analysis_bytes(cfg, cfg.max_len) / MiB),
                             "budget_mib": ANALYSIS_BUDGET_BYTES // MiB}
    return bundle


def budget_note(bundle: Bundle) -> Message | None:
    """What to tell a user of a clamped model (None when the model reads its whole context)."""
    budget = bundle.info.get("budget") if isinstance(bundle.info, dict) else None
    if not budget:
        return None
    return Message("budget_clamped", dict(budget), "info")


#: Notes saying the input or output was cut at the model's length.
LENGTH_NOTES = ("input_truncated", "input_truncated_pieces", "target_cut", "output_max_length")


def with_budget_reason(bundle: Bundle, notes: list[Message]) -> list[Message]:
    """``notes``, and when something was cut at a length the budget lowered, why."""
    reason = budget_note(bundle)
    if reason is not None and any(n.code in LENGTH_NOTES for n in notes):
        return [*notes, reason]
    return notes
