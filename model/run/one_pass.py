"""One pass for a language model's analysis: the recorded, traced pass over the prompt is the prefill the
continuation is decoded from, and each decoding step appends its own recorded rows.

Before, :func:`~model.run.analysis.analyze` decoded first (the decoders prefill the prompt into a key/value
cache), then ran prompt + continuation again from scratch under the hooks. Here the decoders (greedy, beam,
sampling) call :class:`RecordedSteps` for each decoder call (:data:`~model.decoding.beam.StepFn`):

* the first call (position 0, the prompt) is the hooked pass itself, inside the shape trace and the
  attention recording, and leaves every block's keys and values in the decoders' cache;
* every later call (one new token per row, ``[B, 1, ...]``) records only what it adds: each layer's new
  query rows, the keys and value norms of its new positions (:func:`~model.network.recorded.record_attention`
  with ``new_keys_only``), and the logits of its last position.

:meth:`RecordedSteps.join` then lays the rows of the output that was kept end to end: greedy decoding and
sampling have one row per call; beam search reorders its rows at every call, so the kept hypothesis's row
at call ``t`` is the one whose ids were the hypothesis's first ``t`` (the beam trace lists every row's ids).
The result equals a full pass over prompt + output (tests/model/run/test_one_pass.py), when the cached keys
and values of earlier positions are what a full pass computes: :func:`stale_reason` names the cases where
they are not, which keep the two passes. One case shows only while decoding: a longrope model (Phi-3) whose
output passes its switch length computes the whole sequence again with the long factors at that step
(:attr:`RecordedSteps.recomputed`); the output is then read again whole, as the two passes do.

A translation (encoder-decoder) model reads the same way (:meth:`RecordedSteps.encode`): the decoders' encoder
call is the recorded, traced encoder pass, and the first decoder call (its prefix: the start token, a language
code) continues that trace and record. Each step's cross-attention records its query rows only: its keys are
the encoder output's, recorded once, and the decoder cache keeps them (and their values) from the first step
(model/network/attention.py), so the steps never compute them again
(tests/model/run/test_one_pass_translation.py).

What the one pass cannot give is a hook tensor of every position (the continuation's rows come one per
call): :func:`fits` holds only when the analysis keeps no hook tensor, and a reader who needs the shape
trace of the whole sequence asks for two passes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from ..network import progress
from ..network.attention import MultiHeadAttention
from ..network.recorded import AttentionInputs, EditedBias, record_attention
from ..network.trace import ShapeTrace, TraceStep, record_sizes, trace_shapes
from ..network.transformer import Transformer

#: Share of the progress bar the prompt pass fills (the steps fill the rest).
PROMPT_SHARE = 0.7
#: An encoder-decoder model's: the encoder's pass and the decoder's first call, whose prefix is a token or two
#: (the steps, one per output token, are most of the work).
SOURCE_SHARE = 0.2


def fits(model: Transformer, keep: Callable[[str], bool] | None) -> bool:
    """Whether an analysis with ``keep`` can be one pass: a model with a decoder (a language model, or an
    encoder-decoder one, whose encoder pass is recorded first), and no hook tensor kept."""
    return bool(model.decoder is not None and keep is not None
                and not any(keep(n) for n in model.hook_points))


def stale_reason(model: Transformer, ids: torch.Tensor) -> str:
    """Why, under the edits now in force, decoding from the prompt pass's cache would not give a full
    pass's numbers ("" when it does): the key for the note the analysis then carries."""
    decoder = model.decoder
    if decoder is None or decoder.recompute:
        return "recompute"  # an edit lets a position depend on later ones (model/run/interventions.py)
    for block in decoder.blocks:
        attn = block.self_attn
        if isinstance(attn, MultiHeadAttention) and attn._causal_mode() == "reversed causal":
            return "reversed_causal"  # the full pass's earlier rows see later tokens; decoding's did not
    if any(p.fns for p in model.hook_points.values()):
        return "hook_function"  # an experiment's own function may read the whole sequence
    if model._target_padding(ids) is not None:
        return "padding"  # the full pass masks the prompt's padding; decoding steps do not
    return ""


