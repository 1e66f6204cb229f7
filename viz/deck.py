"""The talk deck's figures, from arrays: six slides, one live figure each.

The slides reuse the figures of the explorer pages (the worked example's weights, the multi-head
split, the pitfall lab's word-order test, the architecture diagram, the heatmap); the one new figure
is the residual stream's norm through the layers (slide 4). :func:`deck_figures` builds the six from
an activation cache (hook name -> array, batch axis first) and the shape trace, which is what both
the app and ``python -m viz deck`` (reading ``python -m model inspect`` output) have. No torch.

:func:`for_projector` raises every font of a figure to a minimum size, for a room; the colour scales
of every figure are kept to :data:`COLORBLIND_SAFE` (tested).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from viz import theme
from viz.architecture import architecture_figure
from viz.architecture_boxes import architecture_shapes
from viz.heatmap import attention_heatmap
from viz.labels import label
from viz.positional import embedding_norm_bars
from viz.split_merge import split_merge_figure, split_merge_stages
from viz.tokens import token_labels
from viz.worked import WorkedRow, weights_figure, work_row

#: Slide keys in order: six slides and the optional exercise.
SLIDES = ("attention", "heads", "position", "residual", "architecture", "live", "exercise")
#: Minutes per slide (about 16 for the six; the exercise is extra).
MINUTES = {"attention": 3, "heads": 3, "position": 3, "residual": 2, "architecture": 3, "live": 2,
           "exercise": 5}
#: Smallest font (px) a projected figure uses; at 1024x768 figure labels stay at least this size.
PROJECTOR_MIN_FONT = 16
#: Colour scales that stay readable with the common colour-vision deficiencies: sequential
#: single-hue or perceptually uniform scales, and ColorBrewer's red-blue diverging scale.
COLORBLIND_SAFE = ("Blues", "Blues_r", "Greys", "Viridis", "Viridis_r", "Cividis", "Cividis_r", "RdBu",
                   "RdBu_r")

_HOOK = {"encoder": "encoder.blocks.{layer}.attn", "decoder": "decoder.blocks.{layer}.self_attn",
         "cross": "decoder.blocks.{layer}.cross_attn"}


def attention_path(kind: str, layer: int) -> str:
    """Module path of an attention kind's layer ("encoder.blocks.0.attn")."""
    if kind not in _HOOK:
        raise ValueError(f"kind must be one of {sorted(_HOOK)}, got {kind!r}")
    return _HOOK[kind].format(layer=int(layer))


# --------------------------------------------------------------------------- fonts and scales


def _bump(font: object, minimum: int, seen: list[float]) -> None:
    """Raise one plotly font object's size to ``minimum`` in place (its colour and family kept)."""
    size = font.size
    if size:
        seen.append(float(size))
    font.size = max(minimum, int(round(size))) if size else minimum


def for_projector(fig: go.Figure, minimum: int = PROJECTOR_MIN_FONT, *, max_grow: float = 1.6) -> go.Figure:
    """Every font of ``fig`` at least ``minimum`` px (base font, titles, ticks, legend, colour bars,
    annotations and bar texts); in place, returned. Larger sizes are kept. A figure with a fixed height
    whose annotations were below ``minimum`` grows by that ratio (at most ``max_grow``), so text placed
    in data units (the architecture diagram's boxes) keeps its room."""
    layout = fig.layout
    seen: list[float] = []
    _bump(layout.font, minimum, seen)
    _bump(layout.legend.font, minimum, seen)
    _bump(layout.title.font, minimum + 4, seen)
    _bump(layout.hoverlabel.font, minimum, seen)
    for name in dir(layout):
        if name.startswith(("xaxis", "yaxis")) and layout[name] is not None:
            _bump(layout[name].tickfont, minimum, seen)
            _bump(layout[name].title.font, minimum, seen)
    note_sizes: list[float] = []
    for note in layout.annotations or ():
        _bump(note.font, minimum, note_sizes)
    for trace in fig.data:
        bar = getattr(trace, "colorbar", None)
        if bar is not None:
            _bump(bar.tickfont, minimum, seen)
            _bump(bar.title.font, minimum, seen)
        if getattr(trace, "textfont", None) is not None:
            _bump(trace.textfont, minimum, seen)
    smallest = min(note_sizes or [minimum])
    if smallest < minimum and layout.height:
        fig.update_layout(height=int(layout.height * min(max_grow, minimum / smallest)))
    return fig


