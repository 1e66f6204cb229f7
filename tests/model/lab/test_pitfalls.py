"""The pitfall lab: each trained-in fault does what it says, training logs every step, and every shipped
pitfall model shows the exact match its metrics.json claims."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from model.data.tasks import SyntheticTask
from model.decoding.decoders import greedy_decode
from model.network.config import ConfigError, ModelConfig, TrainConfig
from model.network.transformer import Transformer
from model.store.formats.own import load_checkpoint
from model.store.registry import GROUPS, available_models, load_model, model_info
from model.training.evaluate import evaluate_model
from model.training.presets import PITFALLS, PRESETS
from model.training.train import collate, loss_fn, step_series, train
from tests.conftest import padded_batch, tiny_config

FAULT_FIELDS = ("scale_scores", "residual", "mask_padding", "causal_in_training")


# ---------------------------------------------------------------- configs


def test_fault_fields_default_to_the_correct_network():
    cfg = ModelConfig()
    assert all(getattr(cfg, f) is True for f in FAULT_FIELDS)
    assert TrainConfig().grad_clip == 1.0


def test_config_json_written_before_the_fault_fields_still_loads(tmp_path):
    old = {k: v for k, v in tiny_config().to_dict().items() if k not in FAULT_FIELDS}
    assert ModelConfig.from_dict(old) == tiny_config()
    shipped = json.loads(open("assets/models/reverse/config.json").read())  # written before the fields
    assert all(f not in shipped["model"] for f in FAULT_FIELDS)
    assert load_checkpoint("assets/models/reverse").cfg.scale_scores is True


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_grad_clip_zero_is_refused_none_is_no_clipping(value):
    with pytest.raises(ConfigError, match="None for no clipping"):
        TrainConfig(grad_clip=value)
    assert TrainConfig(grad_clip=None).grad_clip is None
    assert TrainConfig.from_dict(TrainConfig(grad_clip=None).to_dict()).grad_clip is None


def test_fault_fields_must_be_bools():
    with pytest.raises(ConfigError, match="residual must be bool"):
        ModelConfig.from_dict({**tiny_config().to_dict(), "residual": "no"})


# ---------------------------------------------------------------- each fault on a tiny model


def _cache(model, src, tgt):
    return model.run_with_cache(src, tgt)[1]


def test_no_scaling_puts_the_raw_scores_into_the_softmax():
    torch.manual_seed(0)
    model = Transformer(tiny_config(scale_scores=False)).eval()
    src, tgt = padded_batch()
    cache = _cache(model, src, tgt)
    for layer in range(2):
        raw = cache[f"encoder.blocks.{layer}.attn.hook_raw_scores"]
        scores = cache[f"encoder.blocks.{layer}.attn.hook_scores"]
        keep = torch.isfinite(scores)
        assert keep.any() and not keep.all()  # the padding of sentence 2 is masked
        torch.testing.assert_close(scores[keep], raw[keep], rtol=0, atol=0)
    # The correct model divides by sqrt(d_head)
    torch.manual_seed(0)
    ok = _cache(Transformer(tiny_config()).eval(), src, tgt)
    raw, scores = ok["encoder.blocks.0.attn.hook_raw_scores"], ok["encoder.blocks.0.attn.hook_scores"]
    keep = torch.isfinite(scores)
    torch.testing.assert_close(scores[keep], raw[keep] / (32 / 4) ** 0.5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_no_residual_makes_the_block_output_the_sublayer_output(norm_first):
    torch.manual_seed(0)
    model = Transformer(tiny_config(residual=False, norm_first=norm_first)).eval()
    src, tgt = padded_batch()
    cache = _cache(model, src, tgt)
    block = model.encoder.blocks[0]
    mid = cache["encoder.blocks.0.hook_resid_mid"]
    post = cache["encoder.blocks.0.hook_resid_post"]
    with torch.no_grad():
        ffn = block.mlp(block.norm2(mid)) if norm_first else block.norm2(block.mlp(mid))
    torch.testing.assert_close(post, ffn)
    attn = cache["encoder.blocks.0.attn.hook_out"]
    torch.testing.assert_close(mid, attn if norm_first else block.norm1(attn))


def test_no_padding_mask_lets_padding_keys_get_weight():
    src, tgt = padded_batch()  # sentence 2 of src is padded from position 5
    for mask_padding in (True, False):
        torch.manual_seed(0)
        model = Transformer(tiny_config(mask_padding=mask_padding)).eval()
        pattern = _cache(model, src, tgt)["encoder.blocks.0.attn.hook_pattern"]  # [batch, head, q, k]
        pad_weight = pattern[1, :, :, 5:]
        if mask_padding:
            assert float(pad_weight.abs().max()) == 0.0
        else:
            assert float(pad_weight.min()) > 0.0


def test_no_padding_mask_counts_padding_targets_in_the_loss():
    logits = torch.randn(2, 6, 40)
    _, tgt = padded_batch()  # the first sentence is padded from position 4
    ignoring = loss_fn(logits, tgt, 0, 0.0)
    counting = loss_fn(logits, tgt, 0, 0.0, ignore_pad=False)
    keep = tgt != 0
    expected_ignoring = torch.nn.functional.cross_entropy(logits[keep], tgt[keep])
    expected_counting = torch.nn.functional.cross_entropy(logits.reshape(-1, 40), tgt.reshape(-1))
    torch.testing.assert_close(ignoring, expected_ignoring)
    torch.testing.assert_close(counting, expected_counting)
    assert not torch.allclose(ignoring, counting)


def test_the_cheating_decoder_sees_the_future_only_in_training_mode():
    torch.manual_seed(0)
    model = Transformer(tiny_config(causal_in_training=False))
    src, tgt = padded_batch()
    changed = tgt.clone()
    changed[1, 5] = (changed[1, 5] + 1 - 4) % 36 + 4  # a different last token of sentence 2
    model.train()  # dropout is 0: train mode is deterministic
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    assert not torch.allclose(a[1, 0], b[1, 0])  # position 0 read position 5: no causal mask
    model.eval()  # inference: the causal mask is back
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    torch.testing.assert_close(a[1, :5], b[1, :5])
    # So greedy decoding (one new token per step, with a cache) equals decoding the whole prefix again.
    with torch.no_grad():
        memory, src_pad = model.encode(src[:1])
    out = greedy_decode(model, [src[0].tolist()], [[1]], 2, max_new=6)[0]
    prefix = torch.tensor([[1] + out[:-1]])
    with torch.no_grad():
        full = model(src[:1], prefix).argmax(-1)[0].tolist()
    assert full == out


# ---------------------------------------------------------------- the training loop


def _setup(steps: int = 6, **overrides):
    task = SyntheticTask("reverse", min_len=3, max_len=6)
    mc = ModelConfig(vocab_size=task.tokenizer.vocab_size, d_model=16, n_heads=2, d_ff=32, n_enc_layers=1,
                     n_dec_layers=1, dropout=0.0, max_len=10)
    settings = dict(lr=3e-3, warmup_steps=2, max_steps=steps, batch_tokens=256, eval_every=0, save_every=0,
                    log_every=4, num_threads=1)
    return mc, TrainConfig(**{**settings, **overrides}), task


def test_grad_clip_none_never_calls_clip_grad_norm_(tmp_path, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("clip_grad_norm_ was called")

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", forbidden)
    mc, tc, task = _setup(steps=3, grad_clip=None)
    torch.manual_seed(0)
    before = {k: v.clone() for k, v in Transformer(mc).state_dict().items()}
    model = train(mc, tc, task, tmp_path)
    after = model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # gradients were not zeroed
    norms = step_series(load_checkpoint(tmp_path).history)["grad_norm"]
    assert len(norms) == 3 and all(n > 0 for n in norms)


def test_every_step_logs_its_loss_and_its_gradient_norm_before_clipping(tmp_path, monkeypatch):
    measured: list[float] = []
    real = torch.nn.utils.clip_grad_norm_

    def spy(params, max_norm, *args, **kwargs):
        params = list(params)
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in params if p.grad is not None]))
        measured.append(float(norm))
        return real(params, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    mc, tc, task = _setup(steps=6, grad_clip=1e-3)  # a clip that bites at every step
    train(mc, tc, task, tmp_path)
    history = load_checkpoint(tmp_path).history
    assert [r["step"] for r in history] == [4, 6]
    series = step_series(history)
    assert series["step"] == [1, 2, 3, 4, 5, 6]
    assert len(series["loss"]) == 6 and all(0 < x < 10 for x in series["loss"])
    assert series["grad_norm"] == pytest.approx(measured, rel=1e-4)
    assert min(series["grad_norm"]) > 1e-3  # measured before clipping
    # The loss of each record is the mean of its steps
    assert history[0]["loss"] == pytest.approx(sum(series["loss"][:4]) / 4, rel=1e-3)


def test_training_without_padding_mask_counts_padding_in_its_loss(tmp_path, monkeypatch):
    import model.training.train as train_module

    calls = []
    real = train_module.loss_fn

    def spy(*args, **kwargs):
        calls.append(kwargs.get("ignore_pad", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "loss_fn", spy)
    mc, tc, task = _setup(steps=2)
    train(dataclasses.replace(mc, mask_padding=False), tc, task, tmp_path)
    assert calls[:2] == [False, False]
    src, tgt_in, tgt_out = collate(task.examples("train", 8), list(range(8)), 0)
    assert bool((tgt_out == 0).any())  # the loss indeed sees padding targets in a mixed batch


# ---------------------------------------------------------------- presets and shipped models


def test_pitfall_presets_change_one_thing_each():
    assert "pitfall" in GROUPS
    reverse = PRESETS["reverse"]
    correct = PRESETS["pitfall-correct"]
    assert correct.model == reverse.model and correct.train == reverse.train and not correct.fault_line
    for name in PITFALLS:
        p = PRESETS[name]
        assert p.group == "pitfall" and p.listed is False and p.task == "reverse"
        assert p.train.max_steps <= 600 and p.train.seed == reverse.train.seed
        zh = {f: v for lang, f, v in p.i18n if lang == "zh"}
        assert set(zh) == {"label", "description"} and all(zh.values())
        if name != "pitfall-correct":
            assert p.fault_line and "\n" not in p.fault_line
            assert (p.model, p.train) != (reverse.model, reverse.train)


SHIPPED = [name for name in PITFALLS if name in available_models()]


@pytest.mark.skipif(not SHIPPED, reason="no pitfall model shipped")
def test_every_pitfall_model_is_shipped():
    assert SHIPPED == PITFALLS


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_pitfall_model_shows_the_exact_match_it_claims(name):
    info = model_info(name)
    assert info.group == "pitfall" and info.listed is False and info.text("label", "zh") != info.label
    bundle = load_model(name)
    assert bundle.cfg == PRESETS[name].model
    assert bundle.info["fault_line"] == PRESETS[name].fault_line
    assert bundle.metrics["weights_dtype"] == "float16"
    series = step_series(bundle.history)
    assert series["step"] == list(range(1, bundle.info["step"] + 1))
    claimed = bundle.metrics["results"]["task"]
    # The same words as the claim (a 200-word sample alone would differ from it by sampling noise).
    n = claimed["n"]
    fresh = evaluate_model(bundle.model, bundle.task, "test", n=n)["task"]
    print(f"{name}: claimed {claimed['exact_match']} fresh (n={n}) {fresh['exact_match']}")
    assert abs(fresh["exact_match"] - claimed["exact_match"]) <= 0.02
