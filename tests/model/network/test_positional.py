"""RoPE's one complex product against the rotation written out with real numbers."""

import pytest
import torch

from model.network.positional import apply_rope, rope_angles, rope_turns, rotate_pairs


def _written_out(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    even, odd = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[:, None, :], sin[:, None, :]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


@pytest.mark.parametrize("shape, start", [((1, 1, 9, 64), 1023), ((2, 37, 3, 64), 0), ((1, 5, 4, 8), 7)])
def test_the_complex_product_is_the_real_rotation(shape, start):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g)
    cos, sin = rope_angles(start + shape[1], shape[-1], 10000.0, start=start)
    torch.testing.assert_close(apply_rope(x, cos, sin), _written_out(x, cos, sin), rtol=1e-6, atol=1e-6)
    # the rotation keeps each pair's length and turns position 0 not at all
    lengths = lambda t: t.unflatten(-1, (-1, 2)).norm(dim=-1)  # noqa: E731
    torch.testing.assert_close(lengths(apply_rope(x, cos, sin)), lengths(x), rtol=1e-5, atol=1e-5)
    if start == 0:
        assert torch.equal(apply_rope(x, cos, sin)[:, 0], x[:, 0])


def test_a_strided_input_and_half_precision_rotate_alike():
    g = torch.Generator().manual_seed(1)
    wide = torch.randn(2, 6, 4, 24, generator=g)
    part = wide[..., :16]  # partial rotary: the first dims of each head, a strided view
    cos, sin = rope_angles(6, 16, 500.0)
    torch.testing.assert_close(apply_rope(part, cos, sin), _written_out(part, cos, sin), rtol=1e-6, atol=1e-6)
    half = part.half()  # no complex half on every device: the real form
    out = rotate_pairs(half, rope_turns(cos, sin))
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), _written_out(part, cos, sin), rtol=2e-3, atol=2e-3)


def test_gradients_pass_the_rotation():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(1, 5, 2, 8, generator=g, requires_grad=True)
    cos, sin = rope_angles(5, 8, 10000.0)
    apply_rope(x, cos, sin).pow(2).sum().backward()
    # a rotation keeps lengths, so d(sum of squares)/dx = 2x
    torch.testing.assert_close(x.grad, 2 * x.detach(), rtol=1e-5, atol=1e-5)
