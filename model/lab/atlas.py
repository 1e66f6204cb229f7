"""Head atlas: what every head does over a whole dataset, not one sentence.

    atlas = compute_atlas(bundle)              # the test split (didactic: all test words)
    atlas = load_or_compute(bundle, n=200)     # cached on disk in runs/atlas/, keyed on the weights
    atlas.roles("cross", 1, 0)                 # [Role("alignment", 0.93, 0.5)]

Each sentence of the dataset is run as the app runs one (`model.analysis.analyze`): the task prepares
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
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import time
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..data.batches import pad_batch
from ..data.tasks import SyntheticTask
from ..decoding import greedy_decode
from ..files import atomic_write
from ..network.kinds import KINDS, get_kind, hook_name, layer_counts
from ..store.bundle import Bundle
from . import entry

#: Bump when what an atlas holds or how it is computed changes: older files on disk are recomputed.
ATLAS_VERSION = 1

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Default sample of the translation model's test split (sentences, both directions mixed).
DEFAULT_SENTENCES = 200

#: The statistics of every head, in display order (see the module docstring).
STATS = ("entropy", "entropy_norm", "max_weight", "mean_distance", "diagonal", "previous", "next",
         "special_share", "punct_share", "sink_share", "alignment")

#: Statistics that compare a query position with a key position of the same sequence.
POSITIONAL_STATS = ("mean_distance", "diagonal", "previous", "next")

#: Role names, in the order a head's roles are listed.
ROLES = ("previous", "next", "self", "alignment", "sink", "broad")


@dataclass(frozen=True)
class RoleThresholds:
    """When a head earns a role label; every label shows the figure and the threshold it passed."""

    positional: float = 0.5  # previous / next / self: mean weight on that one key >= this
    alignment: float = 0.5  # mean weight on the ground-truth source position(s) >= this
    sink: float = 0.5  # mean weight on special + punctuation tokens >= this
    broad: float = 0.75  # normalised entropy >= this (spread over most of what the row may see)


#: Which statistic each role reads.
ROLE_STAT = {"previous": "previous", "next": "next", "self": "diagonal", "alignment": "alignment",
             "sink": "sink_share", "broad": "entropy_norm"}


@dataclass(frozen=True)
class Role:
    name: str  # one of ROLES
    value: float  # the head's figure for it (ROLE_STAT)
    threshold: float  # the figure it had to reach


class AtlasError(ValueError):
    """An atlas that cannot be computed (e.g. an empty dataset); the message says why."""


@dataclass
class Dataset:
    """What the atlas runs over: texts as the app's text box would hold them."""

    texts: list[str]
    directions: list[str | None]  # per text; None = the task decides (didactic tasks have none)
    references: list[str]  # the split's reference output of each text
    description: str  # e.g. "test split: 200 of 3156 sentences, evenly spaced"
    total: int  # sentences in the whole split


@entry
def held_out_dataset(bundle: Bundle, n: int | None = None) -> Dataset:
    """The held-out test split: every test word of a didactic task, or ``n`` sentences (default 200)
    of the translation test split, evenly spaced over it (zh->en and en->zh of each picked pair)."""
    refs = bundle.task.references("test")
    total = len(refs)
    if not total:
        raise AtlasError(f"model {bundle.name!r} has no test split to run over")
    if isinstance(bundle.task, SyntheticTask):
        picked = refs if n is None or n >= total else [refs[i] for i in _spaced(total, n)]
        what = "test words"
    else:
        n = DEFAULT_SENTENCES if n is None else n
        pairs = total // 2  # references come as (zh->en, en->zh) of each pair
        want = max(1, min(pairs, math.ceil(n / 2)))
        picked = [refs[2 * i + j] for i in _spaced(pairs, want) for j in (0, 1)][: max(n, 1)]
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


def _spaced(total: int, n: int) -> list[int]:
    """``n`` distinct indices evenly spread over range(total), first and last included."""
    n = max(1, min(n, total))
    return sorted({int(round(x)) for x in np.linspace(0, total - 1, n)})


