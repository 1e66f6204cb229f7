"""Cached model loading and per-input analysis for the app.

* Models are loaded once per process with ``st.cache_resource`` (keyed by name and the weight
  file's modification time, so a re-shipped model is picked up without a restart).
* One input's analysis (``model.analysis.analyze``) is cached per (model, text, direction, target,
  decoding strategy) in :data:`ANALYSES`, a least-recently-used cache shared by every session and
  bounded in bytes (``st.cache_data`` bounds entries only, and one MiniLM analysis at 512 tokens is
  ~150 MB). Only attention patterns and scores are kept: every page that reads the cached analysis
  draws those, and q/k/v/MLP/residual tensors would double an entry. The cached arrays are
  read-only: every session gets the same object (no pickled copy per hit).
* The input limit is per model: the model reads at most ``cfg.max_len`` tokens (and says so when
  it truncates); the text boxes take at most :func:`input_char_limit` characters, a safety bound
  sized from that token limit.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass

import numpy as np
import streamlit as st
import torch

from model.analysis import Analysis, analyze, model_summary
from model.decoding import Strategy
from model.network.positional import sinusoidal_table
from model.store.bundle import Bundle, CheckpointError
from model.store.registry import (
    DEFAULT_MODEL,
    ModelInfo,
    UnknownModelError,
    load_model,
    model_dir,
    model_info,
    model_infos,
)

__all__ = [
    "ANALYSES",
    "DEFAULT_MODEL",
    "MAX_INPUT_CHARS",
    "ByteLRU",
    "input_char_limit",
    "nbytes",
    "attention_hooks_only",
    "get_analysis",
    "get_bundle",
    "get_summary",
    "list_models",
    "model_description",
    "model_label",
]

#: Characters allowed per token of a model's limit: a safety bound on the text boxes, far above
#: real text (English runs ~4-5 characters per WordPiece token), so the model's own token limit
#: is what cuts an input, with its note.
CHARS_PER_TOKEN = 16
#: The smallest character limit any model gets (models that read few tokens still take a paragraph).
MIN_INPUT_CHARS = 1000
#: Longest text any box accepts, whatever the model (512 tokens x 16 = 8,192 for MiniLM).
MAX_INPUT_CHARS = 16_384

_ATTENTION_SUFFIXES = (".hook_pattern", ".hook_scores")

#: Torch threads for the app's forward passes. The models are small and one input runs at a
#: time, so extra threads buy little; on a busy machine (e.g. while a model trains) a second
#: OpenMP thread waiting for a core made greedy decoding ~50x slower in our measurements.
TORCH_THREADS = int(os.environ.get("ATTENTION_LENS_TORCH_THREADS", "1") or 1)


def configure_torch() -> None:
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(max(1, TORCH_THREADS))


configure_torch()

#: Arrays at least this big get their own memory mapping, returned to the system when freed
#: (ATTENTION_LENS_MMAP_THRESHOLD, bytes; 0 leaves the C library's default). glibc's default
#: threshold grows with the largest block freed (up to 32 MB), after which every per-layer
#: tensor of a 512-token analysis (12.6 MB) lands on the heap, and a server that kept answering
#: long inputs held hundreds of MB of freed, fragmented heap (bench/bench_memory.py).
MMAP_THRESHOLD = int(os.environ.get("ATTENTION_LENS_MMAP_THRESHOLD", str(256 << 10)) or 0)


def configure_malloc() -> bool:
    """Set glibc's mmap threshold to MMAP_THRESHOLD (Linux with glibc only); True if it was set."""
    if MMAP_THRESHOLD <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, MMAP_THRESHOLD))  # -3 = M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # another C library (musl): leave it as it is
        return False


def release_memory() -> None:
    """Collect cyclic garbage and hand freed heap pages back to the system (glibc ``malloc_trim``)."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


configure_malloc()

def list_models() -> list[str]:
    """Models the picker offers, in menu order (not cached: new models appear at once).

    Listed models first; a model whose config cannot be read is still offered, last, so choosing
    it shows what is wrong with it instead of it silently missing.
    """
    broken: list[tuple[str, str]] = []
    names = [i.name for i in model_infos(broken) if i.listed]
    return names + sorted(name for name, _ in broken)


def _stamp(name: str) -> int:
    """Modification time of a model's weights; part of every cache key."""
    try:
        return (model_dir(name) / "model.safetensors").stat().st_mtime_ns
    except (OSError, UnknownModelError):
        return 0


@st.cache_resource(max_entries=8, show_spinner="Loading the model …")
def _load(name: str, stamp: int) -> Bundle:
    return load_model(name)


def get_bundle(name: str) -> Bundle:
    """The loaded model ``name`` (cached for the whole server process)."""
    return _load(name, _stamp(name))