class RecordedSteps:
    """The decoder calls of one decoding, recorded (see the module docstring)."""

    def __init__(self, model: Transformer, keep: Callable[[str], bool], logits_from: int, max_new: int):
        self.model, self.keep, self.logits_from, self.max_new = model, keep, logits_from, max(1, max_new)
        self.decodes = max_new > 0  # with no new token (new=0), the prompt pass fills no cache
        self.share = PROMPT_SHARE if model.cfg.decoder_only else SOURCE_SHARE  # of the bar, before the steps
        self.trace: ShapeTrace | None = None
        # an encoder-decoder model's encoder pass (:meth:`encode`): its trace and record, which the prompt's
        # pass continues
        self.source: tuple[ShapeTrace, dict[str, AttentionInputs]] | None = None
        self.prompt: dict[str, AttentionInputs] = {}
        self.prompt_logits: torch.Tensor | None = None  # [prompt rows from logits_from, vocab]
        self.calls: list[tuple[dict[str, AttentionInputs], torch.Tensor]] = []  # each step: rows, logits
        # A step that computed the whole sequence again (longrope's switch: the decoder dropped its cache,
        # model/network/transformer.py): the prompt pass's rows are no longer those of the sequence.
        self.recomputed = False

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """An encoder-decoder model's encoder pass (:data:`~model.decoding.beam.EncodeFn`), traced and
        recorded as the whole pass's encoder part: the decoder reads its output at every step."""
        model = self.model
        with (trace_shapes() as trace, record_attention() as rec,
              progress.stage(0.0, 0.8 * self.share, "read"), model.lock, torch.no_grad()):
            model.record_sizes(src.shape[0], L_src=src.shape[1])  # as a whole pass first names them
            out = model.encode(src)
        self.source = (trace, rec)
        return out

    def __call__(self, step_in: torch.Tensor, memory: torch.Tensor | None, src_pad: torch.Tensor | None,
                 caches: list[dict], position: int) -> torch.Tensor:
        model = self.model
        if position == 0:  # the prompt: the hooked, traced pass, which fills the caches
            start = 0.0 if self.source is None else 0.8 * self.share
            with (trace_shapes() as trace, record_attention() as rec,
                  progress.stage(start, self.share, "read")):
                if self.source is None:  # a language model: its prompt is the whole input
                    logits, _ = model.run_with_cache(step_in, names_filter=self.keep,
                                                     logits_from=self.logits_from,
                                                     caches=caches if self.decodes else None)
                else:  # the decoder's prefix, reading the encoder output (cross-attention's keys kept too)
                    with model.lock, torch.no_grad():
                        record_sizes(L_tgt=step_in.shape[1])
                        logits = model.decode(step_in, memory, src_pad, self.logits_from,
                                              caches if self.decodes else None)
            # logits: [1, prompt rows from logits_from, vocab]
            self.trace, self.prompt, self.prompt_logits = trace, rec, logits[0]
            if self.source is not None:  # the whole pass's trace and record: the encoder's, then these
                source_trace, source_rec = self.source
                self.trace = ShapeTrace(source_trace.steps + trace.steps,
                                        {**source_trace.sizes, **trace.sizes})
                self.prompt = {**source_rec, **rec}
            return logits[:, -1]  # [1, vocab]
        # the bar: this step's share of the rest after the prompt pass (its blocks fill the share)
        share = lambda t: self.share + (1.0 - self.share) * min(1.0, t / self.max_new)  # noqa: E731
        with (record_attention(new_keys_only=True) as rec,
              progress.stage(share(len(self.calls)), share(len(self.calls) + 1), "decode")):
            hidden = model.decoder(step_in, memory, None, src_pad, caches, position)  # [row, 1, d_model]
            last = model.unembed(hidden[:, -1])  # [row, vocab]
        if any(r.q.shape[2] != step_in.shape[1] for r in rec.values()):  # rows of every position: redone
            self.recomputed = True
        self.calls.append((rec, last))
        return last

    def join(self, rows: list[int]) -> tuple[dict[str, AttentionInputs], torch.Tensor]:
        """(attention inputs of prompt + output, logits [rows from logits_from, vocab]) along the kept
        output: ``rows[t]`` is its row in step ``t`` (the call after the prompt's t-th)."""
        if len(rows) > len(self.calls):
            raise ValueError(f"{len(rows)} output tokens but {len(self.calls)} recorded steps")
        if not rows:  # the prompt alone: its record as it is (joining would copy every array)
            return self.prompt, self.prompt_logits
        steps = [(self.calls[t][0], r) for t, r in enumerate(rows)]
        joined = {}
        for path, first in self.prompt.items():
            if path not in self.calls[0][0]:  # the encoder's: read once, before the decoder's first call
                joined[path] = first
                continue
            # a bias a hook function edited is kept whole per pass; no step is joined under one (stale_reason)
            assert not isinstance(first.relative, EditedBias), "an edited position bias is never joined"
            q = [first.q] + [rec[path].q[r : r + 1] for rec, r in steps]  # [1, head, rows, d_head] each
            k = [first.k] + [rec[path].k[r : r + 1] for rec, r in steps]  # [1, kv_head, new keys, d_head]
            norms = None
            if first.value_norms is not None:
                added = [rec[path].value_norms[r : r + 1] for rec, r in steps]  # [1, head, 1] each
                norms = np.concatenate([first.value_norms, *added], axis=2)  # [1, head, key_pos]
            joined[path] = dataclasses.replace(first, q=np.concatenate(q, axis=2),
                                               k=np.concatenate(k, axis=2), value_norms=norms)
        logits = torch.cat([self.prompt_logits] + [self.calls[t][1][r : r + 1] for t, r in enumerate(rows)])
        return joined, logits

    def trace_dicts(self, n_steps: int) -> list[dict]:
        """The prompt pass's trace, then one step saying how the continuation was written."""
        trace = self.trace
        if n_steps:
            op = (f"continuation: {n_steps} new tokens written one at a time from the key/value cache the "
                  "prompt pass filled (each step [B, 1, ...])")
            vocab = self.model.cfg.output_vocab_size
            trace.steps.append(TraceStep("decoding", op, None, [(1, 1)], (1, 1, vocab),
                                         [("B", "1")], ("B", "1", "V")))
        return trace.to_dicts()
