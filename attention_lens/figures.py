"""The app's figures as functions: each takes a :class:`~attention_lens.models.Run` (or attention of your
own: an :class:`~attention_lens.attention.Attention`, or what :func:`~attention_lens.as_attention` takes,
with ``tokens``) and returns a plotly Figure drawn by the same ``viz/`` function the page uses.

Long inputs stay as the app keeps them: a run's weights are computed a layer (or a block of rows) at a
time from its recorded queries and keys, and only what a figure draws is kept.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

import viz
from model.core.files import atomic_write
from model.network.stack_rows import layer_rows, row_blocks
from viz.export import figure_image, standalone_html
from viz.focus import focus_grid_of_values, token_focus_values
from viz.grid import grid_block, layers_per_figure, pool_tiles, pooled_heads_grid

from .attention import Attention, as_attention
from .checks import ArgumentError, check_choice, check_index

__all__ = [
    "MAX_HEAD_POSITIONS",
    "MAX_TILES",
    "attention_heads",
    "compare",
    "head_detectors",
    "head_view",
    "logit_lens",
    "save_figure",
    "token_focus",
]

#: Positions a side :func:`head_view` draws cell for cell; a longer input is drawn through a window.
MAX_HEAD_POSITIONS = 512
#: Most tiles one :func:`attention_heads` figure draws (the all-heads page's bound); more are paged.
MAX_TILES = 72
#: Width of the all-heads figure, in pixels (the page's).
GRID_WIDTH = 1150


def _is_run(source: object) -> bool:
    return hasattr(source, "analysis") and hasattr(source, "model")


def _source(source: object, tokens: Any = None) -> Any:
    """A Run as it is, else the attention checked (:func:`as_attention`)."""
    if _is_run(source) or isinstance(source, Attention):
        if tokens is not None:
            raise ArgumentError(
                "tokens: a Run or an Attention brings its own tokens; pass tokens only with "
                "raw attention arrays"
            )
        return source
    if tokens is None:
        raise ArgumentError("tokens is missing: raw attention needs the token strings of its positions")
    return as_attention(source, tokens)


def _range(value: Any, n: int, name: str) -> tuple[int, int] | None:
    """A ``(start, stop)`` window of ``n`` positions (stop excluded), within the figure's bound."""
    if value is None:
        if n > MAX_HEAD_POSITIONS:
            raise ArgumentError(
                f"{name} is needed: {n} positions is more than head_view draws at once "
                f"({MAX_HEAD_POSITIONS}); pass {name}=(start, stop)"
            )
        return None
    try:
        start, stop = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be (start, stop), got {value!r}") from None
    if not 0 <= start < stop <= n:
        raise ArgumentError(f"{name}={value!r} must satisfy 0 <= start < stop <= {n}")
    if stop - start > MAX_HEAD_POSITIONS:
        raise ArgumentError(
            f"{name}={value!r} spans {stop - start} positions; head_view draws at most {MAX_HEAD_POSITIONS}"
        )
    return start, stop


