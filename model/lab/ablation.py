"""Which head matters? Remove one head at a time and measure how the model's own output changes.

    effects = rank_heads(bundle, "我吃了一个苹果")      # every head of every attention kind
    matrices = effect_matrices(effects, layer_counts(bundle.cfg), bundle.cfg.n_heads)

The intact model decodes greedily once; its output is then teacher-forced. For each head alone,
its z is zeroed (mode="zero") or set to its mean over query positions (mode="mean"), and per head:

    mean_kl        mean over decoding steps of KL(intact next-token distribution || ablated)
    delta_logprob  sum over steps of log p(intact output token), ablated minus intact

Speed: the heads of one attention module (kind, layer) are ablated together in one batch of
n_heads copies of the sentence, row h ablating head h. This goes through the edits API: every head
of that module gets HeadOutput("replace") with the intact run's z, except in its own row, where
the value is 0 (or the intact z's mean over query positions). Inside one module all heads see the
module's intact input, so this equals ablating each head alone; it is not valid across modules (a
later head's z depends on an earlier ablation), hence one pass per module, not one for every head.
Decoder and cross ablations reuse the intact encoder output (the encoder is not re-run).
`batched=False` runs the plain reference: one teacher-forced pass per head under `intervene`.

A decoder-only language model: the intact output is the greedy continuation of the prompt, at most
`max_new` new tokens (LM_NEW_TOKENS when None), teacher-forced over prompt + continuation. A head of
layer L cannot change the blocks before L, so its batch starts at block L from the intact residual
stream, and the heads of several layers share one growing batch (a HookFunction on each layer's z
edits only the rows that layer added); `layers` ranks a slice of layers (a page's progress bar).

Several heads at once (any kinds and layers):

    result = ablate(bundle, "attention", heads=group_heads(cfg, "cross", 1), mode="zero")
    result.output, result.intact_output, result.steps  # re-decoded without the heads, intact; per step
    exact_match(bundle, head_edits(heads))   # the didactic tasks' test words, decoded under the edits
    ablated_analysis(bundle, text, None, result.intact_output, heads)  # attention, teacher-forced
Heads are written `kind.layer.head` in links (`parse_heads`, `format_heads`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..decoding.decoders import greedy_decode
from ..network.kinds import KINDS, hook_name, layer_counts
from ..run.analysis import Analysis, analyze, attention_only
from ..run.interventions import HeadOutput, HookFunction, intervene
from ..store.bundle import Bundle
from ..training.evaluate import translate_batch
from . import entry
from .choices import ABLATION_MODES, Head

#: New tokens of a language model's continuation the interventions read by default: ranking 270 heads
#: of SmolLM2 costs ~30 batched passes over prompt + continuation (bench/bench_interventions_lm.py).
LM_NEW_TOKENS = 6


def output_bound(cfg, max_new: int | None, needs_output: bool = False) -> int | None:
    """The most new tokens an output decoded here may have: a language model's `max_new` (LM_NEW_TOKENS when
    None or 0), a translation's `max_new` (None: to its end token). ``needs_output``: refuse a translation
    bounded at no new token (ValueError), for a tool that reads the output's steps."""
    if cfg.decoder_only:
        return max_new or LM_NEW_TOKENS
    if needs_output and max_new is not None and max_new < 1:
        raise ValueError(f"max_new must be at least 1 (or None: to the end token), got {max_new}")
    return max_new


@dataclass(frozen=True)
class HeadEffect:
    kind: str
    layer: int
    head: int
    mean_kl: float  # mean over steps of KL(intact || ablated), nats
    delta_logprob: float  # sum over steps of log p(intact token): ablated - intact


@dataclass(frozen=True)
class _Run:
    src: torch.Tensor  # [1, src_pos]
    tgt: torch.Tensor  # [1, tgt_pos] decoder input (prefix + intact output)
    rows: torch.Tensor  # decoder positions that predict a token of the intact output
    targets: torch.Tensor  # the token each of those rows predicts


