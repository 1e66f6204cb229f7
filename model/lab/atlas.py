"""Head atlas: what every head does over a whole dataset, not one sentence.

    atlas = compute_atlas(bundle)              # the test split (didactic: all test words)
    atlas = load_or_compute(bundle, n=200)     # cached on disk in runs/atlas/, keyed on the weights
    atlas.roles("cross", 1, 0)                 # [Role("alignment", 0.93, 0.5)]

Each sentence of the dataset is run as the app runs one (`model.run.analysis.analyze`): the task prepares
the text, the model decodes greedily, and one hooked teacher-forced pass over prefix + output records
every attention pattern. Here sentences go in padded batches (padded query rows are left out; padded
keys carry weight 0), so a sentence's figures equal its own analysis up to float rounding.

Per head, every statistic is a mean over all the real query rows of the dataset (each attention row
of each sentence counts once):

    entropy        -Σ w log w of the row [nats]
    entropy_norm   entropy / log(number of keys the row may see) [0..1]; rows with one key skipped
    max_weight     the row's largest weight [0..1]
    mean_distance  Σ_k w_k·|q − k| [positions]            (self-attention kinds only)
    diagonal       w[q, q]                                 (self-attention kinds only)
    previous       w[q, q − 1], rows q ≥ 1                 (self-attention kinds only)
    next           w[q, q + 1], rows with a key q + 1      (self-attention kinds only)
    special_share  weight on tokens the model adds (<eos> ending the source, the start/tag token)
    punct_share    weight on punctuation tokens (every character a Unicode punctuation mark)
    sink_share     special_share + punct_share
    alignment      weight on the ground-truth source position(s) of the output letter the row
                   predicts (didactic models, cross-attention only; see ground_truth_alignment)

In cross-attention a query position counts in the output and a key position in the source, so the
positional figures (distance, diagonal, previous, next) are left out there (NaN).

The head-by-head similarity is the Jensen–Shannon divergence of two heads' rows, averaged over the
same rows (heads of one attention kind see the same query x key grid on every sentence), ordered by
average-linkage clustering. "Where does this head fire" ranks sentences by the head's mean max
weight on that sentence (per_sentence).

This module picks the dataset and runs the model; what an atlas holds is in atlas_result.py, the
statistics in atlas_stats.py, the file on disk in atlas_files.py (every name importable from here).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..data.batches import pad_batch
from ..data.lm_training import InductionTask
from ..data.tasks import Prepared, SyntheticTask
from ..decoding.decoders import greedy_decode
from ..network.hooks import ActivationCache
from ..network.kinds import get_kind, hook_name, layer_counts
from ..network.transformer import Transformer
from ..store.bundle import Bundle
from . import entry
from .atlas_files import (
    ATLAS_VERSION,
    REPO_ROOT,
    atlas_dir,
    atlas_key,
    atlas_path,
    load_atlas,
    read_atlas,
    save_atlas,
    weights_key,
)
from .atlas_prompts import prompt_set, spaced
from .atlas_result import ROLE_STAT, ROLES, STATS, Atlas, AtlasError, Dataset, Role, RoleThresholds
from .atlas_stats import RunningSums, accumulate, cluster_order, ground_truth_alignment, js_pair_sums
from .choices import ATLAS_NEW_TOKENS

__all__ = [
    "ATLAS_VERSION", "DEFAULT_SENTENCES", "ATLAS_NEW_TOKENS", "REPO_ROOT", "ROLES", "ROLE_STAT", "STATS",
    "Atlas", "AtlasError", "Dataset", "Role", "RoleThresholds", "atlas_dir", "atlas_key", "atlas_path",
    "cluster_order",
    "compute_atlas", "ground_truth_alignment", "held_out_dataset", "js_pair_sums", "load_atlas",
    "load_or_compute", "prompt_set", "read_atlas", "save_atlas", "weights_key",
]

#: Default sample of the translation model's test split (sentences, both directions mixed).
DEFAULT_SENTENCES = 200

#: compute_atlas's default thresholds (frozen: one instance serves every call).
_DEFAULT_THRESHOLDS = RoleThresholds()


#: Tasks whose right alignment is known (:func:`ground_truth_alignment`).
TRUTH_TASKS = tuple(SyntheticTask.KINDS)


@dataclass(frozen=True)
class AtlasInputs:
    """What an atlas of the model can run over, decided by its task."""

    has_dataset: bool  # a test split, or a language model's prompt set (an encoder-only import has neither)
    prompt_kind: str | None  # a language model's prompt set, "induction" or "sentences"; else None
    didactic: bool  # a synthetic task of the shipped didactic models (its right alignment is known)


@entry
def atlas_inputs(bundle: Bundle) -> AtlasInputs:
    """What the atlas page may offer for ``bundle``: its held-out data, a language model's prompt kind, and
    whether it is a didactic model."""
    decoder_only = bool(bundle.cfg.decoder_only)
    return AtlasInputs(
        has_dataset=decoder_only or bool(bundle.task.references("test")),
        prompt_kind=(("induction" if isinstance(bundle.task, InductionTask) else "sentences")
                     if decoder_only else None),
        didactic=isinstance(bundle.task, SyntheticTask),
    )


@entry
def held_out_dataset(bundle: Bundle, n: int | None = None) -> Dataset:
    """The held-out test split: every test word of a didactic task, or ``n`` sentences (default 200)
    of the translation test split, evenly spaced over it (zh->en and en->zh of each picked pair); a
    decoder-only model's prompt set (model/lab/atlas_prompts.py)."""
    if bundle.model.cfg.decoder_only:
        return prompt_set(bundle, n)
    refs = bundle.task.references("test")
    total = len(refs)
    if not total:
        raise AtlasError(f"model {bundle.name!r} has no test split to run over")
    if isinstance(bundle.task, SyntheticTask):
        picked = refs if n is None or n >= total else [refs[i] for i in spaced(total, n)]
        what = "test words"
    else:
        n = DEFAULT_SENTENCES if n is None else n
        pairs = total // 2  # references come as (zh->en, en->zh) of each pair
        want = max(1, min(pairs, math.ceil(n / 2)))
        picked = [refs[2 * i + j] for i in spaced(pairs, want) for j in (0, 1)][: max(n, 1)]
        what = "sentences"
    if n is not None and n < 1:
        raise AtlasError(f"the sample must hold at least one sentence, got {n}")
    return Dataset(
        texts=[r[0] for r in picked],
        directions=[r[2] for r in picked],
        references=[r[1] for r in picked],
        description=f"test split: {len(picked)} of {total} {what}"
        + (", evenly spaced" if len(picked) < total else ""),
        total=total,
    )


