"""The one way the app gets what a model computes: loaded once, computed once per input, shared.

* Models are loaded once per process (``st.cache_resource``), keyed by name and their weights'
  stamp (the weight file's modification time), so a re-shipped model is picked up without a
  restart.
* :func:`cached` turns a function of loaded models (its first ``models`` arguments are
  :class:`~model.store.bundle.Bundle`s: an analysis, an experiment of ``model/lab/``) into a
  function of model names whose results live in :data:`RESULTS`, one least-recently-used store
  shared by every session and bounded in bytes (one SmolLM2 analysis at 2,048 tokens is 180 MiB).
  The key is the function, the model names, their weights' stamps and the other arguments as the
  function binds them (defaults filled in), so a value object such as ``Strategy`` keys it as is.
* Every session gets the same result object: its arrays are made read-only (a page must never
  write into what another session reads), and a result computed on a model that has been loaded
  again since is never served.
* Pages reach the experiments of ``model/lab/`` through :mod:`app_support.lab`
  (``lab.<module>.<function>(model_name, ...)``), where each ``@entry`` function is served by one
  :func:`served` line, so a page imports no ``model/`` computation.
* A direction is ``None`` (let the task detect it) or a direction of the model, never the
  sidebar's word "auto": the view normalises it once (``View.direction_arg``) and the gateway
  refuses "auto" so that no caller can key the same input twice.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import streamlit as st

from app_support.byte_cache import ByteLRU
from model.decoding.strategy import GREEDY, Strategy
from model.lab import lens as lens_lab
from model.lab.lens import LogitLens, lens_input, window_start
from model.network.config import ModelConfig
from model.run.analysis import Analysis, analyze, attention_only, model_summary
from model.run.runtime import configure, freeze_long_lived, release_memory, trim_heap
from model.store.bundle import Bundle
from model.store.registry import UnknownModelError, load_model, model_dir

__all__ = ["RESULTS", "cached", "config", "derived", "forget", "freeze_long_lived", "get_analysis",
           "get_bundle", "get_lens", "get_summary", "holds", "served", "stamp", "trim_heap", "unload"]

configure()

#: Bytes the shared store may hold (ATTENTION_LENS_ANALYSIS_CACHE_MB, default 320 MiB). An analysis
#: keeps each attention layer's queries and keys, not every head's L x L weights: MiniLM at 512 tokens
#: holds 9 MiB (it held 144 MiB of patterns and scores before), SmolLM2 at 1,024 tokens 90 MiB, at
#: 2,048 180 MiB; so the server stays flat over a long session (bench/bench_memory.py).
RESULTS_CACHE_BYTES = int(float(os.environ.get("ATTENTION_LENS_ANALYSIS_CACHE_MB", "320") or 320) * 2**20)
RESULTS = ByteLRU(RESULTS_CACHE_BYTES, max_entries=256)


def stamp(name: str) -> int:
    """Modification time of a model's weights (0 when it has none or is unknown)."""
    try:
        return (model_dir(name) / "model.safetensors").stat().st_mtime_ns
    except (OSError, UnknownModelError):
        return 0


#: Loaded models kept at once: the variants page reads 7 models next to the sidebar's and a reference;
#: with 8 the sidebar's own model was pushed out on that page and loaded again on the next click.
MODELS_KEPT = 16


@st.cache_resource(max_entries=MODELS_KEPT, show_spinner="Loading the model …")
def _load(name: str, weights_stamp: int) -> Bundle:
    return load_model(name)


#: (name, weights stamp) -> the copy of that model the app serves now (weakly: the model cache owns it).
_SERVED: dict[tuple[str, int], weakref.ref] = {}


def get_bundle(name: str) -> Bundle:
    """The loaded model ``name`` (for ``app_support``'s glue; pages ask for results, not models)."""
    weights = stamp(name)
    bundle = _load(name, weights)
    _SERVED[(name, weights)] = weakref.ref(bundle)
    return bundle


def _computed_on_served_copies(names: tuple, stamps: tuple, refs: tuple) -> bool:
    """Whether a result computed on the copies ``refs`` may be served: no other copy of those models
    has been loaded since (when none is loaded now, the weights' stamp already vouches for it)."""
    for name, weights, ref in zip(names, stamps, refs, strict=True):
        served = _SERVED.get((name, weights))
        current = served() if served is not None else None
        if current is not None and current is not ref():
            return False
    return True


