"""What the masks page shows: a real padded batch of two sentences run through the model, and the
teacher-forced analysis with the decoder's causal mask switched off.

A decoder-only model reads one sequence (prompt + continuation): its batch has no source side, and
it also comes left-padded (:class:`LeftPadded`), as batched generation pads prompts.

Nothing here re-implements a mask: the padding masks come from ``Transformer.padding_mask`` and the
query x key masks from ``model.network.attention.build_mask``, the function every attention module
calls, with each module's own ``causal`` flag. The patterns are what ``run_with_cache`` records on
that padded batch. The page draws the numpy arrays of :class:`PaddedBatch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..data.batches import pad_batch
from ..data.char_tokenizer import CharTokenizer
from ..data.tasks import InputError
from ..decoding.decoders import greedy_decode
from ..decoding.strategy import DEFAULT_NEW_TOKENS
from ..network.attention import build_mask
from ..network.kinds import KINDS, get_kind, hook_name
from ..run.interventions import CausalMask, HookFunction, intervene
from ..store.bundle import Bundle
from . import entry
from .pitfalls import LayerRun, layer_run

#: Short second sentences, tried in order: the first whose token count differs from the sidebar's
#: sentence is the default, so the batch really needs padding.
OTHER_CANDIDATES = {
    "zh": ("我很忙。", "你好。", "今天天气很好。"),
    "en": ("Hello.", "I am busy.", "The weather is nice today."),
    "letters": ("cat", "hello", "abc"),
}


@dataclass
class LeftPadded:
    """A decoder-only batch left-padded (the padding first, as batched generation pads prompts), run
    as the model runs it and with the padding mask added; decoder self-attention only."""

    ids: np.ndarray  # [2, pos] int64
    tokens: list[list[str]]
    padding: np.ndarray  # [2, pos] bool, True at the padding (the positions before each sequence)
    applied: np.ndarray  # [2, pos, pos] bool, the mask the model itself applies to this batch
    with_padding: np.ndarray  # [2, pos, pos] bool, build_mask(padding, causal): padding keys hidden too
    as_run: np.ndarray  # [2, layer, head, pos, pos] float32, recorded as the model runs the batch
    masked: np.ndarray  # same, run with the padding mask (-inf at padding keys, a hook on hook_scores)
    pad_weight: list[float]  # per sentence, as run: the most weight a real query puts on padding keys
    diff_as_run: list[float]  # per sentence: max |real rows - the sentence run alone|, as run
    diff_masked: list[float]  # the same with the padding mask
    layer: int | None = None  # the one layer as_run and masked hold (their layer axis 1); None: every layer

    def head_pattern(self, run: str, sentence: int, layer: int, head: int) -> np.ndarray:
        """[pos, pos] weights of one head of ``run`` ("as_run" or "masked")."""
        return getattr(self, run)[sentence, _layer_index(self.layer, layer), head]


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
    decoder_only: bool = False  # one sequence per sentence: the source side is empty ([2, 0])
    masks_padding: bool = True  # the model's cfg.mask_padding: whether its attention hides padding keys
    pad_is_eos: bool = False  # the padding id is also the end-of-text id (converted language models)
    # per sentence, max |real rows - the sentence run alone| of the decoder's recorded weights
    right_diff: list[float] | None = None
    left: LeftPadded | None = None  # decoder-only models: the same batch, left-padded
    # the one layer patterns and scores hold (their layer axis 1), of the kinds asked for; None: every layer
    layer: int | None = None
    # the sliding window of the layer whose masks ``masks`` hold (layer, or 0): 0 = the whole causal past
    window: int = 0

    def head_pattern(self, kind: str, sentence: int, layer: int, head: int) -> np.ndarray:
        """[query_pos, key_pos] weights of one head of one sentence."""
        return self.patterns[kind][sentence, _layer_index(self.layer, layer), head]

    def tokens(self, kind: str, sentence: int) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of one sentence for an attention kind (padding included)."""
        k = get_kind(kind)
        side = {"source": self.source_tokens, "target": self.target_tokens}
        return side[k.queries][sentence], side[k.keys][sentence]


