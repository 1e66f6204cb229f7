"""One request, end to end: text -> tokens -> decoded output -> one hooked, traced pass -> numpy.

The app, `python -m model inspect` and exports (:mod:`model.export.archive`) all use `analyze`, so they show
the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..core.messages import Message
from ..core.protocols import HookedModel, Task, Tokenizer
from ..data.tasks import InputError, Prepared
from ..decoding.beam import EncodeFn, StepFn, beam_search
from ..decoding.decoders import greedy_decode, sample_decode
from ..decoding.results import BeamResult, SampleResult
from ..decoding.strategy import DEFAULT_NEW_TOKENS, GREEDY, Strategy
from ..network import progress
from ..network.attention_stack import AttentionStack
from ..network.kinds import AttentionKind, get_kind, hook_name, layer_counts
from ..network.recorded import AttentionInputs, record_attention
from ..network.trace import parameter_counts, trace_shapes
from ..store.budget import with_budget_reason
from ..store.bundle import Bundle
from . import one_pass
from .interventions import Edit, HookFunction, intervene


@dataclass
class Step:
    """Decoding step t: the decoder at position t chose `token` after seeing the target prefix."""

    position: int
    token: str
    token_id: int
    top_tokens: list[str]
    top_ids: list[int]
    top_probs: list[float]
    prob: float = float("nan")  # the model's probability of `token` here (also when outside the top-k)
    # Mean over the whole vocabulary of -log p: the uniform part of a label-smoothed loss.
    mean_nll: float = float("nan")


@dataclass
class Analysis:
    model: str
    prepared: Prepared
    source_tokens: list[str]  # encoder positions (keys of cross-attention)
    target_tokens: list[str]  # decoder positions (queries of decoder and cross attention)
    output_text: str  # the model's output under `strategy`, or the given target when teacher-forced
    teacher_forced: bool
    stopped: bool  # the output ended with <eos> within max_len
    steps: list[Step]
    activations: dict[str, np.ndarray]  # hook name -> float32 array, batch axis kept (size 1)
    trace: list[dict]
    trace_sizes: dict[str, int]
    notes: list[Message] = field(default_factory=list)  # str(note) is the English text
    # Attention kind -> layers, from the model's config (kinds.layer_counts); plain data, so it
    # survives the app dropping activations before caching.
    layer_counts: dict[str, int] = field(default_factory=dict)
    # True at tokens the model adds (<bos>, <eos>, <pad>, language tags), from the ids: a user
    # who types "<eos>" gets text tokens, and <unk> (a character the user typed) is not special.
    source_special: list[bool] = field(default_factory=list)
    target_special: list[bool] = field(default_factory=list)
    # Labels of the interventions (model/run/interventions.py) the whole request ran under; () = intact.
    edits: tuple[str, ...] = ()
    # Strategy.param of the decoding that wrote the output ("greedy", "beam4-lp1", ...); when
    # teacher-forced, the strategy asked for (the output is the given target all the same).
    strategy: str = "greedy"
    # What the search saw at each step: beam search's hypotheses or sampling's distributions
    # (None for greedy decoding and teacher forcing; the steps above hold the top-k then).
    search: BeamResult | SampleResult | None = None
    # [d_model] float32: an encoder-only model's sentence embedding (mean of the encoder output over
    # every token, [CLS]/[SEP] included, then L2-normalised if the model's pooling says so, as
    # sentence-transformers does); None for encoder-decoder models.
    embedding: np.ndarray | None = None
    # (kind, "pattern"/"scores") -> [layer, head, query, key], read-only, when share_stacked() ran
    # (the app's shared cache): attention() then returns it without copying the layers again.
    stacked: dict = field(default_factory=dict, repr=False, compare=False)
    # Attention module path ("decoder.blocks.3.self_attn") -> what its softmax saw: every head's scores
    # and pattern are computed from these when asked (width x L kept, not heads x L²).
    attention_inputs: dict[str, AttentionInputs] = field(default_factory=dict, repr=False)

    def tokens_for(self, kind: str | AttentionKind) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of an attention kind."""
        k = get_kind(kind)
        return self._side_tokens(k.queries), self._side_tokens(k.keys)

    def _side_tokens(self, side: str) -> list[str]:
        return self.source_tokens if side == "source" else self.target_tokens

    def n_layers(self, kind: str | AttentionKind) -> int:
        return self.layer_counts[get_kind(kind).name]

    def attention(self, kind: str | AttentionKind, what: str = "pattern") -> np.ndarray | AttentionStack:
        """[layer, head, query_pos, key_pos] of one attention kind: "pattern", "scores" (-inf where
        masked) or "mask" (True where masked).

        From the recorded hook tensors when the analysis kept them (a new array, or after
        :meth:`share_stacked` the shared read-only one); otherwise an :class:`AttentionStack` that
        computes what is indexed from the recorded attention inputs (``stack[layer, head]``: one head)."""
        k = get_kind(kind)
        hooks = [hook_name(k, i, "scores" if what == "mask" else what) for i in range(self.n_layers(k))]
        if hooks and all(h in self.activations for h in hooks):
            if what == "mask":
                return ~np.isfinite(self.attention(k, "scores"))
            if (k.name, what) in self.stacked:
                return self.stacked[(k.name, what)]
            return np.stack([self.activations[h][0] for h in hooks])
        return AttentionStack(self.layer_inputs(k), what)

    def layer_inputs(self, kind: str | AttentionKind) -> list[AttentionInputs]:
        """What each layer's softmax of one kind saw, layer by layer (KeyError when not recorded)."""
        k = get_kind(kind)
        paths = [hook_name(k, i, "pattern").rsplit(".", 1)[0] for i in range(self.n_layers(k))]
        missing = [p for p in paths if p not in self.attention_inputs]
        if missing:
            raise KeyError(f"the analysis recorded no attention inputs for {missing[0]}")
        return [self.attention_inputs[p] for p in paths]

    def head_attention(self, kind: str | AttentionKind, layer: int,
                       head: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, pattern) [query_pos, key_pos] of one head, computed for it alone."""
        scores = self.attention(kind, "scores")
        if isinstance(scores, AttentionStack):
            s, p = scores.layers[layer].compute(head)
            return s[0].numpy(), p[0].numpy()
        return scores[layer, head], self.attention(kind)[layer, head]

    def masks_anything(self, kind: str | AttentionKind) -> bool:
        """Whether any head of ``kind`` has a masked cell (the causal future, padding)."""
        try:
            return any(rec.masks_anything() for rec in self.layer_inputs(kind))
        except KeyError:
            return bool(np.asarray(self.attention(kind, "mask")).any())

    def share_stacked(self, whats: tuple[str, ...] = ("pattern", "scores")) -> Analysis:
        """Stack each attention kind's layers once, read-only, and keep the per-layer activations as
        views of the stack (no extra memory): for an analysis many readers share, where copying
        72 heads at 512 tokens (75 MB) on every :meth:`attention` call would dominate a page."""
        for name, n in self.layer_counts.items():
            for what in whats:
                hooks = [hook_name(name, i, what) for i in range(n)]
                if not n or not all(h in self.activations for h in hooks):
                    continue
                whole = self.attention(name, what)  # [layer, head, q, k]
                whole.setflags(write=False)
                self.stacked[(get_kind(name).name, what)] = whole
                for i, h in enumerate(hooks):
                    self.activations[h] = whole[i][None]  # [1, head, q, k], a view
        return self

    def kind_attention(self, kind: str | AttentionKind) -> KindAttention:
        """Pattern, scores, mask and tokens of one attention kind, in one object."""
        k = get_kind(kind)
        scores = self.attention(k, "scores")
        queries, keys = self.tokens_for(k)
        special = {"source": self.source_special, "target": self.target_special}
        mask = self.attention(k, "mask")
        return KindAttention(k, self.attention(k, "pattern"), scores, mask, queries, keys,
                             np.array(special[k.queries], dtype=bool), np.array(special[k.keys], dtype=bool))


@dataclass(frozen=True)
class KindAttention:
    """Everything a page needs about one attention kind of one analysis."""

    kind: AttentionKind
    # Arrays, or AttentionStacks computing what is indexed (Analysis.attention):
    pattern: np.ndarray | AttentionStack  # [layer, head, query_pos, key_pos], softmax over key_pos
    scores: np.ndarray | AttentionStack  # same shape, scaled pre-softmax scores, -inf where masked
    mask: np.ndarray | AttentionStack  # same shape, bool, True where masked (= ~isfinite(scores))
    query_tokens: list[str]  # rows
    key_tokens: list[str]  # columns
    query_special: np.ndarray  # [query_pos] bool, True at special tokens (from the tokenizer's ids)
    key_special: np.ndarray  # [key_pos] bool


#: Prompts of up to this many tokens keep the logits of every position (see analyze).
FULL_LOGITS_UP_TO = 64


def attention_only(hook: str) -> bool:
    """``keep`` for :func:`analyze` when a page draws attention alone: no hook tensor is kept, since every
    head's scores and pattern are computed from the recorded attention inputs (q/k/v, MLP and residual
    tensors, or the L² weights of every head, would grow the analysis for nothing)."""
    return False


def analyze(
    bundle: Bundle,
    text: str,
    direction: str | None = None,
    target: str | None = None,
    top_k: int = 5,
    edits: tuple[Edit, ...] = (),
    strategy: Strategy | None = None,
    keep: Callable[[str], bool] | None = None,
    max_new: int | None = None,
    max_input: int | None = None,
    whole_trace: bool = False,
) -> Analysis:
    """Run the model on text; raises InputError (with a message for the user) on unusable input.

    edits: interventions (model/run/interventions.py) applied to decoding and the hooked pass alike;
    they are hashable, so (text, ..., edits, strategy) keys a cache of analyses.
    strategy: how the output is decoded (greedy when None); the hooked pass then reads the chosen
    output, so every attention shown is that of the chosen path. Ignored when teacher-forced.
    keep: which hooks' tensors the analysis records (by hook name; every hook when None), e.g.
    :func:`attention_only` for a page that draws attention alone. A hook function (an edit) on raw scores,
    scores or patterns widens it to those layers' scores and patterns (:func:`_keep_edited_squares`).
    max_new: most output tokens decoded (None: up to max_len; a decoder-only model, which rarely
    says end-of-text soon, writes at most DEFAULT_NEW_TOKENS then).
    max_input: most tokens of the input read (None: the model's max_len; a larger value changes
    nothing), for a page that runs several models at once. The output still has the room up to max_len.
    whole_trace: the shape trace is that of one pass over the whole sequence. Otherwise a language or
    translation model whose analysis keeps no hook tensor is read in one pass (model/run/one_pass.py): the
    recorded prompt pass (a translation's: the encoder's, then the decoder's prefix) is the prefill of the
    decoding, each step adds its rows, and the trace is the prompt pass's, then one step saying the
    continuation was written a token at a time. Edits under which the cached prefix is stale keep the two
    passes (decode, then read prompt + output again), with a note.
    """
    strategy = strategy or GREEDY
    search: BeamResult | SampleResult | None = None
    model: HookedModel = bundle.model
    task: Task = bundle.task
    cfg = model.cfg
    # what the hooked pass keeps (the one pass never runs under a hook function: one_pass.stale_reason)
    kept = _keep_edited_squares(cfg, keep, edits)
    if max_new is None and cfg.decoder_only:
        max_new = DEFAULT_NEW_TOKENS
    read_len = cfg.max_len if max_input is None else max(1, min(cfg.max_len, max_input))
    prepared = task.prepare(text, read_len, direction)
    notes = list(prepared.notes)
    if getattr(cfg, "encoder_only", False):
        if target is not None:
            raise InputError(Message("no_decoder", {}, "error"))
        return _analyze_encoder_only(bundle, prepared, with_budget_reason(bundle, notes), edits, kept)
    with model.lock, intervene(model, *edits):
        decoded = None  # (output, search) of a one pass that must be read again whole
        if target is None and one_pass.fits(model, keep) and not whole_trace:
            why = one_pass.stale_reason(model, torch.tensor([prepared.prefix]))
            if not why:
                done = _analyze_one_pass(bundle, prepared, strategy, keep, max_new, notes, edits, top_k)
                if isinstance(done, Analysis):
                    return done
                decoded = done  # the output passed longrope's switch (its note says so)
            else:
                notes.append(Message("two_passes", {}, "info"))
        if target is not None:
            if not target.strip():
                raise InputError(Message("empty_target", {}, "error"))
            generated, target_notes = task.target_ids(target, prepared.direction)
            notes += target_notes
        elif decoded is not None:
            generated, search = decoded
        else:
            with progress.stage(0.0, 0.5, "decode"):
                generated, search = _decode_output(bundle, prepared, strategy, max_new)
        # The decoder reads prefix + output; the last row predicts what follows (eos when stopped).
        decoder_in, generated, stopped = _fit_output(prepared.prefix, generated, cfg.max_len, target is None,
                                                     max_new, notes)
        # A decoder-only model reads prompt + output as one sequence: its prompt is its prefix.
        inputs = [torch.tensor([decoder_in])] if cfg.decoder_only else [
            torch.tensor([prepared.source_ids]), torch.tensor([decoder_in])]
        first_row = _first_logits_row(prepared.prefix)
        with trace_shapes() as trace, record_attention() as recorded, progress.stage(0.5, 1.0, "read"):
            logits, cache = model.run_with_cache(*inputs, names_filter=kept, logits_from=first_row)
    return _result(bundle, prepared, decoder_in, generated, stopped, target is not None,
                   model.named_logits(logits[0]), first_row, cache.to_numpy(), recorded, trace.to_dicts(),
                   dict(trace.sizes), notes, edits, strategy, search, top_k)


#: Attention hook points past the queries and keys: what a function there does, no recorded input gives back.
_SQUARES = ("raw_scores", "scores", "pattern")


def _keep_edited_squares(cfg, keep: Callable[[str], bool] | None,
                         edits: tuple[Edit, ...]) -> Callable[[str], bool] | None:
    """``keep``, widened where a hook function edits an attention's raw scores, scores or pattern: every
    layer of that kind keeps its scores and pattern whole (heads x L², only under such a function), which
    :meth:`Analysis.attention` then reads instead of computing them from the recorded queries and keys.
    (A function on q, k or T5's position bias needs none of this: those are recorded as edited.)"""
    hooks = {e.hook for e in edits if isinstance(e, HookFunction)}
    if keep is None or not hooks:
        return keep
    wanted = set()
    for kind, n in layer_counts(cfg).items():
        if any(hook_name(kind, i, w) in hooks for i in range(n) for w in _SQUARES):
            wanted |= {hook_name(kind, i, w) for i in range(n) for w in ("scores", "pattern")}
    if not wanted:
        return keep
    return lambda name: name in wanted or keep(name)


def _first_logits_row(prefix: list[int]) -> int:
    """The first decoder row whose logits an analysis keeps. A long prompt's logits are kept only from the
    row that predicts the first output token on: 2,048 rows over SmolLM2's 49,152 words would be 403 MB,
    and the steps read none of them. A short one keeps every row, so its shape trace ends in
    [B, L_tgt, V] as the model computes."""
    return len(prefix) - 1 if len(prefix) > FULL_LOGITS_UP_TO else 0


def _analyze_one_pass(bundle: Bundle, prepared: Prepared, strategy: Strategy, keep: Callable[[str], bool],
                      max_new: int | None, notes: list[Message], edits: tuple[Edit, ...],
                      top_k: int) -> Analysis | tuple[list[int], BeamResult | SampleResult | None]:
    """A language or translation model's analysis in one pass (model/run/one_pass.py): the recorded, traced
    pass over the prompt (a translation's: the encoder's, then the decoder's prefix) is the prefill the output
    is decoded from, each step adding its rows. Equal to the two passes.
    When a step computed the whole sequence again (a longrope model's output passed its switch), the
    decoded (output, search) instead, to be read again whole."""
    model, cfg = bundle.model, bundle.model.cfg
    first_row = _first_logits_row(prepared.prefix)
    steps = one_pass.RecordedSteps(model, keep, first_row, cfg.max_len if max_new is None else max_new)
    encode = None if cfg.decoder_only else steps.encode  # an encoder-decoder model's source pass, recorded
    generated, search = _decode_output(bundle, prepared, strategy, max_new, steps, encode)
    if steps.recomputed:
        return generated, search
    if model._target_padding(torch.tensor([prepared.prefix + generated])) is not None:
        return generated, search  # the whole pass masks an output's padding keys, which the steps saw
    with progress.stage(1.0, 1.0, "decode"):  # done (an output that ended early fills the bar here)
        pass
    decoder_in, generated, stopped = _fit_output(prepared.prefix, generated, cfg.max_len, True, max_new,
                                                 notes)
    n = len(generated)
    rows = [0] * n  # greedy decoding and sampling: one row per step
    if isinstance(search, BeamResult):  # the kept hypothesis's row at each step, from the beam's trace
        rows = [step.beams.index(generated[: t + 1]) for t, step in enumerate(search.steps[1 : n + 1])]
    recorded, logits = steps.join(rows)
    return _result(bundle, prepared, decoder_in, generated, stopped, False, model.named_logits(logits),
                   first_row, {}, recorded, steps.trace_dicts(n), dict(steps.trace.sizes), notes, edits,
                   strategy, search, top_k)


def _result(bundle: Bundle, prepared: Prepared, decoder_in: list[int], generated: list[int], stopped: bool,
            teacher_forced: bool, logits: torch.Tensor, first_row: int, activations: dict, recorded: dict,
            trace: list[dict], trace_sizes: dict, notes: list[Message], edits: tuple[Edit, ...],
            strategy: Strategy, search: BeamResult | SampleResult | None, top_k: int) -> Analysis:
    # The decoder's ids are named by the target side's tokenizer (its own vocabulary in a separate-vocabulary
    # Marian; the same tokenizer otherwise).
    tok, out_tok, cfg = bundle.tokenizer, bundle.target_tokenizer, bundle.model.cfg
    source_tokens = tok.tokens(prepared.source_ids)
    source_special = [tok.is_special(i) for i in prepared.source_ids]
    # a language model's prompt alone (new=0) is both sides: its labels are read once
    same = out_tok is tok and list(decoder_in) == list(prepared.source_ids)
    return Analysis(
        model=bundle.name,
        prepared=prepared,
        source_tokens=source_tokens,
        target_tokens=list(source_tokens) if same else out_tok.tokens(decoder_in),
        output_text=out_tok.decode(generated),
        teacher_forced=teacher_forced,
        stopped=stopped,
        # the steps pick and list only ids the tokenizer names (the logits above keep every row)
        steps=_decoding_steps(logits, first_row, len(prepared.prefix), decoder_in, stopped, out_tok, top_k),
        activations=activations,
        attention_inputs=recorded,
        trace=trace,
        trace_sizes=trace_sizes,
        notes=with_budget_reason(bundle, notes + _rope_factors_note(cfg, len(prepared.prefix),
                                                                    len(decoder_in), teacher_forced)),
        layer_counts=layer_counts(cfg),
        source_special=source_special,
        target_special=list(source_special) if same else [out_tok.is_special(i) for i in decoder_in],
        edits=tuple(e.label for e in edits),
        strategy=strategy.param,
        search=search,
    )


def _rope_factors_note(cfg, prompt_len: int, length: int, teacher_forced: bool) -> list[Message]:
    """Which longrope factors (Phi-3) the numbers of a decoder sequence of ``length`` positions come from
    ([] for any other model): short up to the switch length, long past it for every position; and when a
    decoded output took the sequence past it, that its first tokens were chosen with the short ones."""
    if not getattr(cfg, "longrope", False):
        return []
    params = {"n": length, "switch": cfg.rope_switch_len}
    if length <= cfg.rope_switch_len:
        return [Message("rope_factors_short", params, "info")]
    crossed = not teacher_forced and prompt_len <= cfg.rope_switch_len
    return [Message("rope_factors_switched" if crossed else "rope_factors_long", params, "info")]


def _decode_output(bundle: Bundle, prepared: Prepared, strategy: Strategy, max_new: int | None,
                   step: StepFn | None = None,
                   encode: EncodeFn | None = None) -> tuple[list[int], BeamResult | SampleResult | None]:
    """(the generated ids, what the search saw: None for greedy decoding) of one prepared input.
    ``step``: the decoder call of every step (model/run/one_pass.py records them), plain when None;
    ``encode``: the encoder's pass (recorded there too), model.encode when None."""
    eos_id = bundle.target_tokenizer.eos_id
    # The decoders step the decoder blocks themselves, so they take the concrete Transformer.
    args = (bundle.model, [prepared.source_ids], [prepared.prefix], eos_id)
    if strategy.kind == "beam":
        search = beam_search(*args, strategy.beam, strategy.length_penalty, max_new, trace=True, step=step,
                             encode=encode)[0]
        return search.best.ids, search
    if strategy.kind == "sample":
        sampled = sample_decode(bundle.model, prepared.source_ids, prepared.prefix, eos_id, strategy, max_new,
                                step=step, encode=encode)
        return sampled.ids, sampled
    return greedy_decode(*args, max_new, step=step, encode=encode)[0], None


def _fit_output(prefix: list[int], generated: list[int], max_len: int, decoded: bool, max_new: int | None,
                notes: list[Message]) -> tuple[list[int], list[int], bool]:
    """(decoder input: prefix + output cut to max_len, the output as cut, whether it ended by itself).

    ``decoded``: the output was decoded (not a given target) with at most ``max_new`` new tokens
    (None: no bound). ``notes`` gets target_cut when prefix + output is longer than max_len; for a
    decoded output that did not end by itself, output_max_new (it reached max_new) or output_max_length."""
    full = prefix + generated
    reached_bound = decoded and max_new is not None and len(generated) >= max_new
    stopped = len(full) < max_len and not reached_bound
    if len(full) > max_len:
        notes.append(Message("target_cut", {"max_len": max_len}, "warning"))
        full = full[:max_len]
        generated = full[len(prefix) :]
        stopped = False
    if decoded and not stopped:
        if len(full) < max_len:
            notes.append(Message("output_max_new", {"max_new": max_new}, "info"))
        else:
            notes.append(Message("output_max_length", {"max_len": max_len}, "warning"))
    return full, generated, stopped


def _decoding_steps(logits: torch.Tensor, first_row: int, prefix_len: int, decoder_in: list[int],
                    stopped: bool, tok: Tokenizer, top_k: int) -> list[Step]:
    """One Step per output token, and one for what follows the output, from the logits [row, vocab] of
    decoder positions first_row on (0, or the prefix's last, which predicts the first output token)."""
    probs = torch.softmax(logits, dim=-1)  # [row, vocab]
    # -mean(log_softmax) = logsumexp - mean, the mean summed in float64: no [row, vocab] float64 copy
    mean_nll = torch.logsumexp(logits, dim=-1).double() - logits.mean(-1, dtype=torch.float64)  # [row]
    top = probs.topk(min(top_k, probs.shape[-1]), dim=-1)
    steps = []
    for pos in range(prefix_len - 1, len(decoder_in)):
        row = pos - first_row
        if pos + 1 < len(decoder_in):
            chosen = decoder_in[pos + 1]
        else:  # the last row: what follows the output (eos, or the token cut at max_len)
            chosen = tok.eos_id if stopped else int(probs[row].argmax())
        ids = top.indices[row].tolist()
        top_probs = [float(p) for p in top.values[row]]
        prob = float(probs[row, chosen])
        steps.append(Step(pos, tok.id_to_token(chosen), chosen, tok.tokens(ids), ids, top_probs, prob,
                          float(mean_nll[row])))
    return steps


def _analyze_encoder_only(bundle: Bundle, prepared: Prepared, notes: list[Message], edits,
                          keep: Callable[[str], bool] | None) -> Analysis:
    """An encoder-only model: one hooked, traced encoder pass; no decoding, no target side."""
    from .embeddings import mean_pool

    model, tok, cfg = bundle.model, bundle.tokenizer, bundle.cfg
    src = torch.tensor([prepared.source_ids])  # [1, src_pos]
    with (model.lock, intervene(model, *edits), trace_shapes() as trace, record_attention() as recorded,
          progress.stage(0.0, 1.0, "read")):
        hidden, cache = model.run_with_cache(src, names_filter=keep)  # [1, src_pos, d_model]
    normalize = bool(bundle.info.get("pooling", {}).get("normalize", True))
    keep = torch.ones(src.shape, dtype=torch.bool)  # [1, src_pos]: one sentence, no padding
    embedding = mean_pool(hidden, keep, normalize)[0].numpy().astype(np.float32)  # [d_model]
    return Analysis(
        model=bundle.name,
        prepared=prepared,
        source_tokens=tok.tokens(prepared.source_ids),
        target_tokens=[],
        output_text="",
        teacher_forced=False,
        stopped=True,
        steps=[],
        activations=cache.to_numpy(),
        attention_inputs=recorded,
        trace=trace.to_dicts(),
        trace_sizes=dict(trace.sizes),
        notes=notes,
        layer_counts=layer_counts(cfg),
        source_special=[tok.is_special(i) for i in prepared.source_ids],
        target_special=[],
        edits=tuple(e.label for e in edits),
        embedding=embedding,
    )


def model_summary(bundle: Bundle) -> dict:
    """Config, parameter counts and metrics of a model, for meta.json and the app."""
    return {
        "name": bundle.name,
        "config": bundle.cfg.to_dict(),
        "parameters": parameter_counts(bundle.model),
        "total_parameters": sum(p.numel() for p in bundle.model.parameters()),
        "metrics": bundle.metrics,
    }
