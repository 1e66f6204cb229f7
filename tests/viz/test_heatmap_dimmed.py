"""viz.attention_heatmap's greyed tick labels (e5's prefix): only the span is markup, tokens stay text."""

from __future__ import annotations

import numpy as np
import pytest

from viz import theme
from viz.heatmap import attention_heatmap

TOKENS = ["<s>", "▁que", "<b>ry</b>", "▁x"]
PATTERN = np.full((4, 4), 0.25, dtype=np.float32)


def _ticks(fig, axis: str) -> list[str]:
    return list(fig.layout[axis].ticktext)


def test_dimmed_labels_are_grey_and_still_escaped():
    dim = [False, True, True, False]
    fig = attention_heatmap(PATTERN, TOKENS, TOKENS, dimmed_queries=dim, dimmed_keys=dim)
    grey = f'<span style="color:{theme.DIMMED_TICK}">'
    for axis in ("xaxis", "yaxis"):
        ticks = _ticks(fig, axis)
        assert ticks[0] == "&lt;s&gt;" and ticks[3] == "▁x"
        assert ticks[1] == f"{grey}▁que</span>"
        assert ticks[2] == f"{grey}&lt;b&gt;ry&lt;/b&gt;</span>"
        assert list(fig.layout[axis].tickvals) == ["&lt;s&gt;", "▁que", "&lt;b&gt;ry&lt;/b&gt;", "▁x"]


def test_a_window_greys_its_own_labels_and_pooled_blocks_none():
    fig = attention_heatmap(PATTERN, TOKENS, TOKENS, dimmed_queries=[False, True, False, False],
                            query_range=(1, 3))
    assert _ticks(fig, "yaxis")[0].startswith("<span") and not _ticks(fig, "yaxis")[1].startswith("<span")
    big = np.full((40, 40), 1 / 40, dtype=np.float32)
    tokens = [f"t{i}" for i in range(40)]
    pooled = attention_heatmap(big, tokens, tokens, dimmed_queries=[True] * 40, max_cells=10)
    assert not any(t.startswith("<span") for t in _ticks(pooled, "yaxis"))


def test_dimmed_must_match_the_axis():
    with pytest.raises(ValueError, match="dimmed"):
        attention_heatmap(PATTERN, TOKENS, TOKENS, dimmed_keys=[True])