def _layer_index(kept: int | None, layer: int) -> int:
    """Where ``layer`` is on the layer axis of arrays that hold every layer (``kept`` None) or ``kept``."""
    if kept is None:
        return layer
    if layer != kept:
        raise ValueError(f"layer {layer} was not recorded (only layer {kept})")
    return 0


def _only(layers: np.ndarray, layer: int | None) -> np.ndarray:
    """[batch, layer, ...] cut to the one ``layer`` (a copy, so the whole stack can be freed)."""
    return layers if layer is None else layers[:, layer : layer + 1].copy()


def _mask_layer(layer: int | None, count: int) -> int:
    """The layer whose module's mask is drawn: the one asked for (within the stack), else the first."""
    return 0 if layer is None else min(layer, count - 1)


def _self_attention(model, layer: int | None):
    """A decoder-only model's self-attention module of ``layer`` (None: the first): its causal flag and
    sliding window are that layer's (Gemma 3's local and global layers differ)."""
    n = model.attention_layer_counts()["decoder"]
    return model.get_submodule(f"decoder.blocks.{_mask_layer(layer, n)}.self_attn")


def _padding(model, ids: torch.Tensor) -> torch.Tensor:
    """The model's padding mask as a full [batch, pos] tensor (the model gives None when there is none)."""
    pad = model.padding_mask(ids)
    return torch.zeros(ids.shape, dtype=torch.bool) if pad is None else pad