def input_char_limit(name: str) -> int:
    """Characters the text boxes take for model ``name``: CHARS_PER_TOKEN per token the model reads,
    at least MIN_INPUT_CHARS and at most MAX_INPUT_CHARS (MIN_INPUT_CHARS if it cannot be loaded)."""
    try:
        max_len = int(get_bundle(name).cfg.max_len)
    except (CheckpointError, UnknownModelError, OSError):
        return MIN_INPUT_CHARS
    return min(MAX_INPUT_CHARS, max(MIN_INPUT_CHARS, CHARS_PER_TOKEN * max_len))


def attention_hooks_only(result: Analysis) -> Analysis:
    """Drop every activation except attention patterns and scores (in place); returns it."""
    result.activations = {k: v for k, v in result.activations.items() if k.endswith(_ATTENTION_SUFFIXES)}
    return result


def nbytes(obj: object, _seen: set[int] | None = None) -> int:
    """Bytes held by the arrays and tensors in ``obj`` (dataclasses, dicts, lists, tuples walked;
    each object counted once, a view as the array it views). Strings and numbers count their
    length only: arrays dominate."""
    seen = set() if _seen is None else _seen
    if isinstance(obj, np.ndarray):  # a view counts the array it views (once)
        while isinstance(obj.base, np.ndarray):
            obj = obj.base
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, torch.Tensor):
        return int(obj.element_size() * obj.nelement())
    if isinstance(obj, str | bytes):
        return len(obj)
    if isinstance(obj, dict):
        return sum(nbytes(k, seen) + nbytes(v, seen) for k, v in obj.items())
    if isinstance(obj, list | tuple | set | frozenset):
        return sum(nbytes(v, seen) for v in obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return sum(nbytes(getattr(obj, f.name, None), seen) for f in fields(obj))
    return 8


class ByteLRU:
    """A least-recently-used cache bounded in bytes and in entries, safe across threads.

    After each insertion the oldest entries are evicted while the total is over ``max_bytes`` (or
    the count over ``max_entries``), except the newest: it never holds more than ``max_bytes``
    plus one entry (a single entry over the bound is kept alone, so its page can still be served).
    Values are computed outside the lock (two sessions asking for the same new key may both
    compute it; the first stored wins).
    """

    def __init__(self, max_bytes: int, max_entries: int = 64,
                 sizeof: Callable[[object], int] = nbytes):
        if max_bytes < 0 or max_entries < 1:
            raise ValueError("max_bytes must be >= 0 and max_entries >= 1")
        self.max_bytes = int(max_bytes)
        self.max_entries = int(max_entries)
        self._sizeof = sizeof
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()  # key -> (value, bytes)
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    @property
    def nbytes(self) -> int:
        """Bytes of the values held now (as ``sizeof`` counts them)."""
        return self._bytes

    def keys(self) -> list[Hashable]:
        """Keys, oldest first."""
        with self._lock:
            return list(self._items)

    def get(self, key: Hashable, default: object = None) -> object:
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key][0]

    def put(self, key: Hashable, value: object) -> object:
        """Store ``value`` under ``key`` (newest), evict what is over the bounds; returns the stored
        value (the one already there if another thread stored it first)."""
        size = int(self._sizeof(value))
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
            self._items[key] = (value, size)
            self._bytes += size
            while len(self._items) > 1 and (self._bytes > self.max_bytes
                                            or len(self._items) > self.max_entries):
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
            return value

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]) -> object:
        """The cached value of ``key``, else ``compute()`` stored (exceptions are not cached)."""
        missing = object()
        value = self.get(key, missing)
        if value is not missing:
            self.hits += 1
            return value
        self.misses += 1
        return self.put(key, compute())

    def discard(self, predicate: Callable[[Hashable], bool]) -> int:
        """Drop the entries whose key matches; returns how many."""
        with self._lock:
            gone = [k for k in self._items if predicate(k)]
            for k in gone:
                self._bytes -= self._items.pop(k)[1]
            return len(gone)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


#: Bytes the shared analysis cache may hold (ATTENTION_LENS_ANALYSIS_CACHE_MB, default 320 MiB:
#: two MiniLM analyses at 512 tokens (144 MiB each: patterns and scores of 72 heads), or hundreds
#: of short ones), so the server stays under 1.5 GB over a long session (bench/bench_memory.py).
ANALYSIS_CACHE_BYTES = int(float(os.environ.get("ATTENTION_LENS_ANALYSIS_CACHE_MB", "320") or 320) * 2**20)
ANALYSES = ByteLRU(ANALYSIS_CACHE_BYTES, max_entries=64)


def _read_only(result: Analysis) -> Analysis:
    """Make the cached arrays read-only: every session shares them, a page must never write.
    Each kind's layers are stacked once (``Analysis.share_stacked``): pages read the stack as is."""
    result.share_stacked()
    for value in result.activations.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    if isinstance(result.embedding, np.ndarray):
        result.embedding.setflags(write=False)
    return result


