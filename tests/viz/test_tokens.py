"""Token labels: escaping, visible whitespace, unique labels; escaping reaches the figure JSON."""

import json

import numpy as np
import pytest

import viz
from tests.figures import title_of
from viz.tokens import escape_text, token_labels

EVIL = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert('x')</script>"


def test_labels_escape_html():
    labels = token_labels([EVIL, SCRIPT, "a&b", 'say "hi"'])
    assert labels[0] == "&lt;img␣src=x␣onerror=alert(1)&gt;"  # spaces are made visible too
    assert labels[1] == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
    assert labels[2] == "a&amp;b"
    assert labels[3] == "say␣&#34;hi&#34;"
    assert all("<" not in lab and ">" not in lab for lab in labels)


def test_already_escaped_text_is_escaped_again():
    # A token that literally reads "&lt;" must display as "&lt;", not as "<".
    assert escape_text("&lt;") == "&amp;lt;"


def test_whitespace_is_visible():
    assert token_labels([" ", "\n", "\t", "", "a b"], unique=False) == ["␣", "↵", "⇥", "∅", "a␣b"]


def test_duplicates_get_position_subscripts_and_stay_in_order():
    labels = token_labels(["the", "cat", "the", "mat", "the"])
    assert labels == ["the₀", "cat", "the₂", "mat", "the₄"]
    assert len(set(labels)) == len(labels)
    assert token_labels(["the", "the"], unique=False) == ["the", "the"]


def test_long_tokens_are_truncated_before_escaping():
    label = token_labels(["<" * 40], max_chars=5)[0]
    assert label == "&lt;&lt;&lt;&lt;…"


def test_non_string_tokens_rejected():
    with pytest.raises(ValueError, match="strings"):
        token_labels(["a", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="list of strings"):
        token_labels("abc")


def _figures_with(tokens):
    n = len(tokens)
    rng = np.random.default_rng(0)
    p = rng.random((2, 2, n, n)).astype(np.float32)
    p /= p.sum(-1, keepdims=True)
    return {
        "heatmap": viz.attention_heatmap(p[0, 0], tokens, tokens),
        "focus": viz.token_focus_grid(p, 0, "from", query_tokens=tokens),
        "focus_to": viz.token_focus_grid(p, 0, "to", query_tokens=tokens, other_index=1),
        "arcs": viz.attention_arcs(p[0, 0], tokens, 0),
        "cross": viz.cross_attention_step(p[0, :, 0], tokens, step_token=EVIL),
        "cross_bar": viz.cross_attention_step(p[0, 0, 0], tokens),
        "topk": viz.topk_bar(tokens, p[0, 0, 0]),
        "compare": viz.compare_heatmaps(p[0, 0], tokens, p[1, 1], tokens, names=(EVIL, "B")),
        "rowdiff": viz.row_diff_figure(viz.shared_token_row_diff(p[0, 0], tokens, p[0, 1], tokens, EVIL)),
        "mean": viz.mean_over_heads_figure(p, tokens, tokens, 0),
        "rollout": viz.attention_rollout_figure(p, tokens),
        "params": viz.parameter_breakdown_chart({EVIL: 3, "a.b": 4}),
        "params_bar": viz.parameter_breakdown_chart({EVIL: 3, "a.b": 4}, kind="bar"),
        "sim": viz.head_similarity_heatmap(np.eye(2), [EVIL, "x"]),
    }


def _decoded_json_text(fig) -> str:
    """The figure JSON with plotly's own ``\\u003c`` escapes undone, i.e. what plotly.js sees."""
    return json.dumps(json.loads(fig.to_json()), ensure_ascii=False)


def test_plotly_json_escapes_would_hide_raw_html_so_we_decode_first():
    import plotly.graph_objects as go

    raw = go.Figure(go.Bar(x=[0], y=[1], text=[EVIL]))
    assert "<img" not in raw.to_json()  # plotly escapes '<' as \u003c in its JSON ...
    assert "<img" in _decoded_json_text(raw)  # ... but plotly.js would still render the tag.


def test_html_tokens_are_escaped_in_every_figure_json():
    tokens = ["<s>", EVIL, "the", SCRIPT]
    for name, fig in _figures_with(tokens).items():
        text = _decoded_json_text(fig)
        assert "<img" not in text and "<script" not in text, name
        assert "<s>" not in text, name
        assert "&lt;img" in text, name  # the token is still shown, escaped
    # ... and the escaped form is what the heatmap carries in its ticks and hover text.
    fig = viz.attention_heatmap(np.eye(4, dtype=np.float32), tokens, tokens)
    data = json.loads(fig.to_json())
    assert "&lt;img␣src=x␣onerror=alert(1)&gt;" in data["layout"]["xaxis"]["ticktext"]
    assert "&lt;img␣src=x␣onerror=alert(1)&gt;" in data["data"][-1]["x"]  # hover reads %{x}


def test_duplicate_tokens_stay_distinct_on_axes():
    tokens = ["the", "cat", "the"]
    fig = viz.attention_heatmap(np.full((3, 3), 1 / 3, dtype=np.float32), tokens, tokens)
    # a category axis merges equal categories: the labels must be distinct
    assert len(set(fig.layout.xaxis.tickvals)) == len(set(fig.data[-1].x)) == 3
    assert len(set(fig.layout.xaxis.ticktext)) == 3
    assert fig.layout.xaxis.type == "category"


def test_user_titles_are_escaped_but_default_titles_keep_formatting():
    p = np.eye(2, dtype=np.float32)
    fig = viz.attention_heatmap(p, ["a", "b"], ["a", "b"], title=f"Attention of {EVIL}", subtitle="<b>x</b>")
    assert "<img" not in title_of(fig) and "&lt;img" in title_of(fig)
    assert "&lt;b&gt;x" in title_of(fig)
    focus = viz.token_focus_grid(p[None, None], 0, query_tokens=[EVIL, "b"])
    assert "<b>&lt;img" in title_of(focus)  # our bold, the user's token escaped