def compute_atlas(
    bundle: Bundle,
    dataset: Dataset | None = None,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
    thresholds: RoleThresholds = _DEFAULT_THRESHOLDS,
    weights: str | None = None,
) -> Atlas:
    """Run the model over ``dataset`` (default: :func:`held_out_dataset`) and aggregate every head.

    ``progress(done, total)`` is called after each batch of sentences; ``weights``: the model's
    :func:`weights_key` when the caller has it. Raises AtlasError on an empty dataset; a text the
    task cannot read raises its InputError.
    """
    start = time.perf_counter()
    dataset = dataset if dataset is not None else held_out_dataset(bundle)
    if not dataset.texts:
        raise AtlasError("the dataset holds no sentence")
    cfg = bundle.model.cfg
    counts = {k: n for k, n in layer_counts(cfg).items() if n}
    task_kind = task_kind_of(bundle)
    sums = {k: RunningSums(n, cfg.n_heads, len(dataset.texts)) for k, n in counts.items()}
    outputs = _run_dataset(bundle, dataset, sums, task_kind, batch_size, progress)
    return make_atlas(bundle, dataset, sums, outputs, atlas_key(bundle, dataset, weights),
                      time.perf_counter() - start, thresholds)


def task_kind_of(bundle: Bundle) -> str:
    """The didactic task's name, else the task's name ("translation" for a translation model)."""
    task = bundle.task
    return task.kind if isinstance(task, SyntheticTask) else str(getattr(task, "name", "translation"))


def make_atlas(bundle: Bundle, dataset: Dataset, sums: dict[str, RunningSums], outputs: list[str], key: str,
               seconds: float, thresholds: RoleThresholds = _DEFAULT_THRESHOLDS,
               source: dict | None = None) -> Atlas:
    """The atlas of ``dataset`` from the running sums of every attention kind (one run, or the exact
    reduction of a corpus run's shards: model/lab/atlas_shards.py)."""
    cfg = bundle.model.cfg
    counts = {k: s.n_layers for k, s in sums.items()}
    stats = {s: {k: sums[k].mean(s) for k in counts} for s in STATS}
    js = {kind: s.js_sum / max(s.js_rows, 1) for kind, s in sums.items()}
    return Atlas(
        model=bundle.name,
        key=key,
        task=task_kind_of(bundle),
        dataset=dataset.description,
        texts=list(dataset.texts),
        directions=list(dataset.directions),
        outputs=outputs,
        references=list(dataset.references),
        layer_counts=counts,
        n_heads=cfg.n_heads,
        stats=stats,
        n_rows={k: s.counts["entropy"].astype(np.int64) for k, s in sums.items()},
        per_sentence={k: s.per_sentence for k, s in sums.items()},
        js=js,
        order={k: cluster_order(v) for k, v in js.items()},
        seconds=seconds,
        thresholds=thresholds,
        source=dict(source or {}),
    )


#: What a batch's patterns are also given to: (kind -> [B, L, H, q, k] float64, side -> each row's ids).
BatchHook = Callable[[dict[str, np.ndarray], dict[str, list[list[int]]]], None]


