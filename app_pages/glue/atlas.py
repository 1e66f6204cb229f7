"""What the head-atlas page needs beyond display: whether a model has an atlas to show, where its
atlas is stored, the atlas from disk (or computed with a progress callback), the tables it shows, and
the links that reopen a sentence in the single-head page.

The atlas itself is :mod:`model.lab.atlas`; it is stored on disk (``runs/atlas/``) keyed on the model's
weights, and read back through the gateway (``lab.atlas.read_atlas``) keyed on the file's path and
modification time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from app_support import gateway as G
from app_support import lab, pages
from app_support.sidebar import corpus_run_label
from model.lab.atlas import TRUTH_TASKS as TRUTH_TASKS  # tasks whose right alignment is known
from model.lab.atlas import Atlas, atlas_dir, atlas_key, compute_atlas, save_atlas
from model.lab.atlas_prompts import DEFAULT_PROMPTS
from model.lab.atlas_shards import corpus_runs

#: Sample sizes of the translation test split the page offers (sentences, both directions).
SAMPLE_SIZES = (50, 100, 200, 400)
DEFAULT_SAMPLE = 200

#: The page computes an atlas by itself (no button) when sentences x max_len is at most this:
#: every didactic model's 500 test words (x 16 positions) take about a second.
AUTO_COMPUTE_TOKENS = 10_000

#: Sentences listed under "where does this head fire".
TOP_K = 10


def has_test_split(name: str) -> bool:
    """Whether the model has a held-out dataset to run over: a test split, or a language model's prompt
    set (an encoder-only import has neither)."""
    return lab.atlas.atlas_inputs(name).has_dataset


def default_sample(name: str) -> int:
    return DEFAULT_PROMPTS if G.config(name).decoder_only else DEFAULT_SAMPLE


def prompt_kind(name: str) -> str | None:
    """A language model's prompt set, "induction" or "sentences" (model/lab/atlas_prompts.py), else None."""
    return lab.atlas.atlas_inputs(name).prompt_kind


def is_didactic(name: str) -> bool:
    return lab.atlas.atlas_inputs(name).didactic


def atlas_file(name: str, n: int | None) -> Path:
    """Where the atlas of this model's current weights over this sample is stored."""
    dataset = lab.atlas.held_out_dataset(name, n)
    key = atlas_key(G.get_bundle(name), dataset, weights=lab.atlas.weights_key(name))
    return atlas_dir() / name / f"{key}.npz"


def auto_compute(name: str, n: int | None) -> bool:
    """True when the atlas is cheap enough to compute as the page opens."""
    return len(lab.atlas.held_out_dataset(name, n).texts) * G.config(name).max_len <= AUTO_COMPUTE_TOKENS


def stored_atlas(name: str, n: int | None) -> Atlas | None:
    """The atlas on disk for this model's current weights and this sample, or None."""
    path = atlas_file(name, n)
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    atlas = lab.atlas.read_atlas(str(path), mtime)
    return atlas if atlas is not None and atlas.key == path.stem else None


def compute(name: str, n: int | None, progress: Callable[[int, int], None] | None = None) -> Atlas:
    """Compute the atlas (with ``progress(done, total)``) and store it on disk for the next visit.

    Not through the gateway's store: the file on disk is this result's cache, and a progress
    callback cannot key one."""
    atlas = compute_atlas(G.get_bundle(name), lab.atlas.held_out_dataset(name, n), progress=progress,
                          weights=lab.atlas.weights_key(name))
    save_atlas(atlas, atlas_file(name, n))
    return atlas


def corpus_atlases(name: str) -> list[Atlas]:
    """The corpus atlases of this model's current weights in runs/atlas/ (``python -m model atlas --corpus``,
    here or on another machine whose run folder was copied in), newest corpus name first."""
    weights = lab.atlas.weights_key(name)
    found = []
    for path in corpus_runs(name):
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            continue
        atlas = lab.atlas.read_atlas(str(path), mtime)
        if atlas is not None and atlas.source.get("weights") == weights:
            found.append(atlas)
    return sorted(found, key=lambda a: (a.source.get("corpus", ""), a.key))


def corpus_label(atlas: Atlas) -> str:
    """A corpus atlas as the data choice lists it: the corpus's name and how many prompts it read."""
    return corpus_run_label(atlas.source, len(atlas.texts))


# --------------------------------------------------------------------------- tables


def head_table(atlas: Atlas, kind: str, role_text: Callable[[str], str]) -> pd.DataFrame:
    """One row per head of ``kind``: layer, head, roles (with figure ≥ threshold) and every statistic."""
    rows = []
    for layer in range(atlas.layer_counts[kind]):
        for head in range(atlas.n_heads):
            roles = atlas.roles(kind, layer, head)
            shown = ", ".join(f"{role_text(r.name)} ({r.value:.2f} ≥ {r.threshold:g})" for r in roles)
            row = {"layer": layer, "head": head, "roles": shown}
            for stat in atlas.stats:
                row[stat] = atlas.stat(stat, kind, layer, head)
            row["n_rows"] = int(atlas.n_rows[kind][layer, head])
            rows.append(row)
    frame = pd.DataFrame(rows)
    # statistics that do not apply to this kind (all NaN) are left out of the table
    return frame[[c for c in frame.columns if not (frame[c].dtype.kind == "f" and frame[c].isna().all())]]


def role_grid(atlas: Atlas, kind: str, role_text: Callable[[str], str]) -> list[list[str]]:
    """[layer][head] the head's roles as short text ("" = none), for the head map."""
    return [[" · ".join(role_text(r.name) for r in atlas.roles(kind, layer, head))
             for head in range(atlas.n_heads)] for layer in range(atlas.layer_counts[kind])]


def single_head_link(atlas: Atlas, sentence: int, kind: str, layer: int, head: int, lang: str,
                     present: bool = False) -> str:
    """A relative link that opens sentence ``sentence`` in the single-head page at (kind, layer, head)."""
    params = {"lang": lang, "model": atlas.model, "text": atlas.texts[sentence], "kind": kind,
              "layer": str(layer), "head": str(head)}
    direction = atlas.directions[sentence]
    if direction:
        params["dir"] = direction
    if present:
        params["present"] = "1"
    unknown = set(params) - set(pages.APP_PARAMS)
    if unknown:  # pragma: no cover - a renamed app-wide parameter must be renamed here too
        raise ValueError(f"not app-wide URL parameters: {sorted(unknown)}")
    start = pages.START_PAGE.url_path
    return f"./{start}?{urlencode(params)}"


def top_table(atlas: Atlas, kind: str, layer: int, head: int, lang: str, k: int = TOP_K,
              present: bool = False) -> pd.DataFrame:
    """The ``k`` sentences where the head's mean max weight is highest, each with its link."""
    picked = atlas.top_sentences(kind, layer, head, k)
    values = atlas.per_sentence[kind][:, layer, head]
    return pd.DataFrame({
        "rank": np.arange(1, len(picked) + 1),
        "max_weight": [float(values[i]) for i in picked],
        "sentence": [atlas.texts[i] for i in picked],
        "output": [atlas.outputs[i] for i in picked],
        "link": [single_head_link(atlas, i, kind, layer, head, lang, present) for i in picked],
        "index": picked,
    })
