"""The input budget: every model reads at most the input whose analysis fits in the budget, a model
that allows more is clamped with a note, one whose shortest useful input does not fit is refused."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from model.core.messages import render
from model.data.tasks import task_from_dict
from model.network.config import ModelConfig
from model.network.positional import LearnedPositions
from model.network.transformer import Transformer
from model.run.analysis import analyze, attention_only
from model.store import budget
from model.store.formats.own import load_checkpoint, save_checkpoint
from model.store.problems import CheckpointError, UserModelError
from model.store.registry import available_models, load_model
from model.store.sources import shipped
from model.store.user_folders import load_user_model
from strings.messages_zh import MESSAGES_ZH
from tests.paths import REPO_ROOT

REVERSE = REPO_ROOT / "assets" / "models" / "reverse"
SHIPPED = json.loads((REVERSE / "config.json").read_text(encoding="utf-8"))


def _config(**sizes) -> ModelConfig:
    return ModelConfig.from_dict({**SHIPPED["model"], **sizes})


def _upload(folder: Path, example: str = "a" * 8000, **sizes) -> Path:
    """A checkpoint folder of random weights at ``sizes`` with the reverse model's tokenizer."""
    torch.manual_seed(0)
    task = task_from_dict(SHIPPED["task"], REVERSE)
    save_checkpoint(folder, Transformer(_config(**sizes)), task, info={"example": example, "label": "probe"})
    return folder


#: Within every size limit; one head's scores and pattern at its full length would take 768 MiB.
WIDE = dict(max_len=8192, n_heads=16, n_enc_layers=2, n_dec_layers=2)


@settings(max_examples=60, deadline=None)
@given(layers=st.integers(1, 64), heads=st.sampled_from([1, 2, 4, 8, 16, 64, 256]),
       max_len=st.integers(1, 8192), budget_mib=st.integers(1, 4096))
def test_the_limit_is_the_longest_input_within_the_budget(layers, heads, max_len, budget_mib):
    cfg = _config(n_enc_layers=layers, n_dec_layers=layers, n_heads=heads, d_model=heads * 4, max_len=max_len)
    limit = budget.input_limit(cfg, budget_mib * budget.MiB)
    assert 0 <= limit <= max_len
    if limit:
        assert budget.analysis_bytes(cfg, limit) <= budget_mib * budget.MiB
    if limit < max_len:
        assert budget.analysis_bytes(cfg, limit + 1) > budget_mib * budget.MiB


def test_what_an_analysis_keeps_grows_with_width_times_length_not_heads_times_the_square():
    cfg = _config(**WIDE)
    kept = {n: budget.kept_bytes(cfg, n) for n in (256, 512, 1024)}
    assert kept[1024] == 2 * kept[512] == 4 * kept[256]  # linear in L
    more_heads = dataclasses.replace(cfg, n_heads=32, d_model=cfg.d_model * 2)
    assert budget.kept_bytes(more_heads, 512) == 2 * kept[512]  # heads x d_head, once per layer
    # the squares computed at once: one head's (a page), or a layer while its steps are explicit
    assert budget.page_bytes(cfg, 4096) == 3 * 4 * 4096 * 4096  # one head, past a block of rows
    assert budget.page_bytes(cfg, 1024) == 32 * budget.MiB  # a block of rows of every head
    grown = budget.pass_bytes(cfg, 4096) - budget.pass_bytes(cfg, 2048)
    assert grown < 4 * 16 * 4096 * 4096  # fused: no heads x L²
    assert budget.attention_layers(cfg) == 2 + 2 * 2  # encoder self, decoder self + cross
    assert budget.attention_layers(dataclasses.replace(cfg, n_enc_layers=0, decoder_only=True)) == 2


def test_the_budget_follows_what_an_analysis_holds():
    """The estimate bounds what an analysis really keeps (its arrays, counted)."""
    from app_support.byte_cache import nbytes

    bundle = load_user_model(_upload(Path(__import__("tempfile").mkdtemp()) / "wide", **WIDE))
    # Teacher-forced on a target as long as the limit: the decoder reads max_len tokens in one pass
    # (random weights never say eos, and decoding them token by token to the limit took over a minute).
    result = analyze(bundle, "a" * 8000, target="a" * 8000, keep=attention_only)
    held = sum(rec.nbytes for rec in result.attention_inputs.values())
    assert nbytes(result.attention_inputs) - held < 4096  # nothing else of any size
    assert held == budget.kept_bytes(bundle.cfg, bundle.cfg.max_len)


