"""The shared template: plotly_white's look, cut to what viz draws."""

from __future__ import annotations

import numpy as np
import plotly.io as pio

import viz
from tests.figures import title_of
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


# --------------------------------------------------------------------------- long titles wrap


def _line_ems(line: str) -> float:
    import re

    from viz import theme

    visible = re.sub(r"<[^>]*>", "", line)
    visible = re.sub(r"&#?\w+;", "x", visible)
    return sum(theme._char_em(c) for c in visible)


def test_a_long_title_wraps_to_the_figures_width_and_unwraps_again():
    from viz import theme

    title = "<b>Effect</b> of removing each head: Encoder self-attention &amp; its &lt;heads&gt;"
    wrapped = theme.wrap_title(title, 416, 20)
    assert theme.SOFT_BREAK in wrapped
    room = (416 - theme._TITLE_PADDING_PX) / 20
    for line in wrapped.split(theme.SOFT_BREAK):
        assert _line_ems(line) <= room or " " not in line.strip(), line
    assert theme.plain_title(wrapped) == title  # breaks were only added
    assert "&amp;" in wrapped and "&lt;heads&gt;" in wrapped and "<b>Effect</b>" in wrapped
    assert theme.wrap_title(wrapped, 2000, 20) == title  # a wider figure undoes the breaks
    assert theme.wrap_title(title, 2000, 20) == title


def test_chinese_titles_break_between_characters_and_subtitles_keep_their_own_break():
    from viz import theme

    zh = "移除每个注意力头的影响：编码器自注意力层的所有头"
    wrapped = theme.wrap_title(zh + "<br><sup>副标题</sup>", 300, 20)
    head, sub = wrapped.split("<br><sup>")
    assert theme.plain_title(head) == zh and head.count(theme.SOFT_BREAK) >= 1
    assert sub == "副标题</sup>"
    for line in head.split(theme.SOFT_BREAK):
        assert _line_ems(line) <= (300 - theme._TITLE_PADDING_PX) / 20


def test_the_ablation_matrix_title_is_not_cut_at_four_heads():
    from viz import theme
    from viz.interventions import head_matrix

    title = "Effect of removing each head: Encoder self-attention"
    fig = head_matrix(np.zeros((2, 4)), title=title)
    assert fig.layout.width == 160 + 64 * 4
    assert title_of(fig) == title
    assert fig.layout.title.text.count(theme.SOFT_BREAK) >= 1
    wide = head_matrix(np.zeros((2, 12)), title=title)
    assert wide.layout.title.text == title
    assert fig.layout.margin.t > wide.layout.margin.t  # room made for the second line


def test_fit_title_rewraps_for_a_larger_projector_font():
    from viz import theme
    from viz.interventions import head_matrix

    fig = head_matrix(np.zeros((2, 12)), title="Effect of removing each head: Encoder self-attention")
    before = fig.layout.title.text
    fig.update_layout(title={"font": {"size": 40}})
    theme.fit_title(fig)
    assert theme.SOFT_BREAK not in before and theme.SOFT_BREAK in fig.layout.title.text