def _teacher_forced(bundle: Bundle, text: str, direction: str | None, max_new: int | None = None,
                    output: tuple[int, ...] | None = None) -> _Run:
    """The intact model's greedy output (or the given `output` ids), laid out for teacher forcing (as
    model/run/analysis.py does). A language model continues by at most `max_new` tokens (LM_NEW_TOKENS)."""
    model, cfg, tok = bundle.model, bundle.model.cfg, bundle.target_tokenizer  # every id here is an output id
    prepared = bundle.task.prepare(text, cfg.max_len, direction)
    bound = output_bound(cfg, max_new)
    generated = list(output) if output is not None else greedy_decode(
        model, [prepared.source_ids], [prepared.prefix], tok.eos_id, bound)[0]
    full = (prepared.prefix + generated)[: cfg.max_len]
    reached = bound is not None and len(generated) >= bound
    stopped = len(prepared.prefix) + len(generated) < cfg.max_len and not reached
    targets = full[len(prepared.prefix) :] + ([tok.eos_id] if stopped else [])
    first = len(prepared.prefix) - 1
    rows = torch.arange(first, first + len(targets))
    return _Run(torch.tensor([prepared.source_ids]), torch.tensor([full]), rows, torch.tensor(targets))


def _logits(model, run: _Run, batch: int = 1) -> torch.Tensor:
    """Teacher-forced logits [batch, tgt_pos, vocab] (a decoder-only model reads tgt alone)."""
    return model.teacher_forced(run.src.expand(batch, -1), run.tgt.expand(batch, -1))


@entry
@torch.no_grad()
def continuation(bundle: Bundle, text: str, direction: str | None = None,
                 max_new: int | None = None) -> tuple[int, ...]:
    """The ids of the intact greedy output :func:`rank_heads` reads (for calling it a slice at a time)."""
    with bundle.model.lock:
        run = _teacher_forced(bundle, text, direction, max_new)  # greedy_decode sets eval mode
    return tuple(run.tgt[0, run.rows[0] + 1:].tolist())


def _effects(intact_logp: torch.Tensor, ablated_logits: torch.Tensor, run: _Run) -> tuple[np.ndarray, ...]:
    """(mean_kl [batch], delta_logprob [batch]) of ablated logits [batch, step, vocab] (the rows only)."""
    p_log = intact_logp[run.rows].double()  # [step, vocab]
    q_log = torch.log_softmax(ablated_logits.double(), dim=-1)  # [batch, step, vocab]
    # KL >= 0 exactly; rounding can leave -1e-16 where the distributions coincide.
    kl = (p_log.exp() * (p_log - q_log)).sum(-1).clamp_min(0.0)  # [batch, step]
    idx = run.targets[None, :, None].expand(q_log.shape[0], -1, 1)
    delta = (q_log.gather(-1, idx)[..., 0] - p_log.gather(-1, run.targets[:, None])[:, 0]).sum(-1)
    return kl.mean(-1).numpy(), delta.numpy()


