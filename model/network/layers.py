"""Encoder and decoder blocks: attention + feed-forward, each wrapped in residual + norm."""

from __future__ import annotations

import torch
from torch import nn

from .attention import MultiHeadAttention
from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookPoint
from .norms import RMSNorm, make_norm  # noqa: F401 (RMSNorm: imported from here too)
from .trace import record

_ACTIVATIONS = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),  # GPT-2's "gelu_new"
    "silu": nn.SiLU,
}


class FeedForward(nn.Module):
    """Position-wise d_model -> d_ff -> d_model. Gated (cfg.gated_ffn; SwiGLU with "silu"):
    W_out(act(W_gate x) * W_in x), W_in being the "up" projection."""

    def __init__(self, cfg: ModelConfig, pos: str):
        super().__init__()
        bias = cfg.ffn_bias
        self.W_gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=bias) if cfg.gated_ffn else None
        self.W_in = nn.Linear(cfg.d_model, cfg.d_ff, bias=bias)
        self.W_out = nn.Linear(cfg.d_ff, cfg.d_model, bias=bias)
        self.act = _ACTIVATIONS[cfg.activation]()
        self.dropout = Dropout(cfg.dropout)
        self.hook_hidden = HookPoint()  # [batch, pos, d_ff], after the activation
        self.path = ""
        self.pos = pos  # trace symbol of the position axis: "L_src" or "L_tgt"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outer, inner = ("B", self.pos, "d_model"), ("B", self.pos, "d_ff")  # symbolic shapes for the trace
        if self.W_gate is None:
            h = self.hook_hidden(self.act(self.W_in(x)))  # [batch, pos, d_ff]
            record(self.path, "FFN up + activation", x, h, outer, inner, self.hook_hidden)
        else:
            h = self.hook_hidden(self.act(self.W_gate(x)) * self.W_in(x))  # [batch, pos, d_ff]
            record(self.path, "FFN gate: activation(gate) * up", x, h, outer, inner, self.hook_hidden)
        out = self.W_out(self.dropout(h))  # [batch, pos, d_model]
        record(self.path, "FFN down", h, out, inner, outer)
        return out


class _Block(nn.Module):
    """Shared residual wiring. Pre-LN: x + f(norm(x)). Post-LN (paper): norm(x + f(x)).
    Pre-LN with cfg.branch_norm "after" (OLMo 2): x + norm(f(x)); "both" (Gemma 3): x + post(f(norm(x))),
    post being the branch's second norm (post_norm1, post_norm2, ...)."""

    norm_first: bool
    residual: bool = True  # False (a trained-in fault): no skip connection, the sublayer's output replaces x
    branch_norm: str = "before"
    pos: str
    path: str

    def _sublayer(self, x: torch.Tensor, norm: nn.Module, f, label: str) -> torch.Tensor:
        sym = ("B", self.pos, "d_model")
        norm_name = next(n for n, m in self.named_children() if m is norm)
        if self.norm_first and self.branch_norm != "before":
            return self._normed_branch(x, norm, norm_name, f, label)
        if self.norm_first:
            normed = norm(x)
            record(self.path, f"{norm_name} (before {label})", x, normed, sym, sym)
            if not self.residual:
                y = self.dropout(f(normed))
                record(self.path, f"no residual add after {label} (trained without it)", x, y, sym, sym)
                return y
            y = x + self.dropout(f(normed))
            record(self.path, f"residual add after {label}", x, y, sym, sym)
            return y
        if self.residual:
            summed = x + self.dropout(f(x))
            record(self.path, f"residual add after {label}", x, summed, sym, sym)
        else:
            summed = self.dropout(f(x))
            record(self.path, f"no residual add after {label} (trained without it)", x, summed, sym, sym)
        y = norm(summed)
        record(self.path, f"{norm_name} (after {label})", summed, y, sym, sym)
        return y


    def _normed_branch(self, x: torch.Tensor, norm: nn.Module, norm_name: str, f, label: str) -> torch.Tensor:
        """x + norm(f(x)) ("after") or x + post(f(norm(x))) ("both"); the residual fault as above."""
        sym = ("B", self.pos, "d_model")
        inner = x
        if self.branch_norm == "both":
            inner = norm(x)
            record(self.path, f"{norm_name} (before {label})", x, inner, sym, sym)
            post_name = "post_" + norm_name
            norm = getattr(self, post_name)
        else:
            post_name = norm_name
        out = f(inner)
        normed = norm(out)
        record(self.path, f"{post_name} (after {label}, before the residual add)", out, normed, sym, sym)
        if not self.residual:
            y = self.dropout(normed)
            record(self.path, f"no residual add after {label} (trained without it)", x, y, sym, sym)
            return y
        y = x + self.dropout(normed)
        record(self.path, f"residual add after {label}", x, y, sym, sym)
        return y

    def _post_norms(self, cfg: ModelConfig, names: tuple[str, ...]) -> None:
        """branch_norm "both": each branch's second norm (post_norm1, ...), after its sublayer."""
        if cfg.branch_norm == "both":
            for name in names:
                setattr(self, "post_" + name, make_norm(cfg))

    def _parallel(self, x: torch.Tensor, attend, label: str) -> torch.Tensor:
        """cfg.parallel_residual (GPT-NeoX): x + attn(norm1(x)) + ffn(norm2(x)), both from the same x.
        hook_resid_mid holds x + attention's output; the FFN's output is added to it."""
        sym = ("B", self.pos, "d_model")
        normed1 = self.norm1(x)
        record(self.path, f"norm1 (before {label})", x, normed1, sym, sym)
        normed2 = self.norm2(x)
        record(self.path, "norm2 (before FFN, from the same input: parallel)", x, normed2, sym, sym)
        mid = self.hook_resid_mid(x + self.dropout(attend(normed1)))
        record(self.path, f"residual add after {label}", x, mid, sym, sym, self.hook_resid_mid)
        y = mid + self.dropout(self.mlp(normed2))
        record(self.path, "residual add of FFN (parallel: its input was the block's input)", mid, y, sym, sym)
        return self.hook_resid_post(y)


