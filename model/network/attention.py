"""Multi-head attention, written out step by step so the weights exist and can be hooked.

scores = Q K^T / sqrt(d_head); masked positions -> -inf; pattern = softmax over keys; z = pattern @ V.
Grouped-query attention: n_kv_heads key/value heads, each shared by n_heads / n_kv_heads query heads
(n_kv_heads = 1 is multi-query attention).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig
from .hooks import HookPoint
from .positional import apply_rope, rope_angles
from .trace import record


def build_mask(
    key_padding: torch.Tensor | None, n_query: int, n_key: int, causal: bool, device=None, offset: int = 0
) -> torch.Tensor | None:
    """Boolean mask, True where a query may NOT look: [batch or 1, 1, query_pos, key_pos].

    offset: absolute position of the first query (when earlier keys come from a decoding cache).
    """
    mask = None
    if causal:
        # [query_pos, key_pos]; query i sits at position offset + i, so it may see keys up to there.
        future = torch.ones(n_query, n_key, dtype=torch.bool, device=device).triu(1 + offset)
        mask = future[None, None]
    if key_padding is not None:
        pad = key_padding[:, None, None, :]  # [batch, 1, 1, key_pos]
        mask = pad if mask is None else (mask | pad)
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the key axis; masked cells are exactly 0 and a fully masked row is all 0, not NaN."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    # -inf -> the lowest finite float so a fully masked row gives a finite (uniform) softmax,
    # which the final where() then zeroes; no NaN reaches values or gradients.
    finite = scores.clamp(min=torch.finfo(scores.dtype).min)
    return torch.where(mask, 0.0, torch.softmax(finite, dim=-1))


class MultiHeadAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, query_len: str, key_len: str, causal: bool, rotary: bool):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        self.causal, self.rotary = causal, rotary
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
        self.hook_scores = HookPoint()  # [batch, head, query_pos, key_pos], scaled, -inf where masked
        self.hook_pattern = HookPoint()  # [batch, head, query_pos, key_pos], softmax over key_pos
        self.hook_z = HookPoint()  # [batch, query_pos, head, d_head], weighted sum of values
        self.hook_out = HookPoint()  # [batch, query_pos, d_model], after W_o
        self.path = ""  # set by the model: module path for the shape trace

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor,
        key_padding: torch.Tensor | None = None,
        cache: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """cache (self-attention only): keys/values of earlier positions, extended in place, so
        greedy decoding feeds one new token per step instead of the whole prefix."""
        B, Lq, _ = x_q.shape  # [batch, query_pos, d_model]
        Lk = x_kv.shape[1]
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
            cos_q, sin_q = (a[offset:] for a in rope_angles(offset + Lq, dh, device=q.device))
            cos_k, sin_k = (a[offset:] for a in rope_angles(offset + Lk, dh, device=k.device))
            q = self.hook_rot_q(apply_rope(q, cos_q, sin_q))
            k = self.hook_rot_k(apply_rope(k, cos_k, sin_k))
            record(p, "rotate Q by position (RoPE)", q, q, QH, QH, self.hook_rot_q)
            record(p, "rotate K by position (RoPE)", k, k, KH, KH, self.hook_rot_k)

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

        raw = qt @ kt.transpose(-2, -1) / math.sqrt(dh)  # [batch, head, query_pos, key_pos]
        record(p, "scores = Q K^T / sqrt(d_head)", [qt, kt], raw, [QT, KT_ALL], SC)
        mask = build_mask(key_padding, Lq, Lk, self.causal, device=raw.device, offset=offset)
        masked = raw if mask is None else raw.masked_fill(mask, float("-inf"))
        scores = self.hook_scores(masked)  # [batch, head, query_pos, key_pos]
        masks = (("causal", self.causal), ("padding", key_padding is not None))
        what = " + ".join(w for w, on in masks if on)
        record(p, f"mask ({what or 'none'}) -> -inf", raw, scores, SC, SC, self.hook_scores)

        pattern = self.hook_pattern(masked_softmax(scores, mask))  # [batch, head, query_pos, key_pos]
        record(p, "softmax over key positions", scores, pattern, SC, SC, self.hook_pattern)

        zt = self.dropout(pattern) @ vt  # [batch, head, query_pos, d_head]
        record(p, "weighted sum: pattern @ V", [pattern, vt], zt, [SC, KT_ALL], QT)
        z = zt.transpose(1, 2)  # [batch, query_pos, head, d_head]
        record(p, "transpose back to positions-first", zt, z, QT, QH)
        z = self.hook_z(z.contiguous())
        record(p, "contiguous (copy into a dense layout)", z, z, QH, QH, self.hook_z)
        merged = z.view(B, Lq, H * dh)  # [batch, query_pos, d_model]
        record(p, "merge heads: view", z, merged, QH, XQ)
        out = self.hook_out(self.W_o(merged))  # [batch, query_pos, d_model]
        record(p, "output projection W_o", merged, out, XQ, XQ, self.hook_out)
        return out
