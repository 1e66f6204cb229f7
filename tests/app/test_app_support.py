"""Logic that lives in app_support/ (not in pages): tested without a browser or AppTest."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app_pages.glue.model import evaluation_rows, history_long, metric_columns, run_starts, total_steps
from model.lab.positional import position_table
from model.network.positional import sinusoidal_table
from model.store.bundle import Bundle
from model.store.registry import load_model
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


def test_a_history_of_two_runs_counts_its_steps_on():
    first = [{"step": s, "loss": 5.0 - s / 100, "note": "from assets/models/default"} for s in (25, 50, 100)]
    second = [{"step": s, "loss": 3.0 - s / 1000} for s in (25, 50, 75)]
    assert total_steps(first + second) == [25, 50, 100, 125, 150, 175]
    assert run_starts(first + second) == [100]
    assert run_starts(first) == [] and total_steps(first) == [25, 50, 100]
    long = history_long(first + second, ["loss"])
    assert list(long["step"]) == [25, 50, 100, 125, 150, 175]  # one rising line, not two overlapping
    # a third run, and records without a step
    third = [{"step": 10, "loss": 1.0}]
    assert total_steps(first + second + third) == [25, 50, 100, 125, 150, 175, 185]
    assert run_starts(first + second + third) == [100, 175]
    assert total_steps([{"loss": 1.0}, {"loss": 0.5}]) == [0, 1]


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


def test_model_page_names_in_both_languages():
    from app_pages.glue.model import (
        SYMBOLS,
        config_table,
        evaluation_label,
        history_chart,
        series_label,
        symbol_table,
    )

    # English shows the stored names exactly as before; Chinese names them for learners.
    assert evaluation_label("zh->en", "bleu") == "zh->en bleu"
    assert evaluation_label("task", "exact_match") == "task exact_match"
    assert evaluation_label("zh->en", "bleu", "zh") == "中译英 · BLEU"
    assert evaluation_label("de->en", "meteor", "zh") == "de->en · meteor"  # unknown names stay as stored
    for series in ["loss", "valid_loss", "zh->en_chrf", "exact_match", "lr"]:
        assert series_label(series) == series
    zh_series = [series_label(s, "zh") for s in ["loss", "en->zh_bleu", "exact_match"]]
    assert zh_series == ["训练损失", "英译中 · BLEU", "完全匹配率"]
    history = [{"step": 1, "loss": 3.0}, {"step": 2, "loss": 2.0, "valid_loss": 2.5}]
    en = history_chart(history, ["loss", "valid_loss"])
    zh = history_chart(history, ["loss", "valid_loss"], "zh")
    assert list(en.columns) == ["step", "series", "value"]
    assert list(en["series"]) == ["loss", "loss", "valid_loss"]
    assert list(zh.columns) == ["训练步数", "曲线", "数值"]
    assert list(zh["曲线"]) == ["训练损失", "训练损失", "验证损失"]
    assert history_chart([], ["loss"], "zh").empty
    sizes = {"B": 1, "d_model": 64}
    en_symbols = symbol_table(sizes)
    assert list(en_symbols.columns) == ["symbol", "value", "meaning"]
    assert list(en_symbols["symbol"]) == list(SYMBOLS)
    assert symbol_table(sizes, "zh").iloc[0].tolist()[:2] == ["B", 1]
    assert symbol_table(sizes, "zh").iloc[0].tolist()[2].startswith("批大小")
    # symbols without a size are missing numbers (a column Arrow can carry), not ""
    import pyarrow as pa

    assert en_symbols["value"].isna().sum() == len(SYMBOLS) - 2
    assert pa.Table.from_pandas(en_symbols).schema.field("value").type == pa.int64()
    config = config_table({"d_model": 64, "brand_new_field": True}, "zh")
    assert list(config.columns) == ["配置项", "取值", "含义"]
    assert config["含义"].tolist()[1] == "" and config["取值"].tolist() == ["64", "True"]
    assert config_table({}).empty


def test_a_model_output_is_bold_markdown_without_its_outer_spaces():
    """A language model's " Paris": a bold run may not start with a space (its asterisks would show)."""
    from app_support.ui import escape_md, md_output

    assert md_output(" Paris") == "**Paris**"
    assert md_output(" *a* <b> ") == f"**{escape_md('*a* <b>')}**"
    assert md_output(" \n ").startswith("*(") and md_output("").endswith(")*")  # the empty-output note


def _entries() -> set[tuple[str, str]]:
    """(module, name) of every ``@entry`` function each module of model/lab/ holds (its own or imported)."""
    import importlib
    import pkgutil

    import model.lab

    found = set()
    for info in pkgutil.iter_modules(model.lab.__path__):
        module = importlib.import_module(f"model.lab.{info.name}")
        found |= {(info.name, name) for name, fn in vars(module).items()
                  if not name.startswith("_") and getattr(fn, "lab_entry", None) is not None}
    return found


def test_every_lab_entry_is_served_once_by_name_and_nothing_else_is():
    import importlib
    import inspect

    from app_support import lab

    served = {(module, name): fn for module, space in vars(lab).items()
              if inspect.isclass(space) and space.__module__ == lab.__name__
              for name, fn in vars(space).items() if not name.startswith("_")}
    assert set(served) == _entries()
    for (module, name), fn in served.items():  # each line serves the function it names, cached
        wrapped = getattr(fn, "uncached", None)
        assert wrapped is getattr(importlib.import_module(f"model.lab.{module}"), name), (module, name)


def test_serving_a_function_that_is_no_lab_entry_is_refused():
    from app_support.gateway import served

    with pytest.raises(TypeError, match="not an @entry function"):
        served(load_model)