# --------------------------------------------------------------------------- ground truth


def ground_truth_alignment(task_kind: str, word: str) -> np.ndarray:
    """[output letter, source position] bool: where each output letter of a didactic task comes from.

    Source positions are the word's letters then <eos> (never aligned). reverse: output i <- source
    n−1−i; copy: i <- i; sort: every source position holding the i-th letter of the sorted word (a
    repeated letter may be taken from any of its places, so all of them count).
    """
    n = len(word)
    out = np.zeros((n, n + 1), dtype=bool)
    if task_kind == "reverse":
        out[np.arange(n), n - 1 - np.arange(n)] = True
    elif task_kind == "copy":
        out[np.arange(n), np.arange(n)] = True
    elif task_kind == "sort":
        letters = np.array(list(word))
        for i, letter in enumerate(sorted(word)):
            out[i, :n] = letters == letter
    else:
        raise AtlasError(f"no ground-truth alignment for task {task_kind!r}")
    return out


# --------------------------------------------------------------------------- the atlas


@dataclass
class Atlas:
    model: str
    key: str  # hash of weights + config + dataset + version: the disk cache's key
    task: str  # "translation" or the didactic task
    dataset: str  # Dataset.description
    texts: list[str]  # the sentences, as typed into the app
    directions: list[str | None]
    outputs: list[str]  # the model's greedy output of each
    references: list[str]
    layer_counts: dict[str, int]  # kind -> layers (kinds without layers left out)
    n_heads: int
    stats: dict[str, dict[str, np.ndarray]]  # statistic -> kind -> [layer, head] float64 (NaN: n/a)
    n_rows: dict[str, np.ndarray]  # kind -> [layer, head] query rows averaged over
    per_sentence: dict[str, np.ndarray]  # kind -> [sentence, layer, head] mean max weight (float32)
    js: dict[str, np.ndarray]  # kind -> [layer*head, layer*head] mean JS divergence, nats
    order: dict[str, list[int]]  # kind -> flattened head indices in clustering order
    seconds: float  # time the computation took
    thresholds: RoleThresholds = field(default_factory=RoleThresholds)

    @property
    def kinds(self) -> list[str]:
        return [k for k in KINDS if self.layer_counts.get(k, 0)]

    @property
    def has_alignment(self) -> bool:
        cross = self.stats["alignment"].get("cross")
        return cross is not None and bool(np.isfinite(cross).any())

    @property
    def exact(self) -> list[bool]:
        """Per sentence: the model's output equals the reference."""
        return [o == r for o, r in zip(self.outputs, self.references, strict=True)]

    def stat(self, name: str, kind: str, layer: int, head: int) -> float:
        return float(self.stats[name][kind][layer, head])

    def roles(self, kind: str, layer: int, head: int) -> list[Role]:
        """Every role the head earns, with the figure and the threshold it passed (ROLES order)."""
        th = self.thresholds
        limits = {"previous": th.positional, "next": th.positional, "self": th.positional,
                  "alignment": th.alignment, "sink": th.sink, "broad": th.broad}
        out = []
        for role in ROLES:
            value = self.stat(ROLE_STAT[role], kind, layer, head)
            if np.isfinite(value) and value >= limits[role]:
                out.append(Role(role, value, limits[role]))
        return out

    def head_labels(self, kind: str) -> list[str]:
        return [f"L{li}H{h}" for li in range(self.layer_counts[kind]) for h in range(self.n_heads)]

    def similarity(self, kind: str) -> np.ndarray:
        """1 − JS / log 2 in [0, 1] (1 = the two heads attend alike on every row)."""
        return 1.0 - self.js[kind] / math.log(2.0)

    def top_sentences(self, kind: str, layer: int, head: int, k: int = 10) -> list[int]:
        """Indices of the ``k`` sentences where the head's mean max weight is highest (ties: first)."""
        values = self.per_sentence[kind][:, layer, head]
        return [int(i) for i in np.argsort(-values, kind="stable")[:k]]


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