@entry
def padded_batch(bundle: Bundle, texts: list[str], direction: str | None = None,
                 with_scores: bool = True, max_new: int | None = None, kind: str | None = None,
                 layer: int | None = None) -> PaddedBatch:
    """Prepare both sentences, decode them greedily as one batch, then run the padded batch with a cache.

    ``direction`` (None: each sentence's own) applies to both sentences. Raises ``InputError`` for
    a sentence the model cannot read. Without ``with_scores`` the batch's ``scores`` stay empty;
    only the attention patterns are recorded either way. A decoder-only model continues each prompt
    by at most ``max_new`` tokens (None: DEFAULT_NEW_TOKENS, as ``analyze``) and is also left-padded.
    ``kind`` / ``layer`` (None: all) keep the patterns and scores of that kind / layer only (what the
    page draws: every layer of SmolLM2's three runs at 256 tokens is ~420 MB, more than the app's
    cache holds); the masks of every kind and the figures over every layer are kept all the same.
    """
    model, tok, task = bundle.model, bundle.tokenizer, bundle.task
    out_tok = bundle.target_tokenizer  # names the decoder's ids
    cfg = model.cfg
    prepared = [task.prepare(text, cfg.max_len, direction) for text in texts]
    if cfg.decoder_only:
        return _language_model_batch(bundle, prepared, with_scores, max_new, layer)
    with model.lock, torch.no_grad():
        model.eval()
        encoder_only = getattr(cfg, "encoder_only", False)  # no decoder: the source side only
        generated = [[] for _ in prepared] if encoder_only else greedy_decode(
            model, [p.source_ids for p in prepared], [p.prefix for p in prepared], out_tok.eos_id)
        decoder_in = [(p.prefix + g)[: cfg.max_len] for p, g in zip(prepared, generated, strict=True)]
        src = pad_batch([p.source_ids for p in prepared], cfg.pad_id)  # [2, src_pos]
        tgt = pad_batch(decoder_in, cfg.pad_id)  # [2, tgt_pos]
        counts = model.attention_layer_counts()
        whats = ("pattern", "scores") if with_scores else ("pattern",)
        # Only what the page draws is recorded: at 512 tokens every hook of the batch is ~0.5 GB.
        kinds = [name for name in KINDS if counts[name] and kind in (None, name)]
        layers = {name: range(counts[name]) if layer is None else [layer] for name in kinds}
        wanted = {hook_name(name, i, what) for name in kinds for i in layers[name] for what in whats}
        _, cache = (model.run_with_cache(src, names_filter=wanted.__contains__) if encoder_only
                    else model.run_with_cache(src, tgt, names_filter=wanted.__contains__))
        src_pad, tgt_pad = _padding(model, src), _padding(model, tgt)
        n_src, n_tgt = src.shape[1], tgt.shape[1]
        # what attention applies: nothing for a model trained without the padding mask (the fault)
        key_padding = {"source": model.attention_padding(src), "target": model._target_padding(tgt)}
        length = {"source": n_src, "target": n_tgt}
        masks, patterns, scores, windows = {}, {}, {}, {}
        for name in KINDS:
            if not counts[name]:
                continue
            k = get_kind(name)
            module = model.get_submodule(f"{k.stack}.blocks.{_mask_layer(layer, counts[name])}.{k.module}")
            # exactly the call MultiHeadAttention.forward makes (no cache: offset 0)
            mask = build_mask(key_padding[k.keys], length[k.queries], length[k.keys], module.causal,
                              window=module.window)
            windows[name] = int(module.window)
            shape = (2, length[k.queries], length[k.keys])
            masks[name] = _dense(mask, shape)
            if name not in kinds:
                continue
            patterns[name] = np.stack([cache[hook_name(name, i, "pattern")].float().numpy()
                                       for i in layers[name]], axis=1)
            if with_scores:
                scores[name] = np.stack([cache[hook_name(name, i, "scores")].float().numpy()
                                         for i in layers[name]], axis=1)
        causal = np.triu(np.ones((n_tgt, n_tgt), bool), 1)  # the future hidden (a 1-token mask hides nothing)
    ids_src, ids_tgt = src.numpy(), tgt.numpy()
    return PaddedBatch(
        texts=[p.text for p in prepared],
        outputs=[out_tok.decode(g) for g in generated],
        pad_id=cfg.pad_id,
        source_ids=ids_src,
        target_ids=ids_tgt,
        source_tokens=[tok.tokens(row.tolist()) for row in ids_src],
        target_tokens=[out_tok.tokens(row.tolist()) for row in ids_tgt],
        source_lengths=[len(p.source_ids) for p in prepared],
        target_lengths=[len(d) for d in decoder_in],
        source_padding=src_pad.numpy(),
        target_padding=tgt_pad.numpy(),
        causal=causal,
        masks=masks,
        patterns=patterns,
        scores=scores,
        masks_padding=cfg.mask_padding,
        layer=layer,
        window=windows.get("decoder", 0),
    )


def _decoder_patterns(model, ids: torch.Tensor, whats: tuple[str, ...], edits=()) -> dict[str, np.ndarray]:
    """what -> [batch, layer, head, query_pos, key_pos] float32 of decoder self-attention on ``ids``."""
    n = model.attention_layer_counts()["decoder"]
    wanted = {hook_name("decoder", i, what) for i in range(n) for what in whats}
    with intervene(model, *edits):
        _, cache = model.run_with_cache(ids, names_filter=wanted.__contains__)
    return {what: np.stack([cache[hook_name("decoder", i, what)].float().numpy() for i in range(n)], axis=1)
            for what in whats}


def _hide_padding(model, padding: torch.Tensor) -> tuple[HookFunction, ...]:
    """Edits that put -inf at the padding keys of every decoder self-attention's scores: what
    ``build_mask(padding, ...)`` does inside a model that masks padding (cfg.mask_padding)."""
    keys = padding[:, None, None, :]  # [batch, 1, 1, key_pos]
    return tuple(HookFunction(hook_name("decoder", i, "scores"), lambda s: s.masked_fill(keys, float("-inf")),
                              what="padding keys -inf")
                 for i in range(model.attention_layer_counts()["decoder"]))


def _left_pad(seqs: list[list[int]], pad_id: int) -> torch.Tensor:
    """Left-pad id lists into [batch, pos]: the padding first, each sequence ending at the last position."""
    width = max(len(s) for s in seqs)
    return torch.tensor([[pad_id] * (width - len(s)) + s for s in seqs], dtype=torch.long)