def head_view(
    source: Any,
    tokens: Any = None,
    *,
    kind: str | None = None,
    layer: int = 0,
    head: int = 0,
    query_range: tuple[int, int] | None = None,
    key_range: tuple[int, int] | None = None,
    zmax: float | None = 1.0,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One head's attention as a query × key heatmap (the single-head page: :func:`viz.attention_heatmap`);
    masked cells grey, hover with weight and (for a run) the pre-softmax score. Above
    :data:`MAX_HEAD_POSITIONS` positions a side, pass a ``query_range`` / ``key_range`` window.

    >>> import attention_lens as al
    >>> fig = al.head_view(al.load("reverse").run("abc"), kind="cross", layer=1, head=0)
    >>> fig.data[-1].z.shape
    (4, 4)
    """
    src = _source(source, tokens)
    k = src.kind(kind)
    queries, keys = src.tokens_for(k)
    layer = check_index(layer, src.n_layers(k), "layer", f"of the {k} attention")
    head = check_index(head, src.n_heads, "head", f"of the {k} attention")
    q_range, k_range = (
        _range(query_range, len(queries), "query_range"),
        _range(key_range, len(keys), "key_range"),
    )
    if _is_run(src):
        scores = src.scores(k, layer, head)
        pattern = src.pattern(k, layer, head)
        mask = np.isneginf(scores)
    else:
        scores, pattern, mask = None, src.pattern(k, layer, head), src.mask(k)
    return viz.attention_heatmap(
        pattern,
        queries,
        keys,
        scores_2d=scores,
        mask_2d=mask,
        title=f"Layer {layer}, head {head}" if title is None else title,
        zmax=zmax,
        subtitle=f"{k} attention",
        query_range=q_range,
        key_range=k_range,
        lang=lang,
    )


def _stack(src: Any, kind: str, what: str) -> Any:
    """[layer, head, query, key]: a run's stack (computed when indexed) or an array."""
    if _is_run(src):
        return src.analysis.attention(kind, what)
    return src.attention(kind, what)


def attention_heads(
    source: Any,
    tokens: Any = None,
    *,
    kind: str | None = None,
    page: int = 0,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Every head of one attention kind as tiles (the all-heads page: :func:`viz.grid.pooled_heads_grid`);
    long inputs pooled to what a tile shows, a model of many heads drawn :data:`MAX_TILES` tiles a
    ``page`` (pages of layers, from 0).

    >>> import attention_lens as al
    >>> fig = al.attention_heads(al.load("reverse").run("abc"), kind="encoder")
    >>> fig.layout.meta["attention_grid"]["n_layers"], fig.layout.meta["attention_grid"]["n_heads"]
    (2, 4)
    """
    src = _source(source, tokens)
    k = src.kind(kind)
    queries, keys = src.tokens_for(k)
    n_layers, n_heads = src.n_layers(k), src.n_heads
    per_page = layers_per_figure(n_layers, n_heads, len(queries), len(keys), GRID_WIDTH, MAX_TILES)
    pages = math.ceil(n_layers / per_page)
    check_index(page, pages, "page", f"of {per_page} layers each")
    first = page * per_page
    block = grid_block(len(queries), len(keys), GRID_WIDTH, n_heads)
    pattern, mask = _stack(src, k, "pattern"), _stack(src, k, "mask")
    masked = (
        bool(np.asarray(mask).any())
        if not hasattr(mask, "layers")
        else any(rec.masks_anything() for rec in mask.layers)
    )
    values, masks = [], []
    for layer in range(first, min(first + per_page, n_layers)):
        parts = []
        for rows in row_blocks(pattern, layer, block):
            m = layer_rows(mask, layer, rows) if masked else None
            parts.append(pool_tiles(layer_rows(pattern, layer, rows), m, block, overwrite=True))
        values.append(np.concatenate([v for v, _ in parts], axis=-2))
        masks.append(None if not masked else np.concatenate([m for _, m in parts], axis=-2))
    return pooled_heads_grid(
        np.stack(values),
        np.stack(masks) if masked else None,
        block,
        queries,
        keys,
        title=f"{k} attention: {n_layers} layers × {n_heads} heads" if title is None else title,
        width=GRID_WIDTH,
        first_layer=first,
        lang=lang,
    )


def _position(token: int | str, tokens: list[str], name: str) -> int:
    if isinstance(token, str):
        if token not in tokens:
            raise ArgumentError(f"{name} {token!r} is not among the tokens {tokens[:12]}")
        return tokens.index(token)
    return check_index(token, len(tokens), name, "of the input")


def token_focus(
    source: Any,
    token: int | str,
    tokens: Any = None,
    *,
    kind: str | None = None,
    side: str = "from",
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One token across every layer and head (the token-focus page: :func:`viz.focus.focus_grid_of_values`):
    ``side="from"`` where it looks (its row: the strongest key per head), ``"to"`` who looks at it (its
    column). ``token``: a position, or a token string (its first occurrence).

    >>> import attention_lens as al
    >>> fig = al.token_focus(al.load("reverse").run("abc"), 1, kind="cross")
    >>> fig.data[0].z.shape
    (2, 4)
    """
    src = _source(source, tokens)
    k = src.kind(kind)
    check_choice(side, ("from", "to"), "side")
    queries, keys = src.tokens_for(k)
    idx = _position(token, queries if side == "from" else keys, "token")
    pattern = _stack(src, k, "pattern")
    values, partners = [], []
    for layer in range(src.n_layers(k)):
        if side == "from":
            rows = layer_rows(pattern, layer, slice(idx, idx + 1))  # [head, 1, key]
            v, p = token_focus_values(rows[None], 0, "from")
        else:
            column = np.concatenate(
                [layer_rows(pattern, layer, rows)[:, :, idx] for rows in row_blocks(pattern, layer, 1)],
                axis=-1,
            )  # [head, query]
            v, p = token_focus_values(column[None, :, :, None], 0, "to")
        values.append(v)
        partners.append(p)
    me = (queries if side == "from" else keys)[idx]
    return focus_grid_of_values(
        np.concatenate(values),
        np.concatenate(partners),
        idx,
        side,
        query_tokens=queries,
        key_tokens=keys,
        title=(f"Where {me!r} looks" if side == "from" else f"Who looks at {me!r}")
        if title is None
        else title,
        lang=lang,
    )


def _run_of(run: Any, name: str = "run") -> Any:
    if not _is_run(run):
        raise ArgumentError(
            f"{name} must be a Run (attention_lens.load(...).run(text)), got {type(run).__name__}"
        )
    return run


def logit_lens(run: Any, *, value: str = "top", title: str | None = None, lang: str = "en") -> go.Figure:
    """Each layer's residual stream read through the final norm and the output embedding (the logit-lens
    page: :func:`model.lab.lens.logit_lens`, drawn by :func:`viz.lens.lens_heatmap`), over the last
    positions the decoder read; ``value``: "top" (the top token's probability), "final" (the final
    choice's) or "entropy". Models with a decoder only.

    >>> import attention_lens as al
    >>> fig = al.logit_lens(al.load("reverse").run("abc"))
    >>> fig.data[0].z.shape  # embeddings + 2 blocks, 4 decoder positions
    (3, 4)
    """
    from model.lab.lens import lens_input, window_start
    from model.lab.lens import logit_lens as compute_lens
    from viz.lens import lens_cell_hover, lens_heatmap

    run = _run_of(run)
    check_choice(value, ("top", "final", "entropy"), "value")
    cfg = run.model.config
    if cfg.encoder_only:
        raise ArgumentError(
            f"run: {run.model.name} is encoder-only; it has no output embedding to read a logit lens through"
        )
    source, decoder, prompt_len = lens_input(run.analysis, cfg.decoder_only)
    lens = compute_lens(run.model.bundle, source, decoder, prompt_len, window_start(len(decoder)))
    positions = [int(p) for p in lens.positions]
    values = {"top": lens.top_probs[:, :, 0], "final": lens.final_prob, "entropy": lens.entropy}[value]
    zmax = float(max(np.max(lens.entropy), 1e-6)) if value == "entropy" else 1.0
    hover = lens_cell_hover(
        lens.top_ids,
        lens.top_probs,
        lens.words,
        lens.tokens,
        lens.final_ids,
        lens.final_rank,
        lens.final_prob,
        lens.entropy,
        positions,
        lang,
    )
    return lens_heatmap(
        values,
        lens.top_tokens(),
        lens.tokens,
        positions=positions,
        prompt_len=prompt_len,
        hover=hover,
        value_name=value,
        zmax=zmax,
        title="Logit lens" if title is None else title,
        lang=lang,
    )


def head_detectors(
    model: Any, role: str = "induction", *, seed: int = 0, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """Every head's score for one role on the detectors page's seeded probes (:func:`model.lab.detectors.
    probe_scores`, drawn by :func:`viz.detector_map`): "previous", "first", "duplicate", "induction" or
    "copying"; heads at or above the role's threshold are marked. ``model``: a Model (or a Run of one).

    >>> import attention_lens as al
    >>> fig = al.head_detectors(al.load("induction"), "induction")
    >>> fig.data[0].z.shape
    (2, 4)
    """
    from model.lab.detectors import ROLES, THRESHOLDS, probe_scores

    bundle = _bundle_of(model)
    check_choice(role, ROLES, "role")
    scores = probe_scores(bundle, seed)
    if role not in scores.scores:
        raise ArgumentError(
            f"role {role!r} is not defined on {bundle.name} ({scores.copying_note or 'no score'})"
        )
    return viz.detector_map(
        scores.scores[role],
        THRESHOLDS[role],
        value_name=role,
        signed=role == "copying",
        title="" if title is None else title,
        lang=lang,
    )


def _bundle_of(model: Any) -> Any:
    if _is_run(model):
        model = model.model
    bundle = getattr(model, "bundle", None)
    if bundle is None:
        raise ArgumentError(
            f"model must be an attention_lens Model (attention_lens.load(...)), got {type(model).__name__}"
        )
    return bundle


def compare(
    a: Any,
    b: Any,
    *,
    kind: str | None = None,
    layer: int = 0,
    head: int = 0,
    names: tuple[str, str] | None = None,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """The same head on two sentences side by side on one colour scale (the compare page:
    :func:`viz.compare_heatmaps`). ``a``, ``b``: Runs of one model, or two :class:`Attention` s.

    >>> import attention_lens as al
    >>> m = al.load("reverse")
    >>> fig = al.compare(m.run("abc"), m.run("abcd"), kind="cross", layer=1, head=0)
    >>> [t.z.shape for t in fig.data]   # A's panel, then B's
    [(4, 4), (5, 5)]
    """
    sa, sb = _source(a), _source(b)
    k = sa.kind(kind)
    sb.kind(k)
    for side, src in (("a", sa), ("b", sb)):
        check_index(layer, src.n_layers(k), "layer", f"of the {k} attention of {side}")
        check_index(head, src.n_heads, "head", f"of the {k} attention of {side}")
    (qa, ka), (qb, kb) = sa.tokens_for(k), sb.tokens_for(k)

    def mask(src: Any) -> np.ndarray | None:
        return np.isneginf(src.scores(k, layer, head)) if _is_run(src) else src.mask(k)

    return viz.compare_heatmaps(
        sa.pattern(k, layer, head),
        qa,
        sb.pattern(k, layer, head),
        qb,
        key_tokens_a=ka,
        key_tokens_b=kb,
        mask_a=mask(sa),
        mask_b=mask(sb),
        names=names,
        title=f"{k} attention, layer {layer}, head {head}" if title is None else title,
        lang=lang,
    )


def save_figure(fig: go.Figure, path: str | Path, *, scale: float = 2, lang: str = "en") -> Path:
    """Write a figure by its file's suffix: ``.html`` (one offline file, plotly.js inside, no request
    leaves it: :func:`viz.export.standalone_html`), ``.png`` (at ``scale``) or ``.svg`` (through kaleido and
    the system's Chromium: :func:`viz.export.figure_image`). Written whole, never half a file.

    >>> import attention_lens as al, tempfile, pathlib
    >>> fig = al.head_view(al.load("reverse").run("abc"))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = al.save_figure(fig, pathlib.Path(tmp) / "head.html")
    ...     "plotly" in path.read_text(encoding="utf-8")[:5_000_000]
    True
    """
    if not isinstance(fig, go.Figure):
        raise ArgumentError(f"fig must be a plotly Figure, got {type(fig).__name__}")
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    check_choice(fmt, ("html", "png", "svg"), "path's suffix")
    if fmt == "html":
        return atomic_write(path, standalone_html(fig, lang=lang))
    return atomic_write(path, figure_image(fig, fmt, scale=scale))