_REAL_SHAPE = re.compile(r"^\([0-9, ]+\)$")


def wrap_labels(fig: go.Figure, width: int = 12) -> go.Figure:
    """Break annotation labels longer than ``width`` characters onto several lines (in place), so labels
    set side by side at projector size do not run into each other. Labels that already have line breaks
    and real shapes such as "(1, 8, 256)" are kept whole."""
    for note in fig.layout.annotations or ():
        text = note.text or ""
        if "<br>" in text or _REAL_SHAPE.match(text) or len(re.sub(r"<[^>]+>", "", text)) <= width:
            continue
        note.text = "<br>".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False))
    return fig


def colorscales_of(fig: go.Figure) -> list[tuple[tuple[float, str], ...]]:
    """Every colour scale a figure's traces use (heatmaps and markers), as (position, colour) tuples.
    Two-colour overlays (a mask drawn in one grey) are not scales and are left out."""
    found = []
    for trace in fig.data:
        marker = getattr(trace, "marker", None)
        for scale in (getattr(trace, "colorscale", None), getattr(marker, "colorscale", None)):
            if scale is None:
                continue
            colours = {c for _, c in scale}
            if len(colours - {"rgba(0,0,0,0)"}) <= 1:  # a one-colour overlay
                continue
            found.append(tuple((float(p), str(c)) for p, c in scale))
    return found


def allowed_colorscales() -> set[tuple[tuple[float, str], ...]]:
    """:data:`COLORBLIND_SAFE`, expanded the way plotly stores scales in a figure."""
    out = set()
    for name in COLORBLIND_SAFE:
        fig = go.Figure(go.Heatmap(z=[[0, 1]], colorscale=name))
        out.add(tuple((float(p), str(c)) for p, c in fig.data[0].colorscale))
        out.add(tuple((float(p), str(c)) for p, c in get_colorscale(name)))
    return out


# --------------------------------------------------------------------------- slide 4: residual stream


@dataclass(frozen=True)
class ResidualNorms:
    """The residual stream's norm at each hook point of one stack, per position."""

    stack: str  # "encoder" or "decoder"
    points: tuple[str, ...]  # hook names, in the order the stream passes them
    labels: tuple[tuple[str, dict], ...]  # (label key, params) per point
    norms: np.ndarray  # [point, position] float64, ‖x‖ over d_model


def residual_norms(activations: Mapping[str, np.ndarray], stack: str) -> ResidualNorms:
    """‖x‖ of the residual stream of ``stack`` at every point it is recorded: after embedding + position,
    after each block's attention (and cross-attention) and FFN residual adds, and the stack's output
    (after the final norm of a Pre-LN model). ``activations``: hook name -> [batch=1, pos, d_model]."""
    if stack not in ("encoder", "decoder"):
        raise ValueError(f"stack must be encoder or decoder, got {stack!r}")
    points: list[str] = [f"{stack}.embed.hook_resid_in"]
    labels: list[tuple[str, dict]] = [("deck.resid.point.in", {})]
    layer = 0
    while f"{stack}.blocks.{layer}.hook_resid_post" in activations:
        for hook, key in (("hook_resid_mid", "mid"), ("hook_resid_mid2", "mid2"),
                          ("hook_resid_post", "post")):
            name = f"{stack}.blocks.{layer}.{hook}"
            if name in activations:
                points.append(name)
                labels.append((f"deck.resid.point.{key}", {"layer": layer}))
        layer += 1
    if f"{stack}.hook_out" in activations:
        points.append(f"{stack}.hook_out")
        labels.append(("deck.resid.point.out", {}))
    missing = [p for p in points if p not in activations]
    if missing or layer == 0:
        raise KeyError(f"no residual stream of the {stack} in the activations (missing {missing or points})")
    norms = np.stack([np.linalg.norm(np.asarray(activations[p], dtype=np.float64)[0], axis=-1)
                      for p in points])  # [point, position]
    return ResidualNorms(stack, tuple(points), tuple(labels), norms)


