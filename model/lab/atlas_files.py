"""The head atlas on disk: one .npz per model and dataset, keyed on the weights (model/lab/atlas.py).

A retrained model, another sample of sentences or a new :data:`ATLAS_VERSION` gets a new key, so a
stale file is never read as the current one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from ..core.files import atomic_write
from ..store.bundle import Bundle
from ..store.sources.shipped import REPO_ROOT
from . import entry
from .atlas_result import STATS, Atlas, Dataset, RoleThresholds

#: Bump when what an atlas holds or how it is computed changes: older files on disk are recomputed.
ATLAS_VERSION = 2



@entry
def weights_key(bundle: Bundle) -> str:
    """sha256 over the model's weights and config: a retrained or re-shipped model gets a new key."""
    h = hashlib.sha256()
    h.update(json.dumps(bundle.cfg.to_dict(), sort_keys=True).encode())
    h.update(json.dumps(bundle.task.to_dict(), sort_keys=True).encode())
    for name, tensor in sorted(bundle.model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def atlas_dir() -> Path:
    """Where atlases are cached: $ATTENTION_LENS_ATLAS_DIR, else runs/atlas/ (git-ignored)."""
    return Path(os.environ.get("ATTENTION_LENS_ATLAS_DIR") or REPO_ROOT / "runs" / "atlas")


def atlas_key(bundle: Bundle, dataset: Dataset, weights: str | None = None) -> str:
    """The cache key: version, :func:`weights_key` (pass it when known: hashing takes ~0.1 s) and data."""
    h = hashlib.sha256()
    h.update(f"atlas-v{ATLAS_VERSION}\n{weights or weights_key(bundle)}\n".encode())
    h.update(json.dumps([dataset.texts, dataset.directions, dataset.references], ensure_ascii=False).encode())
    return h.hexdigest()[:24]


def atlas_path(bundle: Bundle, dataset: Dataset) -> Path:
    return atlas_dir() / bundle.name / f"{atlas_key(bundle, dataset)}.npz"


def save_atlas(atlas: Atlas, path: Path) -> None:
    """One .npz (no pickles): the arrays, and the rest as JSON; written atomically."""
    arrays: dict[str, np.ndarray] = {}
    for stat, by_kind in atlas.stats.items():
        for kind, arr in by_kind.items():
            arrays[f"stat/{stat}/{kind}"] = arr
    for kind in atlas.layer_counts:
        arrays[f"rows/{kind}"] = atlas.n_rows[kind]
        arrays[f"per_sentence/{kind}"] = atlas.per_sentence[kind]
        arrays[f"js/{kind}"] = atlas.js[kind]
        arrays[f"order/{kind}"] = np.array(atlas.order[kind], dtype=np.int64)
    meta = {
        "version": ATLAS_VERSION, "model": atlas.model, "key": atlas.key, "task": atlas.task,
        "dataset": atlas.dataset, "texts": atlas.texts, "directions": atlas.directions,
        "outputs": atlas.outputs, "references": atlas.references, "layer_counts": atlas.layer_counts,
        "n_heads": atlas.n_heads, "seconds": atlas.seconds, "thresholds": asdict(atlas.thresholds),
        "source": atlas.source,
    }
    arrays["meta"] = np.array(json.dumps(meta, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write(path, buffer.getvalue())


def load_atlas(path: Path) -> Atlas | None:
    """The atlas stored at ``path``, or None when absent, unreadable or of another version."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("version") != ATLAS_VERSION:
                return None
            kinds = list(meta["layer_counts"])
            return Atlas(
                model=meta["model"], key=meta["key"], task=meta["task"], dataset=meta["dataset"],
                texts=meta["texts"], directions=meta["directions"], outputs=meta["outputs"],
                references=meta["references"], layer_counts=meta["layer_counts"], n_heads=meta["n_heads"],
                stats={s: {k: data[f"stat/{s}/{k}"] for k in kinds} for s in STATS},
                n_rows={k: data[f"rows/{k}"] for k in kinds},
                per_sentence={k: data[f"per_sentence/{k}"] for k in kinds},
                js={k: data[f"js/{k}"] for k in kinds},
                order={k: data[f"order/{k}"].tolist() for k in kinds},
                seconds=float(meta["seconds"]),
                thresholds=RoleThresholds(**meta["thresholds"]),
                source=dict(meta.get("source") or {}),
            )
    except (OSError, ValueError, KeyError, TypeError):
        return None


@entry(models=0)
def read_atlas(path: str, mtime_ns: int) -> Atlas | None:
    """:func:`load_atlas` of the file at ``path`` as of its modification time ``mtime_ns`` (the
    app's key: a file written again is read again)."""
    return load_atlas(Path(path))
