"""The live deck's residual-stream slide: the stream at every point it is recorded, for one input."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decoding.strategy import Strategy
from ..run.analysis import analyze
from ..store.bundle import Bundle
from . import entry


def is_residual_hook(hook: str) -> bool:
    """The residual stream's hooks: after embedding + position, after each residual add, the output."""
    return ".hook_resid_" in hook or hook in ("encoder.hook_out", "decoder.hook_out")


@dataclass(frozen=True)
class ResidualStream:
    activations: dict[str, np.ndarray]  # residual hook -> [batch=1, pos, d_model]
    norm_first: bool  # Pre-LN (True) or Post-LN, from the config


@entry
def residual_stream(bundle: Bundle, text: str, direction: str | None, strategy: Strategy | None = None,
                    max_new: int | None = None) -> ResidualStream:
    """One hooked pass over ``text`` recording the residual stream only, decoded as the page's analysis
    was (``strategy``, ``max_new``: the sidebar's)."""
    result = analyze(bundle, text, direction, strategy=strategy, max_new=max_new, keep=is_residual_hook)
    return ResidualStream(result.activations, bool(bundle.cfg.norm_first))
