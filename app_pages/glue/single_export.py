"""Downloads of the attention tensors of the current sentence: CSV (long format) and NPZ.

The NPZ is the project's archive format (:func:`model.export.archive.activations_npz`) of the patterns and
scores, computed layer by layer from the cached analysis while the file is written; past
:data:`model.export.scopes.LIMIT_BYTES` it holds the chosen kind, layer or head only. The CSV is
:func:`viz.export.attention_csv` of the patterns; a CSV of more than :data:`viz.export.CSV_ROW_LIMIT` rows is
offered one kind, one layer or one head at a time (a head whatever its size: it is written in blocks of
query rows). Both files are built only when their button is clicked.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import streamlit as st

from app_support.i18n import t
from model.export.archive import activations_npz, squares_bytes
from model.export.scopes import LIMIT_BYTES, PAGE_SQUARES, Scope
from model.network.kinds import KINDS
from model.run.analysis import Analysis
from viz.export import CSV_COLUMNS, CSV_ROW_LIMIT, attention_csv

ALL = "all"
#: (kind or ALL, layer or None, head or None)
ExportScope = tuple[str, int | None, int | None]
#: Query rows of one head written at a time into its CSV.
CSV_BLOCK_ROWS = 128


def patterns_of(result: Analysis) -> dict[str, object]:
    """kind -> [layer, head, query, key] weights (arrays, or AttentionStacks computing what is indexed)."""
    return {k: result.attention(k) for k in KINDS if result.n_layers(k) > 0}


def _cells(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape))


def row_count(patterns: dict[str, object], scope: ExportScope = (ALL, None, None)) -> int:
    """Rows of the CSV of ``scope``, from the shapes alone (nothing is computed)."""
    kind, layer, head = scope
    if kind == ALL:
        return sum(_cells(p.shape) for p in patterns.values())
    shape = patterns[kind].shape
    return _cells(shape[2:]) * (shape[1] if head is None else 1) * (shape[0] if layer is None else 1)


def scopes(patterns: dict[str, object], limit: int = CSV_ROW_LIMIT) -> list[ExportScope]:
    """The CSV choices: everything (when it fits in ``limit`` rows), each kind that fits, else each layer
    that fits, else each head of that layer."""
    out: list[ExportScope] = []
    if row_count(patterns) <= limit:
        out.append((ALL, None, None))
    for kind, array in patterns.items():
        n_layers, n_heads = array.shape[:2]
        if row_count(patterns, (kind, None, None)) <= limit:
            out.append((kind, None, None))
        elif row_count(patterns, (kind, 0, None)) <= limit:
            out.extend((kind, layer, None) for layer in range(n_layers))
        else:
            out.extend((kind, layer, head) for layer in range(n_layers) for head in range(n_heads))
    return out


def select(patterns: dict[str, object], scope: ExportScope) -> dict[str, object]:
    """The weights of a kind or layer scope (a layer: that layer alone, computed)."""
    kind, layer, _ = scope
    if kind == ALL:
        return patterns
    return {kind: patterns[kind] if layer is None else patterns[kind][layer : layer + 1]}


def _head_csv(result: Analysis, scope: ExportScope) -> bytes:
    """One head's CSV as :func:`viz.export.attention_csv` writes its rows (its L² weights computed once, the
    text written a block of query rows at a time)."""
    kind, layer, head = scope
    pattern = np.asarray(result.attention(kind)[layer, head], dtype=np.float32)  # [query_pos, key_pos]
    queries, keys = result.tokens_for(kind)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for start in range(0, pattern.shape[0], CSV_BLOCK_ROWS):
        for i, row in enumerate(pattern[start : start + CSV_BLOCK_ROWS], start):
            writer.writerows((kind, layer, head, i, j, queries[i], keys[j], str(w))
                             for j, w in enumerate(row))
    return out.getvalue().encode("utf-8")


def csv_bytes(result: Analysis, scope: ExportScope = (ALL, None, None)) -> bytes:
    """The CSV of one scope. A layer or head scope keeps its real layer (and head) number."""
    kind, layer, head = scope
    if head is not None:
        return _head_csv(result, scope)
    patterns = select(patterns_of(result), scope)
    tokens = {k: result.tokens_for(k) for k in patterns}
    return attention_csv(patterns, tokens, first_layer={kind: layer} if layer is not None else None)


def npz_scope(result: Analysis, scope: ExportScope) -> Scope:
    """What the NPZ holds: the largest of everything, the chosen kind, its layer or its head whose patterns
    and scores fit in LIMIT_BYTES (a head whatever its size)."""
    kind, layer, head = scope
    if kind == ALL:  # offered only within the CSV's rows, far below the limit
        return Scope()
    for part in [Scope(), Scope(kind)] + [Scope(kind, layer)] * (layer is not None):
        if squares_bytes(result, part, PAGE_SQUARES) <= LIMIT_BYTES:
            return part
    return Scope(kind, layer, head)


def npz_bytes(result: Analysis, scope: ExportScope = (ALL, None, None)) -> bytes:
    """The patterns and scores of :func:`npz_scope` under their hook names, computed layer by layer."""
    return activations_npz(result, npz_scope(result, scope), PAGE_SQUARES, hooks=False)


def _scope_label(scope: ExportScope) -> str:
    kind, layer, head = scope
    if kind == ALL:
        return t("export.scope.all")
    name = t(f"kind.{kind}.label")
    if layer is None:
        return t("export.scope.kind", kind=name)
    if head is None:
        return t("export.scope.layer", kind=name, layer=layer)
    return t("export.scope.head", kind=name, layer=layer, head=head)


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
    base = f"attention-lens-{name}"
    suffix = "-".join([scope[0]] + [f"{w}{n}" for w, n in zip(("layer", "head"), scope[1:], strict=True)
                                    if n is not None])
    mid.download_button(t("export.csv"), data=lambda: csv_bytes(result, scope),
                        file_name=f"{base}-{suffix}.csv", mime="text/csv", key=f"{key}_csv",
                        on_click="ignore", icon=":material/table:")
    part = npz_scope(result, scope)
    right.download_button(t("export.npz"), data=lambda: npz_bytes(result, scope),
                          file_name=f"{base}.npz" if part == Scope() else f"{base}-{part.slug}.npz",
                          mime="application/octet-stream", key=f"{key}_npz", on_click="ignore",
                          icon=":material/download:")
    st.caption(t("export.caption", rows=f"{row_count(patterns, scope):,}", total=f"{row_count(patterns):,}",
                 limit=f"{CSV_ROW_LIMIT:,}"))
    if part != Scope():
        mib, held = 2**20, (part.kind or ALL, part.layer, part.head)
        st.caption(t("export.npz_part", size=f"{squares_bytes(result, Scope(), PAGE_SQUARES) / mib:,.0f}",
                     limit=f"{LIMIT_BYTES / mib:,.0f}", part=_scope_label(held),
                     bytes=f"{squares_bytes(result, part, PAGE_SQUARES) / mib:,.1f}"))
