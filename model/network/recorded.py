"""What each attention layer's softmax saw, kept so that any head's scores and pattern can be computed
again, exactly, when a page looks at that head.

An analysis cannot keep every head's L x L pattern of a long input (SmolLM2's 270 heads at 2,048 tokens
hold 4.5 GB of float32 patterns). Inside :func:`record_attention`, every attention module hands over
instead what grows with the model's width x L: its queries and keys as the scores multiplied them
(after RoPE), what it divided them by (sqrt(d_head), or the config's own), a description of its mask
(causal, a sliding window, padding) and, for T5, its relative position bias table (buckets x heads; the
whole bias, heads x L², only where a hook function on ``hook_position_bias`` changed it).
:class:`AttentionInputs` rebuilds one head's (or one block of query rows') scores and pattern from them
with the same functions the forward pass used (:func:`~model.network.masking.build_mask`,
:func:`~model.network.masking.masked_softmax`).

Dimensions: batch, head (query heads), kv_head (key heads, fewer under grouped-query attention),
query_pos, key_pos, d_head.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .masking import build_mask, masked_softmax
from .positional import relative_bias
from .stack_rows import BLOCK_BYTES  # what one call of AttentionInputs.blocks computes at most


def _read(a: np.ndarray) -> torch.Tensor:
    """A tensor over ``a`` without a copy where it is contiguous, only ever read: the recorded arrays are made
    read-only once an analysis is cached, and torch warns on wrapping a read-only array, which is safe here
    (nothing writes to it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(np.ascontiguousarray(a))


@dataclass(frozen=True)
class RelativeBias:
    """A relative position bias as the scores added it (T5): its table and how distances fall in buckets."""

    table: np.ndarray  # [bucket, head] float32
    bidirectional: bool
    max_distance: int

    def rows(self, heads: np.ndarray, n_query: int, n_key: int, offset: int, rows: slice) -> torch.Tensor:
        """[head, query rows, key_pos] of the chosen heads."""
        table = torch.from_numpy(np.ascontiguousarray(self.table[:, heads]))
        return relative_bias(table, n_query, n_key, offset, self.bidirectional, self.max_distance, rows)


@dataclass(frozen=True)
class EditedBias:
    """A position bias that a hook function on ``hook_position_bias`` changed: no table gives it, so it is
    kept whole (heads x L², only under such a function)."""

    values: np.ndarray  # [batch or 1, head, query_pos, key_pos] float32, as the scores added it

    @classmethod
    def of(cls, bias: torch.Tensor, n_heads: int) -> EditedBias:
        """From the bias the scores added (any shape that broadcasts to [batch, head, query_pos, key_pos])."""
        shape = torch.broadcast_shapes(bias.shape, (1, n_heads, *bias.shape[-2:]))
        return cls(_numpy(torch.broadcast_to(bias, shape)))

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes)

    def rows(self, heads: np.ndarray, n_query: int, n_key: int, offset: int, rows: slice,
             batch: int = 0) -> torch.Tensor:
        """[head, query rows, key_pos] of the chosen heads for sentence ``batch``."""
        values = self.values[min(batch, self.values.shape[0] - 1)]  # [head, query_pos, key_pos]
        return torch.from_numpy(np.ascontiguousarray(values[heads][:, rows]))


