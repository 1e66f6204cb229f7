"""What the pages show for Qwen3, Gemma 3, Pythia (GPT-NeoX), Phi-3 and OLMo 2, checked against the
loaded modules and the recorded analysis: each layer's own mask (Gemma 3's local and global layers,
Phi-3's window everywhere), the worked example's QK-norm and (partial) rotation by hand, the block's
norms and parameter count, the positional page's rotation, and the exported deck's scaling.

Tiny seeded random models are built from transformers configs (tests/model/store/test_hf_decoder.py),
saved with ``save_pretrained`` and opened through our folder loader.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

import viz  # noqa: E402
from model.lab.families import family_column  # noqa: E402
from model.lab.masks import padded_batch, sliding_windows  # noqa: E402
from model.lab.worked import layer_tensors_for  # noqa: E402
from model.network.trace import parameter_counts  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.formats.hf_decoder import HF_DECODER  # noqa: E402
from tests.model.store.test_hf_decoder import _save  # noqa: E402

FAMILIES = ("qwen3", "gemma3_text", "gpt_neox", "phi3", "olmo2")
#: Longer than the tiny models' window of 4, so that the window cuts.
TEXT = "w5 w17 w3 w40 w8 w9 w11"
OTHER = "w6 w7"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    loaded = {}
    for kind in FAMILIES:
        folder = tmp_path_factory.mktemp(kind)
        _save(kind, folder)
        loaded[kind] = HF_DECODER.load(folder)
    return loaded


def _recorded_masks(analysis) -> list[np.ndarray]:
    """Each decoder layer's mask as the analysis recorded its softmax inputs (AttentionInputs)."""
    return [inputs.mask().numpy() for inputs in analysis.layer_inputs("decoder")]


# --------------------------------------------------------------------------- masks


@pytest.mark.parametrize("kind", FAMILIES)
def test_each_layers_mask_is_the_one_its_softmax_saw(bundles, kind):
    bundle = bundles[kind]
    analysis = analyze(bundle, TEXT, max_new=4)
    recorded = _recorded_masks(analysis)
    n = len(analysis.target_tokens)
    assert n > 4 + 1
    patterns = np.asarray(analysis.attention("decoder"))  # [layer, head, query, key]
    for layer, mask in enumerate(recorded):
        batch = padded_batch(bundle, [TEXT, OTHER], kind="decoder", layer=layer, max_new=4, with_scores=False)
        assert batch.window == analysis.layer_inputs("decoder")[layer].window
        np.testing.assert_array_equal(batch.masks["decoder"][0][:n, :n], mask)
        assert not batch.left.padding[0].any()  # A is the longer: left-padded, its mask is the layer's own
        np.testing.assert_array_equal(batch.left.applied[0], mask)
        assert (patterns[layer][:, mask] == 0).all() and (patterns[layer][:, ~mask] > 0).all()
        # the masked cells of the padded batch's own recorded weights are 0 too
        assert (batch.head_pattern("decoder", 0, layer, 0)[batch.masks["decoder"][0]] == 0).all()
    windows = sliding_windows(bundle, n)
    expected = {"gemma3_text": [4, 0, 4], "phi3": [4, 4]}.get(kind)
    if expected is None:
        assert windows is None and not any(i.window for i in analysis.layer_inputs("decoder"))
        return
    assert windows.windows == expected == [i.window for i in analysis.layer_inputs("decoder")]
    for layer, window in enumerate(windows.windows):
        np.testing.assert_array_equal(windows.masks[window], recorded[layer])
    local = windows.masks[4]
    assert local[n - 1, : n - 4].all() and not local[n - 1, n - 4 :].any()  # the last query: its last 4 keys
    assert windows.global_layers == ([1] if kind == "gemma3_text" else [])


def test_family_column_draws_the_first_layers_window(bundles):
    bundle = bundles["gemma3_text"]
    column = family_column(bundle, TEXT)
    analysis = analyze(bundle, TEXT, max_new=len(column.target_tokens) - len(TEXT.split()) - 1)
    assert column.target_tokens == analysis.target_tokens
    np.testing.assert_array_equal(column.masks["decoder"], _recorded_masks(analysis)[0])
    assert column.masks["decoder"][-1, 0]  # the first layer is local: the last query cannot see key 0


# --------------------------------------------------------------------------- attention by hand


