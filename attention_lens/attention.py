"""Bring your own attention: weights another library computed, checked once, for the same figures.

Accepted, with the tokens as strings:

* Hugging Face ``outputs.attentions``: a tuple with one ``[batch, heads, query, key]`` tensor per layer
  (torch tensors or numpy arrays; torch is never imported here, a tensor is read with
  ``.detach().cpu().numpy()``);
* a TransformerLens-style mapping ``{"blocks.{layer}.attn.hook_pattern": [batch, heads, query, key]}``
  (other hooks in it are ignored; this project's own hook names, ``encoder.blocks.0.attn.hook_pattern``,
  ``decoder.blocks.1.cross_attn.hook_pattern``, also work, so an ``inspect`` archive reads back);
* a plain array ``[layer, heads, query, key]``;
* an encoder–decoder's three kinds as BertViz takes them: ``encoder_attention``, ``decoder_attention``,
  ``cross_attention`` (per-layer lists of ``[1, heads, query, key]``), ``encoder_tokens``,
  ``decoder_tokens``.

Every problem is one :class:`~attention_lens.checks.ArgumentError` naming the argument: wrong rank,
layers of different shapes, NaN, rows that do not sum to 1 (tolerance :data:`ROW_TOLERANCE`), tokens
whose count differs from the arrays.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from model.data.byte_tokens import readable_tokens

from .checks import ArgumentError, check_choice, check_index, check_tokens

__all__ = ["ROW_TOLERANCE", "Attention", "as_attention"]

#: How far a row of weights may be from summing to 1.
ROW_TOLERANCE = 1e-3
_HOOK = re.compile(r"(?:(encoder|decoder)\.)?blocks\.(\d+)\.(attn|self_attn|cross_attn)\.hook_pattern")
_KINDS = ("encoder", "decoder", "cross")


class Attention:
    """Checked attention weights of one input: kind -> ``[layer, head, query, key]`` float32, with the
    query and key tokens of each kind. What :func:`as_attention` returns and every figure accepts.

    >>> import numpy as np, attention_lens as al
    >>> att = al.as_attention(np.full((1, 2, 3, 3), 1 / 3), ["a", "b", "c"])
    >>> att.kinds, att.attention("encoder").shape
    (('encoder',), (1, 2, 3, 3))
    """

    def __init__(
        self,
        patterns: dict[str, np.ndarray],
        tokens: dict[str, tuple[list[str], list[str]]],
        masks: dict[str, np.ndarray | None] | None = None,
    ):
        self._patterns, self._tokens, self._masks = patterns, tokens, masks or {}

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}={tuple(v.shape)}" for k, v in self._patterns.items())
        return f"Attention({shapes})"

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in _KINDS if k in self._patterns)

    def kind(self, kind: str | None) -> str:
        return self.kinds[0] if kind is None else check_choice(kind, self.kinds, "kind")

    def n_layers(self, kind: str | None = None) -> int:
        return self._patterns[self.kind(kind)].shape[0]

    @property
    def n_heads(self) -> int:
        return self._patterns[self.kinds[0]].shape[1]

    def tokens_for(self, kind: str | None = None) -> tuple[list[str], list[str]]:
        queries, keys = self._tokens[self.kind(kind)]
        return list(queries), list(keys)

    def attention(self, kind: str | None = None, what: str = "pattern") -> np.ndarray:
        """[layer, head, query, key]: "pattern", or "mask" (True where masked: a causal model's future)."""
        k = self.kind(kind)
        check_choice(what, ("pattern", "mask"), "what")
        p = self._patterns[k]
        if what == "pattern":
            return p
        mask = self._masks.get(k)
        return np.zeros(p.shape, dtype=bool) if mask is None else np.broadcast_to(mask, p.shape)

    def mask(self, kind: str | None = None) -> np.ndarray | None:
        """[query, key] bool, True where masked (the same for every head), or None when nothing is."""
        return self._masks.get(self.kind(kind))

    def pattern(self, kind: str | None = None, layer: int = 0, head: int = 0) -> np.ndarray:
        """[query, key] of one head."""
        k = self.kind(kind)
        p = self._patterns[k]
        layer = check_index(layer, p.shape[0], "layer", f"of the {k} attention")
        head = check_index(head, p.shape[1], "head", f"of the {k} attention")
        return p[layer, head]


def _numpy(x: object, name: str) -> np.ndarray:
    """A torch tensor (read without importing torch), or anything numpy reads, as a float32 array."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if getattr(x, "is_floating_point", lambda: False)():
            x = x.float()  # bfloat16 and float16 have no numpy spelling for every build
        x = x.numpy()
    try:
        arr = np.asarray(x)
    except Exception as e:  # ragged nested lists, objects numpy cannot read
        raise ArgumentError(f"{name} could not be read as an array ({type(e).__name__}: {e})") from None
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise ArgumentError(f"{name} must hold numbers, got an array of {arr.dtype}")
    return arr.astype(np.float32, copy=False)


def _one_layer(x: object, name: str, batch: int) -> np.ndarray:
    """[heads, query, key] of one layer given as [batch, heads, query, key] or [heads, query, key]."""
    arr = _numpy(x, name)
    if arr.ndim == 4:
        batch = check_index(batch, arr.shape[0], "batch", f"in {name}")
        arr = arr[batch]
    if arr.ndim != 3:
        raise ArgumentError(
            f"{name} must be [batch, heads, query, key] or [heads, query, key], got a "
            f"{arr.ndim}-D array of shape {tuple(arr.shape)}"
        )
    return arr


def _stack_layers(layers: Sequence[object], name: str, batch: int) -> np.ndarray:
    if not len(layers):
        raise ArgumentError(f"{name} holds no layer")
    arrays = [_one_layer(x, f"{name}[{i}]", batch) for i, x in enumerate(layers)]
    for i, a in enumerate(arrays[1:], 1):
        if a.shape != arrays[0].shape:
            raise ArgumentError(
                f"{name}: layer {i} is [heads, query, key] = {tuple(a.shape)} but layer 0 is "
                f"{tuple(arrays[0].shape)}; every layer must have the same shape"
            )
    return np.stack(arrays)


def _from_mapping(attentions: Mapping, name: str, batch: int) -> dict[str, np.ndarray]:
    """kind -> [layer, head, query, key] from hook names (TransformerLens' or this project's)."""
    found: dict[str, dict[int, object]] = {}
    for key, value in attentions.items():
        m = _HOOK.fullmatch(str(key))
        if m is None:
            continue
        stack, layer, module = m.groups()
        kind = (
            "cross"
            if module == "cross_attn"
            else ("decoder" if stack == "decoder" else "encoder" if stack == "encoder" else "self")
        )
        found.setdefault(kind, {})[int(layer)] = value
    if not found:
        raise ArgumentError(
            f"{name} has no key 'blocks.{{layer}}.attn.hook_pattern' (TransformerLens) or "
            f"'encoder.blocks.{{layer}}.attn.hook_pattern'; keys: {list(attentions)[:5]}"
        )
    out = {}
    for kind, layers in found.items():
        missing = sorted(set(range(max(layers) + 1)) - set(layers))
        if missing:
            raise ArgumentError(
                f"{name} has no pattern for layer {missing[0]} ({kind}); layers must be 0 to "
                f"{max(layers)} without a gap"
            )
        out[kind] = _stack_layers([layers[i] for i in range(len(layers))], name, batch)
    return out


def _as_stack(attentions: object, name: str, batch: int) -> np.ndarray | dict[str, np.ndarray]:
    if isinstance(attentions, Mapping):
        return _from_mapping(attentions, name, batch)
    if isinstance(attentions, list | tuple):
        return _stack_layers(attentions, name, batch)
    arr = _numpy(attentions, name)
    if arr.ndim == 5:  # [layer, batch, heads, query, key]: HF's tuple stacked
        return _stack_layers(list(arr), name, batch)
    if arr.ndim != 4:
        raise ArgumentError(
            f"{name} must be [layer, heads, query, key] (or a per-layer list of [batch, heads, "
            f"query, key]), got a {arr.ndim}-D array of shape {tuple(arr.shape)}"
        )
    return arr


def _check_weights(p: np.ndarray, name: str) -> None:
    """NaN-free softmax rows: each row sums to 1 within ROW_TOLERANCE."""
    if 0 in p.shape:
        raise ArgumentError(f"{name} is empty: shape {tuple(p.shape)}")
    bad = np.argwhere(~np.isfinite(p))
    if bad.size:
        layer, head, q, k = (int(i) for i in bad[0])
        raise ArgumentError(
            f"{name} holds NaN or infinite weights (layer {layer}, head {head}, query {q}, "
            f"key {k}); attention weights must be finite"
        )
    sums = p.sum(-1, dtype=np.float64)
    off = np.argwhere(np.abs(sums - 1.0) > ROW_TOLERANCE)
    if off.size:
        layer, head, q = (int(i) for i in off[0])
        raise ArgumentError(
            f"{name}: the row of layer {layer}, head {head}, query {q} sums to "
            f"{sums[layer, head, q]:.4g}; each row of softmax weights must sum to 1 "
            f"(within {ROW_TOLERANCE:g}); pass weights, not scores"
        )


def _tokens(tokens: object, n: int, name: str, axis: str, byte_tokens: bool | None) -> list[str]:
    out = check_tokens(tokens, n, name, axis)
    byte_level = any(t.startswith(("Ġ", "Ċ")) for t in out) if byte_tokens is None else byte_tokens
    return readable_tokens(out) if byte_level else out


def _causal_mask(p: np.ndarray) -> np.ndarray | None:
    """[query, key] True above the diagonal when every head puts exactly 0 there (a causal model)."""
    n_q, n_k = p.shape[-2:]
    if n_q != n_k or n_q < 2:
        return None
    future = np.triu(np.ones((n_q, n_k), dtype=bool), 1)
    return future if not p[..., future].any() else None


def as_attention(
    attentions: object = None,
    tokens: Sequence[str] | None = None,
    *,
    kind: str | None = None,
    encoder_attention: object = None,
    decoder_attention: object = None,
    cross_attention: object = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    batch: int = 0,
    byte_tokens: bool | None = None,
) -> Attention:
    """Attention computed elsewhere, checked, as an :class:`Attention` every figure takes.

    ``attentions`` with ``tokens``: one self-attention (Hugging Face ``outputs.attentions``, a
    TransformerLens mapping, or ``[layer, head, query, key]``); ``kind`` "encoder" or "decoder" (None:
    "decoder" when every head puts exactly 0 on the future, which is then drawn masked, else
    "encoder"). Or the BertViz keywords of an encoder–decoder. ``batch``: which sentence of a batch.
    ``byte_tokens``: show byte-level BPE tokens (GPT-2's ``Ġthe``) as the text they spell (None: when a
    token starts with ``Ġ`` or ``Ċ``).

    >>> import numpy as np, attention_lens as al
    >>> causal = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    >>> al.as_attention(np.broadcast_to(causal, (2, 4, 3, 3)), ["Ġthe", "Ġcat", "Ġsat"]).tokens_for()
    ([' the', ' cat', ' sat'], [' the', ' cat', ' sat'])
    >>> al.as_attention(np.ones((1, 1, 2, 2)), ["a", "b"])
    Traceback (most recent call last):
    ...
    attention_lens.checks.ArgumentError: attentions: the row of layer 0, head 0, query 0 sums to 2; ...
    """
    if isinstance(attentions, Attention):
        return attentions
    bertviz = {"encoder": encoder_attention, "decoder": decoder_attention, "cross": cross_attention}
    given = {k: v for k, v in bertviz.items() if v is not None}
    if attentions is not None and given:
        raise ArgumentError(
            "give attentions (one self-attention) or the BertViz keywords encoder_attention, "
            "decoder_attention, cross_attention, not both"
        )
    if attentions is None and not given:
        raise ArgumentError(
            "attentions is missing: pass outputs.attentions, a hook mapping or a "
            "[layer, head, query, key] array (or BertViz's encoder_/decoder_/cross_attention)"
        )
    if kind is not None:
        check_choice(kind, ("encoder", "decoder"), "kind")
    patterns: dict[str, np.ndarray] = {}
    toks: dict[str, tuple[list[str], list[str]]] = {}
    if attentions is not None:
        stacked = _as_stack(attentions, "attentions", batch)
        if isinstance(stacked, dict):
            if set(stacked) != {"self"}:
                names = {"encoder": "encoder_tokens", "decoder": "decoder_tokens"}
                src, tgt = stacked.get("encoder"), stacked.get("decoder")
                return _encoder_decoder(
                    src,
                    tgt,
                    stacked.get("cross"),
                    encoder_tokens
                    if encoder_tokens is not None
                    else (tokens if "decoder" not in stacked else None),
                    decoder_tokens
                    if decoder_tokens is not None
                    else (tokens if "encoder" not in stacked else None),
                    byte_tokens,
                    names,
                )
            stacked = stacked["self"]
        _check_weights(stacked, "attentions")
        mask = _causal_mask(stacked) if kind != "encoder" else None
        chosen = kind or ("decoder" if mask is not None else "encoder")
        n_q, n_k = stacked.shape[-2:]
        if n_q != n_k:
            raise ArgumentError(
                f"attentions must be self-attention (query = key positions), got {n_q} queries "
                f"and {n_k} keys: pass an encoder–decoder's kinds as cross_attention=…"
            )
        words = _tokens(tokens, n_q, "tokens", "positions", byte_tokens)
        patterns[chosen], toks[chosen] = stacked, (words, words)
        return Attention(patterns, toks, {chosen: mask})
    stacks = {k: _as_stack(v, f"{k}_attention", batch) for k, v in given.items()}
    for k, v in stacks.items():
        if isinstance(v, dict):
            raise ArgumentError(f"{k}_attention must be a per-layer list or an array, not a mapping")
    return _encoder_decoder(
        stacks.get("encoder"),
        stacks.get("decoder"),
        stacks.get("cross"),
        encoder_tokens,
        decoder_tokens,
        byte_tokens,
        {"encoder": "encoder_tokens", "decoder": "decoder_tokens"},
    )


def _encoder_decoder(enc, dec, cross, encoder_tokens, decoder_tokens, byte_tokens, names) -> Attention:
    """The kinds of an encoder–decoder, each checked, their tokens matched to their axes."""
    patterns, toks, masks = {}, {}, {}
    src = tgt = None
    for kind, stack in (("encoder", enc), ("decoder", dec), ("cross", cross)):
        if stack is None:
            continue
        _check_weights(stack, f"{kind}_attention")
        n_q, n_k = stack.shape[-2:]
        if kind != "decoder" and encoder_tokens is None:
            raise ArgumentError(f"encoder_tokens is missing: {kind}_attention needs the encoder's tokens")
        if kind != "encoder" and decoder_tokens is None:
            raise ArgumentError(f"decoder_tokens is missing: {kind}_attention needs the decoder's tokens")
        if kind == "encoder":
            src = _tokens(encoder_tokens, n_q, names["encoder"], "encoder positions", byte_tokens)
            check_tokens(src, n_k, names["encoder"], "encoder key positions")
            queries, keys = src, src
        elif kind == "decoder":
            tgt = _tokens(decoder_tokens, n_q, names["decoder"], "decoder positions", byte_tokens)
            check_tokens(tgt, n_k, names["decoder"], "decoder key positions")
            queries, keys = tgt, tgt
            masks[kind] = _causal_mask(stack)
        else:
            queries = _tokens(
                decoder_tokens, n_q, names["decoder"], "cross-attention query rows", byte_tokens
            )
            keys = _tokens(encoder_tokens, n_k, names["encoder"], "cross-attention key columns", byte_tokens)
        patterns[kind], toks[kind] = stack, (queries, keys)
    heads = {k: p.shape[1] for k, p in patterns.items()}
    if len(set(heads.values())) > 1:
        raise ArgumentError(f"every kind must have the same number of heads, got {heads}")
    return Attention(patterns, toks, masks)
