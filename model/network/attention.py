"""Multi-head attention, written out step by step so the weights exist and can be hooked.

scores = Q K^T / sqrt(d_head); masked positions -> -inf; pattern = softmax over keys; z = pattern @ V.
Grouped-query attention: n_kv_heads key/value heads, each shared by n_heads / n_kv_heads query heads
(n_kv_heads = 1 is multi-query attention).

`MultiHeadAttention.edits` (an `AttentionEdits`, normally None) changes those steps on purpose; only
model/interventions.py sets it, and always puts the previous value back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .config import ModelConfig
from .hooks import HookPoint
from .positional import apply_rope, rope_angles
from .trace import record


def build_mask(
    key_padding: torch.Tensor | None,
    n_query: int,
    n_key: int,
    causal: bool,
    device=None,
    offset: int = 0,
    reversed_causal: bool = False,
) -> torch.Tensor | None:
    """Boolean mask, True where a query may NOT look: [batch or 1, 1, query_pos, key_pos].

    offset: absolute position of the first query (when earlier keys come from a decoding cache).
    reversed_causal: hide the past instead of the future (each query sees itself and later keys).
    """
    mask = None
    if reversed_causal:
        # [query_pos, key_pos]; query i sits at position offset + i and may see keys from there on.
        past = torch.ones(n_query, n_key, dtype=torch.bool, device=device).tril(offset - 1)
        mask = past[None, None]
    elif causal:
        # [query_pos, key_pos]; query i sits at position offset + i, so it may see keys up to there.
        future = torch.ones(n_query, n_key, dtype=torch.bool, device=device).triu(1 + offset)
        mask = future[None, None]
    if key_padding is not None:
        pad = key_padding[:, None, None, :]  # [batch, 1, 1, key_pos]
        mask = pad if mask is None else (mask | pad)
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """Softmax over the key axis (dim=-1; -2 is the query axis, the classic bug); masked cells are
    exactly 0 and a fully masked row (column) is all 0, not NaN."""
    if mask is None:
        return torch.softmax(scores, dim=dim)
    # -inf -> the lowest finite float so a fully masked row gives a finite (uniform) softmax,
    # which the final where() then zeroes; no NaN reaches values or gradients.
    finite = scores.clamp(min=torch.finfo(scores.dtype).min)
    return torch.where(mask, 0.0, torch.softmax(finite, dim=dim))


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
    def __init__(self, cfg: ModelConfig, query_len: str, key_len: str, causal: bool, rotary: bool):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.causal, self.rotary = causal, rotary
        # Trained-in faults (ModelConfig): no 1/sqrt(d_head); no causal mask while in training mode.
        self.scale_scores = cfg.scale_scores
        self.causal_in_training = cfg.causal_in_training
        self.query_len, self.key_len = query_len, key_len  # trace symbols, e.g. "L_tgt", "L_src"
        d = cfg.d_model
        self.W_q = nn.Linear(d, self.n_heads * self.d_head)
        self.W_k = nn.Linear(d, self.n_kv_heads * self.d_head)
        self.W_v = nn.Linear(d, self.n_kv_heads * self.d_head)
        self.W_o = nn.Linear(self.n_heads * self.d_head, d)
        self.dropout = nn.Dropout(cfg.dropout)
        self.hook_q = HookPoint()  # [batch, query_pos, head, d_head]
        self.hook_k = HookPoint()  # [batch, key_pos, kv_head, d_head]
        self.hook_v = HookPoint()  # [batch, key_pos, kv_head, d_head]
        if rotary:
            self.hook_rot_q = HookPoint()  # q after the rotary position rotation
            self.hook_rot_k = HookPoint()
        self.hook_raw_scores = HookPoint()  # [batch, head, query_pos, key_pos], Q K^T: unscaled, unmasked
        self.hook_scores = HookPoint()  # [batch, head, query_pos, key_pos], scaled, -inf where masked
        self.hook_pattern = HookPoint()  # [batch, head, query_pos, key_pos], softmax over key_pos
        self.hook_z = HookPoint()  # [batch, query_pos, head, d_head], weighted sum of values
        self.hook_out = HookPoint()  # [batch, query_pos, d_model], after W_o
        self.path = ""  # set by the model: module path for the shape trace
        self.edits: AttentionEdits | None = None  # None = the intact computation (the fast path)

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor,
        key_padding: torch.Tensor | None = None,
        cache: dict[str, torch.Tensor] | None = None,
        query_padding: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """cache (self-attention only): keys/values of earlier positions, extended in place, so
        greedy decoding feeds one new token per step instead of the whole prefix.
        query_padding (cross-attention; self-attention uses key_padding): [batch, query_pos], read
        only by a softmax over queries, which must not spread weight onto padding rows."""
        B, Lq, _ = x_q.shape  # [batch, query_pos, d_model]
        Lk = x_kv.shape[1]
        e = self.edits
        H, Hkv, dh = self.n_heads, self.n_kv_heads, self.d_head
        Sq, Sk, p = self.query_len, self.key_len, self.path
        kvh = "h" if Hkv == H else "h_kv"
        # Symbolic shapes for the trace.
        XQ, XK = ("B", Sq, "d_model"), ("B", Sk, "d_model")  # inputs, and Q before the head split
        KV_FLAT = ("B", Sk, f"{kvh}*d_head")  # K and V before the head split
        QH, KH = ("B", Sq, "h", "d_head"), ("B", Sk, kvh, "d_head")  # positions-first, per head
        QT, KT = ("B", "h", Sq, "d_head"), ("B", kvh, Sk, "d_head")  # heads-first
        KT_ALL = ("B", "h", Sk, "d_head")  # keys/values once every query head has its own
        SC = ("B", "h", Sq, Sk)  # scores and pattern

        q = self.W_q(x_q)  # [batch, query_pos, head*d_head]
        k = self.W_k(x_kv)  # [batch, key_pos, kv_head*d_head]
        v = self.W_v(x_kv)  # [batch, key_pos, kv_head*d_head]
        record(p, "linear Q = x W_q", x_q, q, XQ, XQ)
        record(p, "linear K = x W_k", x_kv, k, XK, KV_FLAT)
        record(p, "linear V = x W_v", x_kv, v, XK, KV_FLAT)

        q_flat = q
        q = self.hook_q(q.view(B, Lq, H, dh))  # [batch, query_pos, head, d_head]
        k = self.hook_k(k.view(B, Lk, Hkv, dh))  # [batch, key_pos, kv_head, d_head]
        v = self.hook_v(v.view(B, Lk, Hkv, dh))  # [batch, key_pos, kv_head, d_head]
        record(p, "split heads: view Q", q_flat, q, XQ, QH, self.hook_q)
        record(p, "split heads: view K", k.flatten(2), k, KV_FLAT, KH, self.hook_k)
        record(p, "split heads: view V", v.flatten(2), v, KV_FLAT, KH, self.hook_v)

        offset = 0 if cache is None or "k" not in cache else cache["k"].shape[1]
        if self.rotary:
            rotate = e is None or e.rotary
            if rotate:
                cos_q, sin_q = (a[offset:] for a in rope_angles(offset + Lq, dh, device=q.device))
                cos_k, sin_k = (a[offset:] for a in rope_angles(offset + Lk, dh, device=k.device))
                q = apply_rope(q, cos_q, sin_q)  # [batch, query_pos, head, d_head]
                k = apply_rope(k, cos_k, sin_k)  # [batch, key_pos, kv_head, d_head]
            # Unrotated q and k still pass the rotation hooks, so pages reading them keep working.
            q, k = self.hook_rot_q(q), self.hook_rot_k(k)
            how = "rotate {} by position (RoPE)" if rotate else "{} not rotated (edit: RoPE off)"
            record(p, how.format("Q"), q, q, QH, QH, self.hook_rot_q)
            record(p, how.format("K"), k, k, KH, KH, self.hook_rot_k)

        if cache is not None:
            if offset:
                k = torch.cat([cache["k"], k], dim=1)  # [batch, offset + key_pos, kv_head, d_head]
                v = torch.cat([cache["v"], v], dim=1)
                Lk = k.shape[1]
            cache["k"], cache["v"] = k, v

        qt = q.transpose(1, 2)  # [batch, head, query_pos, d_head]
        kt = k.transpose(1, 2)  # [batch, kv_head, key_pos, d_head]
        vt = v.transpose(1, 2)  # [batch, kv_head, key_pos, d_head]
        record(p, "transpose Q to heads-first", q, qt, QH, QT)
        record(p, "transpose K to heads-first", k, kt, KH, KT)
        record(p, "transpose V to heads-first", v, vt, KH, KT)
        if Hkv != H:
            group = H // Hkv
            kt_g = kt.repeat_interleave(group, dim=1)  # [batch, head, key_pos, d_head]
            vt_g = vt.repeat_interleave(group, dim=1)
            record(p, f"share each K/V head with {group} query heads (GQA)", kt, kt_g, KT, KT_ALL)
            kt, vt = kt_g, vt_g

        raw = self.hook_raw_scores(qt @ kt.transpose(-2, -1))  # [batch, head, query_pos, key_pos]
        record(p, "scores = Q K^T", [qt, kt], raw, [QT, KT_ALL], SC, self.hook_raw_scores)
        if (e is None or e.scale) and self.scale_scores:
            scaled = raw / math.sqrt(dh)  # [batch, head, query_pos, key_pos]
            record(p, "scale by 1 / sqrt(d_head)", raw, scaled, SC, SC)
        else:
            scaled = raw
            why = "edit" if self.scale_scores else "trained without it"
            record(p, f"not scaled ({why}: no 1 / sqrt(d_head))", raw, scaled, SC, SC)
        # The "cheating" decoder (causal_in_training=False) sees the future only in training mode.
        causal, reverse = self.causal and (self.causal_in_training or not self.training), False
        if e is not None and self.causal and e.causal != "on":
            causal, reverse = e.causal == "reversed", e.causal == "reversed"
        mask = build_mask(key_padding, Lq, Lk, causal, raw.device, offset, reversed_causal=reverse)
        dim = -1 if e is None else e.softmax_dim
        if dim == -2:
            # Rows are independent in the intact softmax, so padding rows never mattered; over queries
            # they would share every column, and a sentence's pattern would depend on its batch.
            q_pad = key_padding if x_q is x_kv else query_padding
            if q_pad is not None:
                rows = q_pad[:, None, -Lq:, None]  # [batch, 1, query_pos, 1]; with a cache, the last keys
                mask = rows if mask is None else (mask | rows)
        masked = scaled if mask is None else scaled.masked_fill(mask, float("-inf"))
        scores = self.hook_scores(masked)  # [batch, head, query_pos, key_pos]
        masks = (("reversed causal" if reverse else "causal", causal), ("padding", key_padding is not None))
        what = " + ".join(w for w, on in masks if on)
        record(p, f"mask ({what or 'none'}) -> -inf", scaled, scores, SC, SC, self.hook_scores)

        pattern = self.hook_pattern(masked_softmax(scores, mask, dim))  # [batch, head, query_pos, key_pos]
        axis = "key positions" if dim == -1 else "query positions (edit)"
        record(p, f"softmax over {axis}", scores, pattern, SC, SC, self.hook_pattern)

        zt = self.dropout(pattern) @ vt  # [batch, head, query_pos, d_head]
        record(p, "weighted sum: pattern @ V", [pattern, vt], zt, [SC, KT_ALL], QT)
        z = zt.transpose(1, 2)  # [batch, query_pos, head, d_head]
        record(p, "transpose back to positions-first", zt, z, QT, QH)
        if e is not None and e.heads:
            edited = edit_heads(z, e, offset)  # [batch, query_pos, head, d_head]
            record(p, "edit head outputs (edit)", z, edited, QH, QH)
            z = edited
        z = self.hook_z(z.contiguous())
        record(p, "contiguous (copy into a dense layout)", z, z, QH, QH, self.hook_z)
        merged = z.view(B, Lq, H * dh)  # [batch, query_pos, d_model]
        record(p, "merge heads: view", z, merged, QH, XQ)
        out = self.hook_out(self.W_o(merged))  # [batch, query_pos, d_model]
        record(p, "output projection W_o", merged, out, XQ, XQ, self.hook_out)
        return out