@pytest.mark.parametrize("kind", ["qwen3", "gemma3_text", "olmo2"])
def test_worked_qk_norm_by_hand_is_the_recorded_one(bundles, kind):
    bundle = bundles[kind]
    cfg = bundle.cfg
    for layer in range(cfg.n_dec_layers):
        data = layer_tensors_for(bundle, TEXT, None, "decoder", layer, max_new=2)
        norm = data.qk_norm
        assert norm.over == {"olmo2": "full"}.get(kind, "head") and norm.kind == "rmsnorm"
        module = bundle.model.decoder.blocks[layer].self_attn
        np.testing.assert_array_equal(norm.q_weight, module.q_norm.weight.detach().numpy())
        d = data.d_head
        for query in range(data.q.shape[0]):
            for head in range(data.n_heads):
                if norm.over == "full":
                    done = viz.norm_by_hand(data.q_unrotated[query].reshape(-1), norm.q_weight, norm.eps)
                    mine = done.normed[head * d:(head + 1) * d]
                else:
                    mine = viz.norm_by_hand(data.q_unrotated[query, head], norm.q_weight, norm.eps).normed
                np.testing.assert_allclose(mine, data.q_normed[query, head], rtol=0, atol=1e-5)
                # what RoPE turned is the normed q, and the worked row still equals the pattern
                turned = viz.rotate_by_hand(data.q_before_rotation[query, head], query, data.rotary_dims,
                                            data.rope_base, data.rope_factor)
                np.testing.assert_allclose(turned.rotated, data.q[query, head], rtol=0, atol=1e-5)
                row = viz.work_row(data.q, data.k, data.v, head, query, causal=True, scale=data.divisor,
                                   window=data.window)
                np.testing.assert_allclose(row.weights, data.pattern[head, query], rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind,rotated", [("gpt_neox", 4), ("phi3", 4), ("qwen3", 16)])
def test_worked_rotation_turns_only_the_rotary_dims(bundles, kind, rotated):
    bundle = bundles[kind]
    data = layer_tensors_for(bundle, TEXT, None, "decoder", 1, max_new=2)
    assert data.rotary_dims == rotated == bundle.cfg.rotary_dims
    assert (data.qk_norm is None) == (kind != "qwen3")
    for query in range(data.q.shape[0]):
        for head in range(data.n_heads):
            before = data.q_before_rotation[query, head]
            turned = viz.rotate_by_hand(before, query, data.rotary_dims, data.rope_base, data.rope_factor)
            np.testing.assert_allclose(turned.rotated, data.q[query, head], rtol=0, atol=1e-5)
            np.testing.assert_array_equal(data.q[query, head, rotated:], before[rotated:])
    if rotated < data.d_head and data.q.shape[0] > 1:  # the turned dims did move
        assert not np.allclose(data.q[1, 0, :rotated], data.q_before_rotation[1, 0, :rotated])


def test_worked_gemma3_rotation_uses_each_layers_base_and_scaling(bundles):
    bundle = bundles["gemma3_text"]
    local = layer_tensors_for(bundle, TEXT, None, "decoder", 0, max_new=2)
    global_ = layer_tensors_for(bundle, TEXT, None, "decoder", 1, max_new=2)
    assert (local.rope_base, local.rope_factor) == (100.0, 1.0)
    assert (global_.rope_base, global_.rope_factor) == (500.0, 2.0)
    for data in (local, global_):
        turned = viz.rotate_by_hand(data.q_before_rotation[3, 1], 3, data.rotary_dims, data.rope_base,
                                    data.rope_factor)
        np.testing.assert_allclose(turned.rotated, data.q[3, 1], rtol=0, atol=1e-5)


def test_norm_and_rotation_by_hand_refuse_what_does_not_fit():
    with pytest.raises(ValueError, match="weight"):
        viz.norm_by_hand(np.ones(4), np.ones(3), 1e-6)
    with pytest.raises(ValueError, match="kind"):
        viz.norm_by_hand(np.ones(4), np.ones(4), 1e-6, kind="batchnorm")
    with pytest.raises(ValueError, match="rotary_dims"):
        viz.rotate_by_hand(np.ones(4), 1, 3)
    x = torch.randn(1, 5, 1, 8)
    from model.network.positional import apply_rope, rope_angles
    cos, sin = rope_angles(5, 8, 50.0, factor=2.0)
    theirs = apply_rope(x, cos, sin)[0, :, 0].numpy()
    for p in range(5):
        np.testing.assert_allclose(viz.rotate_by_hand(x[0, p, 0].numpy(), p, 8, 50.0, 2.0).rotated, theirs[p],
                                   rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- architecture and model pages


def _count(params) -> int:
    seen, total = set(), 0
    for p in params:
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


#: Each family's wiring, norms per block and QK-norm, as the architecture page names them.
WIRING = {"qwen3": ("pre", {"norm1", "norm2"}, "head"),
          "gemma3_text": ("both", {"norm1", "norm2", "post_norm1", "post_norm2"}, "head"),
          "gpt_neox": ("parallel", {"norm1", "norm2"}, "none"),
          "phi3": ("pre", {"norm1", "norm2"}, "none"), "olmo2": ("after", {"norm1", "norm2"}, "full")}


@pytest.mark.parametrize("kind", FAMILIES)
def test_block_wiring_and_parameter_formula_are_the_modules(bundles, kind):
    from app_support.anatomy import block_parameters, block_wiring, model_parameters

    bundle = bundles[kind]
    cfg, model = bundle.cfg, bundle.model
    block = model.decoder.blocks[0]
    how, lines = block_wiring(cfg)
    wiring, norms, qk = WIRING[kind]
    assert how == wiring and cfg.qk_norm == qk
    named = {name for name, module in block.named_children() if "norm" in name}
    assert named == norms and all(name + "(" in " ".join(lines) for name in named)
    assert len(lines) == (1 if how == "parallel" else 2)
    parts = dict((part, value) for part, _, value in block_parameters(cfg))
    attn, mlp = block.self_attn, block.mlp
    assert parts["attn"] == sum(p.numel() for p in attn.parameters() if p.dim() == 2)
    qk_params = [] if attn.q_norm is None else [*attn.q_norm.parameters(), *attn.k_norm.parameters()]
    assert parts.get("qk_norm", 0) == sum(p.numel() for p in qk_params)
    assert parts.get("attn_bias", 0) == sum(p.numel() for name, p in attn.named_parameters()
                                            if p.dim() == 1 and not name.startswith(("q_norm", "k_norm")))
    assert parts["ffn"] == sum(p.numel() for p in mlp.parameters() if p.dim() == 2)
    assert parts.get("ffn_bias", 0) == sum(p.numel() for p in mlp.parameters() if p.dim() == 1)
    assert parts["norms"] == sum(p.numel() for name in named for p in getattr(block, name).parameters())
    assert sum(parts.values()) == _count(block.parameters())
    assert ("attn_bias" in parts) == (kind == "gpt_neox")  # Pythia's biases; the others have none
    whole = dict((part, value) for part, _, value in model_parameters(cfg))
    assert sum(whole.values()) == _count(model.parameters())
    assert ("unembed" in whole) == (not cfg.tie_embeddings)
    # the model page's treemap: a block's norms in one group (Gemma 3's post norms included)
    counts = parameter_counts(model)
    assert counts["decoder.blocks.0.norms"] == parts["norms"] and sum(counts.values()) == sum(whole.values())


@pytest.mark.parametrize("name", ["default", "induction", "variant-gqa"])
def test_parameter_formula_of_our_own_models(name):
    from app_support.anatomy import block_parameters, block_wiring, model_parameters
    from model.store.registry import load_model

    bundle = load_model(name)
    cfg, model = bundle.cfg, bundle.model
    assert sum(v for *_, v in model_parameters(cfg)) == _count(model.parameters())
    for stack in [s for s in ("encoder", "decoder") if getattr(model, s) is not None]:
        block = getattr(model, stack).blocks[0]
        assert sum(v for *_, v in block_parameters(cfg, stack)) == _count(block.parameters())
        how, lines = block_wiring(cfg, stack)
        named = {n for n, _ in block.named_children() if n.startswith("norm")}
        assert how == "pre" and all(n + "(" in " ".join(lines) for n in named)


# --------------------------------------------------------------------------- positional encoding


@pytest.mark.parametrize("kind", FAMILIES)
def test_each_layers_rotation_is_what_its_hooks_recorded(bundles, kind):
    from model.lab.positional import layer_rotations
    from model.network.kinds import hook_name

    bundle = bundles[kind]
    rotations = layer_rotations(bundle)
    expected = {"gemma3_text": [(16, 100.0, 1.0, 4), (16, 500.0, 2.0, 0), (16, 100.0, 1.0, 4)],
                "gpt_neox": [(4, 500.0, 1.0, 0)] * 2, "phi3": [(4, 500.0, 1.0, 4)] * 2}.get(
        kind, [(bundle.cfg.d_head, 500.0, 1.0, 0)] * 2)
    assert [(r.rotary_dims, r.base, r.factor, r.window) for r in rotations] == expected
    ids = torch.tensor([bundle.task.prepare(TEXT, bundle.cfg.max_len).source_ids])
    with torch.no_grad():
        _, cache = bundle.model.run_with_cache(ids)
    for r in rotations:
        before = "q_normed" if bundle.cfg.qk_norm != "none" else "q"
        q = cache[hook_name("decoder", r.layer, before)][0].numpy()  # [pos, head, d_head]
        rotated = cache[hook_name("decoder", r.layer, "rot_q")][0].numpy()
        for pos in range(q.shape[0]):
            mine = viz.rotate_by_hand(q[pos, 2], pos, r.rotary_dims, r.base, r.factor).rotated
            np.testing.assert_allclose(mine, rotated[pos, 2], rtol=0, atol=1e-5)


def test_rope_figures_turn_only_the_rotary_dims_with_the_layers_base():
    from model.lab.positional import rope_frequencies, rope_scores

    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 8, generator=g).double().numpy()
    for turned, base, factor in ((4, 500.0, 1.0), (8, 100.0, 2.0)):
        scores = rope_scores(8, 6, base=base, rotary_dims=turned, factor=factor)
        mine = np.array([[viz.rotate_by_hand(q, m, turned, base, factor).rotated
                          @ viz.rotate_by_hand(k, n, turned, base, factor).rotated for n in range(6)]
                         for m in range(6)])
        np.testing.assert_allclose(scores, mine, rtol=0, atol=1e-5)
        for offset in range(-5, 6):  # a function of m - n only
            assert np.ptp(np.diagonal(scores, offset)) < 1e-5
        freqs = rope_frequencies(turned, base, factor)
        np.testing.assert_allclose(freqs, viz.rotate_by_hand(q, 1, turned, base, factor).angles, rtol=1e-6)
    # partial rotary: the untouched half adds one constant, q[4:] . k[4:], at every pair of positions
    half_q = [viz.rotate_by_hand(q[:4], m, 4, 500.0).rotated for m in range(6)]
    half_k = [viz.rotate_by_hand(k[:4], n, 4, 500.0).rotated for n in range(6)]
    turned = np.array([[a @ b for b in half_k] for a in half_q])
    rest = rope_scores(8, 6, base=500.0, rotary_dims=4) - turned
    np.testing.assert_allclose(rest, np.full((6, 6), q[4:] @ k[4:]), rtol=0, atol=1e-5)


# --------------------------------------------------------------------------- the exported deck


@pytest.mark.parametrize("kind", ["gemma3_text", "phi3", "qwen3"])
def test_deck_slide_one_uses_each_layers_scaling_and_window(bundles, kind):
    import json

    from model.export.archive import inspect_meta
    from viz import deck as VD

    bundle = bundles[kind]
    result = analyze(bundle, TEXT, max_new=3)
    meta = json.loads(json.dumps(inspect_meta(bundle, result, TEXT)))  # as read back from meta.json
    n = len(result.target_tokens)
    for layer, block in enumerate(bundle.model.decoder.blocks):
        divisor, window = VD.layer_scaling(meta["config"], "decoder", layer)
        module = block.self_attn
        assert (divisor or module.d_head**0.5) == pytest.approx(module.divisor) and window == module.window
        pattern = np.asarray(result.attention("decoder")[layer])  # [head, query, key]
        for query in range(n):
            row = VD.one_query(result.activations, "decoder", layer, 1, query, meta["config"])
            np.testing.assert_allclose(row.weights, pattern[1, query], rtol=0, atol=1e-6)
        if kind == "gemma3_text":  # without the config: √d_head and no window, which is not the model
            row = VD.one_query(result.activations, "decoder", layer, 1, n - 1)
            assert np.abs(row.weights - pattern[1, n - 1]).max() > 1e-3
    figs = VD.deck_figures(result.activations, meta, kind="decoder", layer=0, head=1, query=n - 1)
    np.testing.assert_allclose(np.asarray(figs[0].data[0].y), result.attention("decoder")[0, 1][n - 1],
                               atol=1e-6)
