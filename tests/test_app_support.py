"""Logic that lives in app_support/ (not in pages): tested without a browser or AppTest."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app_support.model_info import evaluation_rows, history_long, metric_columns
from app_support.models import position_table
from model.network.positional import sinusoidal_table
from model.registry import load_model
from model.training.checkpoint import Bundle
from tests.conftest import tiny_config


def test_evaluation_rows_from_real_metrics():
    metrics = load_model("default").metrics
    rows = evaluation_rows(metrics)
    assert [name for name, _, _ in rows] == list(metrics["results"])
    for name, shown, n in rows:
        res = metrics["results"][name]
        assert n == res["n"]
        assert dict(shown)["chrf"] == f"{res['chrf']:.3g}"
        assert "n" not in dict(shown)


@pytest.mark.parametrize("metrics", [None, [], {"results": 3}, {"results": {"x": "bad"}}, {}])
def test_evaluation_rows_skip_malformed_metrics(metrics):
    assert evaluation_rows(metrics) == []


def test_evaluation_rows_skip_non_numbers_and_booleans():
    rows = evaluation_rows({"results": {"d": {"chrf": 41.5, "flag": True, "note": "x", "n": 7}}})
    assert rows == [("d", [("chrf", "41.5")], 7)]


def test_history_helpers():
    history = [{"step": 1, "loss": 3.0}, {"step": 2, "loss": 2.0, "valid_loss": 2.5, "zh->en_chrf": 30.0}]
    losses, scores = metric_columns(history)
    assert losses == ["loss", "valid_loss"] and scores == ["zh->en_chrf"]
    long = history_long(history, losses)
    assert len(long) == 3 and set(long["series"]) == {"loss", "valid_loss"}


def _bundle(pos_encoding: str) -> Bundle:
    from model.network.transformer import Transformer

    torch.manual_seed(0)
    model = Transformer(tiny_config(pos_encoding=pos_encoding)).eval()
    return Bundle(name="tiny", model=model, task=None, directory=None)


def test_position_table_is_the_learned_table_at_the_models_size():
    b = _bundle("learned")
    table, own = position_table(b, b.cfg.max_len, b.cfg.d_model)
    assert own
    np.testing.assert_array_equal(table, b.model.encoder.embed.positions.table.detach().numpy())


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope", "none"])
def test_position_table_falls_back_to_sinusoidal(pos):
    b = _bundle(pos)
    table, own = position_table(b, 20, 16)
    np.testing.assert_allclose(table, sinusoidal_table(20, 16).numpy())
    assert own == (pos == "sinusoidal" and b.cfg.d_model == 16)
