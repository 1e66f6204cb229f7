"""The logit lens: what each layer would predict if the model stopped there.

Every position's residual stream after each block (``{stack}.blocks.{i}.hook_resid_post``; row 0 is
the embedding output, ``decoder.embed.hook_resid_in``) goes through the decoder's final norm and the
output embedding, exactly as the model's own logits are computed after the last block
(``Transformer.decode``: ``unembed(final_norm(y))``). So the last row *is* the model's next-token
distribution, and the earlier rows are a reading the model was never trained for: no tuned lens
(a per-layer probe) is fitted here, and an early layer's "prediction" may be poor for that reason
alone.

    lens = logit_lens(bundle, source_ids, decoder_ids, prompt_len)
    lens.top_ids[r, p, 0], lens.top_probs[r, p, 0]   # row r's most likely next token at position p
    lens.final_rank[r, p], lens.final_prob[r, p]     # where the model's final choice stands at row r
    lens.entropy[r, p]                               # of row r's distribution, nats

A decoder-only model reads prompt + output as one sequence; an encoder-decoder model's decoder reads
its prefix + output (teacher-forced on the output it produced) with the source in the encoder. An
encoder-only model has no output embedding for next tokens: there is nothing to read (ValueError).

Cost: rows x positions x vocabulary logits (SmolLM2 on 64 tokens: 31 x 64 x 49,152, 390 MB as
float32) are never held at once. They are computed a block of rows at a time, and only the top-k,
the final choice's rank and probability and the entropy of each cell are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..store.bundle import Bundle
from . import entry

if TYPE_CHECKING:
    from ..run.analysis import Analysis

#: Tokens kept per cell (layer, position), most likely first.
TOP_K = 5
#: Logits computed at once (rows x vocabulary floats): 32 MB, large enough that the projection runs at
#: full speed, small enough that the post-processing of each row block stays in cache.
CHUNK_FLOATS = 2**23
#: Rows post-processed at once inside a block (softmax, rank, entropy): a few rows of logits fit in cache.
SUB_ROWS = 8


@dataclass(frozen=True)
class LogitLens:
    stack: str  # "decoder": the stack whose residual stream is read
    tokens: list[str]  # the token read at each position shown
    positions: np.ndarray  # [pos] int32, decoder position of each column
    prompt_len: int  # decoder positions before this one are the prompt (or the decoder's prefix)
    top_ids: np.ndarray  # [row, pos, k] int32; row 0 = embeddings, row r = after block r
    top_probs: np.ndarray  # [row, pos, k] float32
    final_ids: np.ndarray  # [pos] int32, the model's own top next token (argmax of the last row)
    final_rank: np.ndarray  # [row, pos] int32, 0 = the row's top token
    final_prob: np.ndarray  # [row, pos] float32
    entropy: np.ndarray  # [row, pos] float32, nats
    words: dict[int, str]  # display string of every id in top_ids and final_ids

    @property
    def n_rows(self) -> int:
        return int(self.top_ids.shape[0])

    def top_tokens(self) -> list[list[str]]:
        """[row][pos] display string of each cell's top token."""
        return [[self.words[int(i)] for i in row] for row in self.top_ids[:, :, 0]]

    def first_top(self, column: int) -> int | None:
        """First row whose top token at ``column`` is the final choice (None: never before the last)."""
        hits = np.flatnonzero(self.final_rank[:, column] == 0)
        return int(hits[0]) if hits.size else None

    def stays_top(self, column: int) -> int:
        """First row from which the final choice is the top token at ``column`` up to the last row."""
        row = self.n_rows - 1
        while row > 0 and self.final_rank[row - 1, column] == 0:
            row -= 1
        return row