def _analysis(name: str, stamp: int, text: str, direction: str | None, target: str | None,
              strategy: str = "greedy", edits: tuple = ()) -> Analysis:
    bundle = get_bundle(name)
    key = ("analysis", name, stamp, text, direction, target, strategy, edits)

    def compute() -> tuple[weakref.ref, Analysis]:
        # Free the previous runs' cyclic garbage first (page scripts stopped by st.stop() leave
        # frames holding their arrays in reference cycles; the collector's thresholds count
        # objects, not bytes): at 512 tokens each holds ~100 MB, and the server's memory then
        # grew by ~45 MB per new input (bench/bench_memory.py). Once per new analysis, before it
        # and after it (its other activations, dropped below, were ~130 MB at 512 tokens).
        release_memory()
        result = _read_only(attention_hooks_only(
            analyze(bundle, text, direction, target, strategy=Strategy.parse(strategy), edits=edits)))
        release_memory()
        return weakref.ref(bundle), result

    ref, result = ANALYSES.get_or_compute(key, compute)
    if ref() is not bundle:  # the model was loaded again since (e.g. a new copy): never serve stale
        ANALYSES.discard(lambda k: k == key)
        ref, result = ANALYSES.get_or_compute(key, compute)
    return result


def derived(result: Analysis, key: Hashable, compute: Callable[[], object]) -> object:
    """``compute()``, remembered on ``result`` under ``key``: a page's own summary of a cached
    analysis (head statistics, head similarity) is computed once per input, not on every rerun
    (at 512 tokens on MiniLM these took 2.6 s of each rerun of the statistics page). Only for
    small values (not counted in the cache's bytes); callers must not modify what they get."""
    memo = result.__dict__.setdefault("_derived", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def forget_analyses(name: str) -> int:
    """Drop every cached analysis of model ``name`` (e.g. a session's own model when it ends)."""
    return ANALYSES.discard(lambda k: len(k) > 1 and k[1] == name)


def get_analysis(name: str, text: str, direction: str | None = None, target: str | None = None,
                 strategy: Strategy | str | None = None) -> Analysis:
    """``analyze(load_model(name), text, direction, target, strategy=strategy)``, cached per input.

    ``direction`` "auto" means None (let the task detect it). ``strategy`` (a Strategy or its URL
    word; greedy when None) is part of the cache key; a teacher-forced analysis ignores it. Raises
    ``model.tasks.InputError`` with a user-facing message for unusable input (never cached).
    """
    if direction == "auto":
        direction = None
    word = "greedy" if strategy is None or target is not None else str(strategy)
    return _analysis(name, _stamp(name), text, direction, target, word)


def get_edited_analysis(name: str, text: str, direction: str | None, target: str | None,
                        edits: tuple) -> Analysis:
    """:func:`get_analysis` (greedy) of the model under interventions ``edits``
    (model/interventions.py), in the same byte-bounded cache: the model itself is never changed."""
    if direction == "auto":
        direction = None
    return _analysis(name, _stamp(name), text, direction, target, "greedy", tuple(edits))


@st.cache_data(max_entries=16, show_spinner=False)
def _summary(name: str, stamp: int) -> dict:
    return model_summary(get_bundle(name))


def get_summary(name: str) -> dict:
    """``model.analysis.model_summary`` of a model (config, parameter counts, metrics)."""
    return _summary(name, _stamp(name))


def _info(name: str) -> ModelInfo | None:
    try:
        return model_info(name)
    except (CheckpointError, UnknownModelError):
        return None


def model_description(name: str, lang: str = "en") -> str:
    """One line saying what a model does (from its config.json, without loading weights)."""
    info = _info(name)
    return info.text("description", lang) if info else ""


def model_example(name: str) -> str:
    """The example input stored with a model ("" if none)."""
    info = _info(name)
    return info.example if info else ""


def model_label(name: str, lang: str = "en") -> str:
    """Short menu label (the sidebar shows the full description under the menu)."""
    info = _info(name)
    return info.text("label", lang) if info else name


def position_table(bundle: Bundle, n_pos: int, d_model: int) -> tuple[np.ndarray, bool]:
    """(table [pos, d_model], whether it is the model's own) for the positional-encoding lab.

    The model's own learned table when the model learns its positions and the size asked for is
    the model's; otherwise the sinusoidal table of the 2017 paper at that size.
    """
    cfg = bundle.cfg
    if cfg.pos_encoding == "learned" and (n_pos, d_model) == (cfg.max_len, cfg.d_model):
        positions = getattr(bundle.model.encoder.embed, "positions", None)
        if positions is not None and hasattr(positions, "table"):
            return positions.table.detach().float().numpy(), True
    own = cfg.pos_encoding == "sinusoidal" and d_model == cfg.d_model
    return sinusoidal_table(int(n_pos), int(d_model)).numpy().astype(np.float32), own
