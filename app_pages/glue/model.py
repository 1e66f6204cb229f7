"""Glue for the model page: shape symbols and configuration explained, evaluation and training history
named in the interface language, training history as a table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from app_support.anatomy import layer_weights  # noqa: F401 (the page and its tests read it here)
from app_support.i18n import STRINGS, text

#: The shape symbols the model page explains, in this order (meanings: ``model.symbol.<symbol>``).
SYMBOLS: tuple[str, ...] = ("B", "L_src", "L_tgt", "d_model", "h", "h_kv", "d_head", "d_ff", "V")

#: Figures stored in evaluation results and training history (display names: ``model.figure.<name>``).
FIGURES: tuple[str, ...] = ("chrf", "bleu", "exact_match", "accuracy")


def display_name(group: str, name: str, lang: str = "en") -> str:
    """How the page names a stored name (a direction, a figure, a history column) in ``lang``.

    ``group`` is ``eval_name``, ``figure`` or ``series`` (texts ``model.<group>.<name>``); a name
    without a text is shown as it is stored.
    """
    key = f"model.{group}.{name}"
    return text(lang, key) if key in STRINGS[lang] else name


def symbol_table(sizes: Mapping[str, object], lang: str = "en") -> pd.DataFrame:
    """``symbol, value, meaning`` (named in ``lang``): every shape symbol, its size in this pass,
    its meaning."""
    symbol, value, meaning = (text(lang, f"model.col.{c}") for c in ("symbol", "value", "meaning"))
    # A symbol this pass has no size for (L_tgt of an encoder-only model) is a missing number, shown
    # blank: "" in a column of numbers made Arrow refuse the column and Streamlit log the failure.
    return pd.DataFrame({
        symbol: list(SYMBOLS),
        value: pd.array([sizes.get(s) for s in SYMBOLS], dtype="Int64"),
        meaning: [text(lang, f"model.symbol.{s}") for s in SYMBOLS],
    })


def config_table(config: Mapping[str, object], lang: str = "en") -> pd.DataFrame:
    """``setting, value, meaning`` (named in ``lang``), one row per configuration field."""
    setting, value, meaning = (text(lang, f"model.col.{c}") for c in ("setting", "value", "meaning"))
    rows = []
    for k, v in config.items():
        key = f"model.config.{k}"
        rows.append({setting: k, value: str(v), meaning: text(lang, key) if key in STRINGS[lang] else ""})
    return pd.DataFrame(rows)


def evaluation_label(name: str, figure: str, lang: str = "en") -> str:
    """The label of one evaluation figure, e.g. ``zh->en bleu`` (English) or ``中译英 BLEU``."""
    return text(lang, "model.eval.metric", name=display_name("eval_name", name, lang),
                figure=display_name("figure", figure, lang))


def series_label(series: str, lang: str = "en") -> str:
    """The name of one training-history column in ``lang`` (English: the column's own name)."""
    if series in FIGURES:
        return display_name("figure", series, lang)
    for figure in FIGURES:
        if series.endswith("_" + figure):  # a score of one direction or task, e.g. zh->en_chrf
            name = series[: -len(figure) - 1]
            return text(lang, "model.score_series", name=display_name("eval_name", name, lang),
                        figure=display_name("figure", figure, lang))
    return display_name("series", series, lang)


def history_chart(history: Sequence[Mapping[str, object]], columns: Sequence[str],
                  lang: str = "en") -> pd.DataFrame:
    """:func:`history_long` named for a chart in ``lang``: columns (step, series, value) in that
    order, and each series by its display name."""
    long = history_long(history, columns)
    long["series"] = [series_label(str(s), lang) for s in long["series"]]
    return long.rename(columns={c: text(lang, f"model.chart.{c}") for c in ("step", "series", "value")})


def run_starts(history: Sequence[Mapping[str, object]]) -> list[int]:
    """Where each run after the first begins, in :func:`total_steps` (a model trained on from another
    checkpoint keeps that run's records first, and its own steps count from 0 again)."""
    steps = total_steps(history)
    raw = [int(r.get("step", i)) for i, r in enumerate(history)]
    return [steps[i - 1] for i in range(1, len(raw)) if raw[i] <= raw[i - 1]]


def total_steps(history: Sequence[Mapping[str, object]]) -> list[int]:
    """Each record's optimiser step counted over every run in the history: where a record's own step
    is not above the one before it, a new run began, and it counts on from there."""
    out: list[int] = []
    offset, previous = 0, None
    for i, record in enumerate(history):
        step = int(record.get("step", i))
        if previous is not None and step <= previous:
            offset += previous
        out.append(step + offset)
        previous = step
    return out


def history_long(history: Sequence[Mapping[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``step, series, value`` rows for the given history columns, skipping missing values; steps
    count over every run the history joins (:func:`total_steps`)."""
    if not history:
        return pd.DataFrame(columns=["step", "series", "value"])
    df = pd.DataFrame(list(history))
    df["step"] = total_steps(history)
    cols = [c for c in columns if c in df]
    if not cols:
        return pd.DataFrame(columns=["step", "series", "value"])
    long = df[["step", *cols]].melt(id_vars="step", var_name="series", value_name="value")
    long = long.dropna(subset=["value"])
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    return long.dropna(subset=["value"]).reset_index(drop=True)


def metric_columns(history: Sequence[Mapping[str, object]]) -> tuple[list[str], list[str]]:
    """(loss-like columns, score columns such as ``zh->en_chrf``) present in a history."""
    keys: list[str] = []
    for rec in history:
        for k in rec:
            if k not in keys:
                keys.append(k)
    losses = [k for k in keys if "loss" in k]
    scores = [k for k in keys if k.endswith(("_chrf", "_bleu", "exact_match", "_accuracy"))]
    return losses, scores


def evaluation_rows(metrics: object) -> list[tuple[str, list[tuple[str, str]], int | None]]:
    """What the model page shows of stored evaluation results.

    One row per evaluated direction (or task): ``(name, [(figure name, formatted value)], n)``
    where ``n`` is the number of test sentences (None if not stored). Anything malformed in a
    hand-edited metrics.json is skipped rather than shown wrongly.
    """
    results = metrics.get("results") if isinstance(metrics, Mapping) else None
    if not isinstance(results, Mapping):
        return []
    rows = []
    for name, res in results.items():
        if not isinstance(res, Mapping):
            continue
        shown = [(k, f"{v:.3g}" if isinstance(v, float) else str(v))
                 for k, v in res.items()
                 if isinstance(v, int | float) and not isinstance(v, bool) and k != "n"]
        n = res.get("n")
        rows.append((str(name), shown, n if isinstance(n, int) and not isinstance(n, bool) else None))
    return rows
