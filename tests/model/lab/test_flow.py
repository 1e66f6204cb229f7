"""Norm-based attention (model/lab/flow.py): α_ij · ‖f_h(x_j)‖, rows renormalised, equals the product
computed here from the model's weights and full tensors, on a tiny model of every family."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.lab.flow import ValueWeightedStack, reweight_rows, weighted_attention
from model.network.attention import MultiHeadAttention
from model.network.kinds import hook_name
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
    handles = [
        m.register_forward_pre_hook(lambda mod, args, path=path: seen.__setitem__(path, args[1]))
        for path, m in model.named_modules()
        if isinstance(m, MultiHeadAttention)
    ]
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
    model = Transformer(
        tiny_config(
            encoder_only=True,
            n_dec_layers=0,
            norm_first=False,
            activation="gelu",
            scale_embeddings=False,
            pos_encoding="learned",
        )
    ).eval()
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


# ----------------------------------------------------------------------------- the information-flow graph

FLOW_FAMILIES = ["gpt2", "llama", "qwen2", "qwen3", "mistral", "phi3", "gpt_neox_serial"]
NOT_FLOW = {"gemma3_text": "post_norm", "olmo2": "post_norm", "gpt_neox": "parallel"}


def _reference_graph(model, ids: list[int], position: int, threshold: float) -> dict:
    """{(layer, kind, source, target): weight} straight from the definitions with full tensors: every
    layer's decomposed attention [query, key, head, d_model] from the hooks, every row's contributions,
    thresholded and renormalised, the full graph, then every edge above the threshold reached from the
    chosen position's last state (a walk down the reversed graph)."""
    from model.lab.flow import EPSILON

    x = torch.tensor([ids[: position + 1]])
    with torch.no_grad():
        _, cache = model.run_with_cache(x)
    n_layers, L = model.cfg.n_dec_layers, x.shape[1]

    def contributions(parts, whole):  # parts [n, ..., d], whole [..., d] -> [n, ...], summing to 1
        d = (whole.abs().sum(-1) - (whole - parts).abs().sum(-1)).clamp_min(EPSILON)
        return d / d.sum(0, keepdim=True)

    def cut(c_parts, c_res):  # threshold, renormalise
        c_parts, c_res = c_parts * (c_parts > threshold), c_res * (c_res > threshold)
        total = c_res + c_parts.reshape(-1, c_parts.shape[-1]).sum(0)  # over every part of each query
        return c_parts / total, c_res / total

    full: dict = {}  # (node from, node to) -> weight; nodes: ("I", layer, pos) with layer -1 = embedding
    for layer in range(n_layers):
        block = f"decoder.blocks.{layer}"
        pre, mid = cache[f"{block}.hook_resid_pre"][0], cache[f"{block}.hook_resid_mid"][0]
        post = cache[f"{block}.hook_resid_post"][0]
        attn = model.decoder.blocks[layer].self_attn
        H, dh = attn.n_heads, attn.d_head
        v = cache[f"{block}.self_attn.hook_v"][0].repeat_interleave(H // attn.n_kv_heads, dim=1)
        pattern = cache[f"{block}.self_attn.hook_pattern"][0]  # [head, q, k]
        w_o = attn.W_o.weight.detach().view(-1, H, dh)
        decomposed = torch.einsum("hqk,khe,dhe->qkhd", pattern, v, w_o)  # [q, k, head, d_model]
        parts = decomposed.permute(1, 2, 0, 3).reshape(L * H, L, -1)  # [(key, head), q, d]
        c = contributions(torch.cat([parts, pre[None]]), mid)
        c_attn, c_res = cut(c[:-1].view(L, H, L), c[-1])  # [key, head, q], [q]
        for q in range(L):
            for k in range(L):
                w = float(c_attn[k, :, q].sum())
                full[(("I", layer - 1, k), ("A", layer, q))] = (
                    full.get((("I", layer - 1, k), ("A", layer, q)), 0) + w
                )
            full[(("I", layer - 1, q), ("A", layer, q))] += float(c_res[q])
        c = contributions(torch.stack([post - mid, mid]), post)
        c_mlp, c_res = cut(c[:1], c[1])
        for q in range(L):
            full[(("A", layer, q), ("M", layer, q))] = float(c_mlp[0, q])
            full[(("M", layer, q), ("I", layer, q))] = float(c_mlp[0, q])
            full[(("A", layer, q), ("I", layer, q))] = float(c_res[q])
    into: dict = {}
    for (u, w), weight in full.items():
        if weight > threshold:
            into.setdefault(w, []).append((u, weight))
    seen, todo, kept = set(), [("I", n_layers - 1, position)], {}
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for u, weight in into.get(node, []):
            kept[(u, node)] = weight
            todo.append(u)
    return kept


def _as_reference_edges(graph) -> dict:
    """Our edges in the reference's shape: the residual and a token's own attention meet at one edge."""
    out: dict = {}
    for i in range(len(graph.layer)):
        layer, kind, s, t, w = (
            int(graph.layer[i]),
            int(graph.kind[i]),
            int(graph.source[i]),
            int(graph.target[i]),
            float(graph.importance[i]),
        )
        if kind in (0, 1):
            key = (("I", layer - 1, s), ("A", layer, t))
        elif kind == 2:
            out[(("A", layer, t), ("M", layer, t))] = w
            key = (("M", layer, t), ("I", layer, t))
        else:
            key = (("A", layer, t), ("I", layer, t))
        out[key] = out.get(key, 0.0) + w
    return out


def _compare(model, ids, position, threshold=0.04) -> float:
    from model.lab.flow import build_flow

    graph = build_flow(model, ids, [f"t{i}" for i in ids], position, threshold)
    want = _reference_graph(model, ids, position, threshold)
    got = _as_reference_edges(graph)
    assert set(got) == set(want), sorted(set(got) ^ set(want))[:6]
    worst = max(abs(got[k] - want[k]) for k in want)
    assert worst < 1e-4
    assert len(want) > 3
    return worst


@pytest.mark.parametrize("kind", FLOW_FAMILIES)
def test_flow_graph_equals_the_reference_on_every_pre_ln_family(kind, tmp_path):
    from model.store.formats.hf_decoder import HF_DECODER
    from tests.model.store.test_hf_decoder import VOCAB, _save

    _save(kind, tmp_path)
    model = HF_DECODER.load(tmp_path).model
    ids = torch.randint(3, VOCAB, (12,), generator=torch.Generator().manual_seed(2)).tolist()
    _compare(model, ids, 11)
    _compare(model, ids, 6, threshold=0.02)


def test_flow_graph_of_our_own_pre_ln_decoder():
    torch.manual_seed(3)
    model = Transformer(tiny_config(decoder_only=True, n_enc_layers=0, n_dec_layers=3)).eval()
    ids = torch.randint(4, 40, (14,), generator=torch.Generator().manual_seed(4)).tolist()
    _compare(model, ids, 13)


@pytest.mark.parametrize("kind,reason", sorted(NOT_FLOW.items()))
def test_the_graph_refuses_what_does_not_add_up(kind, reason, tmp_path):
    from model.lab.flow import FlowNotApplicable, build_flow, flow_problem
    from model.store.formats.hf_decoder import HF_DECODER
    from tests.model.store.test_hf_decoder import _save

    _save(kind, tmp_path)
    model = HF_DECODER.load(tmp_path).model
    assert flow_problem(model.cfg) == reason
    with pytest.raises(FlowNotApplicable):
        build_flow(model, [3, 4, 5], ["a", "b", "c"], 2, 0.04)


def test_post_ln_encoders_and_translation_models_are_refused():
    from model.lab.flow import flow_problem

    assert flow_problem(tiny_config()) is None  # Pre-LN translation: tests/model/lab/test_flow_seq2seq.py
    assert flow_problem(tiny_config(norm_first=False)) == "post_ln"
    assert flow_problem(tiny_config(encoder_only=True, n_dec_layers=0, norm_first=False)) == "encoder"
    assert flow_problem(tiny_config(decoder_only=True, n_enc_layers=0, norm_first=False)) == "post_ln"


def test_knocking_out_an_edge_changes_the_prediction_as_a_full_pass_does(tmp_path):
    from model.lab.flow import _knocked_out, knockout_effects, spearman

    torch.manual_seed(5)
    model = Transformer(tiny_config(decoder_only=True, n_enc_layers=0, n_dec_layers=2)).eval()
    ids = [5, 9, 11, 7, 20, 13]
    (effect,) = knockout_effects(model, ids, 5, 3, [(1, 2, 5)])
    fn = _knocked_out(1, 2, 5)
    with torch.no_grad(), model.hooks([(hook_name("decoder", 1, "pattern"), lambda p, point: fn(p))]):
        edited = torch.log_softmax(model(torch.tensor([ids]))[0, -1].double(), -1)[3]
    with torch.no_grad():
        intact = torch.log_softmax(model(torch.tensor([ids]))[0, -1].double(), -1)[3]
    assert abs(effect - float(edited - intact)) < 1e-6 and abs(effect) > 1e-4
    assert spearman(np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40])) == pytest.approx(1.0)
    assert spearman(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)


