"""Phi-3's longrope held to transformers: per-pair short and long factors, the attention factor, and the
switch at original_max_position_embeddings (16 here, so a test crosses it cheaply).

transformers picks the factors by the whole sequence's length (``longrope_frequency_update``) and, when
generation first passes the switch, drops its cache and computes the whole sequence again with the long
factors (``Phi3ForCausalLM.prepare_inputs_for_generation``). Our decoder does the same
(``Decoder.switch_len``): patterns <= 1e-5 and logits <= 1e-4 of the eager pass on either side of the
switch, and greedy continuations equal to ``generate`` from a prompt below it (crossing it) and from one
past it.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

from model.decoding.decoders import greedy_decode  # noqa: E402
from model.network.config import ConfigError, ModelConfig  # noqa: E402
from model.network.kinds import hook_name  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.formats.hf_decoder import HF_DECODER, DecoderFormatError, decoder_config  # noqa: E402

VOCAB = 96
WORDS = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(VOCAB - 3)]
SWITCH = 16
SHORT = [1.0, 1.2, 1.5, 2.0]  # one per rotated pair: d_head 16, half of it rotated -> 4 pairs
LONG = [1.5, 3.0, 6.0, 12.0]


def _hf_config(**rope_extra):
    rope = {"rope_type": "longrope", "rope_theta": 500.0, "short_factor": SHORT, "long_factor": LONG,
            "original_max_position_embeddings": SWITCH, "partial_rotary_factor": 0.5, **rope_extra}
    return transformers.Phi3Config(
        vocab_size=VOCAB, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
        num_hidden_layers=2, max_position_embeddings=64, original_max_position_embeddings=SWITCH,
        rope_parameters=rope, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0,
        resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0, attn_implementation="eager")


def _save(folder, **rope_extra):
    torch.manual_seed(0)
    hf = transformers.AutoModelForCausalLM.from_config(_hf_config(**rope_extra), attn_implementation="eager")
    hf = hf.eval()
    with torch.no_grad():  # non-trivial norms, so a mix-up shows
        for name, p in hf.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    hf.save_pretrained(folder, safe_serialization=True)
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    return hf


@pytest.fixture(scope="module")
def phi3(tmp_path_factory):
    folder = tmp_path_factory.mktemp("phi3_longrope")
    return _save(folder), HF_DECODER.load(folder)


def test_the_config_carries_the_factors_and_the_attention_factor(phi3):
    hf, bundle = phi3
    cfg = bundle.cfg
    assert cfg.rope_short_factors == tuple(SHORT) and cfg.rope_long_factors == tuple(LONG)
    assert cfg.rope_switch_len == SWITCH
    # factor = max_position_embeddings / original = 4: sqrt(1 + ln 4 / ln 16) = sqrt(1.5)
    assert cfg.rope_attention_factor == pytest.approx(math.sqrt(1.5), abs=1e-12)
    assert cfg.rope_attention_factor == pytest.approx(hf.model.rotary_emb.attention_scaling, abs=1e-12)
    assert cfg.rope_factors_for(SWITCH) == (tuple(SHORT), "short")
    assert cfg.rope_factors_for(SWITCH + 1) == (tuple(LONG), "long")
    assert ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg  # saved and read back


@pytest.mark.parametrize("length", [10, SWITCH, SWITCH + 1, 30])
def test_patterns_and_logits_equal_transformers_either_side_of_the_switch(phi3, length):
    hf, bundle = phi3
    ids = torch.randint(3, VOCAB, (2, length), generator=torch.Generator().manual_seed(length))
    with torch.no_grad():
        theirs = hf(ids, output_attentions=True)
    logits, cache = bundle.model.run_with_cache(ids)
    worst = max(float((cache[hook_name("decoder", layer, "pattern")] - p).abs().max())
                for layer, p in enumerate(theirs.attentions))
    gap = float((logits - theirs.logits).abs().max())
    print(f"longrope parity at {length} positions: patterns {worst:.2e}, logits {gap:.2e}")
    assert worst <= 1e-5 and gap <= 1e-4


def test_the_factors_matter(phi3):
    """The long and short passes differ, so the parity above tells them apart."""
    _, bundle = phi3
    ids = torch.randint(3, VOCAB, (1, SWITCH + 1), generator=torch.Generator().manual_seed(3))
    long_logits = bundle.model(ids)[0, :SWITCH]
    short_logits = bundle.model(ids[:, :SWITCH])[0]
    assert float((long_logits - short_logits).abs().max().detach()) > 1e-3


@pytest.mark.parametrize("prompt_len,new", [(5, 20), (SWITCH + 4, 8)])
def test_greedy_continuation_equals_generate_across_and_past_the_switch(phi3, prompt_len, new):
    hf, bundle = phi3
    rest = torch.randint(3, VOCAB, (prompt_len - 1,), generator=torch.Generator().manual_seed(7))
    prompt = [1] + rest.tolist()
    ours = greedy_decode(bundle.model, [prompt], [prompt], eos_id=2, max_new=new)[0]
    with torch.no_grad():
        ref = hf.generate(torch.tensor([prompt]), max_new_tokens=new, do_sample=False, eos_token_id=2,
                          pad_token_id=2)[0, prompt_len:].tolist()
    assert ours == ref[: len(ours)] and (len(ours) == len(ref) or ref[len(ours)] == 2)
    assert prompt_len + len(ours) > SWITCH  # the continuation ends past the switch
    # the same as computing every step from scratch (no cache): the cache was dropped at the switch
    full = list(prompt)
    for _ in range(len(ours)):
        full.append(int(bundle.model(torch.tensor([full]))[0, -1].argmax()))
    assert full[prompt_len:] == ours


def test_a_cached_step_across_the_switch_equals_the_whole_sequence_computed_again(phi3):
    """The step that passes the switch drops the cache (keys rotated with the short factors) and
    computes everything with the long ones: its logits are the full pass's, and so are the next step's."""
    hf, bundle = phi3
    model = bundle.model
    ids = torch.randint(3, VOCAB, (1, SWITCH + 2), generator=torch.Generator().manual_seed(5))
    caches = [{} for _ in model.decoder.blocks]
    with torch.no_grad():
        model.decoder(ids[:, :SWITCH], None, None, None, caches, 0)  # the prefill, short factors
        short_keys = caches[0]["k"].clone()
        step = model.unembed(model.decoder(ids[:, SWITCH:SWITCH + 1], None, None, None, caches, SWITCH))
        after = model.unembed(model.decoder(ids[:, SWITCH + 1:], None, None, None, caches, SWITCH + 1))
        whole = hf(ids[:, :SWITCH + 1]).logits[:, -1:]
        whole_next = hf(ids).logits[:, -1:]
    assert float((step - whole).abs().max()) <= 1e-4 and float((after - whole_next).abs().max()) <= 1e-4
    assert float((caches[0]["k"][:, :, :SWITCH] - short_keys).abs().max()) > 1e-3  # the keys were redone
    assert "ids" not in caches[0]  # no longer needed past the switch


def test_one_pass_reads_the_long_factors_past_the_switch(phi3):
    _, bundle = phi3
    text = " ".join(f"w{i}" for i in range(5, 5 + SWITCH + 3))
    analysis = analyze(bundle, text, max_new=1)
    assert len(analysis.target_tokens) > SWITCH
    assert bundle.cfg.rope_factors_for(len(analysis.target_tokens))[1] == "long"


@pytest.mark.parametrize("change,message", [
    ({"short_factor": [1.0, 1.0]}, "short_factor must list 4 numbers"),
    ({"long_factor": [1.0, 1.0, -1.0, 2.0]}, "long_factor must list 4 numbers > 0"),
    ({"original_max_position_embeddings": None}, "needs original_max_position_embeddings"),
    ({"rope_type": "dynamic"}, "not supported: RoPE scaling 'dynamic'"),
])
def test_a_broken_longrope_config_is_one_line(tmp_path, change, message):
    hf = {"model_type": "phi3", "vocab_size": VOCAB, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 48, "num_hidden_layers": 2,
          "max_position_embeddings": 64,
          "rope_parameters": {"rope_type": "longrope", "rope_theta": 500.0, "short_factor": SHORT,
                              "long_factor": LONG, "original_max_position_embeddings": SWITCH,
                              "partial_rotary_factor": 0.5}}
    assert decoder_config(hf, tmp_path / "config.json")[0].longrope
    hf["rope_parameters"] = {k: v for k, v in {**hf["rope_parameters"], **change}.items() if v is not None}
    with pytest.raises(DecoderFormatError, match=message) as e:
        decoder_config(hf, tmp_path / "config.json")
    assert "\n" not in str(e.value)


def test_given_factor_and_attention_factor_are_read(tmp_path):
    hf = {"model_type": "phi3", "vocab_size": VOCAB, "hidden_size": 64, "num_attention_heads": 4,
          "intermediate_size": 48, "num_hidden_layers": 1, "max_position_embeddings": 64,
          "original_max_position_embeddings": SWITCH,  # at the top level, as older Phi-3 configs have it
          "rope_scaling": {"type": "su", "short_factor": SHORT * 2, "long_factor": LONG * 2}}
    cfg, _ = decoder_config(hf, tmp_path / "config.json")
    assert cfg.rope_switch_len == SWITCH and cfg.rope_attention_factor == pytest.approx(math.sqrt(1.5))
    hf["rope_scaling"]["attention_factor"] = 1.1
    assert decoder_config(hf, tmp_path / "config.json")[0].rope_attention_factor == 1.1
    hf["rope_scaling"] = {**hf["rope_scaling"], "factor": 1.0}
    hf["rope_scaling"].pop("attention_factor")
    assert decoder_config(hf, tmp_path / "config.json")[0].rope_attention_factor == 1.0
    with pytest.raises(ConfigError, match="one factor per rotated pair"):
        ModelConfig(**{**cfg.to_dict(), "rope_long_factors": (1.0,)})


@pytest.mark.parametrize("length", [10, SWITCH + 4])
def test_the_rotation_by_hand_uses_the_factors_of_the_sequence(phi3, length):
    """The worked example's rotation (viz.rotate_by_hand with the layer's factors and attention factor)
    equals the model's hook_rot_q on either side of the switch."""
    import numpy as np

    import viz
    from model.lab.worked import layer_tensors

    _, bundle = phi3
    ids = torch.randint(3, VOCAB, (1, length), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        _, cache = bundle.model.run_with_cache(ids)
    activations = {k: v.numpy() for k, v in cache.items()}
    data = layer_tensors(activations, "decoder", 1, bundle.model)
    assert data.rope_pairs == (tuple(LONG) if length > SWITCH else tuple(SHORT))
    assert data.rope_switch == SWITCH
    for pos in range(length):
        mine = viz.rotate_by_hand(data.q_before_rotation[pos, 2], pos, data.rotary_dims, data.rope_base,
                                  data.rope_factor, data.rope_pairs, data.rope_scale).rotated
        np.testing.assert_allclose(mine, data.q[pos, 2], rtol=0, atol=1e-5)


@pytest.mark.parametrize("words,new,code", [(6, 4, "rope_factors_short"),
                                            (SWITCH + 3, 3, "rope_factors_long"),
                                            (10, 12, "rope_factors_switched")])
def test_the_analysis_says_which_factors_and_equals_transformers_whole_pass(phi3, words, new, code):
    """The analysis (one pass) names the factors its numbers come from. An output that takes the sequence
    past the switch is read again whole (a step computed every position again with the long factors):
    every pattern and the steps' logits are those of transformers' eager pass over prompt + output, and
    the recorded rows are one per position (not the prompt pass's joined to the recomputed step's)."""
    import numpy as np

    from model.run.analysis import attention_only

    hf, bundle = phi3
    text = " ".join(f"w{i}" for i in range(5, 5 + words))
    result = analyze(bundle, text, max_new=new, keep=attention_only)
    codes = [n.code for n in result.notes]
    assert code in codes and "two_passes" not in codes, codes
    assert sum(c.startswith("rope_factors") for c in codes) == 1
    n = len(result.target_tokens)
    assert (n > SWITCH) == (code != "rope_factors_short")
    assert (len(result.prepared.prefix) <= SWITCH < n) == (code == "rope_factors_switched")
    ids = torch.tensor([result.prepared.prefix + [s.token_id for s in result.steps[:-1]]])
    assert ids.shape[1] == n
    with torch.no_grad():
        theirs = hf(ids, output_attentions=True)
    probs = torch.softmax(theirs.logits[0], -1)
    for layer, p in enumerate(theirs.attentions):
        assert result.layer_inputs("decoder")[layer].n_queries == n
        ours = np.stack([result.head_attention("decoder", layer, h)[1] for h in range(p.shape[1])])
        assert float(np.abs(ours - p[0].numpy()).max()) <= 1e-5
    for step in result.steps:
        assert abs(step.prob - float(probs[step.position, step.token_id])) <= 1e-5