@entry
@torch.no_grad()
def rank_heads(
    bundle: Bundle, text: str, direction: str | None = None, mode: str = "zero", batched: bool = True,
    max_new: int | None = None, layers: tuple[int, int] | None = None, output: tuple[int, ...] | None = None,
) -> list[HeadEffect]:
    """Every head's effect on the intact model's own output, most harmful first (by mean_kl).

    max_new: a language model's continuation bound (LM_NEW_TOKENS when None); layers: (start, stop),
    only the heads of those layers (None: all); output: the intact output's ids (:func:`continuation`),
    decoded here when None. Raises InputError (model.data.tasks) on unusable input, ValueError on an
    unknown mode.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"ablation mode must be one of {ABLATION_MODES}, got {mode!r}")
    model = bundle.model
    cfg = model.cfg
    H = cfg.n_heads
    out: list[HeadEffect] = []
    with model.lock:
        model.eval()
        run = _teacher_forced(bundle, text, direction, max_new, output)
        if cfg.decoder_only and batched:
            return _rank_decoder_only(model, run, mode, range(*(layers or (0, cfg.n_dec_layers))))
        logits, cache = model.run_with_cache(*((run.tgt,) if cfg.decoder_only else (run.src, run.tgt)),
                                             names_filter=lambda n: n.endswith("hook_z"))
        intact_logp = torch.log_softmax(logits[0].double(), dim=-1)
        memory, src_pad = model.encode(run.src)
        for kind in KINDS:
            for layer in range(layer_counts(cfg)[kind]):
                if layers is not None and not layers[0] <= layer < layers[1]:
                    continue
                if batched:
                    z = cache[hook_name(kind, layer, "z")]  # [1, q, head, d_head]
                    edits = []
                    for h in range(H):
                        value = z[:, :, h].expand(H, -1, -1).clone()  # [batch=H, q, d_head]
                        value[h] = 0.0 if mode == "zero" else z[0, :, h].mean(0, keepdim=True)
                        edits.append(HeadOutput(kind, layer, h, "replace", value))
                    with intervene(model, *edits):
                        if kind == "encoder":
                            ablated = model(run.src.expand(H, -1), run.tgt.expand(H, -1))
                        else:
                            mem = memory.expand(H, -1, -1)
                            pad = None if src_pad is None else src_pad.expand(H, -1)
                            ablated = model.decode(run.tgt.expand(H, -1), mem, pad)
                else:
                    parts = []
                    for h in range(H):
                        with intervene(model, HeadOutput(kind, layer, h, mode)):
                            parts.append(_logits(model, run))
                    ablated = torch.cat(parts)
                kl, delta = _effects(intact_logp, ablated[:, run.rows], run)
                out += [HeadEffect(kind, layer, h, float(kl[h]), float(delta[h])) for h in range(H)]
    return sorted(out, key=lambda e: -e.mean_kl)


def _ablate_new_rows(n_heads: int, mode: str):
    """z [batch, q, head, d_head] -> z with head h removed in the h-th of the layer's new rows (the last)."""
    def edit(z: torch.Tensor) -> torch.Tensor:
        z, first = z.clone(), z.shape[0] - n_heads
        for h in range(n_heads):
            z[first + h, :, h] = 0.0 if mode == "zero" else z[first + h, :, h].mean(0, keepdim=True)
        return z
    return edit


def joined_run(model, tgt: torch.Tensor, layers: range, joining, edits=()) -> tuple[torch.Tensor, ...]:
    """(intact logits [1, pos, vocab], final-normed hidden [rows, pos, d_model]) of a decoder-only model:
    at block i of `layers` the rows joining(i, intact resid_pre [1, pos, d_model]) join the batch, the
    rows of earlier layers pass on, and all run to the end under `edits` (a layer cannot change the
    blocks before it, so they are not run again)."""
    decoder = model.decoder
    pad = model.attention_padding(tgt)
    logits, cache = model.run_with_cache(tgt, names_filter=lambda n: n.endswith("hook_resid_pre"))
    x = tgt.new_zeros((0, tgt.shape[1], model.cfg.d_model), dtype=logits.dtype)  # [rows, pos, d_model]
    with intervene(model, *edits):
        for i in range(layers.start if layers else len(decoder.blocks), len(decoder.blocks)):
            if i in layers:
                x = torch.cat([x, joining(i, cache[f"decoder.blocks.{i}.hook_resid_pre"])])
            x = decoder.blocks[i](x, None, None if pad is None else pad.expand(x.shape[0], -1), None)
    return logits, decoder.final_norm(x)


