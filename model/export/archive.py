"""The files of one input: every hook (``activations.npz``) with ``meta.json``, as ``python -m model inspect
--out`` writes them and the model page zips them, and the export page's NPZ of patterns and scores.

An analysis keeps what grows with the model's width x L (the per-position hooks, each layer's attention
inputs). The squares (raw scores, scores, pattern: heads x L² each) are computed layer by layer from the
recorded attention inputs while the file is written, so no step holds more than one layer's squares.
A file stays within :data:`~model.export.scopes.LIMIT_BYTES`: past it the user chooses one kind, layer or head
(:func:`~model.export.scopes.scopes`).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator

import numpy as np
import torch

from ..core.messages import render
from ..network.kinds import KINDS, hook_name
from ..run.analysis import Analysis, model_summary
from ..store.bundle import Bundle
from .scopes import ALL, LIMIT_BYTES, SQUARES, Scope, per_position


def square_parts(result: Analysis, scope: Scope = ALL) -> Iterator[tuple[str, int, int | None]]:
    """(kind, layer, head or None for every head) of each layer's squares in ``scope``."""
    kinds = [k for k in KINDS if result.n_layers(k) > 0] if scope.kind is None else [scope.kind]
    for kind in kinds:
        layers = range(result.n_layers(kind)) if scope.layer is None else [scope.layer]
        for layer in layers:
            yield kind, layer, scope.head


def _square_shape(result: Analysis, kind: str, layer: int, head: int | None) -> tuple[int, ...]:
    """[batch=1, head, query_pos, key_pos] of one layer's squares (from the tokens: nothing computed)."""
    queries, keys = result.tokens_for(kind)
    hook = hook_name(kind, layer, "pattern")
    heads = result.activations[hook].shape[1] if hook in result.activations else None
    if heads is None:
        heads = result.attention_inputs[hook.rsplit(".", 1)[0]].n_heads
    return (1, 1 if head is not None else heads, len(queries), len(keys))


def squares_bytes(result: Analysis, scope: Scope = ALL, whats: tuple[str, ...] = SQUARES) -> int:
    """Bytes of the float32 squares ``scope`` holds."""
    parts = square_parts(result, scope)
    return sum(4 * len(whats) * int(np.prod(_square_shape(result, *part))) for part in parts)


def scope_bytes(result: Analysis, scope: Scope = ALL, whats: tuple[str, ...] = SQUARES) -> int:
    """Bytes of the tensors a file of ``scope`` holds: its per-position hooks and its squares."""
    hooks = sum(v.nbytes for h, v in result.activations.items() if per_position(h) and scope.holds_hook(h))
    return int(hooks) + squares_bytes(result, scope, whats)


def kinds_of(result: Analysis) -> dict[str, tuple[int, int]]:
    """Attention kind -> (layers, heads) of every kind the model has."""
    present = [k for k in KINDS if result.n_layers(k) > 0]
    return {k: (result.n_layers(k), _square_shape(result, k, 0, None)[1]) for k in present}


def _layer_squares(result: Analysis, kind: str, layer: int, head: int | None,
                   whats: tuple[str, ...]) -> dict[str, np.ndarray]:
    """what -> [1, head, query_pos, key_pos] of one layer: the pass's own tensors when the analysis kept
    them, else computed from its attention inputs (one layer at a time; bit-equal to the pass)."""
    heads = slice(None) if head is None else slice(head, head + 1)
    kept = {w: result.activations.get(hook_name(kind, layer, w)) for w in whats}
    if all(v is not None for v in kept.values()):
        return {w: v[:, heads] for w, v in kept.items()}
    rec = result.layer_inputs(kind)[layer]
    scores, pattern = rec.compute(heads)  # [head, query_pos, key_pos]
    out = {"scores": scores, "pattern": pattern}
    if "raw_scores" in whats:  # Q K^T before the scaling and the mask
        group = rec.n_heads // rec.k.shape[1]
        index = np.arange(rec.n_heads)[heads]
        q = torch.from_numpy(np.ascontiguousarray(rec.q[0, index]))  # [head, query_pos, d_head]
        k = torch.from_numpy(np.ascontiguousarray(rec.k[0, index // group]))  # [head, key_pos, d_head]
        out["raw_scores"] = q @ k.transpose(-2, -1)
    return {w: out[w].numpy()[None] for w in whats}


def npz_arrays(result: Analysis, scope: Scope = ALL,
               whats: tuple[str, ...] = SQUARES, hooks: bool = True) -> Iterator[tuple[str, np.ndarray]]:
    """(name, float32 array) of a file of ``scope``, one layer's squares alive at a time: the per-position
    hooks (when ``hooks``), then each layer's squares under their hook names (one head: ``….head{h}``)."""
    if hooks:
        for name, value in result.activations.items():
            if per_position(name) and scope.holds_hook(name):
                yield name, value.astype(np.float32)
    for kind, layer, head in square_parts(result, scope):
        suffix = "" if head is None else f".head{head}"
        for what, value in _layer_squares(result, kind, layer, head, whats).items():
            yield hook_name(kind, layer, what) + suffix, value.astype(np.float32)


def write_npz(file, arrays: Iterator[tuple[str, np.ndarray]]) -> None:
    """An .npz archive as :func:`numpy.savez` writes it, one array at a time (``file`` may be unseekable)."""
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays:
            with archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, np.asanyarray(value), allow_pickle=False)


def activations_npz(result: Analysis, scope: Scope = ALL, whats: tuple[str, ...] = SQUARES,
                    hooks: bool = True) -> bytes:
    """The tensors of ``scope`` as an .npz archive (one float32 array per hook name)."""
    buffer = io.BytesIO()
    write_npz(buffer, npz_arrays(result, scope, whats, hooks))
    return buffer.getvalue()


def inspect_meta(bundle: Bundle, result: Analysis, input_text: str, scope: Scope = ALL) -> dict:
    """What meta.json holds next to activations.npz: tokens, output, config, trace, parameters (and, when
    the archive holds one kind, layer or head, which one and why)."""
    summary = model_summary(bundle)
    meta = {
        "model": bundle.name,
        "input_text": input_text,
        "model_input_text": result.prepared.text,
        "direction": result.prepared.direction,
        "source_tokens": result.source_tokens,
        "target_tokens": result.target_tokens,
        "output_text": result.output_text,
        "teacher_forced": result.teacher_forced,
        "strategy": result.strategy,
        "notes": [render(n) for n in result.notes],
        "note_codes": [n.code for n in result.notes],
        "steps": [s.__dict__ for s in result.steps],
        "config": summary["config"],
        "parameters": summary["parameters"],
        "total_parameters": summary["total_parameters"],
        "shape_trace": result.trace,
        "shape_symbols": result.trace_sizes,
    }
    if scope != ALL:
        meta["scope"] = {"kind": scope.kind, "layer": scope.layer, "head": scope.head,
                         "limit_bytes": LIMIT_BYTES}
    return meta


def export_zip(bundle: Bundle, result: Analysis, input_text: str, scope: Scope = ALL) -> bytes:
    """activations.npz + meta.json in one zip: the app's download, same files as `inspect --out`. The npz is
    written into the zip as it is made, one layer's squares at a time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        with archive.open("activations.npz", "w", force_zip64=True) as entry:
            write_npz(entry, npz_arrays(result, scope))
        meta = inspect_meta(bundle, result, input_text, scope)
        archive.writestr("meta.json", json.dumps(meta, ensure_ascii=False, indent=1))
    return buffer.getvalue()
