"""Head detectors: what each self-attention head does, as one score per role for every head.

Every score is a mean of attention weights over the query positions the role's definition picks
(``A[i, j]`` is the weight query ``i`` gives key ``j``; a sequence's ``ids`` are what the model read):

- **previous**: ``A[i, i-1]`` over every ``i >= 1``.
- **first** (sink): ``A[i, 0]`` over every ``i >= 1``; position 0 is ``<bos>``/``[CLS]`` where the model
  reads one, else the first token.
- **duplicate**: ``sum_j A[i, j]`` over the earlier copies ``j < i`` of ``ids[i]``, over the ``i`` that
  have one.
- **induction**: ``A[i, j+1]``, ``j`` the latest earlier copy of ``ids[i]``, over the ``i`` whose next
  token repeats too (``ids[j+1] == ids[i+1]``, ``j + 1 < i``). On a probe ``<bos> s s`` of distinct tokens
  these are the second-copy tokens but the last: :func:`model.lab.induction.scores_of`'s positions.
- **copying** (same positions; decoder-only models, which have an output embedding): the head's direct
  effect on the logit of the token that comes next, ``t = ids[i+1]``. The head's output at ``i``,
  ``o = z[i, head] W_O[head]`` (``W_O``'s columns of that head), goes through the final norm with its
  scale frozen at what this position had (a linear map: ``o g / rms(x)`` for RMSNorm,
  ``(o - mean o) g / std(x)`` for LayerNorm, ``x`` the final residual), then onto the unembedding row
  of ``t`` minus the mean row (a shift of every logit changes no probability). In logits (nats); above 0
  the head raises ``t``.

The probes are seeded random tokens written twice; previous, first and duplicate are also defined on
the user's own text. Patterns are computed a layer and a block of rows at a time from the recorded
attention inputs, never every head's L² at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ..network.kinds import get_kind, hook_name
from ..network.recorded import AttentionInputs, record_attention
from ..store.bundle import Bundle
from . import entry

ROLES = ("previous", "first", "duplicate", "induction", "copying")
#: Roles whose definition needs no repeated sequence: also measured on the user's text.
ON_ANY_INPUT = ("previous", "first", "duplicate")
#: A head "has" a role at or above these (rules of thumb: a weight score of 0.4 is 40% of every row's
#: attention on one chosen key; the copying score is in logits, 1 nat raises the token's odds e-fold).
THRESHOLDS = {"previous": 0.4, "first": 0.5, "duplicate": 0.3, "induction": 0.3, "copying": 1.0}
PROBE_LENGTH = 25  # tokens per copy (fewer when the model's context or vocabulary is smaller)
PROBE_COUNT = 4  # probes averaged (the page's link opens the first)


@dataclass(frozen=True)
class Positions:
    """Which (query, key) cells each role reads, for one sequence."""

    previous: np.ndarray  # query rows i (key i - 1)
    duplicate: np.ndarray  # [query, key] bool, True at earlier copies of the query's token
    induction_q: np.ndarray  # query rows
    induction_k: np.ndarray  # the key each reads (after the earlier copy)
    next_ids: np.ndarray  # the token after each induction query (the copying score's target)


def positions_of(ids: list[int] | np.ndarray) -> Positions:
    """The cells every role reads in a sequence of token ids (see the module's definitions)."""
    ids = np.asarray(ids)
    n = len(ids)
    earlier = (ids[:, None] == ids[None, :]) & np.tri(n, n, -1, dtype=bool)  # [query, key]
    queries, keys, nexts, last = [], [], [], {}
    for i, token in enumerate(ids.tolist()):
        j = last.get(token)
        if j is not None and j + 1 < i and i + 1 < n and ids[j + 1] == ids[i + 1]:
            queries.append(i)
            keys.append(j + 1)
            nexts.append(int(ids[i + 1]))
        last[token] = i
    as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    return Positions(np.arange(1, n), earlier, as_int(queries), as_int(keys), as_int(nexts))


@dataclass
class _Sums:
    """Running sums and counts per role, [layer, head]."""

    shape: tuple[int, int]
    total: dict = field(default_factory=dict)
    count: dict = field(default_factory=dict)

    def add(self, role: str, layer: int, values: np.ndarray, n: int) -> None:
        """values [head]: summed over n cells of one layer."""
        self.total.setdefault(role, np.zeros(self.shape))[layer] += values
        self.count.setdefault(role, np.zeros(self.shape))[layer] += n

    def means(self, roles: tuple[str, ...]) -> dict[str, np.ndarray]:
        out = {}
        for r in roles:
            count = self.count.get(r, np.zeros(self.shape))
            with np.errstate(invalid="ignore", divide="ignore"):
                out[r] = np.where(count > 0, self.total.get(r, np.zeros(self.shape)) / count, np.nan)
        return out


def add_pattern_rows(sums: _Sums, layer: int, rows: slice, pattern: np.ndarray, pos: Positions) -> None:
    """Fold one block of rows, pattern [head, rows, key], into every weight role's sums."""
    start, stop = rows.start, rows.stop
    local = lambda q: q[(q >= start) & (q < stop)]  # noqa: E731
    q = local(pos.previous)
    sums.add("previous", layer, pattern[:, q - start, q - 1].sum(-1), len(q))
    sums.add("first", layer, pattern[:, q - start, 0].sum(-1), len(q))
    dup = pos.duplicate[start:stop]  # [rows, key]
    has = dup.any(-1)
    sums.add("duplicate", layer, (pattern * dup[None]).sum(-1)[:, has].sum(-1), int(has.sum()))
    pick = (pos.induction_q >= start) & (pos.induction_q < stop)
    iq, ik = pos.induction_q[pick], pos.induction_k[pick]
    sums.add("induction", layer, pattern[:, iq - start, ik].sum(-1), len(iq))


@dataclass(frozen=True)
class DetectorScores:
    """Every head's score per role on one set of inputs."""

    kind: str  # the attention kind scored ("decoder" or "encoder": self-attention)
    scores: dict[str, np.ndarray]  # role -> [layer, head]; NaN where the inputs define no cell
    texts: list[str]  # the inputs as the single-head page reads them
    tokens: list[list[str]]  # each input's tokens
    counts: dict[str, int]  # role -> query positions averaged (over every input)
    seconds: float  # time the scores took
    copying_note: str = ""  # why there is no copying score ("" when there is one)
    starts_special: bool = False  # the first input begins with a token the model adds (<bos>, [CLS])

    def best(self, role: str) -> tuple[int, int]:
        """(layer, head) with the highest score of ``role``."""
        values = np.where(np.isfinite(self.scores[role]), self.scores[role], -np.inf)
        layer, head = np.unravel_index(int(np.argmax(values)), values.shape)
        return int(layer), int(head)

    def top(self, role: str, n: int = 5) -> list[tuple[int, int, float]]:
        """The ``n`` best heads of ``role``: (layer, head, score), best first."""
        v = self.scores[role]
        order = [int(k) for k in np.argsort(-np.nan_to_num(v, nan=-np.inf), axis=None)[:n]]
        return [(k // v.shape[1], k % v.shape[1], float(v.flat[k])) for k in order if np.isfinite(v.flat[k])]


def self_kind(bundle: Bundle) -> str:
    """The self-attention the detectors read: the decoder's in a decoder-only model, else the encoder's
    (an encoder-decoder model's decoder reads its own output, which no probe sets)."""
    return "decoder" if bundle.cfg.decoder_only else "encoder"


def _inputs(bundle: Bundle, text: str) -> tuple[list[int], list[torch.Tensor]]:
    """(the ids the self-attention reads, the model's forward arguments)."""
    prepared = bundle.task.prepare(text, bundle.cfg.max_len)
    ids = list(prepared.source_ids)
    if bundle.cfg.decoder_only or bundle.cfg.encoder_only:
        return ids, [torch.tensor([ids])]
    return ids, [torch.tensor([ids]), torch.tensor([prepared.prefix])]


def _pool(bundle: Bundle, rng: np.random.Generator, k: int) -> list[int]:
    """Up to k distinct token ids drawn in a seeded order, each a word piece, such that the probe's text
    (the ids written twice, as the task strips it) reads back as exactly those ids: the single-head page
    a link opens then sees the tokens scored here."""
    tok = bundle.tokenizer
    picked: list[int] = []
    for i in rng.permutation(tok.vocab_size)[: 40 * k + 400].tolist():
        if tok.is_special(i) or not tok.decode([i]).strip().isalpha():
            continue
        trial = picked + [i]
        if tok.encode(tok.decode(trial + trial).strip()) == trial + trial:
            picked = trial
            if len(picked) == k:
                break
    return picked


def probe_texts(bundle: Bundle, seed: int = 0, n: int = PROBE_COUNT, length: int = PROBE_LENGTH) -> list[str]:
    """``n`` probe texts: ``length`` seeded random distinct tokens written twice (the task adds ``<bos>``
    where the model reads one). Shorter when the model's context is."""
    room = (bundle.cfg.max_len - 2) // 2
    texts = []
    for s in range(n):
        rng = np.random.default_rng([seed, s])
        ids = _pool(bundle, rng, max(2, min(length, room)))
        texts.append(bundle.tokenizer.decode(ids + ids))
    return texts


@torch.no_grad()
def _score_one(bundle: Bundle, kind: str, text: str, sums: _Sums,
               roles: tuple[str, ...]) -> tuple[list, int]:
    """Fold one input into ``sums``; returns (its tokens, its induction query count)."""
    model = bundle.model
    ids, args = _inputs(bundle, text)
    n_layers = model.attention_layer_counts()[kind]
    copying = "copying" in roles
    wanted = {hook_name(kind, i, "z") for i in range(n_layers)} if copying else set()
    final = f"decoder.blocks.{n_layers - 1}.hook_resid_post"
    wanted |= {final} if copying else set()
    # Logits of the last row only: no score reads them, and the vocabulary-wide rows would cost.
    tail = {"logits_from": len(ids) - 1} if bundle.cfg.decoder_only else {}
    with record_attention() as store:
        _, cache = model.run_with_cache(*args, names_filter=wanted.__contains__, **tail)
    pos = positions_of(ids)
    for layer in range(n_layers):
        rec: AttentionInputs = store[hook_name(kind, layer, "pattern").rsplit(".", 1)[0]]
        for rows in rec.row_blocks():
            _, pattern = rec.compute(slice(None), 0, rows)
            add_pattern_rows(sums, layer, rows, pattern.numpy(), pos)
    if copying and len(pos.induction_q):
        values = copying_scores(bundle, [cache[hook_name(kind, i, "z")][0] for i in range(n_layers)],
                                cache[final][0], pos.induction_q, pos.next_ids)  # [layer, head, query]
        for layer in range(n_layers):
            sums.add("copying", layer, values[layer].sum(-1), len(pos.induction_q))
    return bundle.tokenizer.tokens(ids), len(pos.induction_q)


@torch.no_grad()
def copying_scores(bundle: Bundle, z: list[torch.Tensor], resid: torch.Tensor, queries: np.ndarray,
                   targets: np.ndarray) -> np.ndarray:
    """[layer, head, query] each head's direct effect on the logit of ``targets`` at ``queries``:
    z [pos, head, d_head] per layer, resid [pos, d_model] the final norm's input (module docstring)."""
    model, cfg = bundle.model, bundle.cfg
    norm = model.decoder.final_norm
    x = resid[queries].double()  # [query, d_model]
    w_u = model.unembed.weight  # [vocab, d_model]; only the rows read go to float64 (49k rows would cost)
    direction = w_u[torch.as_tensor(targets)].double() - w_u.mean(0).double()  # [query, d_model]
    gain = norm.weight.double() if hasattr(norm, "weight") and norm.weight is not None else 1.0
    if cfg.norm == "rmsnorm":
        scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg.norm_eps)  # [query, 1]
    else:
        scale = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + cfg.norm_eps)
    read = direction * gain * scale  # [query, d_model]: what one unit of residual adds to the logit
    out = []
    for i, zl in enumerate(z):
        w_o = model.decoder.blocks[i].self_attn.W_o.weight.double()  # [d_model, head * d_head]
        heads = w_o.view(cfg.d_model, cfg.n_heads, cfg.d_head)  # [d_model, head, d_head]
        o = torch.einsum("qhd,mhd->hqm", zl[queries].double(), heads)  # [head, query, d_model]
        if cfg.norm != "rmsnorm":
            o = o - o.mean(-1, keepdim=True)  # LayerNorm centres what it reads
        out.append((o * read).sum(-1).numpy())  # [head, query]
    return np.stack(out)


def _run(bundle: Bundle, texts: list[str], roles: tuple[str, ...]) -> DetectorScores:
    started = time.perf_counter()
    kind = self_kind(bundle)
    note = ""
    if "copying" in roles and not (bundle.cfg.decoder_only and bundle.cfg.norm_first):
        roles = tuple(r for r in roles if r != "copying")
        note = "no_unembed" if get_kind(kind).stack == "encoder" else "post_norm"
    shape = (bundle.model.attention_layer_counts()[kind], bundle.cfg.n_heads)
    sums, tokens = _Sums(shape), []
    with bundle.model.lock:
        for text in texts:
            tokens.append(_score_one(bundle, kind, text, sums, roles)[0])
    counts = {r: int(sums.count.get(r, np.zeros(shape))[0, 0]) for r in roles}
    first = _inputs(bundle, texts[0])[0][:1]
    special = bool(first) and bundle.tokenizer.is_special(first[0])
    return DetectorScores(kind, sums.means(roles), list(texts), tokens, counts,
                          time.perf_counter() - started, note, special)


@entry
def probe_scores(bundle: Bundle, seed: int = 0, n: int = PROBE_COUNT,
                 length: int = PROBE_LENGTH) -> DetectorScores:
    """Every role's score of every head, on ``n`` seeded probes (random tokens written twice)."""
    return _run(bundle, probe_texts(bundle, seed, n, length), ROLES)


@entry
def text_scores(bundle: Bundle, text: str) -> DetectorScores:
    """The roles defined on any input (previous, first, duplicate), on the user's text."""
    return _run(bundle, [text], ON_ANY_INPUT)