def _is_punct(token: str) -> bool:
    text = token.replace("▁", "").strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


@dataclass
class _Sums:
    """Running sums of one attention kind over the dataset."""

    n_layers: int
    n_heads: int
    n_sentences: int
    sums: dict[str, np.ndarray] = field(default_factory=dict)  # stat -> [L, H] float64
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # stat -> [L, H] rows counted
    js_sum: np.ndarray | None = None  # [n, n] float64
    js_rows: int = 0
    per_sentence: np.ndarray | None = None  # [sentence, L, H]

    def __post_init__(self):
        shape = (self.n_layers, self.n_heads)
        self.sums = {s: np.zeros(shape) for s in STATS}
        self.counts = {s: np.zeros(shape) for s in STATS}
        n = self.n_layers * self.n_heads
        self.js_sum = np.zeros((n, n))
        self.per_sentence = np.zeros((self.n_sentences, *shape), dtype=np.float32)

    def add(self, stat: str, values: np.ndarray, rows: np.ndarray) -> None:
        """values [B, L, H, q] summed where rows [B, q] is True."""
        r = rows[:, None, None, :]
        self.sums[stat] += np.where(r, values, 0.0).sum(axis=(0, 3))
        self.counts[stat] += np.broadcast_to(r, values.shape).sum(axis=(0, 3))

    def mean(self, stat: str) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts[stat] > 0, self.sums[stat] / np.maximum(self.counts[stat], 1), np.nan)


def _entropy(w: np.ndarray) -> np.ndarray:
    """-Σ w log w over the last axis, 0·log 0 = 0."""
    return -(w * np.log(np.where(w > 0, w, 1.0))).sum(-1)


#: Upper bound on the floats one block of the JS computation holds (pairs x rows x keys).
_JS_BLOCK = 4_000_000