def _run_dataset(bundle: Bundle, dataset: Dataset, sums: dict[str, RunningSums], task_kind: str,
                 batch_size: int, progress: Callable[[int, int], None] | None, read_only: bool = False,
                 on_batch: BatchHook | None = None) -> list[str]:
    """Decode every sentence and add its attention to ``sums``, in batches; the model's outputs.
    ``read_only``: see :func:`_decode_and_record`; ``on_batch``: also given each batch's patterns."""
    cfg, tok = bundle.model.cfg, bundle.target_tokenizer  # decodes the outputs
    side_tok = {"source": bundle.tokenizer, "target": tok}  # names each side's key ids
    n_sent = len(dataset.texts)
    outputs: list[str] = [""] * n_sent
    prepared = [bundle.task.prepare(text, cfg.max_len, direction)
                for text, direction in zip(dataset.texts, dataset.directions, strict=True)]
    # Similar lengths share a batch: less padding.
    order = sorted(range(n_sent), key=lambda i: (len(prepared[i].prefix), len(prepared[i].source_ids)))
    done = 0
    if progress:
        progress(0, n_sent)
    # Without decoding, prompts of different lengths may share a batch (right padding, causal rows).
    prefix_len = [0 if read_only and cfg.decoder_only else len(p.prefix) for p in prepared]
    for idx in _batches(order, prefix_len, batch_size):
        preps = [prepared[i] for i in idx]
        decoder_in, cache = _decode_and_record(bundle.model, preps, tok.eos_id, read_only)
        for i, p, d in zip(idx, preps, decoder_in, strict=True):
            outputs[i] = tok.decode(d[len(p.prefix) :])
        side_ids = {"source": [p.source_ids for p in preps], "target": decoder_in}
        patterns = {}
        for kind, s in sums.items():
            k = get_kind(kind)
            pattern = np.stack([cache[hook_name(kind, i, "pattern")].float().numpy()
                                for i in range(s.n_layers)], axis=1).astype(np.float64)  # [B, L, H, q, k]
            accumulate(s, pattern, idx, side_ids[k.queries], side_ids[k.keys], k.queries == k.keys, k.causal,
                       side_tok[k.keys], task_kind if kind == "cross" else None, [p.text for p in preps])
            patterns[kind] = pattern
        if on_batch is not None:
            on_batch(patterns, side_ids)
        del patterns
        done += len(idx)
        if progress:
            progress(done, n_sent)
    return outputs


def _batches(order: list[int], prefix_len: list[int], batch_size: int) -> list[list[int]]:
    """``order`` cut into batches of at most ``batch_size`` whose prefixes have one length (greedy
    decoding needs that: a translation's prefix is always its one tag token, a prompt's varies)."""
    out: list[list[int]] = []
    for i in order:
        if out and len(out[-1]) < batch_size and prefix_len[out[-1][0]] == prefix_len[i]:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _decode_and_record(model: Transformer, preps: list[Prepared], eos_id: int,
                       read_only: bool = False) -> tuple[list[list[int]], ActivationCache]:
    """One batch as the app runs one sentence: greedy decoding, then one hooked teacher-forced pass over
    prefix + output recording every attention pattern. (decoder input of each sentence, the cache).

    ``read_only``: a language model's prompts are read, not continued: no decoding, the one hooked pass
    runs over the prompt alone (a corpus atlas; an encoder-decoder model still decodes, its decoder
    attention needs an output)."""
    cfg = model.cfg
    # The model is locked per batch (other users of the loaded model wait for one batch, not the atlas).
    with model.lock, torch.no_grad():
        model.eval()
        if read_only and cfg.decoder_only:
            generated: list[list[int]] = [[] for _ in preps]
        else:
            generated = greedy_decode(model, [p.source_ids for p in preps], [p.prefix for p in preps], eos_id,
                                      max_new=ATLAS_NEW_TOKENS if cfg.decoder_only else None)
        decoder_in = [(p.prefix + g)[: cfg.max_len] for p, g in zip(preps, generated, strict=True)]
        tgt = pad_batch(decoder_in, cfg.pad_id)  # [B, tgt_pos]
        # Right padding: a causal row never reaches the pads after it, so a language model needs no mask.
        inputs = (tgt,) if cfg.decoder_only else (pad_batch([p.source_ids for p in preps], cfg.pad_id), tgt)
        _, cache = model.run_with_cache(*inputs, names_filter=lambda n: n.endswith("hook_pattern"))
    return decoder_in, cache


def load_or_compute(
    bundle: Bundle,
    n: int | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> tuple[Atlas, bool]:
    """(atlas of the test split sample, whether it came from disk). Computed atlases are saved."""
    dataset = held_out_dataset(bundle, n)
    path = atlas_path(bundle, dataset)
    if not force:
        cached = load_atlas(path)
        if cached is not None and cached.key == path.stem:
            return cached, True
    atlas = compute_atlas(bundle, dataset, progress=progress)
    save_atlas(atlas, path)
    return atlas, False
