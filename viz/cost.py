"""What attention costs as L grows: the quadratic fit, the doubling ratios, the score tensor's memory, and
their figures and tables. Pure: lists of lengths and seconds in, numpy / pandas / plotly out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.labels import label
from viz.theme import apply_theme

#: A doubling whose time ratio lies in this range counts as "about 4": the L² part dominates.
QUADRATIC_RANGE = (3.3, 4.8)


@dataclass(frozen=True)
class QuadraticFit:
    """time(L) ≈ a·L² + b·L + c (in the unit of the seconds given)."""

    a: float
    b: float
    c: float

    def __call__(self, lengths: Sequence[float] | np.ndarray) -> np.ndarray:
        x = np.asarray(lengths, dtype=np.float64)
        return self.a * x**2 + self.b * x + self.c


def fit_quadratic(lengths: Sequence[float], seconds: Sequence[float]) -> QuadraticFit:
    """a·L² + b·L + c through the points, with a, b, c ≥ 0, fitted on relative error.

    A time cannot have a negative part: an unconstrained fit of noisy timings took b < 0 and drew a
    curve that dipped below zero between the points. Relative error (each point weighted by 1/time)
    keeps the fast short lengths from being ignored next to the slow long ones. The constrained
    problem has three unknowns, so every subset of them is solved by least squares and the best
    all-non-negative solution kept. Three points or more; with exactly quadratic data (non-negative
    coefficients) the coefficients come back to rounding error."""
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(seconds, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 3:
        raise ValueError(
            f"need at least 3 (length, time) pairs of the same size, got {x.shape} and {y.shape}"
        )
    scale = float(np.max(np.abs(x))) or 1.0
    u = x / scale  # columns of similar size: a well-conditioned system
    weight = 1.0 / np.where(np.abs(y) > 0, np.abs(y), 1.0)
    design = np.stack([u**2, u, np.ones_like(u)], axis=1) * weight[:, None]
    target = y * weight
    best: tuple[float, np.ndarray] | None = None
    for subset in ((0, 1, 2), (0, 1), (0, 2), (1, 2), (0,), (1,), (2,)):
        coef_sub, *_ = np.linalg.lstsq(design[:, subset], target, rcond=None)
        if np.any(coef_sub < 0):
            continue
        coef = np.zeros(3)
        coef[list(subset)] = coef_sub
        residual = float(np.sum((design @ coef - target) ** 2))
        if best is None or residual < best[0] - 1e-15 * max(1.0, best[0]):
            best = (residual, coef)
    a, b, c = best[1] if best is not None else np.zeros(3)
    return QuadraticFit(float(a) / scale**2, float(b) / scale, float(c))


@dataclass(frozen=True)
class Doubling:
    short: int  # L
    long: int  # 2L
    ratio: float  # time(2L) / time(L)
    verdict: str  # "quadratic" (about 4), "overhead" (below), "above"


def doubling_ratios(lengths: Sequence[int], seconds: Sequence[float]) -> list[Doubling]:
    """time(2L) / time(L) for every measured L whose double was measured too."""
    at = {int(n): float(s) for n, s in zip(lengths, seconds, strict=True)}
    out = []
    for n in sorted(at):
        if 2 * n in at and at[n] > 0:
            ratio = at[2 * n] / at[n]
            low, high = QUADRATIC_RANGE
            verdict = "quadratic" if low <= ratio <= high else ("overhead" if ratio < low else "above")
            out.append(Doubling(n, 2 * n, ratio, verdict))
    return out


def score_memory_bytes(batch: int, heads: int, length: int, bytes_per_value: int = 4) -> int:
    """Bytes of one layer's score tensor [batch, head, L, L] in float32: B·h·L²·4."""
    return int(batch) * int(heads) * int(length) ** 2 * int(bytes_per_value)


def format_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def memory_table(
    lengths: Sequence[int], *, batch: int, heads: int, layers: int, lang: str = "en"
) -> pd.DataFrame:
    """One row per length: the score tensor's size per layer and for every attention layer of a pass."""
    rows = []
    for n in lengths:
        one = score_memory_bytes(batch, heads, n)
        rows.append(
            {
                label(lang, "cost.col.length"): int(n),
                label(lang, "cost.col.formula"): f"{batch}·{heads}·{n}²·4",
                label(lang, "cost.col.bytes"): one,
                label(lang, "cost.col.per_layer"): format_bytes(one),
                label(lang, "cost.col.all_layers", layers=layers): format_bytes(one * layers),
            }
        )
    return pd.DataFrame(rows)


def doubling_table(
    doublings: Sequence[Doubling], lengths: Sequence[int], seconds: Sequence[float], *, lang: str = "en"
) -> pd.DataFrame:
    at = {int(n): float(s) for n, s in zip(lengths, seconds, strict=True)}
    return pd.DataFrame(
        [
            {
                label(lang, "cost.col.doubling"): f"{d.short} → {d.long}",
                label(lang, "cost.col.time_short"): round(at[d.short] * 1e3, 4),
                label(lang, "cost.col.time_long"): round(at[d.long] * 1e3, 4),
                label(lang, "cost.col.ratio"): round(d.ratio, 2),
                label(lang, "cost.col.verdict"): label(lang, f"cost.verdict.{d.verdict}"),
            }
            for d in doublings
        ]
    )


def model_table(
    lengths: Sequence[int],
    seconds: Sequence[float],
    core_seconds: Sequence[float],
    shares: Sequence[float],
    *,
    layers: int,
    lang: str = "en",
) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                label(lang, "cost.col.length"): int(n),
                label(lang, "cost.col.forward_ms"): round(s * 1e3, 3),
                label(lang, "cost.col.core_ms", layers=layers): round(c * layers * 1e3, 3),
                label(lang, "cost.col.share"): f"{100 * sh:.1f} %",
            }
            for n, s, c, sh in zip(lengths, seconds, core_seconds, shares, strict=True)
        ]
    )


def cost_figure(
    lengths: Sequence[int], seconds: Sequence[float], fit: QuadraticFit | None = None, *, lang: str = "en"
) -> go.Figure:
    """Measured median times (ms) against L, with the fitted a·L² + b·L + c curve, on log–log axes
    (a pure L² line has slope 2 there)."""
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(seconds, dtype=np.float64) * 1e3
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="markers+lines",
            name=label(lang, "cost.measured"),
            marker=dict(size=9),
            line=dict(width=1, dash="dot"),
            hovertemplate=label(lang, "cost.hover", length="%{x}", ms="%{y:.4f}") + "<extra></extra>",
        )
    )
    if fit is not None and len(x):
        dense = np.geomspace(x.min(), x.max(), 60)
        fitted = np.maximum(fit(dense) * 1e3, 1e-6)
        fig.add_trace(
            go.Scatter(
                x=dense,
                y=fitted,
                mode="lines",
                name=label(lang, "cost.fitted"),
                line=dict(width=2),
                hoverinfo="skip",
            )
        )
    apply_theme(fig, label(lang, "cost.timing_title"), height=420)
    fig.update_layout(
        xaxis=dict(type="log", title=label(lang, "cost.axis.length"), tickvals=list(x)),
        yaxis=dict(type="log", title=label(lang, "cost.axis.ms")),
        legend=dict(orientation="h", y=-0.2),
        meta={"lengths": [int(v) for v in x], "ms": [float(v) for v in y]},
    )
    return fig