def _rank_decoder_only(model, run: _Run, mode: str, layers: range) -> list[HeadEffect]:
    """rank_heads on a decoder-only model, each layer's batch started at its own block (module doc)."""
    H = model.cfg.n_heads
    # Causal: a last token that predicts nothing changes nothing (but is part of a head's mean).
    tgt = run.tgt[:, : int(run.rows[-1]) + 1] if mode == "zero" else run.tgt
    edits = [HookFunction(hook_name("decoder", i, "z"), _ablate_new_rows(H, mode), what=f"ablate ({mode})")
             for i in layers]
    logits, hidden = joined_run(model, tgt, layers, lambda _i, resid: resid.expand(H, -1, -1), edits)
    intact_logp = torch.log_softmax(logits[0].double(), dim=-1)
    out: list[HeadEffect] = []
    for j, layer in enumerate(layers):  # one layer's rows at a time: [H, step, vocab] in float64
        kl, delta = _effects(intact_logp, model.unembed(hidden[j * H:(j + 1) * H, run.rows]), run)
        out += [HeadEffect("decoder", layer, h, float(kl[h]), float(delta[h])) for h in range(H)]
    return sorted(out, key=lambda e: -e.mean_kl)


def effect_matrices(
    effects: list[HeadEffect], counts: dict[str, int], n_heads: int, what: str = "mean_kl"
) -> dict[str, np.ndarray]:
    """Attention kind -> [layer, head] array of one field ("mean_kl" or "delta_logprob"); NaN where
    no effect was given. counts: kinds.layer_counts(cfg)."""
    if what not in ("mean_kl", "delta_logprob"):
        raise ValueError(f'what must be "mean_kl" or "delta_logprob", got {what!r}')
    mats = {kind: np.full((counts[kind], n_heads), np.nan) for kind in counts}
    for e in effects:
        mats[e.kind][e.layer, e.head] = getattr(e, what)
    return mats


# --------------------------------------------------------------------------- several heads at once

def head_edits(heads, mode: str = "zero") -> tuple[HeadOutput, ...]:
    """One HeadOutput edit per head (ValueError on an unknown mode)."""
    if mode not in ABLATION_MODES:
        raise ValueError(f"ablation mode must be one of {ABLATION_MODES}, got {mode!r}")
    return tuple(HeadOutput(k, i, h, mode) for k, i, h in heads)


@dataclass(frozen=True)
class StepChange:
    """One decoding step of the intact output, teacher-forced, intact vs with the heads removed."""

    position: int  # decoder position whose row predicts `token`
    token: str  # the intact model's token at this step (<eos> at the end)
    kl: float  # KL(intact || ablated) of the next-token distributions, nats
    p_intact: float  # probability of `token`, intact
    p_ablated: float  # probability of `token`, heads removed
    top_intact: tuple[tuple[str, float], ...]  # top-k (token, probability), intact
    top_ablated: tuple[tuple[str, float], ...]  # top-k, heads removed


@dataclass(frozen=True)
class Ablation:
    heads: tuple[Head, ...]
    mode: str
    intact_output: str  # greedy output of the intact model
    output: str  # greedy output re-decoded with the heads removed
    steps: tuple[StepChange, ...]  # one per token of the intact output, and its end

    @property
    def mean_kl(self) -> float:
        return float(np.mean([s.kl for s in self.steps])) if self.steps else 0.0

    @property
    def delta_logprob(self) -> float:
        """Sum over steps of log p(intact token): ablated minus intact."""
        return float(sum(np.log(s.p_ablated) - np.log(s.p_intact) for s in self.steps))


def _top(logp: torch.Tensor, tok, k: int) -> tuple[tuple[str, float], ...]:
    top = logp.exp().topk(min(k, logp.shape[-1]))
    return tuple(zip(tok.tokens(top.indices.tolist()), (float(p) for p in top.values), strict=True))


