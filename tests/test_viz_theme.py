"""The shared template: plotly_white's look, cut to what viz draws."""

from __future__ import annotations

import numpy as np
import plotly.io as pio

import viz
from viz import theme


def test_template_is_plotly_white_for_every_trace_type_viz_draws():
    white = pio.templates["plotly_white"]
    assert theme.TEMPLATE.layout.to_plotly_json() == white.layout.to_plotly_json()
    for kind in theme.TRACE_TYPES:
        assert getattr(theme.TEMPLATE.data, kind) == getattr(white.data, kind), kind


def _figures():
    rng = np.random.default_rng(0)
    p = rng.random((2, 3, 5, 5)).astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    toks = ["a", "b", "c", "d", "<eos>"]
    yield viz.attention_heatmap(p[0, 0], toks, toks, scores_2d=np.log(p[0, 0]))
    yield viz.all_heads_grid(p, toks, toks)
    yield viz.token_focus_grid(p, 1, "from", query_tokens=toks, key_tokens=toks)
    yield viz.attention_arcs(p[0, 0], toks, 1, key_tokens=toks)
    yield viz.mean_over_heads_figure(p, toks, toks, 0)
    yield viz.attention_rollout_figure(p, toks)
    yield viz.topk_bar(["x", "y"], np.array([0.7, 0.2], dtype=np.float32))
    stats = viz.head_stats(p)
    yield viz.head_stats_scatter(stats)
    yield viz.head_stats_bar(stats, "entropy")
    yield viz.head_similarity_heatmap(viz.head_similarity(p), viz.flatten_heads(p)[1])
    yield viz.parameter_breakdown_chart({"encoder.blocks.0.attn": 100, "decoder.blocks.0.mlp": 200})
    yield viz.pe_heatmap(np.zeros((8, 4), dtype=np.float32))


def test_every_figure_draws_only_trace_types_the_template_covers():
    for fig in _figures():
        for trace in fig.data:
            assert trace.type in theme.TRACE_TYPES, trace.type
        assert fig.layout.template.layout.plot_bgcolor == "white"
