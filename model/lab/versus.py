"""Model vs model on the same input: every head of model A matched with its nearest head of model B.

Two models can only be compared head by head when they read the same tokens, so the first check is
their tokenizers' vocabularies (the same token at every id, the same special ids), never their names.
The distance between two heads is the Jensen–Shannon distance (base 2, so in [0, 1]) between their
attention rows on the same query token, averaged over the query rows.

On the decoder side the two models must also read the same output: B reads A's output (teacher-forced)
when its own differs, and only the positions both then share are compared. A causal query row depends
on no later position, so cutting both to that common prefix leaves every compared row exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.protocols import Tokenizer
from ..data.tasks import InputError
from ..network.kinds import get_kind
from ..run.analysis import Analysis, analyze, attention_only
from ..store.bundle import Bundle
from . import entry

__all__ = ["HeadMatch", "TokenizerMatch", "Versus", "compare", "js_distance", "layer_pair_distances",
           "match_heads", "same_vocabulary", "tokenizer_match"]

#: Bytes of float64 temporaries one layer pair's block of query rows may take: the [head_a, head_b,
#: rows, keys] mixture of every head pair is what grows, so rows are taken in blocks below this.
BLOCK_BYTES = 48 * 2**20


# --------------------------------------------------------------------------- do they share a tokenizer


@dataclass(frozen=True)
class TokenizerMatch:
    """Whether two models' tokenizers map every id to the same token; ``reason`` says why not:
    "size" (vocabulary sizes differ), "token" (an id is another token: ``token_id``), "special"
    (their padding / start / end ids differ)."""

    shared: bool
    reason: str = ""
    size_a: int = 0
    size_b: int = 0
    token_id: int = -1
    token_a: str = ""
    token_b: str = ""


def _special_ids(tok: Tokenizer) -> tuple[int, int, int]:
    return int(tok.pad_id), int(tok.bos_id), int(tok.eos_id)


def same_vocabulary(a: Tokenizer, b: Tokenizer) -> TokenizerMatch:
    """Compare the two vocabularies id by id (names say nothing: two folders may ship one tokenizer)."""
    size_a, size_b = int(a.vocab_size), int(b.vocab_size)
    if size_a != size_b:
        return TokenizerMatch(False, "size", size_a, size_b)
    for i in range(size_a):
        ta, tb = a.id_to_token(i), b.id_to_token(i)
        if ta != tb:
            return TokenizerMatch(False, "token", size_a, size_b, i, ta, tb)
    if _special_ids(a) != _special_ids(b):
        return TokenizerMatch(False, "special", size_a, size_b)
    return TokenizerMatch(True, "", size_a, size_b)


@entry(models=2)
def tokenizer_match(a: Bundle, b: Bundle) -> TokenizerMatch:
    found = same_vocabulary(a.tokenizer, b.tokenizer)
    if found.shared and (a.target_tokenizer is not a.tokenizer or b.target_tokenizer is not b.tokenizer):
        # separate vocabularies: the decoder's ids must name the same tokens too
        return same_vocabulary(a.target_tokenizer, b.target_tokenizer)
    return found


# --------------------------------------------------------------------------- Jensen–Shannon distance


def js_distance(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Jensen–Shannon distance (base 2) between distributions over the last axis (broadcast)."""
    p, r = np.asarray(p, np.float64), np.asarray(r, np.float64)
    m = 0.5 * (p + r)
    log_m = np.log(np.where(m > 0, m, 1.0))
    plogp = (p * np.log(np.where(p > 0, p, 1.0))).sum(-1)
    rlogr = (r * np.log(np.where(r > 0, r, 1.0))).sum(-1)
    js = 0.5 * (plogp - (p * log_m).sum(-1)) + 0.5 * (rlogr - (r * log_m).sum(-1))
    return np.sqrt(np.clip(js / np.log(2.0), 0.0, 1.0))


