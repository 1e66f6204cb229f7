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

#: Blocks at least this big get their own memory mapping, returned to the system when freed
#: (ATTENTION_LENS_MMAP_THRESHOLD, bytes; 0 leaves the C library's default): 32 MB, the most glibc's own
#: rule reaches. Every smaller block comes from the heap, where a pass's per-layer tensors reuse the pages
#: the layer before freed. With 256 KB (before), each of them was a fresh mapping the kernel zeroed: 580,000
#: page faults, 1.2 s of a 1,024-token prompt pass's 4.7 s (bench/bench_long_contexts.py). What the heap
#: keeps free is handed back after every large result (:func:`release_memory`), so a long session's memory
#: stays flat (bench/bench_memory.py).
MMAP_THRESHOLD = int(os.environ.get("ATTENTION_LENS_MMAP_THRESHOLD", str(32 << 20)) or 0)
#: Free heap above this is handed back at once (glibc's M_TRIM_THRESHOLD, which stays at 128 KB when the
#: mmap threshold is set by hand: the heap's top would shrink and grow again inside every pass): twice
#: the mmap threshold, as glibc's own rule keeps it.
TRIM_THRESHOLD = int(os.environ.get("ATTENTION_LENS_TRIM_THRESHOLD", str(2 * MMAP_THRESHOLD)) or 0)
#: Torch's blocks of 2 MB and more are aligned and marked for transparent huge pages
#: (ATTENTION_LENS_HUGE_PAGES=0 turns it off; the kernel's setting "madvise" or "always" honours it):
#: touching a fresh 2 MB page is one fault instead of 512, and a long prompt's first pass touches
#: ~250 MB of fresh memory (0.8 s of the kernel's time at 4 KB pages on our 2-core machine).
HUGE_PAGES = os.environ.get("ATTENTION_LENS_HUGE_PAGES", "1") != "0"


def configure_torch() -> None:
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(max(1, TORCH_THREADS))


def configure_malloc() -> bool:
    """Set glibc's mmap and trim thresholds (MMAP_THRESHOLD, TRIM_THRESHOLD; Linux with glibc only) and
    torch's huge pages (HUGE_PAGES); True if the thresholds were set."""
    if HUGE_PAGES:
        # torch reads it once, at its first block of 2 MB or more: the app calls this before loading a model
        os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    if MMAP_THRESHOLD <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mapped = bool(libc.mallopt(-3, MMAP_THRESHOLD))  # -3 = M_MMAP_THRESHOLD
        return mapped and (TRIM_THRESHOLD <= 0 or bool(libc.mallopt(-1, TRIM_THRESHOLD)))  # -1 = M_TRIM_...
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
    trim_heap()


def trim_heap() -> None:
    """Hand the heap's free pages back to the system (glibc ``malloc_trim``; a few ms): the end of a page's
    run calls it, so what the run freed below TRIM_THRESHOLD does not stay with the server."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
