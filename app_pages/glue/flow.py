"""What the information-flow page picks from its graph (pure, no Streamlit): the edge or node a click on
the figure selected, and the head it opens on the single-head page; the edges as a table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from model.lab.flow import (
    DEFAULT_THRESHOLD,
    EDGE_KINDS,
    KNOCKOUT_DEFAULT_UP_TO,
    KNOCKOUT_EDGES,
    FlowGraph,
    FlowNotApplicable,
    flow_problem,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "KNOCKOUT_DEFAULT_UP_TO",
    "KNOCKOUT_EDGES",
    "FlowNotApplicable",
    "clicked_head",
    "edges_table",
    "flow_problem",
    "strongest_head_into",
]

#: The threshold slider's range (the Transparency Tool's default, 0.04, inside it).
THRESHOLDS = (0.01, 0.2)


#: What a figure click opens (customdata's fifth column, viz/flow.py's OPENS): an attention kind.
OPENS = ("decoder", "cross", "encoder")


def strongest_head_into(graph: FlowGraph, layer: int, position: int, opens: str = "decoder") -> int | None:
    """The head of the most important attention edge into ``position`` at ``layer`` (None: none kept);
    ``opens``: into the decoder's position (self-attention, or "cross") or the encoder's ("encoder")."""
    if opens == "encoder":
        wanted = (graph.kind == EDGE_KINDS.index("attention")) & (graph.stack == 1)
    else:
        kind = EDGE_KINDS.index("cross_attention" if opens == "cross" else "attention")
        wanted = (graph.kind == kind) & (graph.stack == 0)
    idx = np.flatnonzero(wanted & (graph.layer == layer) & (graph.target == position))
    return None if not len(idx) else int(graph.head[idx[np.argmax(graph.importance[idx])]])


def clicked_head(event: object, graph: FlowGraph) -> tuple[int, int, str] | None:
    """(layer, head, attention kind) a click on the figure opens: an attention edge's strongest head, or for
    a node the strongest head into it (a decoder node: its self-attention, else its cross-attention);
    None for anything else (a residual or MLP edge, no click)."""
    try:
        points = event["selection"]["points"]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    for point in points or ():
        data = point.get("customdata") if isinstance(point, dict) else None
        if not data or len(data) not in (4, 5):
            continue
        layer, head, _, target = (int(v) for v in data[:4])
        opens = OPENS[int(data[4])] if len(data) == 5 and 0 <= int(data[4]) < len(OPENS) else "decoder"
        if head < 0:
            head = strongest_head_into(graph, layer, target, opens)
            if head is None and opens == "decoder" and graph.source_tokens:
                opens, head = "cross", strongest_head_into(graph, layer, target, "cross")
            if head is None:
                continue
        limit = graph.n_enc_layers if opens == "encoder" else graph.n_layers
        if 0 <= layer < limit:
            return layer, head, opens
    return None


def edges_table(graph: FlowGraph) -> pd.DataFrame:
    """Every kept edge, most important first (the CSV export)."""
    table = pd.DataFrame(graph.rows())
    if table.empty:
        return table
    return table.sort_values(["importance"], ascending=False, kind="stable").reset_index(drop=True)
