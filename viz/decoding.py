"""Decoding views: cross-attention at one decoder step, the next-token distribution, beam search as a
tree, one sampling step's distribution, and teacher forcing's per-token loss."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz import theme
from viz._validate import as_array, check_index, check_tokens
from viz.labels import label
from viz.tokens import token_labels


def _step_where(step: int | None, step_token: str | None, lang: str) -> str:
    """The title's note of which decoder step (and target token) the attention is at."""
    produced = None if step_token is None else token_labels([step_token], unique=False)[0]
    if step is not None and produced is not None:
        return label(lang, "cross.where_both", step=int(step), token=produced)
    if step is not None:
        return label(lang, "cross.where_step", step=int(step))
    if produced is not None:
        return label(lang, "cross.where_token", token=produced)
    return ""


def _cross_bars(w: np.ndarray, labels: list[str], title: str, where: str, lang: str) -> go.Figure:
    """One ``[key]`` distribution as a bar per source token."""
    n_k = w.shape[0]
    weight = label(lang, "hover.value", name=label(lang, "value.weight"), value="%{y:.3f}")
    fig = go.Figure(
        go.Bar(
            x=np.arange(n_k, dtype=np.int32),
            y=w,
            marker_color=theme.ACCENT,
            customdata=labels,
            hovertemplate=label(lang, "hover.source_token", token="%{customdata}")
            + "<br>"
            + weight
            + "<extra></extra>",
        )
    )
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "cross.title_1d", where=where)),
        height=420,
        width=max(520, 40 * n_k + 200),
    )
    fig.update_layout(
        xaxis={**theme.token_axis(labels, label(lang, "axis.source_token_key")), "tickangle": -45},
        yaxis={
            "title": {"text": label(lang, "value.attention_weight")},
            "range": [0, max(1.0, float(np.nanmax(w)))],
        },
    )
    return fig


def _cross_heatmap(w: np.ndarray, labels: list[str], title: str, where: str, lang: str) -> go.Figure:
    """``[head, key]`` or ``[layer, head, key]`` as a heatmap, one row per (layer·)head."""
    n_k = w.shape[-1]
    rows = w.reshape(-1, n_k)
    if w.ndim == 2:
        row_labels = [f"H{h}" for h in range(w.shape[0])]
    else:
        row_labels = [f"L{li} H{h}" for li in range(w.shape[0]) for h in range(w.shape[1])]
    weight = label(lang, "hover.value", name=label(lang, "value.weight"), value="{value}")
    hover = [
        [
            f"{row_labels[r]}<br>"
            + label(lang, "hover.source_token", token=f"<b>{labels[j]}</b>")
            + "<br>"
            + weight.format(value=f"{rows[r, j]:.3f}")
            for j in range(n_k)
        ]
        for r in range(rows.shape[0])
    ]
    fig = go.Figure(
        go.Heatmap(
            z=rows,
            x=np.arange(n_k, dtype=np.int32),
            y=np.arange(rows.shape[0], dtype=np.int32),
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            colorscale=theme.SEQUENTIAL,
            zmin=0.0,
            zmax=1.0,
            colorbar=theme.colorbar(label(lang, "value.attention_weight")),
        )
    )
    cell = theme.cell_size_px(max(n_k, rows.shape[0]))
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "cross.title_heads", where=where)),
        height=max(320, cell * rows.shape[0] + 220),
        width=max(520, cell * n_k + 260),
    )
    fig.update_layout(
        xaxis={**theme.token_axis(labels, label(lang, "axis.source_token_key")), "tickangle": -45},
        yaxis={
            **theme.token_axis(
                row_labels, label(lang, "axis.head" if w.ndim == 2 else "axis.layer_head"), reversed_=True
            )
        },
    )
    return fig


