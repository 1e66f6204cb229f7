"""Norm-based attention (model/lab/flow.py): α_ij · ‖f_h(x_j)‖, rows renormalised, equals the product
computed here from the model's weights and full tensors, on a tiny model of every family."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.lab.flow import ValueWeightedStack, reweight_rows, weighted_attention
from model.network.attention import MultiHeadAttention
from model.network.recorded import record_attention
from model.network.transformer import Transformer
from model.run.analysis import analyze
from tests.conftest import tiny_config

transformers = pytest.importorskip("transformers")

DECODER_FAMILIES = ["gpt2", "llama", "qwen2", "qwen3", "olmo2", "gpt_neox", "gemma3_text", "phi3"]
ENCODER_FAMILIES = ["roberta", "distilbert"]


def _reference(model, *inputs) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """Per attention module path: α_ij ‖f_h(x_j)‖ row-normalised [head, q, k], computed from the module's
    input x, W_V, b_V, W_O and the pattern, with every f_h(x_j) built; and what the module recorded."""
    seen: dict[str, torch.Tensor] = {}
    handles = [m.register_forward_pre_hook(lambda mod, args, path=path: seen.__setitem__(path, args[1]))
               for path, m in model.named_modules() if isinstance(m, MultiHeadAttention)]
    try:
        with record_attention() as recorded:
            _, cache = model.run_with_cache(*inputs)
    finally:
        for h in handles:
            h.remove()
    expected = {}
    for path, x_kv in seen.items():
        attn = model.get_submodule(path)
        H, Hkv, dh = attn.n_heads, attn.n_kv_heads, attn.d_head
        v = attn.W_v(x_kv[0]).view(-1, Hkv, dh).repeat_interleave(H // Hkv, dim=1)  # [key, head, d_head]
        w_o = attn.W_o.weight.view(-1, H, dh)  # [d_model, head, d_head]
        f = torch.einsum("khe,dhe->hkd", v, w_o)  # [head, key, d_model]: every f_h(x_j)
        pattern = cache[f"{path}.hook_pattern"][0]  # [head, q, k]
        moved = (pattern[..., None] * f[:, None]).norm(dim=-1)  # ‖α_ij f_h(x_j)‖ [head, q, k]
        total = moved.sum(-1, keepdim=True)
        expected[path] = torch.where(total > 0, moved / total.clamp_min(1e-30), 0.0).detach().numpy()
    return expected, recorded


def _check(model, *inputs) -> float:
    expected, recorded = _reference(model, *inputs)
    worst = 0.0
    for path, want in expected.items():
        got = np.asarray(ValueWeightedStack([recorded[path]]))[0]
        np.testing.assert_allclose(got, want, atol=2e-5, err_msg=path)
        np.testing.assert_allclose(got.sum(-1)[want.sum(-1) > 0], 1.0, atol=1e-5)
        worst = max(worst, float(np.abs(got - want).max()))
    return worst


def test_translation_model_with_cross_attention():
    torch.manual_seed(0)
    model = Transformer(tiny_config(n_kv_heads=2)).eval()
    src, tgt = torch.randint(4, 40, (1, 7)), torch.randint(4, 40, (1, 5))
    assert _check(model, src, tgt) < 2e-5
    expected, recorded = _reference(model, src, tgt)
    assert any("cross_attn" in p for p in expected)


def test_post_ln_encoder_with_biases():
    torch.manual_seed(1)
    model = Transformer(tiny_config(encoder_only=True, n_dec_layers=0, norm_first=False, activation="gelu",
                                    scale_embeddings=False, pos_encoding="learned")).eval()
    assert _check(model, torch.randint(4, 40, (1, 9))) < 2e-5


@pytest.mark.parametrize("kind", DECODER_FAMILIES)
def test_every_decoder_family(kind, tmp_path):
    from model.store.formats.hf_decoder import HF_DECODER
    from tests.model.store.test_hf_decoder import VOCAB, _save

    _save(kind, tmp_path)
    model = HF_DECODER.load(tmp_path).model
    ids = torch.randint(3, VOCAB, (1, 10), generator=torch.Generator().manual_seed(1))
    assert _check(model, ids) < 2e-5


@pytest.mark.parametrize("family", ENCODER_FAMILIES)
def test_every_encoder_family(family, tmp_path):
    from model.store.user_folders import load_user_model
    from tests.model.store.test_encoder_families import _folder

    folder, _ = _folder(tmp_path, family)
    bundle = load_user_model(folder)
    ids = torch.tensor([bundle.task.prepare("The bank raised rates.", 32, None).source_ids])
    assert _check(bundle.model, ids) < 2e-5


def test_an_analysis_gives_the_same_weighted_pattern_as_a_stack_and_as_kept_arrays(tmp_path):
    from model.store.formats.hf_decoder import HF_DECODER
    from tests.model.store.test_hf_decoder import _save

    _save("llama", tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    result = analyze(bundle, "w4 w5 w6 w7 w8", max_new=2)  # every hook kept: the arrays
    stacked = ValueWeightedStack(result.layer_inputs("decoder"))  # what a long input's pages get
    kept = weighted_attention(result, "decoder", result.attention("decoder"))
    assert isinstance(kept, np.ndarray)
    np.testing.assert_allclose(np.asarray(stacked), kept, atol=1e-6)
    one = weighted_attention(result, "decoder", result.attention("decoder")[1, 2][None, None], heads=(1, 2))
    np.testing.assert_allclose(one[0, 0], kept[1, 2], atol=1e-6)
    pattern = result.attention("decoder")
    assert not np.allclose(kept, pattern, atol=1e-3)  # the option changes what is shown


def test_reweight_rows_keeps_empty_rows_at_zero():
    pattern = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    out = reweight_rows(pattern, np.array([1.0, 3.0, 2.0]))
    np.testing.assert_allclose(out, [[0.25, 0.75, 0.0], [0.0, 0.0, 0.0]])
