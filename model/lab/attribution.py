"""Attribution beside attention: how much each source token contributed to each output token, by
gradients, next to where cross-attention looks.

    result = attribute(bundle, "attention", n_steps=32)
    result.integrated[t], result.grad_x_input[t]      # [src_pos] for output step t
    result.completeness_error                         # |sum of IG - (f(input) - f(baseline))| per step
    scores = agreement(bundle, sample_texts(bundle))  # per cross-attention head: rank correlation

What is attributed: f_t = log p(y_t), the log-probability of the model's own (greedy) token at
step t, teacher-forced on the intact output. The inputs are the source token embeddings as the
encoder reads them (`encoder.embed.hook_embed`: looked up and scaled, before the positional encoding
is added); the baseline replaces them by zeros (no token, positions kept). The target side stays as
it is. A source token's attribution is the sum over its embedding dimensions.

    gradient x input       x . df/dx at the input
    integrated gradients   (x - x') . mean over k of df/dx at x' + a_k (x - x'), a_k = (k + 1/2) / m
                           (midpoint rule, m = n_steps); complete: the attributions sum to
                           f(x) - f(x') up to the rule's error, which is reported per step

One forward pass of a batch of m + 2 copies (the m points, the input, the baseline) and one backward
pass per output step. The model's weights and settings are not changed (the points are fed in by a
HookFunction edit on the embeddings' hook point, applied with `intervene`).

A decoder-only language model: the source is the prompt and the output its greedy continuation (at
most `max_new` new tokens); the inputs are the prompt's token embeddings (`decoder.embed.hook_embed` at
the prompt's positions; the continuation's stay as they are), the baseline puts the end-of-text token's
embedding at each of them (zeros would not do: with a pre-norm block and no added positional encoding
the first norm makes f jump at zero, and the midpoint rule never converged), and attention beside them
is each step's self-attention row over the prompt (its rollout through the causal self-attention,
likewise). Each output step costs one backward pass, so `outputs` attributes only the first steps.

Agreement: per cross-attention head and step, the Spearman rank correlation between the head's
attention row over the source and |integrated gradients| over the source; averaged over the steps of
many sentences (one short sentence is noise), with the mean over heads and the rollout beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..decoding.decoders import greedy_decode
from ..network.kinds import hook_name, layer_counts
from ..run.interventions import HookFunction, intervene
from ..store.bundle import Bundle
from . import entry
from .ablation import output_bound

EMBED_HOOK = "encoder.embed.hook_embed"
LM_EMBED_HOOK = "decoder.embed.hook_embed"


@dataclass(frozen=True)
class Attribution:
    source_tokens: list[str]  # encoder positions (a language model's prompt)
    output_tokens: list[str]  # the token each step chose (the intact output, then <eos>)
    rows: list[int]  # decoder position of each step
    n_steps: int  # integration steps m
    integrated: np.ndarray  # [step, src_pos] float64, integrated gradients
    grad_x_input: np.ndarray  # [step, src_pos] float64
    f_input: np.ndarray  # [step] log p(token) at the input
    f_baseline: np.ndarray  # [step] log p(token) with zero token embeddings
    cross: np.ndarray  # [layer, head, step, src_pos] float32, cross- (LM: self-)attention rows of the steps
    rollout: np.ndarray  # [step, src_pos] float64, see cross_rollout

    @property
    def completeness_error(self) -> np.ndarray:
        """[step] |sum over source of IG - (f(input) - f(baseline))|, nats."""
        return np.abs(self.integrated.sum(-1) - (self.f_input - self.f_baseline))

    @property
    def mean_attention(self) -> np.ndarray:
        """[step, src_pos] cross-attention averaged over layers and heads."""
        return self.cross.astype(np.float64).mean(axis=(0, 1))


def self_rollout(patterns: np.ndarray) -> np.ndarray:
    """Attention rollout of self-attention [layer, head, q, k] -> [q, k]: per layer the heads' mean plus
    the identity (the residual path), rows renormalised, multiplied through the layers (as
    viz.attention_rollout with add_residual=True)."""
    p = np.asarray(patterns, dtype=np.float64)
    eye = np.eye(p.shape[-1])
    out = eye.copy()
    for layer in p.mean(axis=1):
        a = layer + eye
        out = (a / a.sum(-1, keepdims=True)) @ out
    return out


def cross_rollout(cross: np.ndarray, encoder: np.ndarray) -> np.ndarray:
    """[step, src_pos]: each step's cross-attention (mean over layers and heads) carried through the
    encoder's rollout, i.e. how much each source token reaches the step through attention alone.
    An estimate of information flow, not a quantity the model computes. cross [layer, head, step, src],
    encoder [layer, head, src, src]."""
    if encoder.shape[0] == 0:
        return np.asarray(cross, np.float64).mean(axis=(0, 1))
    return np.asarray(cross, np.float64).mean(axis=(0, 1)) @ self_rollout(encoder)


@entry
def attribute(bundle: Bundle, text: str, direction: str | None = None, n_steps: int = 32,
              max_new: int | None = None, outputs: int | None = None) -> Attribution:
    """Gradient x input and integrated gradients for every step of the greedy output (see module doc),
    or its first `outputs` steps; a language model continues by at most `max_new` (LM_NEW_TOKENS when
    None), a translation stops at its end token or after `max_new` new tokens (None: no bound).

    Raises InputError on unusable input, ValueError for n_steps < 1, a translation bounded at no new
    token, or a model without cross-attention that is not a decoder-only language model.
    """
    if not isinstance(n_steps, int) or n_steps < 1:
        raise ValueError(f"n_steps must be an int >= 1, got {n_steps!r}")
    model, tok = bundle.model, bundle.tokenizer
    cfg = model.cfg
    counts, lm = layer_counts(cfg), cfg.decoder_only
    if not counts["cross"] and not lm:
        raise ValueError("the model has no cross-attention: there is no source to attribute to")
    bound = output_bound(cfg, max_new, needs_output=True)  # a translation at 0 has no step to attribute
    prepared = bundle.task.prepare(text, cfg.max_len, direction)
    hook, attention = (LM_EMBED_HOOK, "decoder") if lm else (EMBED_HOOK, "cross")
    with model.lock:
        model.eval()
        rows, targets, full = _output_rows(bundle, prepared, bound)
        rows, targets = rows[:outputs], targets[:outputs]
        source = prepared.prefix if lm else prepared.source_ids  # a language model reads its prompt
        n_src = len(source)
        tgt = torch.tensor([full[: rows[-1] + 1] if lm else full])  # causal: later tokens change no step
        inputs = (tgt,) if lm else (torch.tensor([prepared.source_ids]), tgt)  # [1, src_pos], [1, tgt_pos]
        with torch.no_grad():
            _, cache = model.run_with_cache(
                *inputs, names_filter=lambda n: n == hook or n.endswith("hook_pattern"))
        x_all = cache[hook][0].double()  # [pos, d_model]
        x = x_all[:n_src]  # [src_pos, d_model]: what is attributed to
        base = _eos_embeddings(model, hook, n_src, tok.eos_id) if lm else torch.zeros_like(x)  # like x
        m = n_steps
        alphas = torch.cat([(torch.arange(m, dtype=torch.float64) + 0.5) / m,
                            torch.tensor([1.0, 0.0], dtype=torch.float64)])  # [m + 2]
        points = (base + alphas[:, None, None] * (x - base)[None]).float().requires_grad_(True)
        rest = x_all[None, n_src:].float().expand(m + 2, -1, -1)  # a language model's continuation, as is
        feed = HookFunction(hook, lambda _embedded: torch.cat([points, rest], 1) if lm else points,
                            what="integration points")
        with intervene(model, feed), torch.enable_grad():
            logits = model(*(t.expand(m + 2, -1) for t in inputs))  # [m + 2, tgt_pos, vocab]
            logp = torch.log_softmax(logits, dim=-1)
            chosen = logp[:, rows, targets]  # [m + 2, step]
            grads = []
            for i in range(len(rows)):
                (g,) = torch.autograd.grad(chosen[:, i].sum(), points, retain_graph=i + 1 < len(rows))
                grads.append(g.double())  # [m + 2, src_pos, d_model]
    g = torch.stack(grads)  # [step, m + 2, src_pos, d_model]
    integrated = (g[:, :m].mean(1) * (x - base)[None]).sum(-1)  # [step, src_pos]
    gxi = (g[:, m] * x[None]).sum(-1)
    f = chosen.detach().double()
    cross = np.stack([cache[hook_name(attention, i, "pattern")][0].float().numpy()[:, rows, :n_src]
                      for i in range(counts[attention])])  # [layer, head, step, src_pos]
    if lm:  # the causal self-attention's rollout, from each step to the prompt
        full_self = np.stack([cache[hook_name("decoder", i, "pattern")][0].float().numpy()
                              for i in range(counts["decoder"])])
        rollout = self_rollout(full_self)[rows, :n_src]
    else:
        enc = np.stack([cache[hook_name("encoder", i, "pattern")][0].float().numpy()
                        for i in range(counts["encoder"])]) if counts["encoder"] else np.zeros((0, 1, 1, 1))
        rollout = cross_rollout(cross, enc)
    outputs = bundle.target_tokenizer.tokens(targets)  # the decoder's ids
    return Attribution(source_tokens=tok.tokens(source), output_tokens=outputs,
                       rows=rows, n_steps=m, integrated=integrated.numpy(), grad_x_input=gxi.numpy(),
                       f_input=f[m].numpy(), f_baseline=f[m + 1].numpy(), cross=cross, rollout=rollout)


def _eos_embeddings(model, hook: str, n: int, eos_id: int) -> torch.Tensor:
    """[n, d_model] float64: the end-of-text token's embedding at hook, n times (an LM's IG baseline)."""
    ids = torch.full((1, n), eos_id)
    with torch.no_grad():
        return model.run_with_cache(ids, names_filter=lambda name: name == hook)[1][hook][0].double()


def _output_rows(bundle: Bundle, prepared, bound: int | None) -> tuple[list[int], list[int], list[int]]:
    """(decoder rows of the output's steps, the token each predicts, prefix + greedy output)."""
    cfg, tok, prefix = bundle.cfg, bundle.target_tokenizer, prepared.prefix
    with torch.no_grad():
        generated = greedy_decode(bundle.model, [prepared.source_ids], [prefix], tok.eos_id, bound)[0]
    full = (prefix + generated)[: cfg.max_len]
    stopped = len(prefix) + len(generated) < cfg.max_len and (bound is None or len(generated) < bound)
    targets = full[len(prepared.prefix):] + ([tok.eos_id] if stopped else [])
    first = len(prepared.prefix) - 1
    return list(range(first, first + len(targets))), targets, full


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation of two 1-D arrays (ties get their average rank); NaN when either is
    constant."""
    ra, rb = _ranks(np.asarray(a, np.float64)), _ranks(np.asarray(b, np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / den) if den > 0 else float("nan")


def _ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=np.float64)
    for value in np.unique(x):  # ties: the average of their ranks
        tied = x == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


@dataclass(frozen=True)
class Agreement:
    heads: np.ndarray  # [layer, head] mean Spearman over all steps of all sentences (cross-attention)
    mean_attention: float  # the same for the mean over heads and layers
    rollout: float  # the same for cross_rollout
    grad_x_input: float  # the same for |gradient x input| (how much two gradient methods agree)
    n_sentences: int
    n_steps: int  # steps with a defined correlation (source of 2+ tokens, non-constant rows)
    spread: np.ndarray  # [layer, head] standard deviation over those steps


@entry
def agreement(bundle: Bundle, texts: list[str], n_steps: int = 16, direction: str | None = None) -> Agreement:
    """Rank agreement between each cross-attention head and |integrated gradients| over a sample."""
    per_step: list[np.ndarray] = []  # [layer, head] per step
    others: list[tuple[float, float, float]] = []
    used = 0
    for text in texts:
        r = attribute(bundle, text, direction, n_steps)
        used += 1
        target = np.abs(r.integrated)
        for t in range(target.shape[0]):
            if target.shape[1] < 2:
                continue
            heads = np.array([[spearman(row[t], target[t]) for row in layer] for layer in r.cross])
            rest = (spearman(r.mean_attention[t], target[t]), spearman(r.rollout[t], target[t]),
                    spearman(np.abs(r.grad_x_input[t]), target[t]))
            if np.isnan(heads).any() or np.isnan(rest).any():
                continue
            per_step.append(heads)
            others.append(rest)
    if not per_step:
        raise ValueError("no step of these sentences has a source of two or more tokens to rank")
    stacked = np.stack(per_step)  # [step, layer, head]
    mean_att, roll, gxi = np.mean(others, axis=0)
    return Agreement(stacked.mean(0), float(mean_att), float(roll), float(gxi), used, len(per_step),
                     stacked.std(0))
