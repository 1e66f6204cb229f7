"""Shape trace table (what each step of the forward pass does to tensor shapes) and a
parameter-count chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz import theme
from viz.labels import label
from viz.tokens import escape_text

STEP_KEYS = ("name", "op", "hook", "in_shapes", "out_shape", "in_symbols", "out_symbol")

SHAPE_TRACE_COLUMNS = [
    "step",
    "name",
    "op",
    "hook",
    "input shapes",
    "input symbols",
    "output shape",
    "output symbol",
]


def format_shape(shape: Sequence[int], *, lang: str = "en") -> str:
    """``(2, 7, 512)`` -> ``"2 × 7 × 512"`` (a scalar ``()`` -> ``"scalar"``, in ``lang``)."""
    dims = tuple(shape)
    if not all(isinstance(s, int | np.integer) for s in dims):
        raise ValueError(f"a shape must be a tuple of integers, got {shape!r}")
    return " × ".join(str(int(s)) for s in dims) if dims else label(lang, "shape.scalar")


def format_symbol(symbol: str | Sequence[str], *, lang: str = "en") -> str:
    """``("B", "L_src", "d_model")`` -> ``"B × L_src × d_model"``; a string is kept as it is."""
    if isinstance(symbol, str):
        return symbol
    return " × ".join(str(s) for s in symbol) if len(symbol) else label(lang, "shape.scalar")


def shape_trace_table(steps: Sequence[Mapping[str, object]], *, lang: str = "en") -> pd.DataFrame:
    """One row per forward-pass step with its input and output shapes.

    Each step has keys ``name``, ``op``, ``hook`` (or None), ``in_shapes`` (list of tuples),
    ``out_shape`` (tuple), ``in_symbols`` (one per input: a string such as ``"B × L × d_model"``
    or a sequence of symbols such as ``["B", "L", "d_model"]``) and ``out_symbol`` (likewise).
    Several inputs are joined with ``" ; "``. A step without a hook shows ``"—"``. Raises
    ``ValueError`` for missing keys or when ``in_shapes`` and ``in_symbols`` have different lengths.
    The column names are the same in every language (the data's identifiers; show them with
    ``viz.column_labels("shape_trace_table", lang)``); ``lang`` only words the cells ("scalar").
    """
    rows = []
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise ValueError(f"step {i} must be a dict, got {type(step).__name__}")
        missing = [k for k in STEP_KEYS if k not in step]
        if missing:
            raise ValueError(f"step {i} ({step.get('name', '?')!r}) is missing key(s) {missing}")
        in_shapes = list(step["in_shapes"])  # type: ignore[arg-type]
        in_symbols = list(step["in_symbols"])  # type: ignore[arg-type]
        if len(in_shapes) != len(in_symbols):
            raise ValueError(
                f"step {i} ({step['name']!r}) has {len(in_shapes)} input shapes "
                f"but {len(in_symbols)} input symbols"
            )
        rows.append(
            {
                "step": i,
                "name": str(step["name"]),
                "op": str(step["op"]),
                "hook": "—" if step["hook"] is None else str(step["hook"]),
                "input shapes": " ; ".join(format_shape(s, lang=lang) for s in in_shapes),  # type: ignore[arg-type]
                "input symbols": " ; ".join(format_symbol(s, lang=lang) for s in in_symbols),
                "output shape": format_shape(step["out_shape"], lang=lang),  # type: ignore[arg-type]
                "output symbol": format_symbol(step["out_symbol"], lang=lang),  # type: ignore[arg-type]
            }
        )
    return pd.DataFrame(rows, columns=SHAPE_TRACE_COLUMNS)


def _check_counts(counts: Mapping[str, int]) -> None:
    """ValueError unless ``counts`` maps at least one non-empty name to a non-negative integer."""
    if not counts:
        raise ValueError("counts is empty")
    for name, c in counts.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"module names must be non-empty strings, got {name!r}")
        if isinstance(c, bool) or not isinstance(c, int | np.integer) or c < 0:
            raise ValueError(f"parameter count for {name!r} must be a non-negative integer, got {c!r}")


def _parameter_bars(counts: Mapping[str, int], total: int, title: str, lang: str) -> go.Figure:
    """One horizontal bar per name, largest first, with its share of ``total`` at its end."""
    items = sorted(counts.items(), key=lambda kv: -int(kv[1]))
    labels = [escape_text(k) for k, _ in items]
    values = np.array([int(v) for _, v in items], dtype=np.int64)
    fig = go.Figure(
        go.Bar(
            x=values,
            y=np.arange(len(items), dtype=np.int32),
            orientation="h",
            marker_color=theme.ACCENT,
            customdata=labels,
            text=[f"{v / total:.1%}" if total else "" for v in values],
            textposition="outside",
            hovertemplate="%{customdata}<br>"
            + label(lang, "params.count", count="%{x:,}")
            + "<extra></extra>",
        )
    )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "params.bar_title", total=f"{total:,}")),
        height=max(320, 34 * len(items) + 160),
        width=820,
    )
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "axis.parameters")}},
        yaxis={**theme.token_axis(labels, "", reversed_=True)},
    )
    fig.update_traces(cliponaxis=False)
    return fig


def _treemap_nodes(counts: Mapping[str, int]) -> dict[str, int]:
    """Every name and every dotted prefix of one (a parent, owning 0 itself) -> the parameters it owns."""
    own: dict[str, int] = {}
    for name, c in counts.items():
        parts = name.split(".")
        for depth in range(1, len(parts)):
            own.setdefault(".".join(parts[:depth]), 0)
        own[name] = own.get(name, 0) + int(c)
    return own


def _parameter_treemap(counts: Mapping[str, int], total: int, title: str, lang: str) -> go.Figure:
    """The names nested by their dots: box area = parameters, parents sum their children."""
    own = _treemap_nodes(counts)
    ids = sorted(own)
    parents = [i.rsplit(".", 1)[0] if "." in i else "" for i in ids]
    fig = go.Figure(
        go.Treemap(
            ids=[escape_text(i) for i in ids],
            labels=[escape_text(i.rsplit(".", 1)[-1]) for i in ids],
            parents=[escape_text(p) for p in parents],
            values=np.array([own[i] for i in ids], dtype=np.int64),
            branchvalues="remainder",
            customdata=[escape_text(i) for i in ids],
            hovertemplate="%{customdata}<br>"
            + label(lang, "params.count", count="%{value:,}")
            + "<br>"
            + label(lang, "params.share_of_all", share="%{percentRoot:.1%}")
            + "<extra></extra>",
            texttemplate="%{label}<br>%{value:,}",
        )
    )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "params.treemap_title", total=f"{total:,}")),
        height=620,
        width=900,
    )
    fig.update_layout(margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return fig


def parameter_breakdown_chart(
    counts: Mapping[str, int], *, kind: str = "treemap", title: str = "", lang: str = "en"
) -> go.Figure:
    """Parameters per module.

    ``counts`` maps dotted module names (``"encoder.layers.0.self_attn"``) to the number of
    parameters *owned directly* by that name (not including children listed separately), so
    nothing is counted twice. ``kind="treemap"`` nests names by their dots (box area =
    parameters, parents sum their children); ``kind="bar"`` draws one horizontal bar per name,
    largest first. Words drawn by the figure are in ``lang`` ("en" or "zh").
    """
    _check_counts(counts)
    total = int(sum(int(c) for c in counts.values()))
    if kind == "bar":
        return _parameter_bars(counts, total, title, lang)
    if kind != "treemap":
        raise ValueError(f"kind must be 'treemap' or 'bar', got {kind!r}")
    return _parameter_treemap(counts, total, title, lang)
