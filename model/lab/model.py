"""The model page's numbers: what the model's files say about its training, and the full archive of
one input (every hook, as ``python -m model inspect --out`` writes it), within a stated size."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch

from ..decoding.strategy import Strategy
from ..export.archive import export_zip
from ..export.scopes import LIMIT_BYTES, SQUARES, Scope, per_position, scopes
from ..network.kinds import KINDS, get_kind, layer_counts
from ..run.analysis import analyze
from ..store.bundle import Bundle
from . import entry


@dataclass(frozen=True)
class TrainingRecord:
    metrics: object  # metrics.json: evaluation figures ({} when there are none)
    info: object  # the config's "info": how it was trained
    history: list  # history.json: one row per logged optimiser step


@entry
def training_record(bundle: Bundle) -> TrainingRecord:
    return TrainingRecord(bundle.metrics or {}, bundle.info, bundle.history or [])


#: model -> (hook -> bytes at one position per side, side -> hook -> bytes per further position). Weak:
#: the fit does not keep a model alive; it is made once per loaded model (two or three tiny passes).
_FITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _fit(bundle: Bundle) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Bytes of each per-position hook at one token per side, and what each further token of a side adds:
    every such hook's size is affine in the source and target lengths."""
    cfg, model = bundle.cfg, bundle.model
    if getattr(cfg, "encoder_only", False):
        sides = ["source"]
    else:
        sides = ["target"] if cfg.decoder_only else ["source", "target"]

    def sizes(lengths: dict[str, int]) -> dict[str, int]:
        inputs = [torch.zeros((1, lengths[s]), dtype=torch.long) for s in sides]
        with model.lock:
            _, cache = model.run_with_cache(*inputs, names_filter=per_position)
        return {h: v.size * 4 for h, v in cache.to_numpy().items()}

    if model not in _FITS:
        base = sizes(dict.fromkeys(sides, 1))
        grown = {side: sizes({s: 2 if s == side else 1 for s in sides}) for side in sides}
        _FITS[model] = (base, {side: {h: grown[side][h] - b for h, b in base.items()} for side in sides})
    return _FITS[model]


def _hook_bytes(bundle: Bundle, n_source: int, n_target: int) -> dict[str, int]:
    """Bytes of each per-position hook of an input of these lengths (from :func:`_fit`)."""
    base, per = _fit(bundle)
    want = {"source": n_source, "target": n_target}
    return {h: b + sum(per[side][h] * (want[side] - 1) for side in per) for h, b in base.items()}


@entry
def archive_scopes(bundle: Bundle, n_source: int, n_target: int) -> list[tuple[Scope, int]]:
    """(scope, bytes) of the archives the page offers for an input of these lengths: everything when it fits
    in :data:`LIMIT_BYTES`, else one kind, layer or head (the squares exactly, the rest estimated exactly
    as affine in the lengths; the logits of a long prompt, kept for the output only, count in full)."""
    cfg = bundle.cfg
    hooks = _hook_bytes(bundle, n_source, n_target)
    length = {"source": n_source, "target": n_target}
    counts = {k: n for k, n in layer_counts(cfg).items() if n > 0 and k in KINDS}

    def size(scope: Scope) -> int:
        kinds = list(counts) if scope.kind is None else [scope.kind]
        squares = 0
        for kind in kinds:
            k = get_kind(kind)
            layers = counts[kind] if scope.layer is None else 1
            heads = cfg.n_heads if scope.head is None else 1
            squares += 4 * len(SQUARES) * layers * heads * length[k.queries] * length[k.keys]
        return squares + sum(b for h, b in hooks.items() if scope.holds_hook(h))

    found = scopes(size, {k: (n, cfg.n_heads) for k, n in counts.items()}, LIMIT_BYTES)
    return [(s, size(s)) for s in found]


@entry(frees_memory=True)  # a long input's pass holds its block's hooks, its zip up to LIMIT_BYTES
def archive(bundle: Bundle, text: str, direction: str | None, strategy: Strategy | None = None,
            max_new: int | None = None, scope: Scope | None = None) -> bytes:
    """activations.npz (every hook of ``scope``) + meta.json of one input, zipped: built when it is asked
    for, decoded as the page's analysis was (``strategy``, ``max_new``: the sidebar's). Only the scope's
    per-position hooks are kept during the pass; its squares are computed layer by layer while writing."""
    scope = scope or Scope()

    def keep(hook: str) -> bool:
        return per_position(hook) and scope.holds_hook(hook)

    result = analyze(bundle, text, direction, strategy=strategy, max_new=max_new, keep=keep)
    return export_zip(bundle, result, text, scope)
