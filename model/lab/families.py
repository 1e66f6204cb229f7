"""Three families, one sentence: the same text through an encoder-only model (MiniLM), our
encoder-decoder (the translation model) and a decoder-only language model (SmolLM2).

For each, :func:`family_column` gives what the "three families" page draws: the masks of every
attention the model has (from ``build_mask``, with each module's own ``causal`` flag, as
``MultiHeadAttention`` calls it), what the model is for (a sentence embedding, a translation, a
continuation), its self-attention averaged over every layer and head (to read one word's row
from), and its shape trace in a few steps, from the tensors of the real forward pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch

from ..network.attention import build_mask
from ..network.kinds import get_kind
from ..run.analysis import analyze, attention_only
from ..run.embeddings import mean_pool, sentence_embeddings
from ..store.bundle import Bundle
from . import entry
from .choices import FAMILY_MAX_TOKENS

#: New tokens of the continuation: a phrase is enough to show what a language model is for.
FAMILY_NEW_TOKENS = 12
#: Sentences the embedding is compared with (cosine): one close in meaning, two not.
REFERENCE_SENTENCES = ("A cat is sitting on a rug.", "The stock market fell sharply today.",
                       "I will call you tomorrow morning.")


@dataclass
class FamilyColumn:
    """One model's column of the page (numpy and plain values only)."""

    model: str
    family: str  # a key of FAMILY_MODELS
    text: str  # the sentence as the model reads it
    tokens: list[str]  # the tokens its self-attention reads (source, or prompt + continuation)
    spans: list[tuple[int, int]]  # per token, its characters in ``decoded`` ((0, 0): special or none)
    decoded: str  # the tokens decoded back to text (lower case where the model reads lower case)
    masks: dict[str, np.ndarray]  # kind -> [query_pos, key_pos] bool, True = may not look
    mask_tokens: dict[str, tuple[list[str], list[str]]]  # kind -> (query tokens, key tokens)
    self_kind: str  # the self-attention the word's row is read from ("encoder" or "decoder")
    mean_attention: np.ndarray  # [query_pos, key_pos] float32, self_kind averaged over layers and heads
    cross_mean: np.ndarray | None  # [tgt_pos, src_pos] cross-attention averaged likewise (encoder-decoder)
    target_tokens: list[str]  # the decoder's tokens (empty for an encoder-only model)
    output: str  # the translation or the continuation ("" for an encoder-only model)
    trace: list[tuple[str, tuple[int, ...]]]  # (step, shape): ids -> ... -> what the model gives
    read_tokens: int = 0  # tokens of the sentence the model read (its BOS or [CLS]/[SEP] included)
    cut_from: int | None = None  # tokens the model's tokenizer made of the whole sentence when it was cut
    model_max_len: int = 0  # the most the model reads on its own pages
    max_new: int | None = None  # a language model's bound on new tokens
    embedding_norm: float | None = None  # encoder-only: the sentence vector's length
    embedding_dim: int | None = None
    similarities: list[tuple[str, float]] = field(default_factory=list)  # (reference sentence, cosine)

    def word_positions(self, word: str, occurrence: int = 0) -> list[int]:
        """Positions of the tokens that hold the ``occurrence``-th ``word`` (case-insensitive; a
        word split into pieces gives all of them; [] where the model's tokens lose it)."""
        found = list(_occurrences(self.decoded, word))
        if occurrence >= len(found):
            return []
        a, b = found[occurrence]
        return [i for i, (s, e) in enumerate(self.spans) if e > s and s < b and e > a]

    def word_row(self, positions: list[int]) -> np.ndarray:
        """[key_pos] the mean attention row of the word's tokens (mean over its pieces)."""
        return self.mean_attention[positions].mean(0)


def _occurrences(text: str, word: str):
    """(start, end) of ``word`` in ``text``, case-insensitive; a word of letters not inside a longer one."""
    chinese = len(word) == 1 and "\u3400" <= word <= "\u9fff"  # Chinese has no spaces between words
    pattern = re.escape(word.lower()) if chinese else rf"(?<!\w){re.escape(word.lower())}(?!\w)"
    for m in re.finditer(pattern, text.lower()):
        yield m.start(), m.end()