def _row_diffs(patterns: np.ndarray, alone: list[np.ndarray], starts: list[int]) -> list[float]:
    """Per sentence: max |its real rows and columns in ``patterns`` (from ``starts[i]`` on) - its
    pattern [layer, head, len, len] run alone|."""
    diffs = []
    for i, (single, s) in enumerate(zip(alone, starts, strict=True)):
        end = s + single.shape[-1]
        diffs.append(float(np.abs(patterns[i][..., s:end, s:end] - single).max()))
    return diffs


def _left_padded(model, tok, seqs: list[list[int]], alone: list[np.ndarray], layer: int | None) -> LeftPadded:
    cfg = model.cfg
    ids = _left_pad(seqs, cfg.pad_id)  # [2, pos]
    n = ids.shape[1]
    starts = [n - len(s) for s in seqs]  # first real position of each sequence
    padding = torch.arange(n)[None, :] < torch.tensor(starts)[:, None]  # [2, pos]
    module = _self_attention(model, layer)
    shape = (2, n, n)
    applied = build_mask(model.attention_padding(ids), n, n, module.causal, window=module.window)
    with_padding = build_mask(padding, n, n, module.causal, window=module.window)
    as_run = _decoder_patterns(model, ids, ("pattern",))["pattern"]
    # the figures read every layer; only the kept layer stays (each run is cut before the next)
    pad_weight = [float((as_run[i][..., s:, :s]).sum(-1).max()) if s else 0.0 for i, s in enumerate(starts)]
    diff_as_run, as_run = _row_diffs(as_run, alone, starts), _only(as_run, layer)
    masked = _decoder_patterns(model, ids, ("pattern",), _hide_padding(model, padding))["pattern"]
    diff_masked, masked = _row_diffs(masked, alone, starts), _only(masked, layer)
    return LeftPadded(
        ids=ids.numpy(), tokens=[tok.tokens(row.tolist()) for row in ids], padding=padding.numpy(),
        applied=_dense(applied, shape),
        with_padding=_dense(with_padding, shape),
        as_run=as_run, masked=masked, pad_weight=pad_weight, diff_as_run=diff_as_run, diff_masked=diff_masked,
        layer=layer)


def _language_model_batch(bundle: Bundle, prepared: list, with_scores: bool,
                          max_new: int | None, layer: int | None) -> PaddedBatch:
    """Each prompt continued greedily on its own (the greedy decoder takes prompts of one length only),
    then prompt + continuation run as one right-padded and one left-padded batch."""
    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.cfg
    max_new = DEFAULT_NEW_TOKENS if max_new is None else max_new
    with model.lock, torch.no_grad():
        model.eval()
        generated = [greedy_decode(model, [p.source_ids], [p.prefix], tok.eos_id, max_new)[0]
                     for p in prepared]
        seqs = [(p.prefix + g)[: cfg.max_len] for p, g in zip(prepared, generated, strict=True)]
        ids = pad_batch(seqs, cfg.pad_id)  # [2, pos]
        n = ids.shape[1]
        # by position, not by id: a language model's padding id is often its end-of-text id, which a
        # chat prompt also holds between turns
        padding = torch.arange(n)[None, :] >= torch.tensor([len(s) for s in seqs])[:, None]  # [2, pos]
        whats = ("pattern", "scores") if with_scores else ("pattern",)
        alone = [_decoder_patterns(model, torch.tensor([s]), ("pattern",))["pattern"][0] for s in seqs]
        recorded = _decoder_patterns(model, ids, whats)
        right_diff = _row_diffs(recorded["pattern"], alone, [0, 0])
        recorded = {what: _only(layers, layer) for what, layers in recorded.items()}
        module = _self_attention(model, layer)
        mask = build_mask(model.attention_padding(ids), n, n, module.causal,  # what the model applies
                          window=module.window)
        causal = np.triu(np.ones((n, n), bool), 1)  # the future hidden
        left = _left_padded(model, tok, seqs, alone, layer)
    none = np.zeros((2, 0), np.int64)
    return PaddedBatch(
        texts=[p.text for p in prepared], outputs=[tok.decode(g) for g in generated], pad_id=cfg.pad_id,
        source_ids=none, target_ids=ids.numpy(), source_tokens=[[], []],
        target_tokens=[tok.tokens(row.tolist()) for row in ids], source_lengths=[0, 0],
        target_lengths=[len(s) for s in seqs], source_padding=none.astype(bool),
        target_padding=padding.numpy(),
        causal=causal, masks={"decoder": _dense(mask, (2, n, n))},
        patterns={"decoder": recorded["pattern"]},
        scores={"decoder": recorded["scores"]} if with_scores else {},
        decoder_only=True, masks_padding=cfg.mask_padding, pad_is_eos=cfg.pad_id == tok.eos_id,
        right_diff=right_diff, left=left, layer=layer, window=int(module.window),
    )