def cross_attention_step(
    cross_pattern_heads: np.ndarray,
    source_tokens: Sequence[str],
    *,
    step_token: str | None = None,
    step: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Cross-attention of the decoder at one step over the source tokens.

    Accepts ``[key]`` (one distribution, drawn as bars), ``[head, key]`` (heatmap, one row
    per head) or ``[layer, head, key]`` (heatmap, one row per layer·head, ``L0 H0`` first).
    ``step_token`` (the target token being produced/attending) and ``step`` only label the
    title. Words drawn by the figure are in ``lang`` ("en" or "zh").
    """
    w = as_array(
        cross_pattern_heads, (1, 2, 3), "cross_pattern_heads", dims="[key], [head, key] or [layer, head, key]"
    )
    src = check_tokens(
        source_tokens,
        w.shape[-1],
        array_name="cross_pattern_heads",
        axis_name="source (key) positions",
        token_name="source tokens",
    )
    labels = token_labels(src)
    where = _step_where(step, step_token, lang)
    if w.ndim == 1:
        return _cross_bars(w, labels, title, where, lang)
    return _cross_heatmap(w, labels, title, where, lang)


def topk_bar(
    tokens: Sequence[str],
    probs: np.ndarray,
    *,
    k: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Horizontal bars of next-token probabilities, most likely at the top.

    ``tokens`` and ``probs`` are parallel (e.g. the model's top-k); with ``k`` only the
    ``k`` most likely are kept. Each bar is labelled with its probability in percent. Words
    drawn by the figure are in ``lang``.
    """
    p = as_array(probs, 1, "probs", dims="[candidate]")
    toks = check_tokens(tokens, p.shape[0], array_name="probs", axis_name="entries", token_name="tokens")
    if np.any(p < 0) or not np.all(np.isfinite(p)):
        raise ValueError("probs must be finite and non-negative")
    order = np.argsort(-p, kind="stable")
    if k is not None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        order = order[:k]
    p_sorted = p[order]
    labels = token_labels([toks[i] for i in order])
    n = len(order)
    fig = go.Figure(
        go.Bar(
            x=p_sorted,
            y=np.arange(n, dtype=np.int32),
            orientation="h",
            marker_color=theme.ACCENT,
            text=[f"{v:.1%}" for v in p_sorted],
            textposition="outside",
            customdata=labels,
            hovertemplate="%{customdata}<br>p = %{x:.4f}<extra></extra>",
        )
    )
    top = float(p_sorted.max()) if n else 1.0
    theme.apply_theme(
        fig,
        theme.pick_title(title, label(lang, "topk.title", n=n)),
        height=max(300, 42 * n + 150),
        width=620,
    )
    fig.update_layout(
        xaxis={
            "title": {"text": label(lang, "axis.probability")},
            "range": [0, min(1.0, top * 1.25) if top > 0 else 1.0],
            "tickformat": ".0%",
        },
        yaxis={**theme.token_axis(labels, label(lang, "axis.candidate_token"), reversed_=True)},
        showlegend=False,
    )
    fig.update_traces(cliponaxis=False)
    return fig


#: Beam-search node statuses (model.decoding.results.BeamCandidate.status, "start" for the decoder's prefix).
BEAM_STATUSES = ("start", "kept", "finished", "cut", "pruned")
_STATUS_COLOUR = {"start": "#525252", "kept": theme.ACCENT, "finished": "#238b45", "cut": "#fd8d3c",
                  "pruned": theme.MASK_COLOR}


def beam_tree(
    steps: Sequence[int],
    parents: Sequence[int],
    tokens: Sequence[str],
    logps: np.ndarray,
    statuses: Sequence[str],
    chosen: Sequence[int],
    *,
    current: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Beam search as a tree: one node per hypothesis considered, by step (x) and rank (y).

    Parallel per node: ``steps`` (0 = the decoder's prefix, t + 1 = an extension made at step t),
    ``parents`` (index of the node it extends, -1 for the start), ``tokens``, ``logps`` (cumulative
    log-probability) and ``statuses`` (one of BEAM_STATUSES). ``chosen``: the nodes of the output,
    in order, drawn as a thick line. ``current`` marks a step with a band. Words are in ``lang``.
    """
    lp = as_array(logps, 1, "logps", dims="[node]", dtype=np.float64)
    n = lp.shape[0]
    toks = check_tokens(tokens, n, array_name="logps", axis_name="nodes", token_name="tokens")
    for name, seq in (("steps", steps), ("parents", parents), ("statuses", statuses)):
        if len(seq) != n:
            raise ValueError(f"{name} has {len(seq)} entries for {n} nodes")
    step = np.asarray(steps, dtype=np.int64)
    parent = np.asarray(parents, dtype=np.int64)
    bad = [s for s in statuses if s not in BEAM_STATUSES]
    if bad:
        raise ValueError(f"unknown status {bad[0]!r}; expected one of {BEAM_STATUSES}")
    linked = parent >= 0
    if np.any(parent >= n) or np.any(~linked & (step != 0)) or np.any(parent[linked] >= np.arange(n)[linked]):
        raise ValueError("each node's parent must be an earlier node (-1 only at step 0)")
    path = [int(i) for i in chosen]
    if any(not 0 <= i < n for i in path):
        raise ValueError(f"chosen holds a node index outside 0..{n - 1}")
    rank = np.zeros(n, dtype=np.int64)
    for s in np.unique(step):
        rank[step == s] = np.arange(int((step == s).sum()))
    labels = token_labels(toks, unique=False)
    fig = go.Figure()
    # Edges, one trace per status so the legend explains the colours.
    for status in BEAM_STATUSES:
        xs: list[float | None] = []
        ys: list[float | None] = []
        for i in np.nonzero((np.asarray(statuses) == status) & (parent >= 0))[0]:
            xs += [float(step[parent[i]]), float(step[i]), None]
            ys += [float(rank[parent[i]]), float(rank[i]), None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                     line={"color": _STATUS_COLOUR[status], "width": 1}))
    if len(path) > 1:
        fig.add_trace(go.Scatter(x=step[path], y=rank[path], mode="lines", hoverinfo="skip",
                                 name=label(lang, "beam.chosen"), line={"color": theme.NEGATIVE, "width": 4}))
    hover = label(lang, "beam.hover", token="%{customdata[0]}", logp="%{customdata[1]}",
                  status="%{customdata[2]}")
    for status in BEAM_STATUSES:
        idx = np.nonzero(np.asarray(statuses) == status)[0]
        if not len(idx):
            continue
        fig.add_trace(go.Scatter(
            x=step[idx], y=rank[idx], mode="markers+text", name=label(lang, f"beam.status.{status}"),
            text=[labels[i] for i in idx], textposition="middle right",
            marker={"color": _STATUS_COLOUR[status], "size": 10 if status != "pruned" else 7},
            customdata=[[labels[i], f"{lp[i]:.3f}", label(lang, f"beam.status.{status}")] for i in idx],
            hovertemplate=hover + "<extra></extra>",
        ))
    if current is not None:
        fig.add_vrect(x0=current + 0.5, x1=current + 1.5, fillcolor=theme.ACCENT, opacity=0.08, line_width=0)
    n_steps = int(step.max()) + 1
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "beam.title")),
                      height=max(320, 34 * int(rank.max() + 1) + 180), width=max(620, 120 * n_steps + 160))
    fig.update_layout(
        xaxis={"title": {"text": label(lang, "beam.axis_step")}, "tickmode": "array",
               "tickvals": list(range(n_steps)), "ticktext": ["∅", *[str(s) for s in range(n_steps - 1)]],
               "range": [-0.3, n_steps - 0.2]},
        yaxis={"title": {"text": label(lang, "beam.axis_rank")}, "autorange": "reversed", "dtick": 1},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def sampling_bars(
    tokens: Sequence[str],
    filtered: np.ndarray,
    raw: np.ndarray,
    sampled: int,
    *,
    n_kept: int | None = None,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """One sampling step: each candidate's probability under the model (temperature 1, nothing cut)
    and in the distribution actually sampled from (after temperature, top-k, top-p), most likely
    first; the drawn token (index ``sampled``) is marked beside its bars. ``n_kept``: size of the kept
    set, for the title (the figure may show fewer). Words are in ``lang``."""
    f = as_array(filtered, 1, "filtered", dims="[candidate]", dtype=np.float64)
    r = as_array(raw, 1, "raw", dims="[candidate]", dtype=np.float64)
    if r.shape != f.shape:
        raise ValueError(f"raw has {r.shape[0]} entries but filtered has {f.shape[0]}")
    toks = check_tokens(tokens, f.shape[0], array_name="filtered", axis_name="entries", token_name="tokens")
    if np.any(f < 0) or np.any(r < 0) or not (np.all(np.isfinite(f)) and np.all(np.isfinite(r))):
        raise ValueError("probabilities must be finite and non-negative")
    sampled = check_index(sampled, f.shape[0], "sampled")
    labels = token_labels(toks)
    y = np.arange(len(labels), dtype=np.int32)
    fig = go.Figure()
    hover = "%{customdata}<br>p = %{x:.4f}<extra></extra>"
    fig.add_trace(go.Bar(x=r, y=y, orientation="h", name=label(lang, "sample.raw"),
                         marker_color=theme.MASK_COLOR, customdata=labels, hovertemplate=hover))
    fig.add_trace(go.Bar(x=f, y=y, orientation="h", name=label(lang, "sample.filtered"),
                         marker_color=theme.ACCENT, text=[f"{v:.1%}" for v in f], textposition="outside",
                         customdata=labels, hovertemplate=hover))
    # The drawn token: a marker of its own (a trace of its own, so the legend names it) beside its bar.
    top = float(max(f.max(), r.max()))
    fig.add_trace(go.Scatter(x=[float(max(f[sampled], r[sampled])) + 0.18 * top], y=[sampled], mode="markers",
                             name=label(lang, "sample.drawn"), cliponaxis=False,
                             marker={"symbol": "triangle-left", "size": 14, "color": theme.NEGATIVE},
                             customdata=[labels[sampled]],
                             hovertemplate=label(lang, "sample.drawn") + ": %{customdata}<extra></extra>"))
    kept = len(labels) if n_kept is None else int(n_kept)
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "sample.title", n=kept)),
                      height=max(300, 46 * len(labels) + 170), width=640)
    fig.update_layout(
        barmode="group",
        xaxis={"title": {"text": label(lang, "axis.probability")}, "range": [0, min(1.0, top * 1.3) or 1.0],
               "tickformat": ".0%"},
        yaxis={**theme.token_axis(labels, label(lang, "axis.candidate_token"), reversed_=True)},
        legend={"orientation": "h", "y": -0.18},
    )
    fig.update_traces(cliponaxis=False)
    return fig


def token_losses(
    tokens: Sequence[str],
    nll: np.ndarray,
    smoothed: np.ndarray,
    differs: np.ndarray,
    model_tokens: Sequence[str],
    *,
    smoothing: float,
    title: str = "",
    lang: str = "en",
) -> go.Figure:
    """Teacher forcing: the loss at each reference token, without and with label smoothing
    (``smoothing`` = its ε), and a mark above every token where the model's own most likely token
    (``model_tokens``) is another one (``differs``). Words are in ``lang``."""
    a = as_array(nll, 1, "nll", dims="[token]", dtype=np.float64)
    b = as_array(smoothed, 1, "smoothed", dims="[token]", dtype=np.float64)
    d = np.asarray(differs)
    if b.shape != a.shape or d.shape != a.shape:
        raise ValueError(f"nll, smoothed and differs must have one entry per token ({a.shape[0]})")
    if d.dtype != bool:
        raise ValueError(f"differs must be a boolean array, got dtype {d.dtype}")
    toks = check_tokens(tokens, a.shape[0], array_name="nll", axis_name="entries", token_name="tokens")
    mine = check_tokens(model_tokens, a.shape[0], array_name="nll", axis_name="entries",
                        token_name="model tokens")
    labels = token_labels(toks)
    choice = token_labels(mine, unique=False)
    x = np.arange(len(labels), dtype=np.int32)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=a, name=label(lang, "tf.nll"), marker_color=theme.ACCENT,
                         customdata=np.stack([labels, choice], axis=-1),
                         hovertemplate=label(lang, "tf.hover", token="%{customdata[0]}",
                                             model="%{customdata[1]}") + "<br>%{y:.3f}<extra></extra>"))
    fig.add_trace(go.Bar(x=x, y=b, name=label(lang, "tf.smoothed", eps=f"{smoothing:g}"),
                         marker_color="#9ecae1", hovertemplate="%{y:.3f}<extra></extra>"))
    top = float(max(a.max(), b.max(), 1e-6))
    idx = np.nonzero(d)[0]
    if len(idx):
        fig.add_trace(go.Scatter(
            x=x[idx], y=[top * 1.12] * len(idx), mode="markers+text", name=label(lang, "tf.differs"),
            text=[choice[i] for i in idx], textposition="top center",
            marker={"symbol": "triangle-down", "color": theme.NEGATIVE, "size": 11},
            customdata=[choice[i] for i in idx],
            hovertemplate=label(lang, "tf.differs_hover", model="%{customdata}") + "<extra></extra>",
        ))
    theme.apply_theme(fig, theme.pick_title(title, label(lang, "tf.title")), height=540,
                      width=max(620, 56 * len(labels) + 200))
    fig.update_layout(
        barmode="group",
        xaxis={**theme.token_axis(labels, label(lang, "tf.axis_token")), "tickangle": -45},
        yaxis={"title": {"text": label(lang, "tf.axis_loss")}, "range": [0, top * 1.3]},
        legend={"orientation": "h", "yanchor": "top", "y": -0.45},
        margin={"b": 190},
    )
    return fig
