"""What the pitfall lab's page needs besides the experiments of ``model/lab/pitfalls.py`` (reached as
``lab.pitfalls.<fn>``): its menus, a fault's runs composed from the shared analysis cache, and the
entropy of the heads it draws."""

from __future__ import annotations

import numpy as np

from app_support import lab
from model.lab.pitfalls import (
    BATCH,
    LENGTH,
    TRAINED_HEAD,
    TRAINED_WORD,
    VOCAB,
    FaultRun,
    LayerRun,
    compose_fault_run,
    fault_edits,
)
from model.training.presets import PITFALLS

__all__ = ["BATCH", "CAUSAL_MODES", "EDIT_FAULTS", "FAULTS", "LENGTH", "ORDERS", "TRAINED_CORRECT",
           "TRAINED_HEAD", "TRAINED_VARIANTS", "TRAINED_WORD", "VOCAB", "FaultRun", "get_fault_run",
           "head_entropy", "variant_from_short", "variant_short"]

#: The faults of the switch, in menu order.
FAULTS = ("scaling", "axis", "causal", "masked_row", "position", "truncation")
#: Faults that run the loaded model under an intervention (the others are computed differently).
EDIT_FAULTS = ("scaling", "axis", "causal")
CAUSAL_MODES = ("reversed", "off")
#: The dimension lab's orders: the correct one and two classic mistakes.
ORDERS = ("batch_first", "seq_first", "merge_wrong")

#: The reference model the trained variants are compared with.
TRAINED_CORRECT = "pitfall-correct"
#: The trained variants, in menu order (``PITFALLS`` without the correct one).
TRAINED_VARIANTS = tuple(n for n in PITFALLS if n != TRAINED_CORRECT)


def get_fault_run(name: str, text: str, direction: str | None, fault: str, causal_mode: str, kind: str,
                  layer: int) -> FaultRun:
    """A fault's four runs (``compose_fault_run``) at one layer of ``kind``, each a cached
    ``lab.pitfalls.layer_run``: a few MB each where every layer of SmolLM2 at 256 tokens is ~140 MB a
    run, so four full analyses thrashed the byte-bounded cache and every rerun recomputed them."""
    def run(target: str | None, edits: tuple) -> LayerRun:
        return lab.pitfalls.layer_run(name, text, direction, target, edits, kind, layer)

    return compose_fault_run(run, fault_edits(fault, causal_mode))


def head_entropy(pattern: np.ndarray) -> np.ndarray:
    """Mean entropy (nats) of each head's rows: ``[head, query, key]`` -> ``[head]``."""
    p = np.asarray(pattern, dtype=np.float32)
    # A weight of 0 adds 0 (0 * log(tiny)); NaN cells add nothing (nansum); the sum is float64.
    # In float32 and without where()s: 12 x 512 x 512 weights in ~10 ms instead of ~0.2 s.
    terms = p * np.log(np.maximum(p, np.finfo(np.float32).tiny))
    return -np.nansum(terms, axis=-1, dtype=np.float64).mean(-1)


def variant_short(name: str) -> str:
    """``pitfall-no-residual`` -> ``no-residual`` (the value kept in the URL)."""
    return name.removeprefix("pitfall-")


def variant_from_short(value: str) -> str | None:
    name = f"pitfall-{value}"
    return name if name in TRAINED_VARIANTS else None
