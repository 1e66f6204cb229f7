"""The normalisation layers: LayerNorm (torch's) and RMSNorm, made from the config by :func:`make_norm`."""

from __future__ import annotations

import torch
from torch import nn

from .config import ModelConfig


class RMSNorm(nn.Module):
    """x / rms(x) * g: LayerNorm without mean-centring or bias."""

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x * rsqrt(mean(x^2) + eps) * weight in one torch call (equal to the three-step form where tested)
        return nn.functional.rms_norm(x, self.weight.shape, self.weight, self.eps)


def make_norm(cfg: ModelConfig, width: int | None = None) -> nn.Module:
    """The config's norm over ``width`` features (d_model unless said: QK-norm's d_head, ...)."""
    d = cfg.d_model if width is None else width
    if cfg.norm == "rmsnorm":
        return RMSNorm(d, cfg.norm_eps)
    return nn.LayerNorm(d, eps=cfg.norm_eps)