@pytest.mark.parametrize("name", [n for n in available_models() if n != "smollm2"])
def test_every_shipped_model_reads_its_whole_context(name):
    """The budget binds uploads and real LLMs (SmolLM2's 8,192 positions: tests/model/store/
    test_smollm2.py); MiniLM's 512 tokens and every model we trained fit in it."""
    bundle = load_model(name)
    assert "budget" not in bundle.info
    assert budget.input_limit(bundle.cfg) == bundle.cfg.max_len


def test_a_config_past_the_budget_is_clamped_with_a_note(tmp_path):
    folder = _upload(tmp_path / "wide", pos_encoding="learned", **WIDE)
    bundle = load_user_model(folder)
    limit = budget.input_limit(_config(**WIDE))
    assert 16 < limit < 8192
    assert bundle.cfg.max_len == limit
    tables = [m.table for m in bundle.model.modules() if isinstance(m, LearnedPositions)]
    assert tables and all(t.shape[0] == limit for t in tables)  # the rows past it are not kept
    full_mib = round(budget.analysis_bytes(_config(**WIDE), 8192) / budget.MiB)
    assert bundle.info["budget"] == {"config_max_len": 8192, "max_len": limit, "full_mib": full_mib,
                                     "budget_mib": budget.ANALYSIS_BUDGET_BYTES // budget.MiB}
    result = analyze(bundle, "a" * 8000, target="a" * 8000, keep=attention_only)  # one pass, as above
    assert len(result.source_tokens) == limit
    assert result.attention("encoder").shape[-1] == limit
    codes = [n.code for n in result.notes]
    assert "input_truncated" in codes and codes[-1] == "budget_clamped"
    said = render(result.notes[-1])
    assert f"at most {limit} tokens" in said and "allows 8192" in said, said
    assert f"{limit}" in render(result.notes[-1], MESSAGES_ZH)


def test_a_short_input_to_a_clamped_model_gets_no_budget_note(tmp_path):
    bundle = load_user_model(_upload(tmp_path / "wide", **WIDE))
    # Teacher-forced: random weights never say eos, so a decoded output would run to the limit.
    assert [n.code for n in analyze(bundle, "abc", target="cba", keep=attention_only).notes] == []


def test_a_model_whose_shortest_input_does_not_fit_is_refused_before_reading_weights(tmp_path, monkeypatch):
    folder = _upload(tmp_path / "wide", **WIDE)
    monkeypatch.setattr(budget, "ANALYSIS_BUDGET_BYTES", budget.analysis_bytes(_config(**WIDE), 15))
    read = []
    from model.store.formats import own

    monkeypatch.setattr(own, "load_file", lambda *a, **k: read.append(a))
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(folder)
    message = str(err.value)
    assert "\n" not in message and "config.json" in message and "16-token input" in message, message
    assert read == []
    with pytest.raises(UserModelError, match="16-token input"):
        load_user_model(folder)


def test_the_sidebar_says_why_a_clamped_model_reads_less(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(REVERSE, models / "reverse")
    _upload(models / "wide", example="abc", **WIDE)
    monkeypatch.setattr(shipped, "MODELS_DIR", models)
    # A budget that clamps the wide model to 96 tokens (5,161 under the default budget): the same notes,
    # for a page that draws 96 of the 900 tokens instead of all 900 on 16 heads.
    monkeypatch.setattr(budget, "ANALYSIS_BUDGET_BYTES", budget.analysis_bytes(_config(**WIDE), 96))
    limit = budget.input_limit(_config(**WIDE))
    assert limit == 96
    for lang, needle in (("en", f"at most {limit} tokens"), ("zh", f"最多读取 {limit} 个 token")):
        at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=300)
        at.query_params.update({"model": "wide", "text": "a" * 900, "lang": lang})
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        captions = [c.value.replace("\\", "") for c in at.sidebar.caption]
        assert any(needle in c for c in captions), captions
        at.switch_page("app_pages/single.py").run()
        assert not at.exception, [e.message for e in at.exception]
        boxes = " ".join(b.value.replace("\\", "") for b in [*at.warning, *at.info])
        assert needle in boxes, boxes  # the cut input says why the model reads so little
