"""Parity of converted Hugging Face decoder-only models (GPT-2, Llama, Qwen2) with transformers.

Tiny random models are built from transformers configs here (seeded, no hub), saved as a folder
(config.json, model.safetensors, tokenizer.json), opened through our folder loader and compared
layer by layer: every attention pattern (<= 1e-5) and the final logits (<= 1e-4). The Llama and
Qwen2 cases pin the rotate-half -> (even, odd) permutation of q and k.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

from model.core.protocols import Task  # noqa: E402
from model.decoding.decoders import decode, greedy_decode  # noqa: E402
from model.decoding.strategy import Strategy  # noqa: E402
from model.network.kinds import hook_name  # noqa: E402
from model.network.trace import trace_shapes  # noqa: E402
from model.network.transformer import Transformer  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.formats import format_for  # noqa: E402
from model.store.formats.hf_decoder import (  # noqa: E402
    HF_DECODER,
    DecoderFormatError,
    decoder_config,
    rope_permutation,
)

VOCAB = 96
WORDS = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(VOCAB - 3)]


def _tokenizer_json(folder) -> None:
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))


def _hf_config(kind: str):
    common = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, attn_implementation="eager")
    if kind == "gpt2":
        return transformers.GPT2Config(n_embd=32, n_head=4, n_layer=2, n_positions=24, resid_pdrop=0.0,
                                       embd_pdrop=0.0, attn_pdrop=0.0, **common)
    if kind.startswith("gpt_neox"):  # Pythia's own keys: rotary_pct, rotary_emb_base
        return transformers.GPTNeoXConfig(hidden_size=32, num_attention_heads=4, intermediate_size=48,
                                          num_hidden_layers=2, max_position_embeddings=32, rotary_pct=0.5,
                                          rotary_emb_base=500.0, hidden_dropout=0.0, attention_dropout=0.0,
                                          use_parallel_residual=kind == "gpt_neox", **common)
    if kind == "gemma3_text":  # 3 layers: local, global, local; a window of 4 on 9-10 tokens
        rope = {"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}}
        return transformers.Gemma3TextConfig(
            hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=48,
            num_hidden_layers=3, max_position_embeddings=32, sliding_window=4, query_pre_attn_scalar=24,
            layer_types=["sliding_attention", "full_attention", "sliding_attention"], rope_parameters=rope,
            final_logit_softcapping=3.0, **common)
    if kind == "phi3":  # a window of 4 on every layer, half of each head rotated
        return transformers.Phi3Config(
            hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
            num_hidden_layers=2, max_position_embeddings=32, rope_theta=500.0, partial_rotary_factor=0.5,
            sliding_window=4, tie_word_embeddings=False, pad_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0,
            attention_dropout=0.0, **common)
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "mistral": transformers.MistralConfig, "qwen3": transformers.Qwen3Config,
           "olmo2": transformers.Olmo2Config}[kind]
    extra = dict(head_dim=16) if kind == "qwen3" else {}  # 4 heads x 16 on a width of 32
    return cls(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
               num_hidden_layers=2, max_position_embeddings=32, rope_theta=500.0,
               tie_word_embeddings=kind in ("qwen2", "qwen3"), **extra, **common)


def _save(kind: str, folder):
    torch.manual_seed(0)
    cfg = _hf_config(kind)
    hf = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    with torch.no_grad():  # non-trivial norms and biases, so a mix-up shows
        for name, p in hf.named_parameters():
            if "norm" in name or "ln_" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    hf.save_pretrained(folder, safe_serialization=True)
    _tokenizer_json(folder)
    return hf


NEW_FAMILIES = ["qwen3", "olmo2", "gpt_neox", "gpt_neox_serial", "gemma3_text", "phi3"]
#: Decoder layers of each family's tiny model (2 unless said)
LAYERS = {"gemma3_text": 3}
#: Families whose tiny model has sliding-window layers (a window of 4)
WINDOWED = ("gemma3_text", "phi3")
#: max |ours - theirs| of every family's patterns and logits, filled by the parity test (the report)
MEASURED: dict[str, tuple[float, float]] = {}


@pytest.mark.parametrize("kind", ["gpt2", "llama", "qwen2", "mistral", *NEW_FAMILIES])
def test_parity_with_transformers(kind, tmp_path):
    hf = _save(kind, tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    model = bundle.model
    assert model.cfg.decoder_only and model.encoder is None
    if kind != "gpt2":  # the base in config.json reaches the rotation
        tied = kind in ("qwen2", "qwen3", "gemma3_text")
        assert model.cfg.rope_theta == 500.0 and model.cfg.tie_embeddings == tied
    assert model.attention_layer_counts() == {"encoder": 0, "decoder": LAYERS.get(kind, 2), "cross": 0}
    length = 10 if kind in WINDOWED else 9  # longer than the window (4)
    ids = torch.randint(3, VOCAB, (2, length), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        theirs = hf(ids, output_attentions=True)
    logits, cache = model.run_with_cache(ids)
    worst = 0.0
    for layer, pattern in enumerate(theirs.attentions):
        ours = cache[hook_name("decoder", layer, "pattern")]
        worst = max(worst, float((ours - pattern).abs().max()))
        assert (ours - pattern).abs().max() <= 1e-5, f"layer {layer} pattern"
    assert (logits - theirs.logits).abs().max() <= 1e-4
    MEASURED[kind] = (worst, float((logits - theirs.logits).abs().max()))
    print(f"parity {kind}: patterns {MEASURED[kind][0]:.2e}, logits {MEASURED[kind][1]:.2e}")
    # raw and masked scores are there, and the future is -inf
    scores = cache[hook_name("decoder", 0, "scores")]
    assert torch.isinf(scores[0, 0, 0, 1]) and cache[hook_name("decoder", 0, "raw_scores")].isfinite().all()
    if kind in WINDOWED:  # a local layer's last query sees its 4 last keys; Gemma's layer 1 (global) all
        for layer in range(LAYERS.get(kind, 2)):
            last = cache[hook_name("decoder", layer, "pattern")][0, :, -1]
            if kind == "gemma3_text" and layer == 1:
                assert (last > 0).all()
            else:
                assert (last[:, :length - 4] == 0).all() and (last[:, length - 4:] > 0).all()
        assert torch.isinf(scores[0, :, -1, :length - 4]).all()


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_greedy_continuation_matches_transformers(kind, tmp_path):
    hf = _save(kind, tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    text = "w5 w17 w3"
    prompt = bundle.task.prepare(text, bundle.cfg.max_len).source_ids
    ids = prompt + greedy_decode(bundle.model, [prompt], [prompt], bundle.tokenizer.eos_id, max_new=6)[0]
    new_text = bundle.tokenizer.decode(ids[len(prompt):])
    assert prompt[0] == (1 if kind == "llama" else WORDS.index("w5"))  # Llama-style models read BOS first
    with torch.no_grad():
        ref = hf.generate(torch.tensor([prompt]), max_new_tokens=6, do_sample=False, eos_token_id=2,
                          pad_token_id=2)[0].tolist()
    assert ids == ref[: len(ids)] and (len(ids) == len(ref) or ref[len(ids)] == 2)  # theirs keeps eos
    assert new_text == bundle.tokenizer.decode(ref[len(prompt):len(ids)])
    analysis = analyze(bundle, text, max_new=6)  # the same continuation, read by one hooked pass
    assert analysis.output_text == new_text
    assert analysis.target_tokens == bundle.tokenizer.tokens(ids)  # prompt + output, the decoder's input
    assert analysis.source_tokens == bundle.tokenizer.tokens(prompt)


def test_shape_trace_on_a_decoder_only_model(tmp_path):
    _save("llama", tmp_path)
    model = HF_DECODER.load(tmp_path).model
    with trace_shapes() as trace:
        model(torch.tensor([[1, 5, 6, 7]]))
    ops = [s.op for s in trace.steps]
    assert any("RoPE" in op for op in ops) and any("gate" in op for op in ops)


def test_rope_permutation_interleaves_the_halves():
    assert rope_permutation(8).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


def test_claimed_by_the_registry_and_long_context_clamped(tmp_path):
    assert HF_DECODER.claims({"model_type": "mistral"})
    assert format_for({"model_type": "mistral"}) is HF_DECODER  # folders, uploads and --model-dir open it
    hf = {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "num_attention_heads": 2,
          "intermediate_size": 16, "num_hidden_layers": 1, "max_position_embeddings": 131072}
    cfg, notes = decoder_config(hf, tmp_path / "config.json")
    assert cfg.max_len == 8192 and "clamped" in notes[0]
    with pytest.raises(DecoderFormatError, match="RoPE scaling"):
        decoder_config({**hf, "rope_scaling": {"rope_type": "yarn"}}, tmp_path / "config.json")
    # a default rope_parameters beside a yarn rope_scaling is refused the same way (it loaded as plain RoPE)
    both = {**hf, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6},
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    with pytest.raises(DecoderFormatError, match="RoPE scaling 'yarn' in rope_scaling") as e:
        decoder_config(both, tmp_path / "config.json")
    assert "\n" not in str(e.value)
    plain, _ = decoder_config({**hf, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}},
                              tmp_path / "config.json")
    assert plain.rope_theta == 1e6


def test_a_wrong_shape_is_refused_from_the_header(tmp_path):
    _save("qwen2", tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["intermediate_size"] = 64
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(Exception, match="wrong shapes"):
        HF_DECODER.load(tmp_path)


def test_a_converted_model_saved_in_our_format_reloads(tmp_path):
    from model.data.tasks import task_from_dict

    _save("llama", tmp_path / "hf")
    bundle = HF_DECODER.load(tmp_path / "hf")
    bundle.task.save_tokenizer(tmp_path)
    task = task_from_dict(bundle.task.to_dict(), tmp_path)
    assert task.to_dict() == bundle.task.to_dict()
    assert task.prepare("w1 w2", 16).source_ids == bundle.task.prepare("w1 w2", 16).source_ids


def test_a_reference_continuation_is_tokenized_without_bos(tmp_path):
    _save("llama", tmp_path)
    task = HF_DECODER.load(tmp_path).task
    assert isinstance(task, Task)
    assert task.target_ids("w1 w2") == ([WORDS.index("w1"), WORDS.index("w2")], [])
    assert task.prepare("w1 w2", 16).prefix == [1, WORDS.index("w1"), WORDS.index("w2")]


@pytest.mark.parametrize("strategy", [Strategy(), Strategy.make("beam", beam=3),
                                      Strategy.make("sample", seed=4)])
def test_every_strategy_continues_a_decoder_only_model_and_one_pass_reads_it(strategy, tmp_path):
    _save("llama", tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    prompt = bundle.task.prepare("w5 w17 w3", bundle.cfg.max_len).source_ids
    expected = decode(bundle.model, [prompt], [prompt], bundle.tokenizer.eos_id, strategy, max_new=7)[0]
    result = analyze(bundle, "w5 w17 w3", strategy=strategy, max_new=7)
    assert result.output_text == bundle.tokenizer.decode(expected)
    length = len(prompt) + len(expected)
    assert len(result.target_tokens) == length
    pattern = result.attention("decoder")  # [layer, head, query, key]: the one causal kind
    assert pattern.shape == (2, 4, length, length)
    assert np.allclose(np.triu(pattern, 1), 0) and np.allclose(pattern.sum(-1), 1, atol=1e-5)
    assert result.layer_counts == {"encoder": 0, "decoder": 2, "cross": 0}
    codes = [n.code for n in result.notes]
    assert codes == (["output_max_new"] if len(expected) == 7 else [])
    # What each step's row offered: the chosen token's probability from the same logits
    assert [s.token_id for s in result.steps[:-1]] == expected


#: What each new family turns on in our one Transformer.
FAMILY_OPTIONS = {
    "qwen3": dict(qk_norm="head", head_dim=16, branch_norm="before", qkv_bias=False, out_bias=False),
    "olmo2": dict(qk_norm="full", head_dim=None, branch_norm="after", qkv_bias=False),
    "gpt_neox": dict(parallel_residual=True, rotary_fraction=0.5, qkv_bias=True, out_bias=True, ffn_bias=True,
                     activation="gelu", norm="layernorm", tie_embeddings=False),
    "gpt_neox_serial": dict(parallel_residual=False, rotary_fraction=0.5),
    "gemma3_text": dict(qk_norm="head", head_dim=16, branch_norm="both", gated_ffn=True,
                        activation="gelu_tanh",
                        sliding_window=4, layer_pattern="lgl", rope_theta=500.0, rope_local_theta=100.0,
                        rope_linear_factor=2.0, score_divisor=24**0.5, scale_embeddings=True,
                        embed_scale=float(torch.tensor(32**0.5)), logit_softcap=3.0, tie_embeddings=True),
    "phi3": dict(sliding_window=4, layer_pattern="", rotary_fraction=0.5, gated_ffn=True, activation="silu",
                 qkv_bias=False, out_bias=False, tie_embeddings=False),
}


@pytest.mark.parametrize("kind", NEW_FAMILIES)
def test_new_families_greedy_twelve_tokens_hooks_and_trace(kind, tmp_path):
    hf = _save(kind, tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    model = bundle.model
    for option, value in FAMILY_OPTIONS[kind].items():
        assert getattr(model.cfg, option) == value, option
    prompt = bundle.task.prepare("w5 w17 w3", bundle.cfg.max_len).source_ids
    ids = prompt + greedy_decode(model, [prompt], [prompt], bundle.tokenizer.eos_id, max_new=12)[0]
    with torch.no_grad():
        ref = hf.generate(torch.tensor([prompt]), max_new_tokens=12, do_sample=False, eos_token_id=2,
                          pad_token_id=2)[0].tolist()
    assert ids == ref[: len(ids)] and (len(ids) == len(ref) or ref[len(ids)] == 2)
    # every hook fires, the QK-norm's own hooks too, with the shapes the trace names
    with trace_shapes() as trace:
        _, cache = model.run_with_cache(torch.tensor([prompt]))
    hooked = {s.hook: s.out_shape for s in trace.steps if s.hook}
    assert set(cache.keys()) == set(model.hook_points) and set(hooked) <= set(cache.keys())
    for name, shape in hooked.items():
        assert tuple(cache[name].shape) == shape, name
    ops = " | ".join(s.op for s in trace.steps)
    if kind in ("qwen3", "olmo2"):
        assert "QK-norm of Q" in ops and hook_name("decoder", 1, "q_normed") in cache
        # hook_q is the projection split into heads, before the norm; RoPE reads the normed q
        q, normed = cache[hook_name("decoder", 0, "q")], cache[hook_name("decoder", 0, "q_normed")]
        assert not torch.allclose(q, normed)
    if kind.startswith("gpt_neox"):
        assert "partial RoPE" in ops and ("parallel" in ops) == (kind == "gpt_neox")
        q, rot = cache[hook_name("decoder", 0, "q")], cache[hook_name("decoder", 0, "rot_q")]
        assert torch.equal(q[..., 4:], rot[..., 4:])  # the last half of each head passes unrotated
    if kind == "olmo2":
        assert "post_attention_layernorm" not in ops and "norm1 (after masked self-attention" in ops


@pytest.mark.parametrize("kind,key,value,message", [
    ("qwen3", "head_dim", 0, "head_dim must be >= 1"),
    ("qwen3", "head_dim", 7, "even d_head"),
    ("qwen3", "head_dim", "wide", "head_dim must be an integer"),
    ("gpt_neox", "rotary_pct", 1.5, "rotary_fraction must be above 0 and at most 1"),
    ("gpt_neox", "rotary_pct", 0.4, "even number of rotated dims"),
    ("gpt_neox", "num_attention_heads", 5, "divisible by n_heads"),
    ("gpt_neox", "hidden_act", "swish", "not supported: hidden_act"),
    ("olmo2", "vocab_size", 10**9, "vocab_size must be <= 1000000"),
    ("olmo2", "num_key_value_heads", 3, "divide n_heads"),
    ("gemma3_text", "sliding_window", 0, "sliding_window must be an integer >= 1"),
    ("gemma3_text", "query_pre_attn_scalar", 0, "query_pre_attn_scalar must be > 0"),
    ("gemma3_text", "query_pre_attn_scalar", "big", "query_pre_attn_scalar must be a number"),
    ("gemma3_text", "layer_types", ["sliding_attention", "chunked_attention", "full_attention"],
     "not supported: layer type 'chunked_attention'"),
    ("gemma3_text", "layer_types", ["full_attention"], "one type per layer"),
    ("gemma3_text", "rope_parameters", {"full_attention": {"rope_type": "yarn", "factor": 4.0}},
     "not supported: RoPE scaling 'yarn' on full_attention"),
    ("gemma3_text", "hidden_activation", "silu", "not supported: hidden_activation"),
    ("gemma3_text", "final_logit_softcapping", -1.0, "final_logit_softcapping must be > 0"),
    ("gemma3_text", "use_bidirectional_attention", True, "not supported: use_bidirectional_attention"),
    ("phi3", "sliding_window", 0, "sliding_window must be an integer >= 1 or null"),
    ("phi3", "rope_parameters", {"rope_type": "dynamic", "rope_theta": 500.0, "factor": 2.0},
     "not supported: RoPE scaling 'dynamic' in rope_parameters \\(only plain RoPE or longrope\\)"),
    ("phi3", "rope_parameters", {"rope_type": "longrope", "rope_theta": 500.0,
                                 "short_factor": [1.0, 1.0, 1.0], "long_factor": [2.0, 2.0],
                                 "original_max_position_embeddings": 16},
     "longrope's short_factor must list 2 numbers"),
    ("phi3", "rope_parameters", {"rope_type": "default", "rope_theta": 500.0, "partial_rotary_factor": 0.4},
     "even number of rotated dims"),
    ("phi3", "attention_bias", True, "not supported: attention_bias"),
    ("phi3", "hidden_act", "gelu", "not supported: hidden_act"),
])
def test_hostile_configs_of_the_new_families(kind, key, value, message, tmp_path):
    _save(kind, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    if key == "rotary_pct":  # Pythia's own key, as its config.json has it
        config.pop("rope_parameters", None)
    config[key] = value
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(DecoderFormatError, match=message) as e:
        HF_DECODER.load(tmp_path)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("kind", NEW_FAMILIES[:3])
def test_a_wrong_shape_of_a_new_family_is_refused_from_the_header(kind, tmp_path):
    _save(kind, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["intermediate_size"] = 64
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(DecoderFormatError, match="wrong shapes") as e:
        HF_DECODER.load(tmp_path)
    assert "\n" not in str(e.value)


def test_rope_permutation_of_a_partial_rotary_head():
    assert rope_permutation(8, 4).tolist() == [0, 2, 1, 3, 4, 5, 6, 7]


def test_gemma3_analysis_recomputes_the_sliding_window_and_its_scaling(tmp_path):
    """The analysis keeps q, k, the divisor and the mask's description (with the window) only: its
    patterns, rebuilt from them, are transformers' own on an input past the window, local and global."""
    hf = _save("gemma3_text", tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    text = "w5 w17 w3 w40 w8"
    prompt = bundle.task.prepare(text, bundle.cfg.max_len).source_ids
    ids = prompt + greedy_decode(bundle.model, [prompt], [prompt], bundle.tokenizer.eos_id, max_new=6)[0]
    assert len(ids) > 4 + 1
    result = analyze(bundle, text, max_new=6)
    assert result.target_tokens == bundle.tokenizer.tokens(ids)
    with torch.no_grad():
        theirs = torch.stack(hf(torch.tensor([ids]), output_attentions=True).attentions)[:, 0]
    ours = torch.from_numpy(np.asarray(result.attention("decoder")))  # [layer, head, query, key]
    assert ours.shape == theirs.shape and (ours - theirs).abs().max() <= 1e-5
    n = len(ids)
    assert (ours[0, :, -1, : n - 4] == 0).all() and (ours[1, :, -1] > 0).all()  # local, then global


def test_phi3_without_a_window_is_plain_causal(tmp_path):
    _save("phi3", tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["sliding_window"] = None
    (tmp_path / "config.json").write_text(json.dumps(config))
    model = HF_DECODER.load(tmp_path).model
    assert model.cfg.sliding_window == 0
    assert all(b.self_attn.window == 0 for b in model.decoder.blocks)


def test_gemma3_worked_example_uses_the_layers_scaling_and_window(tmp_path):
    import viz
    from model.lab.worked import layer_tensors_for

    _save("gemma3_text", tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    for layer, window in ((0, 4), (1, 0)):
        data = layer_tensors_for(bundle, "w5 w17 w3 w40 w8 w9 w11", None, "decoder", layer, max_new=2)
        assert data.divisor == 24**0.5 and data.window == window
        for query in range(data.q.shape[0]):
            row = viz.work_row(data.q, data.k, data.v, 1, query, causal=True, scale=data.divisor,
                               window=data.window)
            np.testing.assert_allclose(row.weights, data.pattern[1, query], rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind", ["llama", "gpt_neox", "qwen3"])
def test_a_loaded_model_owns_its_weights_and_keeps_one_tied_embedding(kind, tmp_path):
    """The network is built without a random start and given the file's tensors: each one a copy the model
    owns (safetensors hands out views of its file mapping), so overwriting the file afterwards changes no
    weight; tied embeddings stay one parameter, and the parameter count is the modules' own."""
    _save(kind, tmp_path)
    bundle = HF_DECODER.load(tmp_path)
    model = bundle.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    weights = tmp_path / "model.safetensors"
    size = weights.stat().st_size
    header = 8 + int.from_bytes(weights.read_bytes()[:8], "little")
    with open(weights, "r+b") as f:  # the same file, its tensors' bytes overwritten in place
        f.seek(header)
        f.write(b"\x7f" * (size - header))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    if bundle.cfg.tie_embeddings:
        assert model.unembed.weight is model.token_embed.weight
    fresh = Transformer(bundle.cfg)
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in fresh.parameters())
    assert not any(t.is_meta for t in [*model.parameters(), *model.buffers()])
