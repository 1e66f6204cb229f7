"""The head atlas's statistics (model/lab/atlas.py runs the model): numpy only, one batch at a time.

Each batch's attention patterns [B, L, H, q, k] of one attention kind are added to the running sums
of that kind (:func:`accumulate`); every statistic is then a mean over all the real query rows.
Also the ground-truth alignment of the didactic tasks, the Jensen–Shannon matrix between heads and
the clustering that orders them.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from .atlas_result import STATS, AtlasError

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


# --------------------------------------------------------------------------- running sums


def _is_punct(token: str) -> bool:
    text = token.replace("▁", "").strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


@dataclass
class RunningSums:
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


def accumulate(s: RunningSums, pattern: np.ndarray, idx: list[int], query_ids: list[list[int]],
               key_ids: list[list[int]], same_sequence: bool, causal: bool, tok, task_kind: str | None,
               words: list[str]) -> None:
    """Add one batch's patterns [B, L, H, q, k] of one attention kind to the running sums.

    ``idx``: each row's sentence index; ``same_sequence``: queries and keys are one sequence (the
    positional statistics apply); ``task_kind``: the didactic task for the alignment statistic
    (None: no ground truth); ``words``: each sentence's text, the ground truth's input.
    """
    nq, nk = pattern.shape[3:]
    q_len = np.array([len(x) for x in query_ids])
    k_len = np.array([len(x) for x in key_ids])
    qpos, kpos = np.arange(nq), np.arange(nk)
    rows = qpos[None, :] < q_len[:, None]  # [B, q] real query rows
    keys = kpos[None, :] < k_len[:, None]  # [B, k] real keys
    w = np.where(keys[:, None, None, None, :], pattern, 0.0)  # padded keys: exactly 0 already

    _add_spread(s, w, rows, q_len, k_len, causal, idx)
    _add_sink_shares(s, w, rows, key_ids, tok)
    if same_sequence:
        _add_positional(s, w, rows, k_len)
    if task_kind is not None and task_kind != "translation":
        _add_alignment(s, w, rows, q_len, task_kind, words)
    _add_js(s, w, rows)


def _entropy(w: np.ndarray) -> np.ndarray:
    """-Σ w log w over the last axis, 0·log 0 = 0."""
    return -(w * np.log(np.where(w > 0, w, 1.0))).sum(-1)


def _add_spread(s: RunningSums, w: np.ndarray, rows: np.ndarray, q_len: np.ndarray, k_len: np.ndarray,
                causal: bool, idx: list[int]) -> None:
    """How spread each row is: entropy (also normalised by what the row may see) and max weight; the
    max weight's mean per sentence too."""
    qpos = np.arange(w.shape[3])
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


def _add_sink_shares(s: RunningSums, w: np.ndarray, rows: np.ndarray, key_ids: list[list[int]], tok) -> None:
    """Weight on the tokens the model adds, on punctuation, on both, and on the first token."""
    B, nk = w.shape[0], w.shape[4]
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
    # A language model's sink is the first token, whatever it is (SmolLM2 reads no <bos>).
    s.add("first_share", w[..., 0], rows)


def _add_positional(s: RunningSums, w: np.ndarray, rows: np.ndarray, k_len: np.ndarray) -> None:
    """Where the row looks relative to its own position: mean distance, the diagonal, the key before
    and the key after (self-attention kinds only)."""
    B, L, H, nq, nk = w.shape
    qpos, kpos = np.arange(nq), np.arange(nk)
    dist = np.abs(qpos[:, None] - kpos[None, :])  # [q, k]
    s.add("mean_distance", (w * dist).sum(-1), rows)
    for stat, offset in (("diagonal", 0), ("previous", -1), ("next", 1)):
        target = qpos + offset  # [q]
        ok = (target >= 0) & (target < nk)
        vals = np.zeros((B, L, H, nq))
        vals[..., ok] = w[..., qpos[ok], target[ok]]
        has_key = ok[None, :] & (target[None, :] < k_len[:, None])  # [B, q]
        s.add(stat, vals, rows & has_key)


def _add_alignment(s: RunningSums, w: np.ndarray, rows: np.ndarray, q_len: np.ndarray, task_kind: str,
                   words: list[str]) -> None:
    """Weight on the ground-truth source position(s) of the letter each row predicts."""
    B, nq, nk = w.shape[0], w.shape[3], w.shape[4]
    truth = np.zeros((B, nq, nk), dtype=bool)
    truth_rows = np.zeros((B, nq), dtype=bool)
    for b, word in enumerate(words):
        gt = ground_truth_alignment(task_kind, word)  # [letters, letters + 1]
        n = min(gt.shape[0], q_len[b])  # rows predicting a letter that the decoder read
        truth[b, :n, : gt.shape[1]] = gt[:n]
        truth_rows[b, :n] = True
    s.add("alignment", (w * truth[:, None, None]).sum(-1), rows & truth_rows)


def _add_js(s: RunningSums, w: np.ndarray, rows: np.ndarray) -> None:
    """Jensen–Shannon between every pair of heads over the real rows of this batch."""
    B, L, H, nq, nk = w.shape
    flat = w.reshape(B, L * H, nq, nk).transpose(1, 0, 2, 3)[:, rows]  # [head, row, key]
    s.js_sum += js_pair_sums(flat)
    s.js_rows += int(rows.sum())


# --------------------------------------------------------------------------- comparing heads

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