class EncoderBlock(_Block):
    def __init__(self, cfg: ModelConfig, layer: int = 0):
        super().__init__()
        self.norm_first, self.pos, self.path = cfg.norm_first, "L_src", ""
        self.residual = cfg.residual
        rotary, relative = cfg.pos_encoding == "rope", cfg.pos_encoding == "relative"
        # layer: its index; the first holds a relative position bias (T5) that the others read
        self.attn = MultiHeadAttention(cfg, "L_src", "L_src", causal=False, rotary=rotary, layer=layer,
                                       relative=relative)
        self.mlp = FeedForward(cfg, "L_src")
        self.norm1, self.norm2 = make_norm(cfg), make_norm(cfg)
        self.branch_norm, self.parallel = cfg.branch_norm, cfg.parallel_residual
        self._post_norms(cfg, ("norm1", "norm2"))
        self.dropout = Dropout(cfg.dropout)
        self.hook_resid_pre = HookPoint()  # [batch, pos, d_model]
        self.hook_resid_mid = HookPoint()
        self.hook_resid_post = HookPoint()

    def forward(self, x: torch.Tensor, src_pad: torch.Tensor | None) -> torch.Tensor:
        x = self.hook_resid_pre(x)  # [batch, src_pos, d_model]
        if self.parallel:
            return self._parallel(x, lambda h: self.attn(h, h, src_pad), "self-attention")
        x = self.hook_resid_mid(
            self._sublayer(x, self.norm1, lambda h: self.attn(h, h, src_pad), "self-attention")
        )
        return self.hook_resid_post(self._sublayer(x, self.norm2, self.mlp, "FFN"))


class DecoderBlock(_Block):
    def __init__(self, cfg: ModelConfig, layer: int = 0):
        super().__init__()
        self.norm_first, self.pos, self.path = cfg.norm_first, "L_tgt", ""
        self.residual = cfg.residual
        rotary = cfg.pos_encoding == "rope"
        # layer: its index, for a local layer's sliding window and RoPE (Gemma 3's local and global layers)
        self.self_attn = MultiHeadAttention(cfg, "L_tgt", "L_tgt", causal=True, rotary=rotary, layer=layer,
                                            relative=cfg.pos_encoding == "relative")
        # A decoder-only model (cfg.decoder_only) has no source: no cross-attention, and norm2 is the
        # FFN's norm (GPT-2's ln_2, Llama's post_attention_layernorm).
        cross = not cfg.decoder_only
        # Positions of source and target are unrelated, so no rotation (nor relative bias) in cross-attention.
        self.cross_attn = (
            MultiHeadAttention(cfg, "L_tgt", "L_src", causal=False, rotary=False) if cross else None
        )
        self.mlp = FeedForward(cfg, "L_tgt")
        self.norm1, self.norm2 = make_norm(cfg), make_norm(cfg)
        if cross:
            self.norm3 = make_norm(cfg)
        self.branch_norm, self.parallel = cfg.branch_norm, cfg.parallel_residual
        self._post_norms(cfg, ("norm1", "norm2", "norm3") if cross else ("norm1", "norm2"))
        self.dropout = Dropout(cfg.dropout)
        self.hook_resid_pre = HookPoint()
        self.hook_resid_mid = HookPoint()  # after masked self-attention
        if cross:
            self.hook_resid_mid2 = HookPoint()  # after cross-attention
        self.hook_resid_post = HookPoint()

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor | None,
        tgt_pad: torch.Tensor | None,
        src_pad: torch.Tensor | None,
        cache: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        y = self.hook_resid_pre(y)  # [batch, tgt_pos, d_model]
        attend_self = lambda h: self.self_attn(h, h, tgt_pad, cache)
        if self.parallel:  # decoder-only (the config checks it): no cross-attention
            return self._parallel(y, attend_self, "masked self-attention")
        y = self.hook_resid_mid(self._sublayer(y, self.norm1, attend_self, "masked self-attention"))
        if self.cross_attn is None:  # decoder-only
            return self.hook_resid_post(self._sublayer(y, self.norm2, self.mlp, "FFN"))
        # while decoding, the block's cache also keeps the encoder output's keys and values
        attend_source = lambda h: self.cross_attn(h, memory, src_pad, query_padding=tgt_pad,
                                                  memory_cache=cache)
        y = self.hook_resid_mid2(self._sublayer(y, self.norm2, attend_source, "cross-attention"))
        return self.hook_resid_post(self._sublayer(y, self.norm3, self.mlp, "FFN"))