@pytest.mark.slow  # loads SmolLM2 (whole suite only)
def test_smollm2_sink_heads_lose_part_of_their_first_token_share():
    """Measured on this paragraph (61 tokens): 101 of SmolLM2's 270 heads put more than half of their
    weight on the first token (mean over rows 1..); that share is 0.738 by weight and 0.496 by
    weight × ‖value‖ (median loss 34%)."""
    from model.network.attention_stack import AttentionStack
    from model.run.analysis import attention_only
    from model.store.registry import load_model

    text = ("The history of the city begins in the twelfth century, when a small market grew up on the "
            "river. Merchants came from the north and the south, and by the fifteenth century the town had a "
            "cathedral, a university and a harbour that traded wool, wine and salt with half of Europe.")
    result = analyze(load_model("smollm2"), text, max_new=1, keep=attention_only)
    layers = result.layer_inputs("decoder")
    weight = np.asarray(AttentionStack(layers))[:, :, 1:, 0].mean(-1)  # [layer, head]
    norm = np.asarray(ValueWeightedStack(layers))[:, :, 1:, 0].mean(-1)
    sinks = weight > 0.5
    assert sinks.sum() > 50
    assert norm[sinks].mean() < weight[sinks].mean() - 0.15
    shares = f"{weight[sinks].mean():.3f} -> {norm[sinks].mean():.3f}"
    print(f"sink heads {int(sinks.sum())}: first-token share {shares}")