@dataclass(frozen=True)
class AttentionInputs:
    """One attention layer's softmax inputs in one pass (numpy, so an analysis stays plain data)."""

    q: np.ndarray  # [batch, head, query_pos, d_head] float32, rotated when the layer rotates
    k: np.ndarray  # [batch, kv_head, key_pos, d_head] float32 (every key, cached ones included)
    divisor: float  # the scores were Q K^T / divisor: sqrt(d_head) (or the config's own), 1.0 unscaled
    causal: str  # "", "causal" or "reversed causal" (an edit)
    offset: int  # absolute position of the first query (earlier keys came from a decoding cache)
    softmax_dim: int  # -1: over keys (intact); -2: over queries (an edit)
    key_padding: np.ndarray | None = None  # [batch, key_pos] bool, True at padding keys
    query_padding: np.ndarray | None = None  # [batch, query_pos] bool; read only by a softmax over queries
    window: int = 0  # > 0 (with "causal"): a sliding window, each query sees that many keys, itself included
    # [batch, head, key_pos] float32: each head's ‖f_h(x_j)‖, f(x) = (x W_V + b_V) W_O restricted to head h
    # (norm-based attention, model/lab/flow.py); None when not recorded
    value_norms: np.ndarray | None = None
    # T5: the position bias added to the scaled scores (its table; whole when a hook function edited it)
    relative: RelativeBias | EditedBias | None = None

    @property
    def n_heads(self) -> int:
        return self.q.shape[1]

    @property
    def n_queries(self) -> int:
        return self.q.shape[2]

    @property
    def n_keys(self) -> int:
        return self.k.shape[2]

    @property
    def nbytes(self) -> int:
        extra = [p.nbytes for p in (self.key_padding, self.query_padding, self.value_norms) if p is not None]
        if isinstance(self.relative, RelativeBias):
            extra.append(self.relative.table.nbytes)
        elif self.relative is not None:
            extra.append(self.relative.nbytes)
        return int(self.q.nbytes + self.k.nbytes + sum(extra))

    def masks_anything(self, batch: int = 0) -> bool:
        """Whether any cell of this layer is masked for sentence ``batch``."""
        if self.key_padding is not None and bool(self.key_padding[batch].any()):
            return True
        rows_padded = self.query_padding is not None and bool(self.query_padding[batch].any())
        if self.softmax_dim == -2 and rows_padded:
            return True
        if self.causal == "causal":  # query i sees keys up to offset + i: the last key hides from the first
            # (and, in a window, the first key hides from the last query)
            return self.n_keys > 1 + self.offset or (self.window > 0 and self.n_keys > self.window)
        if self.causal == "reversed causal":
            return self.offset > 0 or self.n_queries > 1
        return False

    def mask(self, batch: int = 0, rows: slice = slice(None)) -> torch.Tensor | None:
        """[query rows, key_pos] bool, True where a query may not look (None: nowhere)."""
        start, stop, _ = rows.indices(self.n_queries)
        padding = self.key_padding
        pad = None if padding is None else torch.from_numpy(padding[batch : batch + 1].copy())
        mask = build_mask(pad, max(0, stop - start), self.n_keys, bool(self.causal),
                          offset=self.offset + start,
                          reversed_causal=self.causal == "reversed causal", window=self.window)
        if self.softmax_dim == -2 and self.query_padding is not None:
            q_rows = torch.from_numpy(self.query_padding[batch : batch + 1, start:stop, None].copy())[None]
            mask = q_rows if mask is None else (mask | q_rows)
        return None if mask is None else mask[0, 0]  # [rows, key_pos], or [rows, 1] (query padding only)

    def compute(self, heads: int | slice | Sequence[int] = slice(None), batch: int = 0,
                rows: slice = slice(None)) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores, pattern) [head, query rows, key_pos] float32 of the chosen heads: scores scaled and
        -inf where masked, the pattern their softmax, as the forward pass computed them. ``rows``
        (a block of query rows) only under a softmax over keys, where rows are independent."""
        if self.softmax_dim != -1 and rows.indices(self.n_queries)[:2] != (0, self.n_queries):
            raise ValueError("a softmax over queries mixes every row: compute all rows at once")
        index = np.arange(self.n_heads)[heads]
        index = np.atleast_1d(index)
        group = self.n_heads // self.k.shape[1]
        q = torch.from_numpy(np.ascontiguousarray(self.q[batch, index, rows]))  # [head, rows, d_head]
        k = torch.from_numpy(np.ascontiguousarray(self.k[batch, index // group]))  # [head, key_pos, d_head]
        scores = (q @ k.transpose(-2, -1)) / self.divisor  # [head, rows, key_pos]
        if isinstance(self.relative, EditedBias):
            scores = scores + self.relative.rows(index, self.n_queries, self.n_keys, self.offset, rows, batch)
        elif self.relative is not None:
            scores = scores + self.relative.rows(index, self.n_queries, self.n_keys, self.offset, rows)
        mask = self.mask(batch, rows)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        every_row_sees = mask is None or (mask.shape[-1] == self.n_keys and not bool(mask.all(-1).any()))
        if self.softmax_dim == -1 and every_row_sees:
            # Every row keeps a key: the plain softmax of the -inf-filled scores is masked_softmax's result
            # exactly (exp underflows to 0 at -inf as at the lowest float), at a third of its cost.
            return scores, torch.softmax(scores, dim=-1)
        return scores, masked_softmax(scores, mask, self.softmax_dim)

    def block_max(self, block: int, batch: int = 0,
                  rows: slice = slice(None)) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(values [head, row cells, key cells] float32, masked [row cells, key cells] bool or None)`` of
        the pattern's ``rows`` (a multiple of ``block`` rows but the last) in ``block x block`` cells: each
        cell's largest weight, masked weights left out, NaN where the whole cell is masked (``masked``:
        None when nothing is): ``viz.pooling.pool_blocks`` (max) and ``pool_mask`` of :meth:`compute`'s
        pattern with NaN where masked, the same numbers, without a pattern written, NaN-filled and read
        again in numpy. Under a causal mask the keys after the block's last query are never scored (their
        cells are masked), which halves the work of a long input. Only under a softmax over keys."""
        if self.softmax_dim != -1:
            raise ValueError("a softmax over queries mixes every row: pool its computed pattern")
        start, stop, _ = rows.indices(self.n_queries)
        n_keys, n_rows = self.n_keys, stop - start
        seen = n_keys
        if self.causal == "causal":  # query i sees keys up to offset + i
            seen = min(n_keys, -(-(self.offset + stop) // block) * block)
        group = self.n_heads // self.k.shape[1]
        index = np.arange(self.n_heads)
        q = _read(self.q[batch, :, start:stop])  # [head, rows, d_head]
        k = _read(self.k[batch, :, :seen])  # [kv_head, keys seen, d_head]
        n_kv = k.shape[0]
        # a key head's query heads are rows of one product (no copy of its keys per head); the scores are
        # compute()'s, bit for bit, at the lengths tested (a short block's may differ in the last bit)
        scores = (q.reshape(n_kv, group * n_rows, -1) @ k.transpose(-2, -1)).view(
            self.n_heads, n_rows, seen).div_(self.divisor)  # [head, rows, keys seen]
        if self.relative is not None:
            bias = (self.relative.rows(index, self.n_queries, n_keys, self.offset, rows, batch)
                    if isinstance(self.relative, EditedBias)
                    else self.relative.rows(index, self.n_queries, n_keys, self.offset, rows))
            scores = scores + bias[..., :seen]
        mask = self.mask(batch, rows)
        if mask is not None:
            mask = mask[:, :seen].expand(n_rows, seen)  # padding alone is one row for every query
            scores.masked_fill_(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # compute()'s pattern, bit for bit, where not masked
        if mask is not None and bool(mask.all(-1).any()):  # a row that sees nothing: NaN, its cells masked
            weights = weights.nan_to_num_(0.0)
        key_cells, row_cells = -(-seen // block), -(-n_rows // block)
        key_pad, row_pad = key_cells * block - seen, row_cells * block - n_rows
        if key_pad:  # the last key cell shorter: padded with weights that never win
            weights = torch.nn.functional.pad(weights, (0, key_pad), value=-1.0)
        cells = weights.reshape(self.n_heads, n_rows, key_cells, block).amax(-1)  # [head, rows, key cell]
        if row_pad:
            cells = torch.nn.functional.pad(cells, (0, 0, 0, row_pad), value=-1.0)
        pooled = cells.reshape(self.n_heads, row_cells, block, key_cells).amax(2)
        hidden = None
        if mask is not None:  # a cell every weight of which is masked is NaN, as pool_blocks leaves it
            padded = torch.nn.functional.pad(mask, (0, key_pad, 0, row_pad), value=True)
            hidden = padded.reshape(row_cells, block, key_cells, block).all(3).all(1)
            pooled.masked_fill_(hidden, float("nan"))
        unseen = -(-n_keys // block) - key_cells
        if unseen:  # keys after the last query's: masked, never scored
            pooled = torch.nn.functional.pad(pooled, (0, unseen), value=float("nan"))
            hidden = torch.nn.functional.pad(hidden, (0, unseen), value=True)
        return pooled, hidden

    def row_blocks(self, n_heads: int | None = None, max_bytes: int = BLOCK_BYTES) -> Iterator[slice]:
        """Query-row blocks whose scores and pattern for ``n_heads`` heads stay within ``max_bytes``
        (all rows at once under a softmax over queries)."""
        if self.softmax_dim != -1:
            yield slice(0, self.n_queries)
            return
        per_row = 4 * 3 * (n_heads or self.n_heads) * max(1, self.n_keys)  # scores, pattern, mask slack
        step = max(1, max_bytes // per_row)
        for start in range(0, self.n_queries, step):
            yield slice(start, min(start + step, self.n_queries))


_recording: contextvars.ContextVar[dict[str, AttentionInputs] | None] = contextvars.ContextVar(
    "attention_recording", default=None)
_new_keys_only: contextvars.ContextVar[bool] = contextvars.ContextVar("attention_new_keys_only",
                                                                     default=False)


def recording() -> bool:
    """Whether a :func:`record_attention` block is collecting attention inputs."""
    return _recording.get() is not None


def new_keys_only() -> bool:
    """Whether the recording block keeps only the keys (and value norms) a pass adds to its cache."""
    return _new_keys_only.get()


@contextlib.contextmanager
def record_attention(new_keys_only: bool = False) -> Iterator[dict[str, AttentionInputs]]:
    """Collect, per attention module path (``decoder.blocks.3.self_attn``), what its softmax saw in
    every forward pass run inside the block (a later pass of the same module replaces the earlier).

    ``new_keys_only``: a decoding step's record, to be joined to the earlier ones (model/run/one_pass.py):
    ``k`` and ``value_norms`` hold only the positions this pass added after its ``offset`` cached ones,
    so a step costs what its own rows do, not the whole cache again."""
    store: dict[str, AttentionInputs] = {}
    token = _recording.set(store)
    only = _new_keys_only.set(new_keys_only)
    try:
        yield store
    finally:
        _new_keys_only.reset(only)
        _recording.reset(token)


def _numpy(t: torch.Tensor | None, dtype=torch.float32) -> np.ndarray | None:
    return None if t is None else t.detach().to(dtype).contiguous().cpu().numpy()


def record(path: str, qt: torch.Tensor, kt: torch.Tensor, divisor: float, causal: str, offset: int,
           softmax_dim: int, key_padding: torch.Tensor | None, query_padding: torch.Tensor | None,
           window: int = 0, value_norms: torch.Tensor | None = None,
           relative: RelativeBias | EditedBias | None = None) -> None:
    """Called by the attention module: qt [batch, head, query_pos, d_head], kt [batch, kv_head, key_pos,
    d_head] as the scores use them; divisor 1.0 when it did not scale; window its sliding window;
    value_norms [batch, head, key_pos] (AttentionInputs.value_norms); relative: T5's position bias (its
    table, or the whole bias a hook function edited)."""
    store = _recording.get()
    if store is None:
        return
    store[path] = AttentionInputs(
        _numpy(qt), _numpy(kt), divisor, causal, offset, softmax_dim,
        _numpy(key_padding, torch.bool), _numpy(query_padding, torch.bool) if softmax_dim == -2 else None,
        window, _numpy(value_norms), relative)
