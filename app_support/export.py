"""Downloads of the attention tensors of the current sentence: CSV (long format) and NPZ.

The NPZ is the project's archive format (``model.analysis.activations_npz``) of the cached analysis,
which holds exactly the attention patterns and scores; the CSV is :func:`viz.export.attention_csv`
of the patterns. Both files are built only when their button is clicked. A CSV of more than
:data:`viz.export.CSV_ROW_LIMIT` rows is offered one kind or one layer at a time.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app_support.i18n import t
from model.analysis import Analysis, activations_npz
from model.network.kinds import KINDS
from viz.export import CSV_ROW_LIMIT, attention_csv, csv_row_count

ALL = "all"


def patterns_of(result: Analysis) -> dict[str, np.ndarray]:
    """kind -> [layer, head, query, key] weights of every attention kind the model has."""
    return {k: result.attention(k) for k in KINDS if result.n_layers(k) > 0}


def scopes(patterns: dict[str, np.ndarray], limit: int = CSV_ROW_LIMIT) -> list[tuple[str, int | None]]:
    """The CSV choices: everything (when it fits in ``limit`` rows), each kind that fits, else each layer."""
    out: list[tuple[str, int | None]] = []
    if csv_row_count(patterns) <= limit:
        out.append((ALL, None))
    for kind, array in patterns.items():
        if array.size <= limit:
            out.append((kind, None))
        else:
            out.extend((kind, layer) for layer in range(array.shape[0]))
    return out


def select(patterns: dict[str, np.ndarray], scope: tuple[str, int | None]) -> dict[str, np.ndarray]:
    kind, layer = scope
    if kind == ALL:
        return patterns
    return {kind: patterns[kind] if layer is None else patterns[kind][layer : layer + 1]}


def csv_bytes(result: Analysis, scope: tuple[str, int | None] = (ALL, None)) -> bytes:
    """The CSV of one scope. A layer scope keeps its real layer number in the ``layer`` column."""
    patterns = select(patterns_of(result), scope)
    tokens = {k: result.tokens_for(k) for k in patterns}
    kind, layer = scope
    return attention_csv(patterns, tokens, first_layer={kind: layer} if layer is not None else None)


def _scope_label(scope: tuple[str, int | None]) -> str:
    kind, layer = scope
    if kind == ALL:
        return t("export.scope.all")
    name = t(f"kind.{kind}.label")
    if layer is None:
        return t("export.scope.kind", kind=name)
    return t("export.scope.layer", kind=name, layer=layer)


def attention_downloads(result: Analysis, name: str, *, key: str = "attention_export") -> None:
    """The CSV and NPZ buttons for ``result`` (the cached analysis of the page's sentence)."""
    patterns = patterns_of(result)
    choices = scopes(patterns)
    st.markdown(f"**{t('export.header')}**")
    left, mid, right = st.columns([2, 1, 1], vertical_alignment="bottom")
    # Labels fixed while the page runs: the widget may format its options again outside the
    # script run (e.g. in tests), where the session's language is not known.
    labels = {choice: _scope_label(choice) for choice in choices}
    scope = left.selectbox(t("export.scope"), choices, format_func=labels.__getitem__, key=f"{key}_scope")
    rows = csv_row_count(select(patterns, scope))
    base = f"attention-lens-{name}"
    suffix = scope[0] if scope[1] is None else f"{scope[0]}-layer{scope[1]}"
    mid.download_button(t("export.csv"), data=lambda: csv_bytes(result, scope),
                        file_name=f"{base}-{suffix}.csv", mime="text/csv", key=f"{key}_csv",
                        on_click="ignore", icon=":material/table:")
    right.download_button(t("export.npz"), data=lambda: activations_npz(result), file_name=f"{base}.npz",
                          mime="application/octet-stream", key=f"{key}_npz", on_click="ignore",
                          icon=":material/download:")
    st.caption(t("export.caption", rows=f"{rows:,}", total=f"{csv_row_count(patterns):,}",
                 limit=f"{CSV_ROW_LIMIT:,}"))
