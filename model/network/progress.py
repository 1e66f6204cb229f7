"""How far a long computation has got, for whoever asked to be told (the app's progress bar).

A caller wraps the work in :func:`reporting`; the work marks its stages with :func:`stage` and its
steps with :func:`step` (the network reports each block it has run). Nothing is reported, and
nothing costs more than one context-variable read, when no one asked.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class _Progress:
    tell: Callable[[float, str], None]  # (fraction done in [0, 1], the stage's name)
    start: float = 0.0  # where the current stage begins and ends on the whole bar
    end: float = 1.0
    name: str = ""
    done: float = 0.0  # the furthest point reached: the bar never moves back
    told: tuple[float, str] = (-1.0, "")  # the last point and stage told


_active: contextvars.ContextVar[_Progress | None] = contextvars.ContextVar("progress", default=None)


@contextlib.contextmanager
def reporting(tell: Callable[[float, str], None]) -> Iterator[None]:
    """Call ``tell(fraction, stage)`` as the work inside the block advances."""
    token = _active.set(_Progress(tell))
    try:
        yield
    finally:
        _active.reset(token)


@contextlib.contextmanager
def stage(start: float, end: float, name: str) -> Iterator[None]:
    """The steps inside the block fill the bar from ``start`` to ``end``."""
    progress = _active.get()
    if progress is None:
        yield
        return
    saved = (progress.start, progress.end, progress.name)
    progress.start, progress.end, progress.name = start, end, name
    try:
        _tell(progress, start)
        yield
        _tell(progress, end)
    finally:
        progress.start, progress.end, progress.name = saved


def step(done: int, total: int) -> None:
    """``done`` of the current stage's ``total`` steps are finished."""
    progress = _active.get()
    if progress is not None and total > 0:
        _tell(progress, progress.start + (progress.end - progress.start) * min(1.0, done / total))


#: The least move of the bar that is told (a new stage and the end always are): a long analysis's decoding
#: steps report every block, ~1,000 moves that each cost the app a message to the browser.
LEAST_MOVE = 0.01


def _tell(progress: _Progress, at: float) -> None:
    if at > progress.done:
        progress.done = at
        last, name = progress.told
        if at - last >= LEAST_MOVE or at >= 1.0 or name != progress.name:
            progress.told = (at, progress.name)
            progress.tell(at, progress.name)