def lens_rows(x: torch.Tensor, norm: torch.nn.Module, unembed: torch.nn.Module, final: torch.Tensor | None,
              k: int = TOP_K, named_vocab: int | None = None) -> tuple[torch.Tensor, ...]:
    """(top ids [n, k], top probs [n, k], final ids [n], final rank [n], final prob [n], entropy [n])
    of residual rows x [n, d_model] read through ``norm`` and ``unembed``; ``final`` [n] are the ids
    whose rank and probability are wanted (None: each row's own top token). ``named_vocab``: only the
    first ids count (those the tokenizer names, where the embedding is padded past it)."""
    n = x.shape[0]
    vocab = min(unembed.weight.shape[0], named_vocab or unembed.weight.shape[0])
    k = min(k, vocab)
    out_ids = torch.empty(n, k, dtype=torch.int64)
    out_probs = torch.empty(n, k)
    final_ids = torch.empty(n, dtype=torch.int64)
    rank, prob, ent = torch.empty(n, dtype=torch.int64), torch.empty(n), torch.empty(n)
    block = max(SUB_ROWS, CHUNK_FLOATS // vocab)
    for s0 in range(0, n, block):
        logits = unembed(norm(x[s0 : s0 + block]))  # [rows, vocab], float32 as the model computes them
        logits = logits[:, :vocab]  # the ids the tokenizer names
        for s1 in range(0, logits.shape[0], SUB_ROWS):
            z = logits[s1 : s1 + SUB_ROWS]
            rows = slice(s0 + s1, s0 + s1 + z.shape[0])
            top = z.topk(k, dim=-1)
            f = top.indices[:, 0] if final is None else final[rows]
            zf = z.gather(1, f[:, None])  # [rows, 1]
            shifted = z - top.values[:, :1]  # max 0: exp never overflows
            e = torch.exp(shifted)
            total = e.sum(-1)  # [rows]
            # As torch.softmax divides: exp(x - max - log total) loses up to 1e-5 near p = 1.
            out_ids[rows] = top.indices
            out_probs[rows] = torch.exp(top.values - top.values[:, :1]) / total[:, None]
            final_ids[rows] = f
            rank[rows] = torch.count_nonzero(z > zf, dim=-1)
            prob[rows] = torch.exp(zf[:, 0] - top.values[:, 0]) / total
            # H = -sum p log p with p = e / total and log p = shifted - log total
            ent[rows] = torch.log(total) - torch.linalg.vecdot(e, shifted) / total
    return out_ids, out_probs, final_ids, rank, prob, ent


def _residuals(bundle: Bundle, source_ids: tuple[int, ...], decoder_ids: tuple[int, ...]) -> torch.Tensor:
    """[row, pos, d_model]: the decoder's residual stream of one input, embeddings then every block."""
    model = bundle.model
    n_layers = model.cfg.n_dec_layers
    names = ["decoder.embed.hook_resid_in"] + [f"decoder.blocks.{i}.hook_resid_post" for i in range(n_layers)]
    wanted = set(names)
    tgt = torch.tensor([list(decoder_ids)])
    inputs = [tgt] if model.cfg.decoder_only else [torch.tensor([list(source_ids)]), tgt]
    with model.lock:
        # Only the last row's logits: the lens computes every row's itself, a block at a time.
        _, cache = model.run_with_cache(*inputs, names_filter=wanted.__contains__,
                                        logits_from=len(decoder_ids) - 1)
    return torch.stack([cache[name][0] for name in names])


#: Positions projected at most (the last ones): each costs layers x vocabulary logits (SmolLM2: 31 x
#: 49,152), about 35 ms a position on one thread; the model still reads the whole input.
MAX_POSITIONS = 128


def lens_input(result: Analysis, decoder_only: bool) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(source ids, decoder ids, prompt length) of an analysis: the decoder reads its prefix (a language
    model's prompt) and the output chosen (each step's token but the last, which follows the output);
    a decoder-only model has no source."""
    prefix = list(result.prepared.prefix)
    output = [s.token_id for s in result.steps[:-1]]
    source = () if decoder_only else tuple(result.prepared.source_ids)
    return source, tuple(prefix + output), len(prefix)


def window_start(n_positions: int, limit: int = MAX_POSITIONS) -> int:
    """First position projected: the last ``limit`` positions are."""
    return max(0, n_positions - limit)


@entry
@torch.no_grad()
def logit_lens(bundle: Bundle, source_ids: tuple[int, ...], decoder_ids: tuple[int, ...], prompt_len: int,
               start: int = 0, stop: int | None = None, top_k: int = TOP_K) -> LogitLens:
    """The lens of decoder positions ``start:stop`` of one input (see the module doc): the decoder reads
    ``decoder_ids`` (a decoder-only model's prompt + output; an encoder-decoder's prefix + output, with
    ``source_ids`` in the encoder). The whole input is run; only the positions asked for are projected.

    Raises ValueError for an encoder-only model, an empty decoder input or an empty span."""
    model = bundle.model
    cfg = model.cfg
    if cfg.encoder_only or model.unembed is None:
        raise ValueError("an encoder-only model has no output embedding for next tokens: no logit lens")
    if not decoder_ids:
        raise ValueError("the decoder reads no token")
    if not cfg.decoder_only and not source_ids:
        raise ValueError("an encoder-decoder model needs source ids")
    stop = len(decoder_ids) if stop is None else min(stop, len(decoder_ids))
    start = max(0, start)
    if start >= stop:
        raise ValueError(f"empty span of positions {start}:{stop}")
    resid = _residuals(bundle, source_ids, decoder_ids)[:, start:stop]  # [row, pos, d_model]
    n_rows, n_pos, _ = resid.shape
    norm, unembed = model.decoder.final_norm, model.unembed
    # The last row first: its top token is the final choice every other row is measured against.
    named = model.named_vocab
    last = lens_rows(resid[-1], norm, unembed, None, top_k, named)
    final = last[2]
    rest = lens_rows(resid[:-1].reshape(-1, resid.shape[-1]), norm, unembed, final.repeat(n_rows - 1),
                     top_k, named)
    parts = [torch.cat([early.reshape(n_rows - 1, n_pos, *early.shape[1:]), top[None]])
             for early, top in zip(rest, last, strict=True)]
    top_ids, top_probs, _, rank, prob, ent = parts
    ids = top_ids.to(torch.int32).numpy()
    final_np = final.to(torch.int32).numpy()
    vocab_ids = sorted({int(i) for i in np.unique(ids)} | {int(i) for i in final_np})
    out_tok = bundle.target_tokenizer  # the decoder's rows and the logits' ids are the target side's
    words = dict(zip(vocab_ids, (out_tok.id_to_token(i) for i in vocab_ids), strict=True))
    return LogitLens(
        stack="decoder",
        tokens=out_tok.tokens(list(decoder_ids))[start:stop],
        positions=np.arange(start, stop, dtype=np.int32),
        prompt_len=int(prompt_len),
        top_ids=ids,
        top_probs=top_probs.numpy().astype(np.float32),
        final_ids=final_np,
        final_rank=rank.to(torch.int32).numpy(),
        final_prob=prob.numpy().astype(np.float32),
        entropy=ent.numpy().astype(np.float32),
        words=words,
    )
