"""A cache bounded in bytes: what the app keeps of model results between reruns and sessions.

``st.cache_data`` bounds entries only, and one MiniLM analysis at 512 tokens is ~150 MB, so the
gateway (``app_support/gateway.py``) keeps its results here instead. No Streamlit, no torch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass

import numpy as np

__all__ = ["ByteLRU", "nbytes"]


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
    # before the tensor test: an analysis holds thousands of strings (its tokens, its shape trace)
    if isinstance(obj, str | bytes):
        return len(obj)
    if isinstance(obj, int | float | None):
        return 8
    if hasattr(obj, "element_size") and hasattr(obj, "nelement"):  # a torch tensor (no torch import here)
        return int(obj.element_size() * obj.nelement())
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