def js_pair_sums(rows: np.ndarray) -> np.ndarray:
    """rows [head, row, key] (each row a distribution) -> [head, head] Σ over rows of JS(head_i, head_j).

    JS(p, q) = H((p + q)/2) − (H(p) + H(q))/2 in nats, computed for all pairs at once (blocks of pairs
    bound the memory); symmetric with a zero diagonal.
    """
    n, r, k = rows.shape
    ent = _entropy(rows)  # [head, row]
    ii, jj = np.triu_indices(n, 1)
    out = np.zeros((n, n))
    step = max(1, _JS_BLOCK // max(1, r * k))
    for s in range(0, len(ii), step):
        a, b = ii[s : s + step], jj[s : s + step]
        m = 0.5 * (rows[a] + rows[b])  # [pair, row, key]
        js = _entropy(m) - 0.5 * (ent[a] + ent[b])  # [pair, row]
        out[a, b] = np.clip(js, 0.0, math.log(2.0)).sum(-1)
    return out + out.T


def cluster_order(distance: np.ndarray) -> list[int]:
    """Leaf order of average-linkage agglomerative clustering of a symmetric distance matrix.

    The two closest clusters merge (first pair on ties), the merged one listing the first's leaves then
    the second's; distances to the rest are size-weighted means (Lance–Williams). NaN counts as far.
    """
    d = np.array(distance, dtype=np.float64)
    n = d.shape[0]
    if d.shape != (n, n):
        raise ValueError(f"distance must be square, got {d.shape}")
    if n == 0:
        return []
    d = np.where(np.isfinite(d), d, np.nanmax(np.where(np.isfinite(d), d, -np.inf), initial=0.0) + 1.0)
    d = 0.5 * (d + d.T)
    np.fill_diagonal(d, np.inf)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    active = np.ones(n, dtype=bool)
    for _ in range(n - 1):
        masked = np.where(active[:, None] & active[None, :], d, np.inf)
        a, b = np.unravel_index(int(np.argmin(masked)), masked.shape)
        a, b = (a, b) if a < b else (b, a)
        na, nb = len(members[a]), len(members[b])
        merged = (na * d[a] + nb * d[b]) / (na + nb)
        d[a], d[:, a] = merged, merged
        d[a, a] = np.inf
        active[b] = False
        d[b], d[:, b] = np.inf, np.inf
        members[a] = members[a] + members.pop(b)
    (root,) = members.values()
    return root


def compute_atlas(
    bundle: Bundle,
    dataset: Dataset | None = None,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
    thresholds: RoleThresholds = RoleThresholds(),
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
    model, task, tok = bundle.model, bundle.task, bundle.tokenizer
    cfg = model.cfg
    counts = {k: n for k, n in layer_counts(cfg).items() if n}
    H = cfg.n_heads
    n_sent = len(dataset.texts)
    task_kind = task.kind if isinstance(task, SyntheticTask) else str(getattr(task, "name", "translation"))
    sums = {k: _Sums(n, H, n_sent) for k, n in counts.items()}
    outputs: list[str] = [""] * n_sent
    prepared = [task.prepare(text, cfg.max_len, direction)
                for text, direction in zip(dataset.texts, dataset.directions, strict=True)]
    # Similar lengths share a batch: less padding.
    order = sorted(range(n_sent), key=lambda i: len(prepared[i].source_ids))
    done = 0
    if progress:
        progress(0, n_sent)
    for b0 in range(0, n_sent, batch_size):
        idx = order[b0 : b0 + batch_size]
        preps = [prepared[i] for i in idx]
        # The model is locked per batch (other users of the loaded model wait for one batch, not the atlas).
        with model.lock, torch.no_grad():
            model.eval()
            generated = greedy_decode(model, [p.source_ids for p in preps], [p.prefix for p in preps],
                                      tok.eos_id)
            decoder_in = [(p.prefix + g)[: cfg.max_len] for p, g in zip(preps, generated, strict=True)]
            src = pad_batch([p.source_ids for p in preps], cfg.pad_id)  # [B, src_pos]
            tgt = pad_batch(decoder_in, cfg.pad_id)  # [B, tgt_pos]
            _, cache = model.run_with_cache(src, tgt, names_filter=lambda n: n.endswith("hook_pattern"))
        for i, p, d in zip(idx, preps, decoder_in, strict=True):
            outputs[i] = tok.decode(d[len(p.prefix) :])
        side_ids = {"source": [p.source_ids for p in preps], "target": decoder_in}
        for kind, n_layers in counts.items():
            k = get_kind(kind)
            pattern = np.stack([cache[hook_name(kind, i, "pattern")].float().numpy()
                                for i in range(n_layers)], axis=1).astype(np.float64)  # [B, L, H, q, k]
            _accumulate(sums[kind], pattern, idx, side_ids[k.queries], side_ids[k.keys],
                        k.queries == k.keys, k.causal, tok, task_kind if kind == "cross" else None,
                        [p.text for p in preps])
        done += len(idx)
        if progress:
            progress(done, n_sent)
    stats = {s: {k: sums[k].mean(s) for k in counts} for s in STATS}
    js = {}
    for kind, s in sums.items():
        js[kind] = s.js_sum / max(s.js_rows, 1)
    return Atlas(
        model=bundle.name,
        key=atlas_key(bundle, dataset, weights),
        task=task_kind,
        dataset=dataset.description,
        texts=list(dataset.texts),
        directions=list(dataset.directions),
        outputs=outputs,
        references=list(dataset.references),
        layer_counts=counts,
        n_heads=H,
        stats=stats,
        n_rows={k: s.counts["entropy"].astype(np.int64) for k, s in sums.items()},
        per_sentence={k: s.per_sentence for k, s in sums.items()},
        js=js,
        order={k: cluster_order(v) for k, v in js.items()},
        seconds=time.perf_counter() - start,
        thresholds=thresholds,
    )


def _accumulate(s: _Sums, pattern: np.ndarray, idx: list[int], query_ids: list[list[int]],
                key_ids: list[list[int]], same_sequence: bool, causal: bool, tok, task_kind: str | None,
                words: list[str]) -> None:
    """Add one batch's patterns [B, L, H, q, k] of one attention kind to the running sums."""
    B, L, H, nq, nk = pattern.shape
    q_len = np.array([len(x) for x in query_ids])
    k_len = np.array([len(x) for x in key_ids])
    qpos, kpos = np.arange(nq), np.arange(nk)
    rows = qpos[None, :] < q_len[:, None]  # [B, q] real query rows
    keys = kpos[None, :] < k_len[:, None]  # [B, k] real keys
    w = np.where(keys[:, None, None, None, :], pattern, 0.0)  # padded keys: exactly 0 already

    ent = _entropy(w)  # [B, L, H, q]
    # Keys a row may see: the causal decoder's row q sees q + 1 of them, other kinds the whole sequence.
    seen = (np.minimum(qpos[None, :] + 1, k_len[:, None]) if causal
            else np.broadcast_to(k_len[:, None], rows.shape))  # [B, q]
    with np.errstate(invalid="ignore", divide="ignore"):
        log_seen = np.log(np.maximum(seen, 2))[:, None, None, :]
        ent_norm = np.where(seen[:, None, None, :] > 1, ent / log_seen, 0.0)
    s.add("entropy", ent, rows)
    s.add("entropy_norm", ent_norm, rows & (seen > 1))
    row_max = w.max(-1)  # [B, L, H, q]
    s.add("max_weight", row_max, rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        s.per_sentence[idx] = (np.where(rows[:, None, None, :], row_max, 0.0).sum(-1)
                               / np.maximum(q_len, 1)[:, None, None])

    special = np.zeros((B, nk), dtype=bool)
    punct = np.zeros((B, nk), dtype=bool)
    for b, ids in enumerate(key_ids):
        special[b, : len(ids)] = [tok.is_special(i) for i in ids]
        punct[b, : len(ids)] = [_is_punct(t) for t in tok.tokens(ids)]
    sp = (w * special[:, None, None, None, :]).sum(-1)
    pu = (w * punct[:, None, None, None, :]).sum(-1)
    s.add("special_share", sp, rows)
    s.add("punct_share", pu, rows)
    s.add("sink_share", sp + pu, rows)

    if same_sequence:
        dist = np.abs(qpos[:, None] - kpos[None, :])  # [q, k]
        s.add("mean_distance", (w * dist).sum(-1), rows)
        for stat, offset in (("diagonal", 0), ("previous", -1), ("next", 1)):
            target = qpos + offset  # [q]
            ok = (target >= 0) & (target < nk)
            vals = np.zeros((B, L, H, nq))
            vals[..., ok] = w[..., qpos[ok], target[ok]]
            has_key = ok[None, :] & (target[None, :] < k_len[:, None])  # [B, q]
            s.add(stat, vals, rows & has_key)

    if task_kind is not None and task_kind != "translation":
        truth = np.zeros((B, nq, nk), dtype=bool)
        truth_rows = np.zeros((B, nq), dtype=bool)
        for b, word in enumerate(words):
            gt = ground_truth_alignment(task_kind, word)  # [letters, letters + 1]
            n = min(gt.shape[0], q_len[b])  # rows predicting a letter that the decoder read
            truth[b, :n, : gt.shape[1]] = gt[:n]
            truth_rows[b, :n] = True
        s.add("alignment", (w * truth[:, None, None]).sum(-1), rows & truth_rows)

    # Jensen–Shannon between every pair of heads over the real rows of this batch.
    flat = w.reshape(B, L * H, nq, nk).transpose(1, 0, 2, 3)[:, rows]  # [head, row, key]
    s.js_sum += js_pair_sums(flat)
    s.js_rows += int(rows.sum())


# --------------------------------------------------------------------------- disk cache


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
            )
    except (OSError, ValueError, KeyError, TypeError):
        return None


@entry(models=0)
def read_atlas(path: str, mtime_ns: int) -> Atlas | None:
    """:func:`load_atlas` of the file at ``path`` as of its modification time ``mtime_ns`` (the
    app's key: a file written again is read again)."""
    return load_atlas(Path(path))


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
