"""The experiments the app's pages run on a loaded model, one module each.

Each module takes a :class:`model.store.bundle.Bundle` and plain values and returns plain results
(dataclasses of numpy arrays, numbers, strings): the app caches them by model and arguments
(``app_support/gateway.py``) and draws them (``viz/``). Every change to the forward pass goes
through :mod:`model.interventions` (an experiment's own change is a ``HookFunction`` edit), which
always undoes it; never through the weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Entry", "entry"]


@dataclass(frozen=True)
class Entry:
    """How the app may call an experiment function (read by ``app_support/gateway.py``)."""

    models: int = 1  # how many leading arguments are loaded models (Bundles): the app passes names
    frees_memory: bool = False  # results of hundreds of MB: collect garbage before and after


def entry(fn: Callable | None = None, *, models: int = 1, frees_memory: bool = False) -> Callable:
    """Mark ``fn`` as a function the app's pages may ask for (through the gateway, cached by model
    and arguments). Its arguments must be hashable values (or lists of them) and it must not keep
    or change what it is given; it returns plain results. ``fn`` itself is returned unchanged."""
    if fn is None:
        return lambda f: entry(f, models=models, frees_memory=frees_memory)
    fn.lab_entry = Entry(models, frees_memory)
    return fn
