"""RMSNorm's one torch call against its formula."""

import torch

from model.network.norms import RMSNorm


def test_rms_norm_is_its_formula_within_float32_rounding():
    g = torch.Generator().manual_seed(0)
    norm = RMSNorm(576, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(576, generator=g))
    for shape, scale in (((1, 1, 576), 1.0), ((2, 37, 576), 1.0), ((1, 5, 576), 1e-4), ((1, 5, 576), 1e4)):
        x = torch.randn(shape, generator=g) * scale
        formula = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + norm.eps) * norm.weight
        torch.testing.assert_close(norm(x), formula, rtol=1e-6, atol=1e-6)
    x = torch.randn(3, 576, generator=g, requires_grad=True)  # training differentiates through it
    norm(x).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()
