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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .decoding import greedy_decode
from .interventions import HeadOutput, intervene
from .network.kinds import KINDS, hook_name, layer_counts
from .training.checkpoint import Bundle

ABLATION_MODES = ("zero", "mean")


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


def _teacher_forced(bundle: Bundle, text: str, direction: str | None) -> _Run:
    """The intact model's greedy output, laid out for teacher forcing (as model/analysis.py does)."""
    model, cfg, tok = bundle.model, bundle.model.cfg, bundle.tokenizer
    prepared = bundle.task.prepare(text, cfg.max_len, direction)
    generated = greedy_decode(model, [prepared.source_ids], [prepared.prefix], tok.eos_id)[0]
    full = (prepared.prefix + generated)[: cfg.max_len]
    stopped = len(prepared.prefix) + len(generated) < cfg.max_len
    targets = full[len(prepared.prefix) :] + ([tok.eos_id] if stopped else [])
    first = len(prepared.prefix) - 1
    rows = torch.arange(first, first + len(targets))
    return _Run(torch.tensor([prepared.source_ids]), torch.tensor([full]), rows, torch.tensor(targets))


def _effects(intact_logp: torch.Tensor, ablated_logits: torch.Tensor, run: _Run) -> tuple[np.ndarray, ...]:
    """(mean_kl [batch], delta_logprob [batch]) of ablated logits [batch, tgt_pos, vocab]."""
    p_log = intact_logp[run.rows].double()  # [step, vocab]
    q_log = torch.log_softmax(ablated_logits[:, run.rows].double(), dim=-1)  # [batch, step, vocab]
    # KL >= 0 exactly; rounding can leave -1e-16 where the distributions coincide.
    kl = (p_log.exp() * (p_log - q_log)).sum(-1).clamp_min(0.0)  # [batch, step]
    idx = run.targets[None, :, None].expand(q_log.shape[0], -1, 1)
    delta = (q_log.gather(-1, idx)[..., 0] - p_log.gather(-1, run.targets[:, None])[:, 0]).sum(-1)
    return kl.mean(-1).numpy(), delta.numpy()


@torch.no_grad()
def rank_heads(
    bundle: Bundle, text: str, direction: str | None = None, mode: str = "zero", batched: bool = True
) -> list[HeadEffect]:
    """Every head's effect on the intact model's own output, most harmful first (by mean_kl).

    Raises InputError (model.data.tasks) on unusable input, ValueError on an unknown mode.
    """
    if mode not in ABLATION_MODES:
        raise ValueError(f"ablation mode must be one of {ABLATION_MODES}, got {mode!r}")
    model = bundle.model
    cfg = model.cfg
    H = cfg.n_heads
    out: list[HeadEffect] = []
    with model.lock:
        model.eval()
        run = _teacher_forced(bundle, text, direction)
        logits, cache = model.run_with_cache(run.src, run.tgt, names_filter=lambda n: n.endswith("hook_z"))
        intact_logp = torch.log_softmax(logits[0].double(), dim=-1)
        memory, src_pad = model.encode(run.src)
        for kind in KINDS:
            for layer in range(layer_counts(cfg)[kind]):
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
                            parts.append(model(run.src, run.tgt))
                    ablated = torch.cat(parts)
                kl, delta = _effects(intact_logp, ablated, run)
                out += [HeadEffect(kind, layer, h, float(kl[h]), float(delta[h])) for h in range(H)]
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
