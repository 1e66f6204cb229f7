"""Norm-based attention and the information-flow graph, drawn (numpy -> plotly).

:func:`norm_disagreement`: for one head, the keys whose share differs most between the attention weights
and weight × ‖value‖ (model/lab/flow.py computes both).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz.labels import label
from viz.tokens import token_labels

#: Keys the disagreement figure lists at most.
DISAGREE_TOP = 12


def disagreement(pattern: np.ndarray, weighted: np.ndarray, top: int = DISAGREE_TOP) -> np.ndarray:
    """Indices of the keys whose mean share over the query rows differs most between ``pattern`` and
    ``weighted`` ([query, key] each, rows summing to 1 or 0), largest difference first."""
    gap = np.abs(np.asarray(weighted).mean(0) - np.asarray(pattern).mean(0))
    return np.argsort(-gap, kind="stable")[: min(top, gap.size)]


def norm_disagreement(
    pattern: np.ndarray,
    weighted: np.ndarray,
    key_tokens: Sequence[str],
    *,
    title: str = "",
    lang: str = "en",
    top: int = DISAGREE_TOP,
) -> go.Figure:
    """Grouped horizontal bars: for the keys where they disagree most, the mean share by weight and by
    weight × ‖value‖ (``pattern``, ``weighted`` [query, key], masked cells 0)."""
    pattern, weighted = np.asarray(pattern, dtype=np.float32), np.asarray(weighted, dtype=np.float32)
    if pattern.shape != weighted.shape or pattern.ndim != 2 or pattern.shape[1] != len(key_tokens):
        raise ValueError(
            f"pattern {pattern.shape} and weighted {weighted.shape} must be [query, key] with "
            f"{len(key_tokens)} keys"
        )
    keys = disagreement(pattern, weighted, top)
    names = token_labels(list(key_tokens))
    y = [f"#{int(j)} {names[int(j)]}" for j in keys][::-1]
    fig = go.Figure()
    for values, key, colour in (
        (pattern, "flow.by_weight", "#9aa5b1"),
        (weighted, "flow.by_norm", "#d9480f"),
    ):
        share = values.mean(0)[keys][::-1]
        fig.add_trace(
            go.Bar(
                x=share,
                y=y,
                orientation="h",
                name=label(lang, key),
                marker_color=colour,
                hovertemplate="%{y}: %{x:.3f}<extra>" + label(lang, key) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        xaxis={"title": {"text": label(lang, "flow.mean_share")}, "range": [0, 1]},
        legend={"orientation": "h", "y": -0.2},
    )
    return theme.apply_theme(fig, title, height=max(300, 40 * len(keys) + 140))


# ----------------------------------------------------------------------------- the information-flow graph

#: Edge kinds, in the order model/lab/flow.py numbers them.
EDGE_KINDS = ("attention", "attention_residual", "mlp", "mlp_residual", "cross_attention", "cross_residual")
#: What a click on an edge or node opens (customdata's last column): decoder self-, cross- or encoder
#: attention.
OPENS = ("decoder", "cross", "encoder")
#: Line widths of the importance buckets (importance 0-0.25, 0.25-0.5, 0.5-0.75, 0.75-1).
WIDTHS = (1.0, 2.5, 4.5, 7.0)
HEAD_COLOURS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#7f7f7f",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
)
RESIDUAL_COLOUR = "#c8ccd2"
MLP_COLOUR = "#6c757d"


def node_level(layer: int, after: str) -> float:
    """The y of a node: the embeddings at 0, each layer's state after attention at layer + 0.5 and after its
    MLP at layer + 1 (the state entering layer l + 1)."""
    return layer + (0.5 if after == "attention" else 1.0)


def edge_segments(layer: np.ndarray, kind: np.ndarray, source: np.ndarray, target: np.ndarray):
    """(x0, y0, x1, y1) of each edge: attention and its residual from the state entering the layer to the
    state after attention; the MLP and its residual from there to the state after the MLP (the MLP drawn
    beside its token's residual, a little to the right, so the two do not overlap)."""
    layer, kind = np.asarray(layer), np.asarray(kind)
    attn = kind <= 1
    y0 = np.where(attn, layer, layer + 0.5).astype(float)
    y1 = np.where(attn, layer + 0.5, layer + 1.0).astype(float)
    x0 = np.asarray(source, float) + np.where(kind == 2, 0.18, 0.0)
    x1 = np.asarray(target, float) + np.where(kind == 2, 0.18, 0.0)
    return x0, y0, x1, y1


def seq2seq_segments(layer, kind, source, target, stack, n_source: int, n_enc_layers: int):
    """(x0, y0, x1, y1) of each edge of an encoder–decoder's graph, drawn as two column groups: the source's
    tokens at x 0..n_source-1 (the encoder's graph, laid out as a decoder-only one), the decoder's after a
    gap. A decoder layer l goes from l (entering it) to l + 1/3 (after self-attention), l + 2/3 (after
    cross-attention) and l + 1; a cross-attention edge starts at its source token's last encoder state
    (height n_enc_layers)."""
    layer, kind, stack = np.asarray(layer), np.asarray(kind), np.asarray(stack)
    x0, y0, x1, y1 = (np.asarray(a, float) for a in edge_segments(layer, kind, source, target))
    dec = stack == 0
    shift = n_source + 1
    third = 1.0 / 3.0
    y0 = np.where(dec & (kind <= 1), layer, y0)
    y1 = np.where(dec & (kind <= 1), layer + third, y1)
    y0 = np.where(dec & (kind == 5), layer + third, y0)
    y0 = np.where(dec & (kind == 4), float(n_enc_layers), y0)
    y1 = np.where(dec & (kind >= 4), layer + 2 * third, y1)
    y0 = np.where(dec & ((kind == 2) | (kind == 3)), layer + 2 * third, y0)
    x0 = np.where(dec & (kind != 4), x0 + shift, x0)  # a cross edge starts in the source's group
    x1 = np.where(dec, x1 + shift, x1)
    return x0, y0, x1, y1


def flow_figure(
    tokens: Sequence[str],
    n_layers: int,
    layer,
    kind,
    source,
    target,
    importance,
    head,
    *,
    title: str = "",
    lang: str = "en",
    width: int | None = None,
    source_tokens: Sequence[str] | None = None,
    stack=None,
    n_enc_layers: int = 0,
) -> go.Figure:
    """Layers (up) x positions (across): every kept edge, its width by importance, attention edges coloured
    by their strongest head, residual and MLP edges grey. Each edge has a clickable midpoint (customdata
    [layer, head, source, target, opens] with opens an index into OPENS); each reached node a marker
    (customdata [layer, -1, position, position, opens]). An encoder–decoder (``source_tokens``, ``stack``:
    each edge's stack, 1 = encoder) is drawn as two column groups, the source's tokens on the left."""
    layer, kind, source, target = (np.asarray(a, int) for a in (layer, kind, source, target))
    importance, head = np.asarray(importance, float), np.asarray(head, int)
    seq2seq = source_tokens is not None
    stack = np.zeros(len(layer), int) if stack is None else np.asarray(stack, int)
    target_names = token_labels(list(tokens))
    if seq2seq:
        source_names = token_labels(list(source_tokens))
        names = [*source_names, "", *target_names]  # by x: the source, a gap, the decoder's tokens
        x0, y0, x1, y1 = seq2seq_segments(layer, kind, source, target, stack, len(source_names), n_enc_layers)
        top = max(n_layers, n_enc_layers)
    else:
        source_names, names = target_names, target_names
        x0, y0, x1, y1 = edge_segments(layer, kind, source, target)
        top = n_layers
    opens = np.where(kind == 4, 1, np.where(stack == 1, 2, 0))
    bucket = np.minimum((importance * len(WIDTHS)).astype(int), len(WIDTHS) - 1)
    fig = go.Figure()
    groups: dict[tuple[int, int], list[int]] = {}
    for i in range(len(layer)):
        attention = kind[i] in (0, 4)
        colour_key = int(head[i]) if attention else (-3 if kind[i] == 2 else -2)
        groups.setdefault((colour_key, int(bucket[i])), []).append(i)
    shown_legend: set[int] = set()
    for (colour_key, b), idx in sorted(groups.items()):
        xs, ys = [], []
        for i in idx:
            xs += [x0[i], x1[i], None]
            ys += [y0[i], y1[i], None]
        if colour_key >= 0:
            colour, name = (
                HEAD_COLOURS[colour_key % len(HEAD_COLOURS)],
                label(lang, "flow.head", head=colour_key),
            )
        elif colour_key == -3:
            colour, name = MLP_COLOUR, label(lang, "flow.edge.mlp")
        else:
            colour, name = RESIDUAL_COLOUR, label(lang, "flow.edge.residual")
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": colour, "width": WIDTHS[b]},
                name=name,
                legendgroup=str(colour_key),
                showlegend=colour_key not in shown_legend,
                hoverinfo="skip",
            )
        )
        shown_legend.add(colour_key)
    # clickable midpoints: what an edge is and where it opens
    if len(layer):

        def name_of(i: int, pos: int, end: str) -> str:
            on_source = stack[i] == 1 or (end == "src" and kind[i] == 4)
            return f"#{pos} {(source_names if on_source else target_names)[pos]}"

        hover = [
            label(
                lang,
                f"flow.hover.{EDGE_KINDS[kind[i]]}",
                layer=int(layer[i]),
                src=name_of(i, int(source[i]), "src"),
                dst=name_of(i, int(target[i]), "dst"),
                head=int(head[i]),
                importance=f"{importance[i]:.3f}",
            )
            + (f" ({label(lang, 'flow.encoder')})" if seq2seq and stack[i] == 1 else "")
            for i in range(len(layer))
        ]
        fig.add_trace(
            go.Scatter(
                x=(x0 + x1) / 2,
                y=(y0 + y1) / 2,
                mode="markers",
                marker={"size": 9, "opacity": 0.01, "color": "#000"},
                customdata=np.stack([layer, head, source, target, opens], axis=1),
                hovertext=hover,
                hovertemplate="%{hovertext}<extra></extra>",
                showlegend=False,
                name="edges",
            )
        )
    # nodes: every end of an edge
    nodes = {(float(x), float(y)) for x, y in zip(np.r_[x0, x1], np.r_[y0, y1], strict=True)}
    nodes = sorted((x, y) for x, y in nodes if float(x).is_integer())
    if nodes:
        nx, ny = np.array(nodes).T
        on_source = seq2seq & (nx < len(source_names))
        node_layer = np.clip(np.ceil(ny - 1).astype(int), 0, max(0, top - 1))
        position = np.where(on_source | (not seq2seq), nx, nx - len(source_names) - 1).astype(int)
        fig.add_trace(
            go.Scatter(
                x=nx,
                y=ny,
                mode="markers",
                marker={"size": 7, "color": "#343a40"},
                customdata=np.stack(
                    [node_layer, -np.ones_like(node_layer), position, position, np.where(on_source, 2, 0)],
                    axis=1,
                ),
                hovertext=[f"#{int(p)} {names[int(x)]}" for p, x in zip(position, nx, strict=True)],
                hovertemplate="%{hovertext}<extra></extra>",
                showlegend=False,
                name="nodes",
            )
        )
    if seq2seq:  # which group is which
        for key, centre in (
            ("flow.side.source", (len(source_names) - 1) / 2),
            ("flow.side.target", len(source_names) + 1 + (len(target_names) - 1) / 2),
        ):
            fig.add_annotation(
                x=centre, y=top + 0.25, text=f"<b>{label(lang, key)}</b>", showarrow=False, yanchor="bottom"
            )
    fig.update_layout(
        xaxis=theme.token_axis(names, label(lang, "flow.positions")),
        yaxis={
            "title": {"text": label(lang, "flow.layers")},
            "range": [-0.3, top + (0.7 if seq2seq else 0.3)],
            "tickmode": "array",
            "tickvals": list(range(top + 1)),
            "ticktext": [label(lang, "flow.embeddings")] + [f"L{i}" for i in range(top)],
            "zeroline": False,
        },
        # below the tilted token labels and the axis title (a translation's source and target tokens)
        legend={"orientation": "h", "y": -0.42 if seq2seq else -0.25},
        hovermode="closest",
    )
    fig.update_xaxes(tickangle=-60)
    height = max(420, 22 * top + 220) + (80 if seq2seq else 0)
    return theme.apply_theme(fig, title, height=height, width=width)


def importance_vs_effect(
    importance: np.ndarray,
    effect: np.ndarray,
    edge_labels: Sequence[str],
    *,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """One point per checked edge: its importance in the graph against the change of the prediction's
    log-probability when it is knocked out."""
    fig = go.Figure(
        go.Scatter(
            x=np.asarray(importance, float),
            y=np.asarray(effect, float),
            mode="markers",
            marker={"size": 9, "color": "#d9480f"},
            hovertext=list(edge_labels),
            hovertemplate="%{hovertext}<br>%{x:.3f} · %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "flow.importance")}},
        yaxis={"title": {"text": label(lang, "flow.effect")}},
    )
    return theme.apply_theme(fig, title, height=380)