def _blocks(n_rows: int, per_row: int, max_bytes: int = BLOCK_BYTES) -> list[slice]:
    step = max(1, max_bytes // max(1, per_row))
    return [slice(s, min(s + step, n_rows)) for s in range(0, n_rows, step)]


def layer_pair_distances(pattern_a, pattern_b, n_rows: int, n_keys: int) -> np.ndarray:
    """[layer_a, head_a, layer_b, head_b] mean over the first ``n_rows`` query rows of the JS distance
    between the two heads' rows (first ``n_keys`` keys). ``pattern_*``: arrays or AttentionStacks
    ``[layer, head, query, key]``; a block of rows of every layer is computed at a time, and each layer
    pair is one vectorised step over all its head pairs."""
    la, ha = pattern_a.shape[:2]
    lb, hb = pattern_b.shape[:2]
    total = np.zeros((la, ha, lb, hb), np.float64)
    per_row = 8 * 4 * ha * hb * max(1, n_keys)  # the pair's mixture, its log and two products
    for rows in _blocks(n_rows, per_row):
        a = [np.asarray(_rows(pattern_a, i, rows), np.float64)[..., :n_keys] for i in range(la)]
        b = [np.asarray(_rows(pattern_b, j, rows), np.float64)[..., :n_keys] for j in range(lb)]
        for i in range(la):
            for j in range(lb):
                # [head_a, 1, rows, keys] vs [1, head_b, rows, keys] -> [head_a, head_b, rows]
                total[i, :, j, :] += js_distance(a[i][:, None], b[j][None]).sum(-1)
    return (total / max(1, n_rows)).astype(np.float32)


def _rows(pattern, layer: int, rows: slice) -> np.ndarray:
    """[head, rows, key] of one layer: computed for that block alone when ``pattern`` is lazy."""
    if hasattr(pattern, "layer"):
        return pattern.layer(layer, rows=rows)
    return np.asarray(pattern[layer])[:, rows]


# --------------------------------------------------------------------------- matching heads


@dataclass(frozen=True)
class HeadMatch:
    """Each head of A and the head of B nearest to it, from the distances [la, ha, lb, hb]."""

    nearest: np.ndarray  # [la, ha, 2] int: (layer, head) of B
    nearest_distance: np.ndarray  # [la, ha]
    same_layer: np.ndarray  # [la] int: B's layer at the same relative depth (the same layer if counts agree)
    same_layer_head: np.ndarray  # [la, ha] int: the nearest head within that layer of B
    same_layer_distance: np.ndarray  # [la, ha]
    same_position: np.ndarray | None  # [la, ha]: distance to B's head at the same place (same shapes only)


def match_heads(distance: np.ndarray) -> HeadMatch:
    d = np.asarray(distance)
    la, ha, lb, hb = d.shape
    flat = d.reshape(la, ha, lb * hb)
    best = flat.argmin(-1)
    nearest = np.stack([best // hb, best % hb], axis=-1)
    same_layer = np.array([i if la == lb else round(i * (lb - 1) / max(1, la - 1)) for i in range(la)])
    within = np.stack([d[i, :, same_layer[i], :] for i in range(la)])  # [la, ha, hb]
    same_head = within.argmin(-1)
    same_position = None
    if (la, ha) == (lb, hb):
        same_position = np.stack([d[i, np.arange(ha), i, np.arange(ha)] for i in range(la)])
    return HeadMatch(nearest, flat.min(-1), same_layer, same_head,
                     np.take_along_axis(within, same_head[..., None], -1)[..., 0], same_position)


# --------------------------------------------------------------------------- the comparison


@dataclass
class Versus:
    """Two models on one sentence, head by head, on one attention kind."""

    name_a: str
    name_b: str
    kind: str
    output_a: str  # each model's own (greedy) output
    output_b: str
    refusal: str = ""  # "": compared; "no_kind" (B lacks the kind), "tokens" (no shared tokens to compare)
    b_read_a_output: bool = False  # B was teacher-forced on A's output to read the same decoder tokens
    query_tokens: list[str] = field(default_factory=list)  # the compared rows
    key_tokens: list[str] = field(default_factory=list)
    cut_rows: int = 0  # decoder positions of A left out (B's tokens part there)
    distance: np.ndarray | None = None  # [la, ha, lb, hb]
    match: HeadMatch | None = None
    analysis_a: Analysis | None = None  # what the two heads' heatmaps are read from (lazy per head)
    analysis_b: Analysis | None = None

    def pattern(self, which: str, layer: int, head: int) -> np.ndarray:
        """[query, key] of one head over the compared tokens (computed for that head alone)."""
        analysis = self.analysis_a if which == "a" else self.analysis_b
        p = analysis.attention(self.kind)[layer, head]
        return np.asarray(p)[: len(self.query_tokens), : len(self.key_tokens)]


def _common_prefix(x: list[str], y: list[str]) -> int:
    n = 0
    for u, v in zip(x, y, strict=False):
        if u != v:
            break
        n += 1
    return n


def _b_reading_a(b: Bundle, own_b: Analysis, a: Analysis, text: str, direction: str | None) -> Analysis:
    """B's analysis whose decoder reads A's output (its own when it already does)."""
    if own_b.target_tokens == a.target_tokens or not a.output_text.strip():
        return own_b
    try:
        return analyze(b, text, direction, target=a.output_text, keep=attention_only)
    except InputError:
        return own_b


@entry(models=2)
def compare(a: Bundle, b: Bundle, text: str, direction: str | None, kind: str,
            max_new: int | None = None) -> Versus:
    """A and B on ``text`` (greedy outputs), every head of ``kind`` of A against every head of B's."""
    k = get_kind(kind)
    run_a = analyze(a, text, direction, keep=attention_only, max_new=max_new)
    own_b = analyze(b, text, direction, keep=attention_only, max_new=max_new)
    out = Versus(a.name, b.name, k.name, run_a.output_text, own_b.output_text)
    if not run_a.layer_counts.get(k.name) or not own_b.layer_counts.get(k.name):
        out.refusal = "no_kind"
        return out
    run_b = _b_reading_a(b, own_b, run_a, text, direction) if k.queries == "target" else own_b
    out.b_read_a_output = run_b is not own_b
    queries_a, keys_a = run_a.tokens_for(k)
    queries_b, keys_b = run_b.tokens_for(k)
    n_rows = _common_prefix(queries_a, queries_b)
    # Every decoder row reads the whole source (through cross-attention), so the sources must agree token
    # for token; on the decoder side a causal row sees no later position, so the common prefix of the two
    # outputs bounds rows and self-attention keys alike and every compared row stays exact.
    n_keys = n_rows if k.keys == "target" else len(keys_a)
    if n_rows == 0 or run_a.source_tokens != run_b.source_tokens:
        out.refusal = "tokens"
        return out
    out.query_tokens, out.key_tokens = queries_a[:n_rows], keys_a[:n_keys]
    out.cut_rows = len(queries_a) - n_rows
    out.distance = layer_pair_distances(run_a.attention(k), run_b.attention(k), n_rows, n_keys)
    out.match = match_heads(out.distance)
    out.analysis_a, out.analysis_b = run_a, run_b
    return out
