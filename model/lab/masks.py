"""What the masks page shows: a real padded batch of two sentences run through the model, and the
teacher-forced analysis with the decoder's causal mask switched off.

Nothing here re-implements a mask: the padding masks come from ``Transformer.padding_mask`` and the
query x key masks from ``model.network.attention.build_mask``, the function every attention module
calls, with each module's own ``causal`` flag. The patterns are what ``run_with_cache`` records on
that padded batch. The page draws the numpy arrays of :class:`PaddedBatch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..analysis import Analysis, analyze, attention_only
from ..data.batches import pad_batch
from ..data.tasks import InputError
from ..decoding import greedy_decode
from ..interventions import CausalMask
from ..network.attention import build_mask
from ..network.kinds import KINDS, get_kind, hook_name
from ..store.bundle import Bundle
from . import entry

#: Short second sentences, tried in order: the first whose token count differs from the sidebar's
#: sentence is the default, so the batch really needs padding.
OTHER_CANDIDATES = {
    "zh": ("我很忙。", "你好。", "今天天气很好。"),
    "en": ("Hello.", "I am busy.", "The weather is nice today."),
    "letters": ("cat", "hello", "abc"),
}


@dataclass
class PaddedBatch:
    """Two sentences run together as one right-padded batch (row 0: the sidebar's, row 1: the other)."""

    texts: list[str]  # each sentence as the model reads it
    outputs: list[str]  # each sentence's greedy output, decoded in the batch
    pad_id: int
    source_ids: np.ndarray  # [2, src_pos] int64, padded with pad_id
    target_ids: np.ndarray  # [2, tgt_pos] the decoder's input (prefix + output), padded
    source_tokens: list[list[str]]  # per sentence, padding included
    target_tokens: list[list[str]]
    source_lengths: list[int]  # real tokens per sentence (before padding)
    target_lengths: list[int]
    source_padding: np.ndarray  # [2, src_pos] bool, True at padding (model.padding_mask)
    target_padding: np.ndarray  # [2, tgt_pos] bool
    causal: np.ndarray  # [tgt_pos, tgt_pos] bool, the decoder's causal mask alone (True = future)
    masks: dict[str, np.ndarray]  # kind -> [2, query_pos, key_pos] bool, the mask each attention applies
    patterns: dict[str, np.ndarray]  # kind -> [2, layer, head, query_pos, key_pos] float32, recorded
    scores: dict[str, np.ndarray]  # kind -> same shape, recorded scores (-inf where masked)

    def tokens(self, kind: str, sentence: int) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of one sentence for an attention kind (padding included)."""
        k = get_kind(kind)
        side = {"source": self.source_tokens, "target": self.target_tokens}
        return side[k.queries][sentence], side[k.keys][sentence]


def _padding(model, ids: torch.Tensor) -> torch.Tensor:
    """The model's padding mask as a full [batch, pos] tensor (the model gives None when there is none)."""
    pad = model.padding_mask(ids)
    return torch.zeros(ids.shape, dtype=torch.bool) if pad is None else pad


@entry
def padded_batch(bundle: Bundle, texts: list[str], direction: str | None = None,
                 with_scores: bool = True) -> PaddedBatch:
    """Prepare both sentences, decode them greedily as one batch, then run the padded batch with a cache.

    ``direction`` (None: each sentence's own) applies to both sentences. Raises ``InputError`` for
    a sentence the model cannot read. Without ``with_scores`` the batch's ``scores`` stay empty;
    only the attention patterns are recorded either way.
    """
    model, tok, task = bundle.model, bundle.tokenizer, bundle.task
    cfg = model.cfg
    prepared = [task.prepare(text, cfg.max_len, direction) for text in texts]
    with model.lock, torch.no_grad():
        model.eval()
        encoder_only = getattr(cfg, "encoder_only", False)  # no decoder: the source side only
        generated = [[] for _ in prepared] if encoder_only else greedy_decode(
            model, [p.source_ids for p in prepared], [p.prefix for p in prepared], tok.eos_id)
        decoder_in = [(p.prefix + g)[: cfg.max_len] for p, g in zip(prepared, generated, strict=True)]
        src = pad_batch([p.source_ids for p in prepared], cfg.pad_id)  # [2, src_pos]
        tgt = pad_batch(decoder_in, cfg.pad_id)  # [2, tgt_pos]
        counts = model.attention_layer_counts()
        whats = ("pattern", "scores") if with_scores else ("pattern",)
        # Only what the page draws is recorded: at 512 tokens every hook of the batch is ~0.5 GB.
        wanted = {hook_name(name, i, what) for name in KINDS for i in range(counts[name]) for what in whats}
        _, cache = (model.run_with_cache(src, names_filter=wanted.__contains__) if encoder_only
                    else model.run_with_cache(src, tgt, names_filter=wanted.__contains__))
        src_pad, tgt_pad = _padding(model, src), _padding(model, tgt)
        n_src, n_tgt = src.shape[1], tgt.shape[1]
        key_padding = {"source": src_pad, "target": tgt_pad}
        length = {"source": n_src, "target": n_tgt}
        masks, patterns, scores = {}, {}, {}
        for name in KINDS:
            if not counts[name]:
                continue
            k = get_kind(name)
            module = model.get_submodule(f"{k.stack}.blocks.0.{k.module}")
            # exactly the call MultiHeadAttention.forward makes (no cache: offset 0)
            mask = build_mask(key_padding[k.keys], length[k.queries], length[k.keys], module.causal)
            shape = (2, length[k.queries], length[k.keys])
            masks[name] = (np.zeros(shape, bool) if mask is None
                           else np.broadcast_to(mask[:, 0].numpy(), shape).copy())
            patterns[name] = np.stack([cache[hook_name(name, i, "pattern")].float().numpy()
                                       for i in range(counts[name])], axis=1)
            if with_scores:
                scores[name] = np.stack([cache[hook_name(name, i, "scores")].float().numpy()
                                         for i in range(counts[name])], axis=1)
        causal = build_mask(None, n_tgt, n_tgt, True)[0, 0].numpy()
    ids_src, ids_tgt = src.numpy(), tgt.numpy()
    return PaddedBatch(
        texts=[p.text for p in prepared],
        outputs=[tok.decode(g) for g in generated],
        pad_id=cfg.pad_id,
        source_ids=ids_src,
        target_ids=ids_tgt,
        source_tokens=[tok.tokens(row.tolist()) for row in ids_src],
        target_tokens=[tok.tokens(row.tolist()) for row in ids_tgt],
        source_lengths=[len(p.source_ids) for p in prepared],
        target_lengths=[len(d) for d in decoder_in],
        source_padding=src_pad.numpy(),
        target_padding=tgt_pad.numpy(),
        causal=causal,
        masks=masks,
        patterns=patterns,
        scores=scores,
    )


@entry
def default_other(bundle: Bundle, text: str, direction: str | None = None) -> str:
    """A short second sentence for ``text``: same language (translation model) or a short word
    (letter models), with a different number of tokens than ``text`` where one of ours has."""
    task = bundle.task
    if getattr(task, "directions", None):
        try:
            prepared = task.prepare(text, bundle.cfg.max_len, direction)
            language = prepared.direction.split("->")[0]
        except InputError:
            prepared, language = None, "en"
    else:
        language = "letters"
        try:
            prepared = task.prepare(text, bundle.cfg.max_len)
        except InputError:
            prepared = None
    candidates = OTHER_CANDIDATES[language]
    if prepared is None:
        return candidates[0]
    for candidate in candidates:
        try:
            other = task.prepare(candidate, bundle.cfg.max_len, direction)
        except InputError:
            continue
        if len(other.source_ids) != len(prepared.source_ids):
            return candidate
    return candidates[0]


@entry
def no_causal_analysis(bundle: Bundle, text: str, direction: str | None, target: str) -> Analysis:
    """The teacher-forced pass over ``target`` with the decoder's causal mask off (a demonstration),
    recording attention patterns and scores only (what the page draws)."""
    return analyze(bundle, text, direction, target, edits=(CausalMask("off"),), keep=attention_only)