@dataclass(frozen=True)
class SlidingWindows:
    """A decoder-only model's sliding windows (Gemma 3: local layers and every sixth global; Phi-3: one
    window on every layer), each drawn as the mask its layer's module applies to ``n`` positions."""

    windows: list[int]  # per decoder layer: its sliding window in keys, itself included (0: global)
    masks: dict[int, np.ndarray]  # window -> [pos, pos] bool, True = may not look (build_mask's own)

    @property
    def local_layers(self) -> list[int]:
        return [i for i, w in enumerate(self.windows) if w]

    @property
    def global_layers(self) -> list[int]:
        return [i for i, w in enumerate(self.windows) if not w]


@entry
def sliding_windows(bundle: Bundle, n_positions: int) -> SlidingWindows | None:
    """Each decoder layer's window and, per distinct window, the mask its self-attention applies to one
    unpadded sequence of ``n_positions`` (the call ``MultiHeadAttention.forward`` makes, no cache).
    None for a model without a sliding window anywhere."""
    model = bundle.model
    if not bundle.cfg.decoder_only:
        return None
    modules = [model.get_submodule(f"decoder.blocks.{i}.self_attn")
               for i in range(model.attention_layer_counts()["decoder"])]
    windows = [int(m.window) for m in modules]
    if not any(windows):
        return None
    n = int(n_positions)
    masks = {}
    for module, window in zip(modules, windows, strict=True):
        if window not in masks:
            masks[window] = build_mask(None, n, n, module.causal, window=window)[0, 0].numpy().copy()
    return SlidingWindows(windows, masks)


@entry
def default_other(bundle: Bundle, text: str, direction: str | None = None) -> str:
    """A short second sentence for ``text``: same language (translation model) or a short word
    (letter models), with a different number of tokens than ``text`` where one of ours has."""
    task = bundle.task
    if bundle.cfg.decoder_only:
        language = "letters" if isinstance(bundle.tokenizer, CharTokenizer) else (
            "en" if text.isascii() else "zh")
        try:
            prepared = task.prepare(text, bundle.cfg.max_len, direction)
        except InputError:
            prepared = None
    elif getattr(task, "directions", None):
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
def causal_demo_run(bundle: Bundle, text: str, direction: str | None, target: str, layer: int,
                    causal_off: bool = False) -> LayerRun:
    """The teacher-forced pass over ``target``, intact or with the decoder's causal mask off (a
    demonstration): decoder self-attention's ``layer`` (what the page draws) and the steps."""
    edits = (CausalMask("off"),) if causal_off else ()
    return layer_run(bundle, text, direction, target, edits, "decoder", layer)


def _dense(mask: torch.Tensor | None, shape: tuple[int, int, int]) -> np.ndarray:
    """``build_mask``'s answer as a [2, query, key] bool array (None: nothing hidden, all False)."""
    return np.zeros(shape, bool) if mask is None else np.broadcast_to(mask[:, 0].numpy(), shape).copy()