def unload(name: str) -> None:
    """Forget the loaded copy of ``name`` and every result computed on it."""
    _load.clear(name, stamp(name))
    forget(name)


def config(name: str) -> ModelConfig:
    """The configuration of model ``name`` (frozen: what a page may read about a model's shape).
    Kept with the results, so a page that lists many models does not keep them all loaded."""
    return _config(name)


def freeze(value: Any, _seen: set[int] | None = None) -> Any:
    """Make the arrays inside ``value`` read-only (dataclasses, dicts, lists and tuples walked);
    an :class:`Analysis` stacks each kind's layers once first, so pages read the stack as is."""
    if isinstance(value, str | bytes | int | float | None):  # nothing to freeze (thousands of tokens)
        return value
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return value
    seen.add(id(value))
    if isinstance(value, Analysis):
        value.share_stacked()
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, dict):
        for item in value.values():
            freeze(item, seen)
    elif isinstance(value, list | tuple):
        for item in value:
            freeze(item, seen)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            freeze(getattr(value, f.name, None), seen)
    return value


def _hashable(value: Any) -> Hashable:
    """``value`` as a cache key part: lists become tuples, dicts sorted tuples of items."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    hash(value)  # a TypeError here names an argument that cannot key a cache
    return value


#: Large results (``frees_memory``) computed at once, server-wide (ATTENTION_LENS_LARGE_AT_ONCE, default
#: 1). A MiniLM analysis at 500 tokens holds ~140 MB and peaks at ~210 MB while computed; four
#: sessions computing at once took the server from 1.1 to 1.8 GB (bench/bench_sessions.py). The
#: forward passes run on one torch thread each, so a second one at once gains little on a small server.
LARGE_AT_ONCE = max(1, int(os.environ.get("ATTENTION_LENS_LARGE_AT_ONCE", "1") or 1))
_LARGE = threading.BoundedSemaphore(LARGE_AT_ONCE)
_HOLDS_TURN = threading.local()


@contextlib.contextmanager
def _large_turn(large: bool) -> Iterator[None]:
    """Wait for a turn to compute a large result (reentrant: a large computation may ask for another)."""
    if not large or getattr(_HOLDS_TURN, "held", False):
        yield
        return
    with _LARGE:
        _HOLDS_TURN.held = True
        try:
            yield
        finally:
            _HOLDS_TURN.held = False


def cached(fn: Callable | None = None, *, models: int = 1, frees_memory: bool = False) -> Callable:
    """``fn(bundle, ..., *args)`` as ``run(name, ..., *args)``, its results kept in :data:`RESULTS`.

    ``models``: how many leading arguments are models (0 for a function of plain values).
    ``frees_memory``: hand freed memory back to the system before and after computing (for results
    of hundreds of MB, whose garbage the collector's object-count thresholds never notice), and
    compute at most :data:`LARGE_AT_ONCE` of them at once.
    Exceptions are not cached: an unusable input is tried again (and refused again) when asked.
    The wrapped function stays reachable as ``run.uncached``.
    """
    if fn is None:
        return functools.partial(cached, models=models, frees_memory=frees_memory)
    signature = inspect.signature(fn)
    label = f"{fn.__module__}.{fn.__qualname__}"

    missing = object()

    def lookup(key: tuple, names: tuple, stamps: tuple) -> Any:
        stored = RESULTS.get(key, missing)
        if stored is not missing and _computed_on_served_copies(names, stamps, stored[0]):
            RESULTS.hits += 1
            return stored[1]
        return missing

    @functools.wraps(fn)
    def run(*args, **kwargs):
        names = tuple(args[:models])
        bound = signature.bind(*args, **kwargs)  # the names stand in for the models: only the key
        bound.apply_defaults()
        if bound.arguments.get("direction") == "auto":
            raise ValueError(f"{label}: pass View.direction_arg (None), not the sidebar's 'auto'")
        stamps = tuple(stamp(name) for name in names)
        key = (label, names, stamps, _hashable(list(bound.arguments.items())[models:]))
        # A hit loads no model: a page showing results of more models than the model cache holds
        # (the variants page: 7) would otherwise load them all again on every rerun.
        found = lookup(key, names, stamps)
        if found is not missing:
            return found
        with _large_turn(frees_memory):
            found = lookup(key, names, stamps) if frees_memory else missing  # computed while we waited
            if found is not missing:
                return found
            RESULTS.misses += 1
            bundles = tuple(get_bundle(name) for name in names)
            if frees_memory:
                release_memory()
            value = freeze(fn(*bundles, *args[models:], **kwargs))
            RESULTS.discard(lambda k: k == key)  # a result of a copy loaded before this one: never served
            stored = RESULTS.put(key, (tuple(weakref.ref(b) for b in bundles), value))[1]
            if frees_memory:  # after the store let older results go: their heap pages go back too
                release_memory()
            return stored

    run.uncached = fn
    return run


def forget(name: str) -> int:
    """Drop every stored result computed on model ``name`` (e.g. a session's own model when it ends)."""
    return RESULTS.discard(lambda k: name in k[1])


def holds(name: str) -> bool:
    """Whether any stored result was computed on model ``name``."""
    return any(name in k[1] for k in RESULTS.keys())


def _attention_analysis(bundle: Bundle, text: str, direction: str | None, target: str | None,
                        strategy: Strategy, edits: tuple, max_new: int | None = None,
                        whole_trace: bool = False) -> Analysis:
    # Free the previous runs' cyclic garbage around each new analysis (``frees_memory``): page
    # scripts stopped by st.stop() leave frames holding their arrays in reference cycles, and at
    # 512 tokens the server's memory grew by ~45 MB per new input without it (bench/bench_memory.py).
    return analyze(bundle, text, direction, target, edits=edits, strategy=strategy, keep=attention_only,
                   max_new=max_new, whole_trace=whole_trace)


_analysis = cached(_attention_analysis, frees_memory=True)


def get_analysis(name: str, text: str, direction: str | None = None, target: str | None = None,
                 strategy: Strategy | None = None, edits: tuple = (), max_new: int | None = None,
                 whole_trace: bool = False) -> Analysis:
    """``analyze(model, text, direction, target, strategy=strategy, edits=edits)`` of model ``name``,
    recording attention patterns and scores only (all any page draws), cached per input.

    ``strategy`` is greedy when None, and ignored when teacher-forced (``target`` given); ``edits``
    are interventions (model/run/interventions.py): the model itself is never changed. Raises
    ``InputError`` with a user-facing message for unusable input (never cached). ``max_new`` bounds
    the new tokens a decoded output may have (None: the model's default, see ``analyze``). ``whole_trace``:
    the shape trace of one pass over the whole sequence, not of the decoding's first call (``analyze``).
    """
    chosen = GREEDY if strategy is None or target is not None else strategy
    bound = None if target is not None else max_new  # a given target is read whole
    return _analysis(name, text, direction, target, chosen, tuple(edits), bound, whole_trace)


#: ``model.run.analysis.model_summary`` of a model (config, parameter counts, metrics), cached.
get_summary = cached(model_summary)


def _config_of(bundle: Bundle) -> ModelConfig:
    return bundle.cfg


_config = cached(_config_of)


def served(fn: Callable) -> Callable:
    """An ``@entry`` function of ``model/lab/`` as the pages call it (:mod:`app_support.lab`): through
    :func:`cached`, with the entry's own count of model arguments and memory behaviour."""
    spec = getattr(fn, "lab_entry", None)
    if spec is None:
        raise TypeError(f"{fn.__module__}.{fn.__qualname__} is not an @entry function of model/lab")
    return cached(fn, models=spec.models, frees_memory=spec.frees_memory)


_logit_lens = served(lens_lab.logit_lens)


def get_lens(name: str, text: str, direction: str | None = None, strategy: Strategy | None = None,
             max_new: int | None = None) -> LogitLens:
    """The logit lens of what :func:`get_analysis` gives for the same arguments: the ids its decoder read
    (a language model's prompt and output; a translation's prefix and output) projected at the last
    :data:`~model.lab.lens.MAX_POSITIONS` positions. The page asks for the lens of its view and sends
    nothing back; both results are cached."""
    result = get_analysis(name, text, direction, strategy=strategy, max_new=max_new)
    source, decoder, prompt_len = lens_input(result, config(name).decoder_only)
    return _logit_lens(name, source, decoder, prompt_len, window_start(len(decoder)))


def derived(result: object, key: Hashable, compute: Callable[[], object]) -> object:
    """``compute()``, remembered on ``result`` under ``key``: a page's own summary of a cached
    result (head statistics, head similarity) is computed once per input, not on every rerun (at
    512 tokens on MiniLM these took 2.6 s of each rerun of the statistics page). Only for small
    values (not counted in the store's bytes); callers must not modify what they get."""
    memo = result.__dict__.setdefault("_derived", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]
