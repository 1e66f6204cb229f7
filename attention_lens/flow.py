"""Norm-based attention and the information-flow graph of a run (the flow page, model/lab/flow.py):
:func:`norm_view` one head as weight × ‖value‖, :func:`information_flow` the graph of a language model's
prediction, :func:`flow_edges` its edges as a table (``.to_csv()``). Figures export like the others
(:func:`~attention_lens.save_figure`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import viz
from model.lab.flow import DEFAULT_THRESHOLD, FlowNotApplicable, flow_graph, layer_value_norms, reweight_rows
from viz.flow import flow_figure

from .checks import ArgumentError, check_index
from .figures import _run_of

__all__ = ["flow_edges", "information_flow", "norm_view"]


def norm_view(
    run: Any,
    *,
    kind: str | None = None,
    layer: int = 0,
    head: int = 0,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One head as weight × ‖value‖ (α_ij · ‖f_h(x_j)‖, each row rescaled to sum to 1), the single-head
    page's option; masked cells grey.

    >>> import attention_lens as al
    >>> fig = al.norm_view(al.load("reverse").run("abc"), kind="cross", layer=1, head=0)
    >>> round(float(fig.data[-1].z[0].sum()), 4)
    1.0
    """
    run = _run_of(run)
    k = run.kind(kind)
    queries, keys = run.tokens_for(k)
    layer = check_index(layer, run.analysis.n_layers(k), "layer", f"of the {k} attention")
    head = check_index(head, run.analysis.layer_inputs(k)[layer].n_heads, "head", f"of the {k} attention")
    pattern, scores = run.pattern(k, layer, head), run.scores(k, layer, head)
    weighted = reweight_rows(pattern, layer_value_norms(run.analysis, k)[layer][head])
    return viz.attention_heatmap(
        weighted,
        queries,
        keys,
        mask_2d=np.isneginf(scores),
        title=f"Layer {layer}, head {head}: weight × ‖value‖" if title is None else title,
        subtitle=f"{k} attention",
        lang=lang,
    )


def _graph(run: Any, position: int | None, threshold: float):
    run = _run_of(run)
    try:
        return flow_graph(run.model.bundle, run.text, position, threshold, run._settings.get("direction"))
    except FlowNotApplicable as e:
        raise ArgumentError(
            f"run: the information-flow graph does not apply to {run.model.name} ({e.reason}); "
            "it needs a language model or a translation model with a Pre-LN residual stream"
        ) from None


def information_flow(
    run: Any,
    *,
    position: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """The information-flow graph (Ferrando & Voita 2024) of a decoder-only Pre-LN language model's prompt,
    from ``position`` (None: the last prompt token, which predicts the next): layers × positions, edge width
    by importance, attention edges coloured by their strongest head (the flow page). A Pre-LN translation
    model's graph is its decoder's (prefix and greedy translation) with cross-attention edges into the
    source, and the encoder's graph beside it.

    >>> import attention_lens as al
    >>> fig = al.information_flow(al.load("tiny-gpt").run("the cat sat"))
    >>> fig.layout.yaxis.ticktext[0]
    'embeddings'
    """
    graph = _graph(run, position, threshold)
    extra = {}
    if graph.source_tokens:
        extra = dict(source_tokens=graph.source_tokens, stack=graph.stack, n_enc_layers=graph.n_enc_layers)
    return flow_figure(
        graph.tokens,
        graph.n_layers,
        graph.layer,
        graph.kind,
        graph.source,
        graph.target,
        graph.importance,
        graph.head,
        title=f"How the state of #{graph.position} is built" if title is None else title,
        lang=lang,
        **extra,
    )


def flow_edges(
    run: Any, *, position: int | None = None, threshold: float = DEFAULT_THRESHOLD
) -> pd.DataFrame:
    """The graph's edges, one row each (layer, kind, source, target, their tokens, importance, head), most
    important first: ``flow_edges(run).to_csv("edges.csv")``.

    >>> import attention_lens as al
    >>> list(al.flow_edges(al.load("tiny-gpt").run("the cat sat")).columns)[:4]
    ['layer', 'kind', 'source', 'source_token']
    """
    graph = _graph(run, position, threshold)
    table = pd.DataFrame(graph.rows())
    return table.sort_values("importance", ascending=False, kind="stable").reset_index(drop=True)
