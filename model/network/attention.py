"""Multi-head attention, written out step by step so the weights exist and can be hooked.

scores = Q K^T / sqrt(d_head) (+ a relative position bias, T5); masked positions -> -inf; pattern = softmax
over keys; z = pattern @ V.
Grouped-query attention: n_kv_heads key/value heads, each shared by n_heads / n_kv_heads query heads
(n_kv_heads = 1 is multi-query attention).

`MultiHeadAttention.edits` (an `AttentionEdits`, normally None) changes those steps on purpose, read
at the edit points (`_rotate`, `_scale`, `_mask`, `_softmax_dim`, `_edit_heads`); only
model/run/interventions.py sets it, and always puts the previous value back. Inside `trace_shapes()`,
`_Steps` records the shape trace from the tensors each paragraph of `forward` produced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from . import recorded
from .config import FUSED_FROM_CELLS, ModelConfig
from .dropout import Dropout
from .hooks import HookPoint
from .masking import build_mask, masked_softmax
from .norms import make_norm
from .positional import RelativePositionBias, rope_angles, rope_turns, rotate_pairs
from .trace import record, tracing


@dataclass(frozen=True)
class HeadEdit:
    """One head's output z changed: "zero", "mean" (over query positions) or "replace" (by value)."""

    head: int
    mode: str
    value: torch.Tensor | None = None  # [batch, query_pos, d_head] for "replace"


@dataclass(frozen=True)
class AttentionEdits:
    """What one attention module does differently; the defaults are the intact computation."""

    scale: bool = True  # divide the scores by sqrt(d_head)
    softmax_dim: int = -1  # -1: over keys (intact); -2: over queries
    causal: str = "on"  # causal modules only: "on", "off" or "reversed" (hide the past, not the future)
    rotary: bool = True  # rotary modules only: rotate q and k by position
    position_bias: bool = True  # relative-bias modules only (T5): add the position bias to the scores
    heads: tuple[HeadEdit, ...] = ()
    # True when the query axis of z (`value` rows) must match exactly: the encoder always sees the whole
    # source, while decoder queries grow step by step, so there a longer `value` gives its first rows.
    exact_positions: bool = True
    where: str = ""  # "encoder layer 0", for error messages


def edit_heads(z: torch.Tensor, edits: AttentionEdits, offset: int) -> torch.Tensor:
    """z [batch, query_pos, head, d_head] with each edited head's slice replaced (a copy)."""
    z = z.clone()
    B, Lq, _, dh = z.shape
    for e in edits.heads:
        if e.mode == "zero":
            z[:, :, e.head] = 0.0
        elif e.mode == "mean":
            z[:, :, e.head] = z[:, :, e.head].mean(dim=1, keepdim=True)  # [batch, 1, d_head], broadcast
        else:
            v = e.value
            need = offset + Lq
            fits = v.dim() == 3 and v.shape[0] == B and v.shape[2] == dh
            fits = fits and (v.shape[1] == need if edits.exact_positions else v.shape[1] >= need)
            if not fits:
                rows = f"{need}" if edits.exact_positions else f"at least {need}"
                raise ValueError(
                    f"replacement for head {e.head} of {edits.where} must be [batch={B}, query_pos={rows}, "
                    f"d_head={dh}] (this head's z), got {list(v.shape)}"
                )
            z[:, :, e.head] = v[:, offset:need].to(dtype=z.dtype, device=z.device)
    return z


class MultiHeadAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, query_len: str, key_len: str, causal: bool, rotary: bool,
                 layer: int | None = None, relative: bool = False):
        """layer: the decoder layer's index, for its own sliding window and RoPE (cfg.layer_window,
        cfg.layer_rope); None (encoder, cross-attention): global, cfg.rope_theta. relative: a self-attention
        of a pos_encoding "relative" model, which adds its stack's position bias to the scores (the first
        layer's table: :meth:`share_position_bias`)."""
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.d_model = cfg.d_model
        self.causal, self.rotary = causal, rotary
        # Trained-in faults (ModelConfig): no 1/sqrt(d_head); no causal mask while in training mode.
        self.scale_scores = cfg.scale_scores
        self.causal_in_training = cfg.causal_in_training
        self.query_len, self.key_len = query_len, key_len  # trace symbols, e.g. "L_tgt", "L_src"
        d = cfg.d_model
        self.rope_theta, self.rope_factor = cfg.rope_theta, 1.0
        self.window = 0  # > 0: a sliding window of that many keys (local layers; with the causal mask)
        # Phi-3's longrope (cfg.rope_short_factors ...): (short, long, switch length, attention factor)
        self.longrope: tuple[tuple[float, ...], tuple[float, ...], int, float] | None = None
        if layer is not None and causal:
            self.rope_theta, self.rope_factor = cfg.layer_rope(layer)
            self.window = cfg.layer_window(layer)
            if cfg.longrope:
                self.longrope = (cfg.rope_short_factors, cfg.rope_long_factors, cfg.rope_switch_len,
                                 cfg.rope_attention_factor)
        # scores = Q K^T / divisor: sqrt(d_head), or the config's own (Gemma 3: sqrt(query_pre_attn_scalar))
        self.divisor = math.sqrt(cfg.d_head) if cfg.score_divisor is None else float(cfg.score_divisor)
        self.rotary_dims = cfg.rotary_dims  # d_head, or the first part of it (partial rotary, Pythia)
        self.W_q = nn.Linear(d, self.n_heads * self.d_head, bias=cfg.qkv_bias)
        self.W_k = nn.Linear(d, self.n_kv_heads * self.d_head, bias=cfg.qkv_bias)
        self.W_v = nn.Linear(d, self.n_kv_heads * self.d_head, bias=cfg.qkv_bias)
        self.W_o = nn.Linear(self.n_heads * self.d_head, d, bias=cfg.out_bias)
        # QK-norm (cfg.qk_norm): a norm of each head's q and k over d_head ("head": Qwen3), or of the
        # whole q and k projections before the head split ("full": OLMo 2); before RoPE either way.
        self.qk_norm = cfg.qk_norm
        self.q_norm: nn.Module | None = None
        self.k_norm: nn.Module | None = None
        if cfg.qk_norm != "none":
            full = cfg.qk_norm == "full"
            self.q_norm = make_norm(cfg, self.n_heads * self.d_head if full else self.d_head)
            self.k_norm = make_norm(cfg, self.n_kv_heads * self.d_head if full else self.d_head)
        self.dropout = Dropout(cfg.dropout)
        # T5: the first layer of a stack holds the bias table (rel_bias), the later ones read it through
        # _bias_from, a list so the module is registered once, on the first layer.
        self.relative = relative
        self.rel_bias: RelativePositionBias | None = None
        self._bias_from: list[RelativePositionBias] = []
        if relative and not layer:
            self.rel_bias = RelativePositionBias(cfg.relative_buckets, self.n_heads, not causal,
                                                 cfg.relative_max_distance)
        self.hook_q = HookPoint()  # [batch, query_pos, head, d_head], the projection split into heads
        self.hook_k = HookPoint()  # [batch, key_pos, kv_head, d_head]
        self.hook_v = HookPoint()  # [batch, key_pos, kv_head, d_head]
        if cfg.qk_norm != "none":
            self.hook_q_normed = HookPoint()  # [batch, query_pos, head, d_head], q after QK-norm
            self.hook_k_normed = HookPoint()  # [batch, key_pos, kv_head, d_head], k after QK-norm
        if rotary:
            self.hook_rot_q = HookPoint()  # q after the rotary position rotation
            self.hook_rot_k = HookPoint()
        self.hook_raw_scores = HookPoint()  # [batch, head, query_pos, key_pos], Q K^T: unscaled, unmasked
        if relative:
            self.hook_position_bias = HookPoint()  # [1, head, query_pos, key_pos], added to the scaled scores
        self.hook_scores = HookPoint()  # [batch, head, query_pos, key_pos], scaled, -inf where masked
        self.hook_pattern = HookPoint()  # [batch, head, query_pos, key_pos], softmax over key_pos
        self.hook_z = HookPoint()  # [batch, query_pos, head, d_head], weighted sum of values
        self.hook_out = HookPoint()  # [batch, query_pos, d_model], after W_o
        self.path = ""  # set by the model: module path for the shape trace
        self.edits: AttentionEdits | None = None  # None = the intact computation (the fast path)

    def share_position_bias(self, first: MultiHeadAttention) -> None:
        """Read the relative position bias of ``first`` (layer 0 of the same stack), as T5 does."""
        if first.rel_bias is None:
            raise ValueError("the first layer holds no relative position bias")
        if first is not self:
            self._bias_from = [first.rel_bias]

    def position_bias_table(self) -> RelativePositionBias | None:
        """The relative position bias this layer adds (its own, or its stack's first layer's); None: none."""
        if not self.relative:
            return None
        if self.rel_bias is not None:
            return self.rel_bias
        return self._bias_from[0] if self._bias_from else None

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor,
        key_padding: torch.Tensor | None = None,
        cache: dict[str, torch.Tensor] | None = None,
        query_padding: torch.Tensor | None = None,
        memory_cache: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """cache (self-attention only): keys/values of earlier positions, extended in place, so
        greedy decoding feeds one new token per step instead of the whole prefix.
        memory_cache (cross-attention only, while decoding step by step): the keys and values of the
        encoder output, computed (through hook_k and hook_v) at the first step and read at the later ones,
        whose encoder output is the same; decoding prunes and reorders them with the batch.
        query_padding (cross-attention; self-attention uses key_padding): [batch, query_pos], read
        only by a softmax over queries, which must not spread weight onto padding rows."""
        B, Lq, _ = x_q.shape  # [batch, query_pos, d_model]
        Lk, H, Hkv, dh = x_kv.shape[1], self.n_heads, self.n_kv_heads, self.d_head
        offset = 0 if cache is None or "k" not in cache else cache["k"].shape[2]  # positions cached before
        steps = _Steps(self, x_q, x_kv, key_padding) if tracing() else _NO_STEPS  # the shape trace

        q = self.hook_q(self.W_q(x_q).view(B, Lq, H, dh))  # [batch, query_pos, head, d_head]
        kept_memory = memory_cache is not None and "cross_k" in memory_cache
        if kept_memory:  # decoding: the encoder output's, kept
            k, v = memory_cache["cross_k"], memory_cache["cross_v"]
        else:
            k = self.hook_k(self.W_k(x_kv).view(B, Lk, Hkv, dh))  # [batch, key_pos, kv_head, d_head]
            v = self.hook_v(self.W_v(x_kv).view(B, Lk, Hkv, dh))  # [batch, key_pos, kv_head, d_head]
            if memory_cache is not None:
                memory_cache["cross_k"], memory_cache["cross_v"] = k, v
        steps.heads(q, k, v)
        if self.q_norm is not None:
            q, k = self._normalise(q, k, steps)  # QK-norm, through hook_q_normed and hook_k_normed
        if self.rotary:
            q, k = self._rotate(q, k, offset)  # RoPE, through hook_rot_q and hook_rot_k
            steps.rotated(q, k)
        if cache is not None:
            # the cache is kept heads-first ([batch, kv_head, offset + key_pos, d_head]), the order the
            # products read: a decoding step multiplies each head's cached keys and values in place, where a
            # positions-first cache was copied whole into this order at every step
            kt, vt = _extend_cache(cache, k.transpose(1, 2), v.transpose(1, 2), offset)
            k, v = kt.transpose(1, 2), vt.transpose(1, 2)  # [batch, offset + key_pos, kv_head, d_head]

        qt = q.transpose(1, 2)  # [batch, head, query_pos, d_head]
        kt = k.transpose(1, 2)  # [batch, kv_head, key_pos, d_head]
        vt = v.transpose(1, 2)  # [batch, kv_head, key_pos, d_head]
        steps.heads_first((q, k, v), (qt, kt, vt))

        q_pad = key_padding if x_q is x_kv else query_padding  # in self-attention the queries are the keys
        table = self.position_bias_table()
        bias, edited_bias = None, None
        if table is not None:  # [1, head, query_pos, key_pos]: T5's relative position bias
            bias = table(Lq, k.shape[1], offset)
            bias, edited_bias = self._hooked_bias(bias if self._adds_bias() else torch.zeros_like(bias))
        if recorded.recording():  # what the softmax sees, so any head's pattern can be computed again
            relative = None if table is None or not self._adds_bias() else recorded.RelativeBias(
                table.weight.detach().float().cpu().numpy(), table.bidirectional, table.max_distance)
            if edited_bias is not None:  # a hook function changed the bias: the table no longer gives it
                relative = recorded.EditedBias.of(edited_bias, self.n_heads)
            new = offset if recorded.new_keys_only() and cache is not None else 0  # a step's own keys only
            divisor = self.divisor if self._scales() else 1.0
            # a step's keys copied: a view would keep the whole cache of that step alive in the record
            keys = kt[:, :, new:].clone() if new else kt
            if recorded.new_keys_only() and kept_memory:  # a step's cross-attention adds no key of its own
                keys, norms = qt.new_zeros((B, Hkv, 0, dh)), qt.new_zeros((B, H, 0))  # one row per query row
            else:
                norms = self._value_norms(vt[:, :, new:])  # [batch, head, new key_pos]
            recorded.record(self.path, qt, keys, divisor, self._causal_mode(), offset, self._softmax_dim(),
                            key_padding, q_pad, self._window(), value_norms=norms, relative=relative)
        mask = self._mask(key_padding, q_pad, Lq, k.shape[1], offset, qt.device)
        if self._fuses(Lq, k.shape[1], key_padding, q_pad):
            zt = self._fused(qt, kt, vt, mask, bias)  # [batch, head, query_pos, d_head]
            steps.fused(qt, kt, vt, zt)
        elif steps is _NO_STEPS and H != Hkv:  # grouped heads, untraced (a decoding step): no copy of K, V
            raw = self.hook_raw_scores(_grouped(qt, kt.transpose(-2, -1)))  # [batch, head, query, key_pos]
            biased = self._scale(raw) if bias is None else self._scale(raw) + bias
            scores = self.hook_scores(biased if mask is None else biased.masked_fill(mask, float("-inf")))
            pattern = self.hook_pattern(masked_softmax(scores, mask, self._softmax_dim()))
            zt = _grouped(self.dropout(pattern), vt)  # [batch, head, query_pos, d_head]
        else:
            kt_all, vt_all = self._share_kv(kt), self._share_kv(vt)  # [batch, head, key_pos, d_head]
            steps.share(kt, kt_all)
            raw = self.hook_raw_scores(qt @ kt_all.transpose(-2, -1))  # [batch, head, query_pos, key_pos]
            scaled = self._scale(raw)  # raw / sqrt(d_head)
            biased = scaled if bias is None else scaled + bias  # + the relative position bias (T5)
            scores = self.hook_scores(biased if mask is None else biased.masked_fill(mask, float("-inf")))
            pattern = self.hook_pattern(masked_softmax(scores, mask, self._softmax_dim()))
            steps.scores(qt, kt_all, raw, scaled, scores, pattern, (bias, biased))
            zt = self.dropout(pattern) @ vt_all  # [batch, head, query_pos, d_head]
            steps.weighted_sum(pattern, vt_all, zt)
        z = self._edit_heads(zt.transpose(1, 2), offset)  # [batch, query_pos, head, d_head]
        z = self.hook_z(z.contiguous())
        merged = z.view(B, Lq, H * dh)  # [batch, query_pos, head * d_head] (= d_model by default)
        out = self.hook_out(self.W_o(merged))  # [batch, query_pos, d_model]
        steps.output(zt, z, merged, out)
        return out

    def _fuses(self, n_query: int, n_key: int, key_padding, query_padding) -> bool:
        """Whether this pass may use the fused kernel: nothing asks for the weights while it runs (no
        edit, no hook on the scores or pattern, no dropout), no padding (a fully masked row would be NaN
        there, 0 here), and the squares are large enough for it to pay (FUSED_FROM_CELLS)."""
        if self.edits is not None or (self.training and self.dropout.p > 0):
            return False
        if key_padding is not None or query_padding is not None or self._causal_mode() == "reversed causal":
            return False
        if self.n_heads * n_query * n_key < FUSED_FROM_CELLS:
            return False
        points = (self.hook_raw_scores, self.hook_scores, self.hook_pattern)
        return all(p.sink is None and not p.fns for p in points)

    def _fused(self, qt: torch.Tensor, kt: torch.Tensor, vt: torch.Tensor, mask, bias=None) -> torch.Tensor:
        """softmax(Q K^T / sqrt(d_head), masked) V in one kernel, which never holds the L x L weights; a
        relative position bias goes in as the kernel's additive mask (-inf where masked)."""
        n_query, n_key = qt.shape[2], kt.shape[2]
        if bias is not None:
            allowed = bias if mask is None else bias.masked_fill(mask, float("-inf"))
            return torch.nn.functional.scaled_dot_product_attention(
                qt, kt, vt, attn_mask=allowed, scale=1.0 / self.divisor if self._scales() else 1.0,
                enable_gqa=self.n_kv_heads != self.n_heads)
        causal = mask is not None and n_query == n_key and self._causal_mode() == "causal"
        causal = causal and not self._window()  # a sliding window is more than the kernel's causal mask
        allowed = None if mask is None or causal else ~mask  # the kernel's mask says where a query may look
        return torch.nn.functional.scaled_dot_product_attention(
            qt, kt, vt, attn_mask=allowed, is_causal=causal,
            scale=1.0 / self.divisor if self._scales() else 1.0,
            enable_gqa=self.n_kv_heads != self.n_heads)

    def _value_norms(self, vt: torch.Tensor) -> torch.Tensor:
        """[batch, head, key_pos]: ‖f_h(x_j)‖ with f_h(x) = (x W_V + b_V)_h W_O,h, the vector head h moves
        from key j at full weight (Kobayashi et al. 2020). Through each head's Gram matrix W_O,h W_O,h^T
        ([d_head, d_head]), so no [head, key_pos, d_model] tensor is built."""
        with torch.no_grad():
            gram = self._gram()  # [head, d_head, d_head]
            v = self._share_kv(vt.detach().float())  # [batch, head, key_pos, d_head]
            squared = ((v @ gram) * v).sum(-1)  # [batch, head, key_pos]
            return squared.clamp_min(0.0).sqrt()

    def _gram(self) -> torch.Tensor:
        """[head, d_head, d_head]: each head's W_O,h W_O,h^T, computed once per version of W_o (a decoding
        step records one key's value norms: recomputing this in each of them cost more than the step)."""
        weight = self.W_o.weight
        stamp = (weight.data_ptr(), weight._version, weight.dtype)
        kept = self.__dict__.get("_gram_kept")
        if kept is None or kept[0] != stamp:
            H, dh = self.n_heads, self.d_head
            w = weight.detach().float().view(-1, H, dh).permute(1, 2, 0)  # [head, d_head, d_model]
            kept = (stamp, w @ w.transpose(1, 2))
            self.__dict__["_gram_kept"] = kept  # not a buffer: no state_dict entry, no module attribute
        return kept[1]

    def _share_kv(self, t: torch.Tensor) -> torch.Tensor:
        """[batch, kv_head, key_pos, d_head] -> [batch, head, key_pos, d_head]: under grouped-query
        attention each key/value head serves n_heads / n_kv_heads query heads."""
        group = self.n_heads // self.n_kv_heads
        return t if group == 1 else t.repeat_interleave(group, dim=1)

    # The edit points: where `edits` (set only by model/run/interventions.py) changes a step; each one is
    # the intact step when edits is None. _Steps reads the same answers to name the steps in the trace.

    def _normalise(self, q: torch.Tensor, k: torch.Tensor, steps) -> tuple[torch.Tensor, torch.Tensor]:
        """q [batch, query_pos, head, d_head] and k normalised: each head over d_head, or ("full") each
        position's whole projection, the heads side by side, as OLMo 2 does before its head split."""
        if self.qk_norm == "full":
            q_n = self.q_norm(q.flatten(2)).view(q.shape)  # [batch, query_pos, head, d_head]
            k_n = self.k_norm(k.flatten(2)).view(k.shape)  # [batch, key_pos, kv_head, d_head]
        else:
            q_n, k_n = self.q_norm(q), self.k_norm(k)
        q_n, k_n = self.hook_q_normed(q_n), self.hook_k_normed(k_n)
        steps.normed(q, k, q_n, k_n)
        return q_n, k_n

    def _rotates(self) -> bool:
        return self.edits is None or self.edits.rotary

    def rope_pass(self, length: int) -> tuple[tuple[float, ...], float]:
        """(per-pair factors, cos/sin scale) of a pass over a sequence of ``length`` positions: longrope's
        short factors up to its switch length, its long ones beyond (the whole sequence, as transformers
        recomputes it); ((), 1.0) for plain RoPE."""
        if self.longrope is None:
            return (), 1.0
        short, long, switch, scale = self.longrope
        return (long if length > switch else short), scale

    def _rotate(self, q: torch.Tensor, k: torch.Tensor, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
        """q and k rotated by their absolute positions (from `offset` on). Unrotated (edit: RoPE off),
        they still pass the rotation hooks, so pages reading them keep working."""
        if self._rotates():
            dh, base, f = self.rotary_dims, self.rope_theta, self.rope_factor  # partial rotary: first dims
            pairs, scale = self.rope_pass(offset + q.shape[1])  # longrope: by the whole sequence's length
            turns_q = _turns(offset + q.shape[1], dh, base, q.device, f, pairs, scale, offset)
            turns_k = turns_q if k.shape[1] == q.shape[1] else _turns(
                offset + k.shape[1], dh, base, k.device, f, pairs, scale, offset)
            if dh == self.d_head:
                q = rotate_pairs(q, turns_q)  # [batch, query_pos, head, d_head]
                k = rotate_pairs(k, turns_k)  # [batch, key_pos, kv_head, d_head]
            else:  # the other dims pass unrotated
                q = torch.cat([rotate_pairs(q[..., :dh], turns_q), q[..., dh:]], dim=-1)
                k = torch.cat([rotate_pairs(k[..., :dh], turns_k), k[..., dh:]], dim=-1)
        return self.hook_rot_q(q), self.hook_rot_k(k)

    def _hooked_bias(self, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(the bias after hook_position_bias, the same when a hook function changed it, else None).
        A hook function gets a copy: the computed bias is shared by the stack's layers and kept for the
        next pass (RelativePositionBias), so an edit in place must not reach them."""
        point = self.hook_position_bias
        if not point.fns:
            return point(bias), None
        out = point(bias.clone())
        if out.shape == bias.shape and torch.equal(out, bias):  # a function that only looked
            return out, None
        return out, out

    def _adds_bias(self) -> bool:
        """Whether the relative position bias joins the scores (an edit can set it to 0)."""
        return self.edits is None or self.edits.position_bias

    def _scales(self) -> bool:
        return self.scale_scores and (self.edits is None or self.edits.scale)

    def _scale(self, raw: torch.Tensor) -> torch.Tensor:
        return raw / self.divisor if self._scales() else raw

    def _window(self) -> int:
        """The sliding window this pass applies: the layer's, with the causal mask only (0: none)."""
        return self.window if self._causal_mode() == "causal" else 0

    def _causal_mode(self) -> str:
        """The causal mask this pass applies: "causal", "reversed causal" (an edit) or "" (none)."""
        if not self.causal:
            return ""
        edited = "on" if self.edits is None else self.edits.causal
        if edited != "on":
            return "reversed causal" if edited == "reversed" else ""
        # The "cheating" decoder (causal_in_training=False) sees the future only in training mode.
        return "causal" if self.causal_in_training or not self.training else ""

    def _softmax_dim(self) -> int:
        """-1: softmax over keys (intact); -2: over queries (an edit)."""
        return -1 if self.edits is None else self.edits.softmax_dim

    def _mask(self, key_padding, query_padding, n_query: int, n_key: int, offset: int, device):
        """True where a query may not look ([batch or 1, 1, query_pos, key_pos]; None: nowhere)."""
        causal = self._causal_mode()
        reverse = causal == "reversed causal"
        mask = build_mask(key_padding, n_query, n_key, bool(causal), device, offset, reversed_causal=reverse,
                          window=self._window())
        if self._softmax_dim() == -2 and query_padding is not None:
            # Rows are independent in the intact softmax, so padding rows never mattered; over queries
            # they would share every column, and a sentence's pattern would depend on its batch.
            # [batch, 1, query_pos, 1]; in self-attention with a cache the queries are the last keys
            rows = query_padding[:, None, -n_query:, None]
            mask = rows if mask is None else (mask | rows)
        return mask

    def _edit_heads(self, z: torch.Tensor, offset: int) -> torch.Tensor:
        """z [batch, query_pos, head, d_head], with the HeadOutput edits' heads changed (a copy)."""
        return z if self.edits is None or not self.edits.heads else edit_heads(z, self.edits, offset)


#: Positions a key/value store keeps free beyond what it holds when it grows: at least this many, or an
#: eighth of what it holds, so a decoding step writes into room already there (a store grows by a copy).
STORE_ROOM = 64


#: The last turns :func:`_turns` computed outside autograd: (arguments, turns).
_last_turns: tuple | None = None


def _turns(*args) -> torch.Tensor:
    """:func:`~model.network.positional.rope_turns` of :func:`~model.network.positional.rope_angles` of
    ``args``; outside autograd the last ones are kept, so the layers of a pass (or of a decoding step) that
    rotate alike compute them once."""
    global _last_turns
    kept = _last_turns
    if kept is not None and kept[0] == args and not torch.is_grad_enabled():
        return kept[1]
    turns = rope_turns(*rope_angles(*args))
    _last_turns = None if torch.is_grad_enabled() else (args, turns)
    return turns


def _grouped(rows: torch.Tensor, shared: torch.Tensor) -> torch.Tensor:
    """rows [batch, head, query_pos, n] @ shared [batch, kv_head, n, m] -> [batch, head, query_pos, m], where
    query head h reads key/value head h // (head / kv_head), as ``_share_kv`` lays them out: the query heads
    of a group become rows of one product, so the shared heads are never copied."""
    B, H, Lq, n = rows.shape
    Hkv, m = shared.shape[1], shared.shape[-1]
    return (rows.reshape(B, Hkv, H // Hkv * Lq, n) @ shared).view(B, H, Lq, m)


def _extend_cache(cache: dict[str, torch.Tensor], k: torch.Tensor, v: torch.Tensor, offset: int):
    """Decoding: the `offset` earlier positions' keys and values (cache, extended in place), then these.

    ``k`` and ``v``: [batch, kv_head, key_pos, d_head], heads-first. Each of ``cache["k"]`` and ``cache["v"]``
    is a view of the first positions of a store with room for more (``cache["k_store"]``,
    ``cache["v_store"]``, [batch, kv_head, room, d_head]): a step writes its own positions into the room,
    where joining them on would copy the whole cache at every step."""
    n = offset + k.shape[2]
    for name, new in (("k", k), ("v", v)):
        store = cache.get(f"{name}_store") if offset and _in_store(cache, name) else None
        if store is None or store.shape[2] < n:
            room = n + max(STORE_ROOM, n // 8)
            # [batch, kv_head, room, d_head]
            grown = new.new_empty((new.shape[0], new.shape[1], room, new.shape[3]))
            if offset:
                grown[:, :, :offset] = cache[name]
            store = cache[f"{name}_store"] = grown
        store[:, :, offset:n] = new
        cache[name] = store[:, :, :n]  # [batch, kv_head, offset + key_pos, d_head], a view
    return cache["k"], cache["v"]


def _in_store(cache: dict[str, torch.Tensor], name: str) -> bool:
    """Whether ``cache[name]`` is the view of the first positions of ``cache[name + "_store"]``."""
    held, store = cache.get(name), cache.get(f"{name}_store")
    return (held is not None and store is not None and held.data_ptr() == store.data_ptr()
            and held.shape[0] == store.shape[0] and held.stride() == store.stride())


def select_cache_rows(caches: list[dict], rows: torch.Tensor) -> None:
    """Keep the batch rows ``rows`` ([new batch] long, in their new order, repeats allowed: a beam's
    hypotheses that continue one parent) of every decoding cache entry. A key/value store is gathered
    whole (room included: one copy, as a plain tensor's rows are) and its view follows it.
    Cross-attention's keys and values of one source (batch 1: every row continues that sentence) are
    kept as they are, never copied: the scores and the weighted sum broadcast them over the rows."""
    for cache in caches:
        views = {name for name in ("k", "v") if _in_store(cache, name)}
        for name in list(cache):
            if name in views:
                continue  # a view of its store, which follows
            if name in ("cross_k", "cross_v") and cache[name].shape[0] == 1:
                continue  # the encoder output's of the one source every row translates
            if name in ("k_store", "v_store") and name[0] not in views:
                del cache[name]  # not what the cache holds (a view is taken again when it grows)
                continue
            cache[name] = cache[name].index_select(0, rows)
            if name[0] in views and name == f"{name[0]}_store":
                cache[name[0]] = cache[name][:, :, : cache[name[0]].shape[2]]


class _Steps:
    """The shape trace's steps of one attention pass (model/network/trace.py): each paragraph of
    MultiHeadAttention.forward hands over the tensors it produced, and the steps get their names and
    the symbolic shapes the code expects here. Built only inside trace_shapes()."""

    def __init__(self, attn: MultiHeadAttention, x_q: torch.Tensor, x_kv: torch.Tensor, key_padding):
        self.attn, self.x_q, self.x_kv, self.padded = attn, x_q, x_kv, key_padding is not None
        Sq, Sk = attn.query_len, attn.key_len
        kvh = "h" if attn.n_kv_heads == attn.n_heads else "h_kv"
        self.XQ, self.XK = ("B", Sq, "d_model"), ("B", Sk, "d_model")  # inputs and the output
        # Q before the head split and the merged heads: d_model wide unless the heads have a width of
        # their own (cfg.head_dim: Qwen3's 16 x 128 on 1,024 is as wide, Gemma's 4 x 256 on 640 not)
        own_width = attn.n_heads * attn.d_head != attn.d_model
        self.Q_FLAT = ("B", Sq, "h*d_head") if own_width else self.XQ
        self.KV_FLAT = ("B", Sk, f"{kvh}*d_head")  # K and V before the head split
        self.QH, self.KH = ("B", Sq, "h", "d_head"), ("B", Sk, kvh, "d_head")  # positions-first, per head
        self.QT, self.KT = ("B", "h", Sq, "d_head"), ("B", kvh, Sk, "d_head")  # heads-first
        self.KT_ALL = ("B", "h", Sk, "d_head")  # keys/values once every query head has its own
        self.SC = ("B", "h", Sq, Sk)  # scores and pattern

    def _step(self, op: str, inputs, output: torch.Tensor, in_symbols, out_symbol, hook=None) -> None:
        record(self.attn.path, op, inputs, output, in_symbols, out_symbol, hook)

    def heads(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """The projections and the head split. A projection's output is its split tensor before the
        view, which flatten(2) gives back."""
        a, XQ, KV_FLAT, QH, KH = self.attn, self.XQ, self.KV_FLAT, self.QH, self.KH
        q_flat, k_flat, v_flat = q.flatten(2), k.flatten(2), v.flatten(2)
        self._step("linear Q = x W_q", self.x_q, q_flat, XQ, self.Q_FLAT)
        self._step("linear K = x W_k", self.x_kv, k_flat, self.XK, KV_FLAT)
        self._step("linear V = x W_v", self.x_kv, v_flat, self.XK, KV_FLAT)
        self._step("split heads: view Q", q_flat, q, self.Q_FLAT, QH, a.hook_q)
        self._step("split heads: view K", k_flat, k, KV_FLAT, KH, a.hook_k)
        self._step("split heads: view V", v_flat, v, KV_FLAT, KH, a.hook_v)

    def normed(self, q, k, q_n, k_n) -> None:
        """QK-norm: each head's q and k over d_head, or the whole projections (heads side by side)."""
        a, QH, KH = self.attn, self.QH, self.KH
        over = "each head over d_head" if a.qk_norm == "head" else "whole projection, before the split"
        self._step(f"QK-norm of Q ({over})", q, q_n, QH, QH, a.hook_q_normed)
        self._step(f"QK-norm of K ({over})", k, k_n, KH, KH, a.hook_k_normed)

    def rotated(self, q, k) -> None:
        """RoPE: rotated q and k keep their shapes."""
        a, QH, KH = self.attn, self.QH, self.KH
        how = "rotate {} by position (RoPE)" if a._rotates() else "{} not rotated (edit: RoPE off)"
        if a._rotates() and a.rotary_dims != a.d_head:
            how = f"rotate the first {a.rotary_dims} of d_head dims of {{}} by position (partial RoPE)"
        self._step(how.format("Q"), q, q, QH, QH, a.hook_rot_q)
        self._step(how.format("K"), k, k, KH, KH, a.hook_rot_k)

    def heads_first(self, positions_first, heads_first) -> None:
        """The transposes of q, k, v (k and v with any cached positions)."""
        (q, k, v), (qt, kt, vt) = positions_first, heads_first
        self._step("transpose Q to heads-first", q, qt, self.QH, self.QT)
        self._step("transpose K to heads-first", k, kt, self.KH, self.KT)
        self._step("transpose V to heads-first", v, vt, self.KH, self.KT)

    def share(self, kt: torch.Tensor, kt_all: torch.Tensor) -> None:
        """Under GQA, each key/value head copied for the query heads it serves (the explicit path)."""
        a = self.attn
        if a.n_kv_heads != a.n_heads:
            op = f"share each K/V head with {a.n_heads // a.n_kv_heads} query heads (GQA)"
            self._step(op, kt, kt_all, self.KT, self.KT_ALL)

    def scores(self, qt, kt_all, raw, scaled, scores, pattern, relative=(None, None)) -> None:
        """Q K^T, the scaling, the relative position bias (T5), the mask and the softmax."""
        a, SC = self.attn, self.SC
        self._step("scores = Q K^T", [qt, kt_all], raw, [self.QT, self.KT_ALL], SC, a.hook_raw_scores)
        if a._scales() and a.divisor == 1.0:
            why = "not scaled (the config's divisor is 1: T5 folds it into its weights)"
            self._step(why, raw, scaled, SC, SC)
        elif a._scales() and a.divisor != math.sqrt(a.d_head):
            self._step(f"scale by 1 / {a.divisor:.6g} (the config's, not sqrt(d_head))", raw, scaled, SC, SC)
        elif a._scales():
            self._step("scale by 1 / sqrt(d_head)", raw, scaled, SC, SC)
        else:
            why = "edit" if a.scale_scores else "trained without it"
            self._step(f"not scaled ({why}: no 1 / sqrt(d_head))", raw, scaled, SC, SC)
        bias, biased = relative
        if bias is not None:
            what = "+ relative position bias" + ("" if a._adds_bias() else " set to 0 (edit)")
            self._step(f"{what} (broadcast over batch)", [scaled, bias], biased,
                       [SC, ("1", "h", self.SC[2], self.SC[3])], SC, a.hook_position_bias)
            scaled = biased
        window = f"sliding window of {a._window()}" if a._window() else ""
        what = " + ".join(m for m in (a._causal_mode(), window, "padding" if self.padded else "") if m)
        self._step(f"mask ({what or 'none'}) -> -inf", scaled, scores, SC, SC, a.hook_scores)
        axis = "key positions" if a._softmax_dim() == -1 else "query positions (edit)"
        self._step(f"softmax over {axis}", scores, pattern, SC, SC, a.hook_pattern)

    def fused(self, qt, kt, vt, zt) -> None:
        """The fused kernel: scores, scaling, mask, softmax and weighted sum in one step."""
        op = "fused attention: softmax(Q K^T / sqrt(d_head), masked) V (scaled_dot_product_attention)"
        self._step(op, [qt, kt, vt], zt, [self.QT, self.KT, self.KT], self.QT)

    def weighted_sum(self, pattern, vt_all, zt) -> None:
        self._step("weighted sum: pattern @ V", [pattern, vt_all], zt, [self.SC, self.KT_ALL], self.QT)

    def output(self, zt, z, merged, out) -> None:
        """The head outputs and W_o. z is the head outputs as they reach hook_z: transposed back, edited
        (HeadOutput), made contiguous, all steps that keep its shape."""
        a, QH = self.attn, self.QH
        self._step("transpose back to positions-first", zt, z, self.QT, QH)
        if a.edits is not None and a.edits.heads:
            self._step("edit head outputs (edit)", z, z, QH, QH)
        self._step("contiguous (copy into a dense layout)", z, z, QH, QH, a.hook_z)
        self._step("merge heads: view", z, merged, QH, self.Q_FLAT)
        self._step("output projection W_o", merged, out, self.Q_FLAT, self.XQ, a.hook_out)


class _NoSteps:
    """Outside trace_shapes(): forward's calls to the trace, recording nothing."""

    heads = normed = rotated = heads_first = share = scores = fused = weighted_sum = output = staticmethod(
        lambda *tensors: None)


_NO_STEPS = _NoSteps()
