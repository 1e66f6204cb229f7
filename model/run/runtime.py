"""How the process runs the models: torch threads and the C library's memory, for a long-lived server.

The app calls :func:`configure` once when it starts, :func:`freeze_long_lived` after its imports,
and :func:`release_memory` after a large result.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

import torch

#: Torch threads for the app's forward passes. The models are small and one input runs at a
#: time, so extra threads buy little; on a busy machine (e.g. while a model trains) a second
#: OpenMP thread waiting for a core made greedy decoding ~50x slower in our measurements.
TORCH_THREADS = int(os.environ.get("ATTENTION_LENS_TORCH_THREADS", "1") or 1)

#: Arrays at least this big get their own memory mapping, returned to the system when freed
#: (ATTENTION_LENS_MMAP_THRESHOLD, bytes; 0 leaves the C library's default). glibc's default
#: threshold grows with the largest block freed (up to 32 MB), after which every per-layer
#: tensor of a 512-token analysis (12.6 MB) lands on the heap, and a server that kept answering
#: long inputs held hundreds of MB of freed, fragmented heap (bench/bench_memory.py).
MMAP_THRESHOLD = int(os.environ.get("ATTENTION_LENS_MMAP_THRESHOLD", str(256 << 10)) or 0)


def configure_torch() -> None:
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(max(1, TORCH_THREADS))


def configure_malloc() -> bool:
    """Set glibc's mmap threshold to MMAP_THRESHOLD (Linux with glibc only); True if it was set."""
    if MMAP_THRESHOLD <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, MMAP_THRESHOLD))  # -3 = M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # another C library (musl): leave it as it is
        return False


def configure() -> None:
    configure_torch()
    configure_malloc()


_FROZEN = False


def freeze_long_lived() -> None:
    """Once per process, after the imports: collect, then move every object alive now (modules,
    their functions and classes, ~270,000 objects that never become garbage) out of the cyclic
    collector's sight (``gc.freeze``). Each :func:`release_memory` then walks only what was made
    since: a full collection over an app process took 0.2 s, twice for every new analysis."""
    global _FROZEN
    if _FROZEN:
        return
    gc.collect()
    gc.freeze()
    _FROZEN = True


def release_memory() -> None:
    """Collect cyclic garbage and hand freed heap pages back to the system (glibc ``malloc_trim``)."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
