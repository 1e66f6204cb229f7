"""Display names and meanings of the columns of viz's tables, per interface language.

The tables (:func:`viz.head_stats`, :func:`viz.rank_heads_by_change`,
:func:`viz.shape_trace_table`) keep their English column names in every language: they are the
data's identifiers, which the pages index by. A page shows them in the interface language with
``column_labels(kind, lang)`` (e.g. as ``st.column_config`` labels) and explains them with
``column_help(kind, lang)``.
"""

from __future__ import annotations

from viz.labels import TEXT, label
from viz.shapes import SHAPE_TRACE_COLUMNS
from viz.stats import HEAD_STATS_COLUMNS

#: Table kind (the name of the function that makes the table) -> its columns, in order.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "head_stats": tuple(HEAD_STATS_COLUMNS),
    "rank_heads_by_change": ("rank", "layer", "head", "js_divergence", "n_queries"),
    "shape_trace_table": tuple(SHAPE_TRACE_COLUMNS),
}


def _columns(kind: str) -> tuple[str, ...]:
    if kind not in TABLE_COLUMNS:
        raise ValueError(f"unknown table kind {kind!r}; choose one of {sorted(TABLE_COLUMNS)}")
    return TABLE_COLUMNS[kind]


def column_labels(kind: str, lang: str = "en") -> dict[str, str]:
    """Column name -> display label in ``lang`` for the table ``kind``.

    English labels are what the pages show today (``entropy_norm`` -> "entropy norm",
    ``js_divergence`` -> "change (JS, nats)", ``n_rows``/``n_queries`` -> "rows").
    """
    return {col: label(lang, f"col.{kind}.{col}") for col in _columns(kind)}


def column_help(kind: str, lang: str = "en") -> dict[str, str]:
    """Column name -> what it means, in ``lang``, for the columns of ``kind`` that have a help text."""
    return {
        col: label(lang, f"help.{kind}.{col}") for col in _columns(kind) if f"help.{kind}.{col}" in TEXT["en"]
    }