def residual_norm_figure(stacks: Sequence[ResidualNorms], *, norm_first: bool, lang: str = "en") -> go.Figure:
    """Mean ‖x‖ over positions at each point of the residual stream, one line per stack, with the
    min–max band over positions; the subtitle says where the norm sits (Pre-LN or Post-LN)."""
    if not stacks:
        raise ValueError("no residual stream to draw")
    colours = {"encoder": theme.ACCENT, "decoder": theme.NEGATIVE}
    fills = {"encoder": "rgba(33,113,181,0.15)", "decoder": "rgba(203,24,29,0.12)"}
    traces, ticks, texts, start = [], [], [], 0
    for s in stacks:
        name = label(lang, f"deck.resid.{s.stack}")
        points = [label(lang, key, **params) for key, params in s.labels]
        x = np.arange(start, start + len(points), dtype=np.float64)  # the stacks side by side, a gap between
        start += len(points) + 1
        ticks.extend(x.tolist())
        texts.extend(points)
        lo, hi, mean = s.norms.min(axis=1), s.norms.max(axis=1), s.norms.mean(axis=1)
        traces.append(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([hi, lo[::-1]]),
                                 fill="toself", mode="lines",
                                 fillcolor=fills[s.stack], line={"width": 0}, hoverinfo="skip",
                                 name=label(lang, "deck.resid.band", stack=name), meta=f"{s.stack}/band"))
        traces.append(go.Scatter(x=x, y=mean, mode="lines+markers", name=name, meta=s.stack,
                                 line={"color": colours[s.stack], "width": 3}, marker={"size": 9},
                                 customdata=points,
                                 hovertemplate=f"{name} · %{{customdata}}<br>"
                                 + label(lang, "hover.value", name=label(lang, "deck.resid.value"),
                                         value="%{y:.2f}") + "<extra></extra>"))
    fig = go.Figure(traces)
    theme.apply_theme(fig, label(lang, "deck.resid.title"),
                      subtitle=label(lang, "deck.resid.pre" if norm_first else "deck.resid.post"), height=560)
    fig.update_layout(xaxis={"title": {"text": label(lang, "deck.resid.axis")}, "tickmode": "array",
                             "tickvals": ticks, "ticktext": texts, "tickangle": -50, "showgrid": False},
                      yaxis={"title": {"text": label(lang, "deck.resid.value")}, "rangemode": "tozero"},
                      legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"})
    return fig


# --------------------------------------------------------------------------- the six figures


def layer_scaling(config: Mapping, kind: str, layer: int) -> tuple[float | None, int]:
    """(what a layer's scores are divided by, None meaning √d_head; its sliding window, 0 for none) from
    an inspect meta's config, as the model's attention modules take them: the config's own divisor
    (Gemma 3: √query_pre_attn_scalar), 1 for a model trained unscaled; a window on the decoder's local
    layers only (``layer_pattern`` "l", or every layer when it is empty: Phi-3)."""
    if not config.get("scale_scores", True):
        divisor = 1.0
    else:
        own = config.get("score_divisor")
        divisor = None if own is None else float(own)
    window = int(config.get("sliding_window") or 0)
    pattern = str(config.get("layer_pattern") or "")
    if kind != "decoder" or (pattern and pattern[layer] != "l"):
        window = 0
    return divisor, window


def one_query(activations: Mapping[str, np.ndarray], kind: str, layer: int, head: int,
              query: int, config: Mapping | None = None) -> WorkedRow:
    """Slide 1's numbers: one query of one head worked out from the recorded q, k and v (RoPE models:
    the rotated ones), as the worked-example page does; with ``config`` (an inspect meta's), the
    layer's own scaling and sliding window (:func:`layer_scaling`), else √d_head and none."""
    path = attention_path(kind, layer)

    def get(what: str) -> np.ndarray:
        return np.asarray(activations[f"{path}.hook_{what}"])[0]

    rope = f"{path}.hook_rot_q" in activations
    q, k, v = get("rot_q" if rope else "q"), get("rot_k" if rope else "k"), get("v")
    divisor, window = layer_scaling(config or {}, kind, layer)
    return work_row(q, k, v, head, query, causal=kind == "decoder", scale=divisor, window=window)


def query_figure(row: WorkedRow, query_token: str, key_tokens: Sequence[str], *,
                 lang: str = "en") -> go.Figure:
    """Slide 1: the worked example's weights figure of one query, titled with the formula."""
    fig = weights_figure(row, key_tokens, lang=lang)
    fig.update_layout(title={"text": label(lang, "deck.query.title", query=token_labels([query_token])[0],
                                           d=row.d_head)})
    return fig


def tokens_for(meta: Mapping, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of an attention kind, from an inspect meta.json."""
    src, tgt = list(meta["source_tokens"]), list(meta["target_tokens"])
    return {"encoder": (src, src), "decoder": (tgt, tgt), "cross": (tgt, src)}[kind]


def pattern_of(activations: Mapping[str, np.ndarray], kind: str, layer: int, head: int) -> np.ndarray:
    """[query, key] weights of one head, from an activation cache."""
    return np.asarray(activations[f"{attention_path(kind, layer)}.hook_pattern"])[0, head]


def scores_of(activations: Mapping[str, np.ndarray], kind: str, layer: int, head: int) -> np.ndarray | None:
    name = f"{attention_path(kind, layer)}.hook_scores"
    return np.asarray(activations[name])[0, head] if name in activations else None


def heatmap_figure(activations: Mapping[str, np.ndarray], meta: Mapping, kind: str, layer: int, head: int, *,
                   lang: str = "en") -> go.Figure:
    """Slide 6 (and ``python -m viz export``): one head's heatmap, masked cells in grey."""
    queries, keys = tokens_for(meta, kind)
    return attention_heatmap(pattern_of(activations, kind, layer, head), queries, keys,
                             scores_of(activations, kind, layer, head),
                             subtitle=label(lang, "hover.layer_head", layer=layer, head=head), lang=lang)


def deck_figures(activations: Mapping[str, np.ndarray], meta: Mapping, *, kind: str = "encoder",
                 layer: int = 0, head: int = 0, query: int | None = None,
                 lang: str = "en") -> list[go.Figure]:
    """The six slides' figures from an activation cache and inspect meta (config, shape trace, tokens).

    Slide 3 without the model: the token embedding and positional encoding norms per position (the
    word-order test itself runs the model, in the app). ``kind``/``layer``/``head``: the head of slides
    1, 2 and 6; ``query``: slide 1's query (default: position 1, or 0 for a one-token input).
    """
    config = meta["config"]
    queries, keys = tokens_for(meta, kind)
    q = min(1, len(queries) - 1) if query is None else int(query)
    row = one_query(activations, kind, layer, head, q, config)
    trace = meta["shape_trace"]
    # the stack that reads the input: the encoder, or a decoder-only model's decoder
    stack = "encoder" if "encoder.embed.hook_embed" in activations else "decoder"
    src = list(meta["source_tokens"] if stack == "encoder" else meta["target_tokens"])
    embed = np.linalg.norm(np.asarray(activations[f"{stack}.embed.hook_embed"], dtype=np.float64)[0], axis=-1)
    pos_hook = activations.get(f"{stack}.embed.hook_pos_embed")
    pos = None
    if pos_hook is not None:
        p = np.asarray(pos_hook, dtype=np.float64)
        pos = np.linalg.norm(p.reshape(-1, p.shape[-1])[-len(src):], axis=-1)
    stacks = [residual_norms(activations, s) for s in ("encoder", "decoder")
              if f"{s}.blocks.0.hook_resid_post" in activations]
    return [
        query_figure(row, queries[q], keys, lang=lang),
        wrap_labels(split_merge_figure(split_merge_stages(trace, attention_path(kind, layer)), lang=lang)),
        embedding_norm_bars(src, embed, pos, title=label(lang, "deck.slide.3.offline"), lang=lang),
        residual_norm_figure(stacks, norm_first=bool(config.get("norm_first", True)), lang=lang),
        architecture_figure(config, architecture_shapes(trace), lang=lang),
        heatmap_figure(activations, meta, kind, layer, head, lang=lang),
    ]