@entry
@torch.no_grad()
def ablate(
    bundle: Bundle, text: str, direction: str | None = None, heads=(), mode: str = "zero", top_k: int = 5,
    max_new: int | None = None,
) -> Ablation:
    """The output with `heads` removed (re-decoded greedily), and per step of the intact output
    (teacher-forced) how its next-token distribution changed. No heads: nothing changes. A language
    model continues by at most `max_new` new tokens (LM_NEW_TOKENS when None), both times.

    Raises InputError on unusable input, ValueError on an unknown mode or a head the model lacks.
    """
    edits = head_edits(heads, mode)
    model, tok = bundle.model, bundle.target_tokenizer  # every id named here is an output id
    bound = output_bound(model.cfg, max_new)
    with model.lock:
        model.eval()
        run = _teacher_forced(bundle, text, direction, bound)
        intact_logp = torch.log_softmax(_logits(model, run)[0].double(), dim=-1)  # [tgt_pos, vocab]
        prepared = bundle.task.prepare(text, model.cfg.max_len, direction)
        with intervene(model, *edits):
            ablated_logp = torch.log_softmax(_logits(model, run)[0].double(), dim=-1)
            generated = greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id, bound)[0]
    steps = []
    for row, target in zip(run.rows.tolist(), run.targets.tolist(), strict=True):
        p, q = intact_logp[row], ablated_logp[row]  # [vocab]
        kl = float((p.exp() * (p - q)).sum().clamp_min(0.0))
        p_t, q_t = float(p[target].exp()), float(q[target].exp())
        tops = _top(model.named_logits(p), tok, top_k), _top(model.named_logits(q), tok, top_k)
        steps.append(StepChange(row, tok.id_to_token(target), kl, p_t, q_t, *tops))
    intact = tok.decode(run.tgt[0, len(prepared.prefix):].tolist())
    return Ablation(tuple(heads), mode, intact, tok.decode(generated), tuple(steps))


def exact_match(bundle: Bundle, edits=(), n: int = 200) -> float | None:
    """Share of the first n test items whose greedy output (under `edits`) equals the reference; None for
    tasks without an exact answer (translation, a language model's continuation)."""
    task = bundle.task
    if getattr(task, "directions", None) or bundle.cfg.decoder_only:
        return None
    refs = task.references("test", n)
    with bundle.model.lock, intervene(bundle.model, *edits):
        bundle.model.eval()
        outputs = translate_batch(bundle.model, task, [s for s, _, _ in refs], [d for _, _, d in refs])
    return sum(o == r for o, (_, r, _) in zip(outputs, refs, strict=True)) / len(refs)


@entry
def exact_match_ablated(bundle: Bundle, heads=(), mode: str = "zero", n: int = 200) -> float | None:
    """:func:`exact_match` with `heads` removed (none: the intact model)."""
    return exact_match(bundle, head_edits(heads, mode), n)


@entry
def ablated_analysis(bundle: Bundle, text: str, direction: str | None, target: str, heads=(),
                     mode: str = "zero") -> Analysis:
    """The teacher-forced pass over `target` (the intact output, or continuation) with the heads
    removed, recording attention patterns and scores only (what the ablation page draws)."""
    return analyze(bundle, text, direction, target, edits=head_edits(heads, mode), keep=attention_only)


#: Sentences for measurements over a sample on the translation model (written for this project:
#: short, everyday, half Chinese and half English). The didactic models use their test words.
TRANSLATION_SAMPLE = (
    "我吃了一个苹果", "他每天早上喝一杯茶", "我们明天去公园散步", "这本书非常有意思", "她的猫很可爱",
    "我不知道他在哪里", "今天天气很好", "你想喝点什么", "I ate an apple.", "She reads a book every night.",
    "We will visit the museum tomorrow.", "My brother lives in Beijing.", "The weather is nice today.",
    "I do not know where he is.", "This film is very interesting.", "Please close the door.",
)


@entry
def sample_texts(bundle: Bundle, n: int = 16) -> list[str]:
    """n input sentences for a measurement over a sample: the didactic task's first test words, or
    the translation sample above (both directions)."""
    if getattr(bundle.task, "directions", None):
        return list(TRANSLATION_SAMPLE[:n])
    return [s for s, _, _ in bundle.task.references("test", n)]