def token_spans(tok, ids: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """(the ids decoded, each token's characters in it). A token that ends inside a character (a
    byte of a Chinese character) is given the character it starts; special tokens get (0, 0)."""
    spans, end = [], 0
    for i, token_id in enumerate(ids):
        if tok.is_special(token_id):
            spans.append((0, 0))
            continue
        so_far = tok.decode(ids[: i + 1])
        new_end = max(end, len(so_far.rstrip("\ufffd")))
        # no new character: a byte of one still to come, or a token that decodes to nothing ([UNK])
        spans.append((end, new_end if new_end > end else end + so_far.endswith("\ufffd")))
        end = new_end
    return tok.decode(ids), spans


def _masks(model, n: dict[str, int], tokens: dict[str, list[str]]):
    """kind -> the mask its first layer's module applies to this one sentence (no padding), and its tokens."""
    masks, mask_tokens = {}, {}
    for name, count in model.attention_layer_counts().items():
        if not count:
            continue
        k = get_kind(name)
        module = model.get_submodule(f"{k.stack}.blocks.0.{k.module}")
        # exactly the module's call: its causal flag and its sliding window (Gemma 3's first layer is local)
        mask = build_mask(None, n[k.queries], n[k.keys], module.causal, window=module.window)
        shape = (n[k.queries], n[k.keys])
        masks[name] = np.zeros(shape, bool) if mask is None else mask[0, 0].numpy().copy()
        mask_tokens[name] = (tokens[k.queries], tokens[k.keys])
    return masks, mask_tokens


def _step_shape(trace: list[dict], stack: str, first: bool, inputs: bool = False) -> tuple[int, ...]:
    steps = [s for s in trace if s["name"].startswith(stack)]
    step = steps[0] if first else steps[-1]
    return tuple(step["in_shapes"][0] if inputs else step["out_shape"])


def _trace_line(trace: list[dict], family: str, embedding: tuple[int, ...] | None) -> list:
    """The pass in a few steps: (step key, shape of the real tensor there)."""
    line = []
    both = family == "encoder_decoder"
    if family != "decoder_only":
        line += [("source_ids" if both else "ids", _step_shape(trace, "encoder", True, True)),
                 ("embedded", _step_shape(trace, "encoder", True)),
                 ("encoder_out", _step_shape(trace, "encoder", False))]
    if family == "encoder_only":
        return [*line, ("embedding", embedding)]
    line += [("target_ids" if both else "ids", _step_shape(trace, "decoder", True, True))]
    if family == "decoder_only":
        line += [("embedded", _step_shape(trace, "decoder", True))]
    return [*line, ("decoder_out", _step_shape(trace, "decoder", False)),
            ("logits", _step_shape(trace, "unembed", False))]


def _mean(analysis, kind: str) -> np.ndarray:
    """[query, key] mean over every layer and head, one layer computed at a time."""
    stack = analysis.attention(kind)  # [layer, head, query, key]
    total = sum(np.asarray(stack[i], dtype=np.float64).sum(axis=0) for i in range(stack.shape[0]))
    return (total / (stack.shape[0] * stack.shape[1])).astype(np.float32)


@entry
def family_column(bundle: Bundle, text: str) -> FamilyColumn:
    """One model's column for ``text``: raises ``InputError`` for a sentence it cannot read."""
    cfg, tok = bundle.cfg, bundle.tokenizer
    family = ("encoder_only" if cfg.encoder_only else "decoder_only" if cfg.decoder_only
              else "encoder_decoder")
    # whole_trace: the column's shapes are those of one pass over prompt + output
    analysis = analyze(bundle, text, max_new=FAMILY_NEW_TOKENS if cfg.decoder_only else None,
                       keep=attention_only, max_input=FAMILY_MAX_TOKENS, whole_trace=True)
    prepared = analysis.prepared
    sizes = {"source": len(analysis.source_tokens), "target": len(analysis.target_tokens)}
    masks, mask_tokens = _masks(bundle.model, sizes, {"source": analysis.source_tokens,
                                                       "target": analysis.target_tokens})
    # the word is looked up in what the model reads: the source, or a language model's prompt
    read_ids = prepared.prefix if cfg.decoder_only else prepared.source_ids
    decoded, spans = token_spans(tok, list(read_ids))
    self_kind = "decoder" if cfg.decoder_only else "encoder"
    column = FamilyColumn(
        model=bundle.name, family=family, text=prepared.text,
        tokens=analysis.target_tokens if cfg.decoder_only else analysis.source_tokens,
        spans=spans, decoded=decoded, masks=masks, mask_tokens=mask_tokens, self_kind=self_kind,
        mean_attention=_mean(analysis, self_kind),
        cross_mean=_mean(analysis, "cross") if analysis.n_layers("cross") else None,
        target_tokens=list(analysis.target_tokens), output=analysis.output_text, trace=[],
        max_new=FAMILY_NEW_TOKENS if cfg.decoder_only else None, read_tokens=len(read_ids),
        cut_from=prepared.truncated_from, model_max_len=int(cfg.max_len))
    embedding = None
    if family == "encoder_only":
        # [1 + refs, d_model]
        vectors = sentence_embeddings(bundle, [text, *REFERENCE_SENTENCES], FAMILY_MAX_TOKENS)
        raw = _unnormalised(bundle, prepared.source_ids)
        embedding = tuple(vectors[:1].shape)
        column.embedding_dim, column.embedding_norm = int(vectors.shape[1]), float(np.linalg.norm(raw))
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        column.similarities = [(s, float(unit[0] @ unit[i + 1])) for i, s in enumerate(REFERENCE_SENTENCES)]
    column.trace = _trace_line(analysis.trace, family, embedding)
    return column


def _unnormalised(bundle: Bundle, source_ids: list[int]) -> np.ndarray:
    """[d_model] the mean-pooled encoder output before any division by its norm."""
    ids = torch.tensor([source_ids])  # [1, pos]
    with bundle.model.lock, torch.no_grad():
        hidden = bundle.model(ids)  # [1, pos, d_model]
    return mean_pool(hidden, torch.ones(ids.shape, dtype=torch.bool), normalize=False)[0].numpy()

