"""Architecture variants: each changes one thing from the base, the shipped ones show what their metrics
claim, the key/value cache is measured from real decoding, and the page draws the models' own numbers."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from safetensors import safe_open
from streamlit.testing.v1 import AppTest

import viz
from app_pages.glue.variants import MODELS
from app_support.i18n import text as tr
from app_support.i18n.check import untranslated
from model.lab.variants import KV_TOKENS, kv_cache_bytes, kv_formula, variant_row, variant_view
from model.network.config import ModelConfig
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.registry import GROUPS, REPO_ROOT, available_models, load_model, model_info
from model.training.evaluate import evaluate_model
from model.training.presets import PRESETS, VARIANT_AXES, VARIANTS
from model.training.train import step_series
from tests.model.training.test_snapshots import page_texts
from viz.typed_arrays import decode_plotly_array, is_typed_array_spec

PAGE = str(REPO_ROOT / "app_pages" / "variants.py")


def _changed_fields(a: ModelConfig, b: ModelConfig) -> set[str]:
    return {f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)}


def test_each_variant_changes_one_thing_from_the_base():
    assert "variant" in GROUPS
    base = PRESETS["variant-base"]
    reverse = PRESETS["reverse"]
    assert base.model == reverse.model and base.snapshots > 0
    # only bookkeeping differs from the reverse recipe: checkpoints for resuming
    assert dataclasses.replace(base.train, save_every=reverse.train.save_every) == reverse.train
    for name in VARIANTS:
        p = PRESETS[name]
        assert p.group == "variant" and p.listed is False and p.ship_dtype == "float16"
        assert p.task == "reverse"
        assert p.train == base.train
        zh = {f: v for lang, f, v in p.i18n if lang == "zh"}
        assert set(zh) == {"label", "description"} and all(zh.values())
        changed = _changed_fields(base.model, p.model)
        assert len(changed) == (0 if name == "variant-base" else 1), (name, changed)
    for axis, names in VARIANT_AXES.items():
        assert names[0] == "variant-base", axis
        for name in names[1:]:
            assert len(_changed_fields(base.model, PRESETS[name].model)) == 1, name
            assert PRESETS[name].train.max_steps == base.train.max_steps and PRESETS[name].train.seed == 0
    # the shared model without positional encoding is the pitfall lab's
    assert PRESETS["pitfall-no-positional-encoding"].model.pos_encoding == "none"


@pytest.mark.parametrize("kv", [None, 2, 1])
@pytest.mark.parametrize("pos", ["sinusoidal", "rope"])
def test_the_kv_cache_measured_in_decoding_is_the_formula(kv, pos):
    cfg = ModelConfig(vocab_size=30, d_model=32, n_heads=4, n_kv_heads=kv, d_ff=64, n_enc_layers=1,
                      n_dec_layers=3, max_len=12, pos_encoding=pos)
    model = Transformer(cfg)
    measured = kv_cache_bytes(model, 6)
    assert measured == kv_formula(cfg) == 2 * 3 * cfg.kv_heads * 8 * 4
    assert kv_cache_bytes(model, 2) == measured  # per token: the same whatever the length
    assert kv_formula(cfg, 2) * 2 == kv_formula(cfg)


def test_fewer_kv_heads_mean_a_proportionally_smaller_cache():
    sizes = {name: kv_cache_bytes(load_model(name).model) for name in VARIANT_AXES["attention"]}
    mha, gqa, mqa = (sizes[n] for n in VARIANT_AXES["attention"])
    assert gqa == mha / 2 and mqa == mha / 4


SHIPPED = [name for name in VARIANTS if name in available_models()]


def test_every_variant_is_shipped():
    assert SHIPPED == VARIANTS
    assert "pitfall-no-positional-encoding" in available_models()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_variant_is_float16_and_shows_the_exact_match_it_claims(name):
    info = model_info(name)
    assert info.group == "variant" and info.listed is False and info.text("label", "zh") != info.label
    bundle = load_model(name)
    assert bundle.cfg == PRESETS[name].model
    assert bundle.metrics["weights_dtype"] == "float16"
    with safe_open(str(bundle.directory / "model.safetensors"), framework="pt") as f:
        assert {f.get_slice(k).get_dtype() for k in f.keys()} == {"F16"}
    assert step_series(bundle.history)["step"] == list(range(1, bundle.info["step"] + 1))
    claimed = bundle.metrics["results"]["task"]
    fresh = evaluate_model(bundle.model, bundle.task, "test", n=claimed["n"])["task"]
    assert abs(fresh["exact_match"] - claimed["exact_match"]) <= 0.02


def test_a_variant_row_reads_the_models_own_records():
    bundle = load_model("variant-gqa")
    row = variant_row(bundle)
    series = step_series(bundle.history)
    assert row.exact_match == bundle.metrics["results"]["task"]["exact_match"]
    assert row.final_loss == pytest.approx(np.mean(series["loss"][-50:]))
    assert row.valid_loss == [r["valid_loss"] for r in bundle.history if "valid_loss" in r][-1]
    assert row.kv_heads == 2 and row.kv_bytes == kv_formula(bundle.cfg)
    assert row.parameters == sum(p.numel() for p in bundle.model.parameters())
    assert row.parameters < variant_row(load_model("variant-base")).parameters


def test_variant_view_is_teacher_forced_on_the_right_answer():
    bundle = load_model("variant-rope")
    view = variant_view(bundle, "lens")
    assert view.answer == "snel"
    assert "".join(view.analysis.target_tokens[1:]) == "snel"
    assert view.output == analyze(bundle, "lens").output_text


def test_viz_refuses_mismatched_inputs():
    with pytest.raises(ValueError):
        viz.variant_bars(["a", "b"], [0.5], value_name="v")
    with pytest.raises(ValueError):
        viz.variant_loss_curves({})
    with pytest.raises(ValueError):
        viz.variant_loss_curves({"a": {"step": [1, 2], "loss": [1.0]}})
    with pytest.raises(ValueError):
        viz.scrub_timeline([1, 2], [1.0, 0.5], [0, 2], [0.0, 0.5], current=1)  # 1 is not a snapshot
    with pytest.raises(ValueError):
        viz.alignment_timeline([0, 1], np.zeros((2, 2)), 0, (0, 0))
    with pytest.raises(ValueError):
        viz.alignment_timeline([0, 1], np.zeros((2, 2, 4)), 0, (2, 0))


# --------------------------------------------------------------------------- the page


def arr(value) -> np.ndarray:
    if is_typed_array_spec(value):
        return decode_plotly_array(value)
    return np.array(value, dtype=float)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("axis", ["position", "attention"])
def test_the_page_draws_the_models_numbers(axis, lang):
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": "reverse", "text": "lens", "layer": "1", "head": "0", "lang": lang,
                            "axis": axis})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    names = VARIANT_AXES[axis]
    bundles = {n: load_model(n) for n in MODELS}
    labels = [model_info(n).text("label", lang) for n in names]
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    curves, bars, *maps, kv = figs
    assert len(maps) == len(names)
    # the table: every model's stored test exact match
    table = at.dataframe[0].value
    np.testing.assert_allclose(table[tr(lang, "variants.col.em")].to_numpy(dtype=float),
                               [bundles[n].metrics["results"]["task"]["exact_match"] for n in MODELS])
    # the curves: each model's own per-step training loss
    for trace, name, label in zip(curves["data"], names, labels, strict=True):
        assert trace["name"] == label
        np.testing.assert_allclose(arr(trace["y"]), step_series(bundles[name].history)["loss"], rtol=1e-6)
    np.testing.assert_allclose(arr(bars["data"][0]["y"]),
                               [bundles[n].metrics["results"]["task"]["exact_match"] for n in names])
    # the heatmaps: cross-attention L1 H0 of each model, teacher-forced on the right answer
    for fig, name in zip(maps, names, strict=True):
        direct = analyze(bundles[name], "lens", target="snel").attention("cross")[1, 0]
        np.testing.assert_allclose(arr(fig["data"][-1]["z"]), direct, atol=1e-6)
    # the key/value cache: measured, equal to the formula, halved by GQA and quartered by MQA
    kv_names = VARIANT_AXES["attention"]
    measured = [kv_cache_bytes(bundles[n].model, KV_TOKENS) for n in kv_names]
    np.testing.assert_allclose(arr(kv["data"][0]["y"]), measured)
    assert measured == [kv_formula(bundles[n].cfg) for n in kv_names]
    assert measured[1] == measured[0] / 2 and measured[2] == measured[0] / 4
    if lang == "zh":
        tokens = ["lens", "snel", *[analyze(bundles[n], "lens").output_text for n in names], *labels,
                  *[model_info(n).text("label", "zh") for n in MODELS],
                  *[model_info(n).text("description", "zh") for n in MODELS]]
        left = {s: untranslated(s, tokens) for s in page_texts(at)}
        assert not {s: f for s, f in left.items() if f}, left


def test_the_measured_sentence_follows_the_numbers():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params.update({"model": "reverse", "text": "attention", "lang": "en", "axis": "position"})
    at.run()
    assert not at.exception
    ems = {n: load_model(n).metrics["results"]["task"]["exact_match"] for n in VARIANT_AXES["position"]}
    best, worst = max(ems, key=ems.get), min(ems, key=ems.get)
    want = tr("en", "variants.measured", best=model_info(best).label, best_em=f"{ems[best]:.3f}",
              worst=model_info(worst).label, worst_em=f"{ems[worst]:.3f}",
              spread=f"{ems[best] - ems[worst]:.3f}")
    assert want in [str(m.value) for m in at.markdown]
