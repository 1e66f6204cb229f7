"""Activation patching between two sentences: run sentence B with one head's output (or one layer's
residual stream) taken from sentence A, and measure how far B's output moves, and toward A's.

    result = patch(bundle, "listen", "silent", Site("head", "cross", 1, 2))
    result.output_b, result.output                 # B intact, B patched (re-decoded greedily)
    result.steps                                   # per step of B's own output: KL, toward A
    ranking = rank_patches(bundle, "listen", "silent")  # every head, one batched pass per module

Positions: a head or layer on the encoder side reads source positions, one on the decoder side target
positions (the decoder's input: prefix + the greedy output, teacher-forced). Position i of B takes
A's activation at the position `align` pairs it with: every position when both sentences have the same
length there, otherwise the k-th occurrence of a chosen token in B with its k-th in A (when it occurs
equally often in both). Anything else is not aligned, and `Alignment.reason` says why; nothing is
patched there (no guessing).

The patch is an edit (`patch_edit`: a HookFunction on the site's hook point, applied with `intervene`)
that overwrites the aligned rows and leaves the rest computed live, so a patched greedy run sees its
own activations elsewhere. On the target side the decoder recomputes the whole prefix at each step
while patching (so the function sees absolute positions). `intervene` puts everything back on exit,
also after an exception: the intact model is unchanged.

Per step t of B's output (B's own token, teacher-forced):

    kl          KL(B intact || B patched) of the next-token distributions: how far B moved
    toward_a    at a step aligned with a step of A (a target-side pair): the share of the gap closed,
                1 - JS(A, B patched) / JS(A, B intact); 1 = B now predicts exactly as A, 0 = no closer,
                negative = further away. None where the step is not aligned, or where A and B already
                (nearly) agree (JS below GAP_MIN: a tiny gap makes the ratio meaningless).

A decoder-only language model (prompt A clean, B corrupted): the prompts must have equal token counts
(positions are paired one to one; nothing is guessed otherwise: reason "prompt_length"), the patch covers
the prompt (every position, or the one `position`), and the continuation (at most `max_new` new tokens,
LM_NEW_TOKENS when None) runs live. Only the first step reads aligned prefixes, so toward_a is given
there alone, and beside it the logit difference of the two answers' first tokens at the end of the
prompt, logit(A's) - logit(B's): `Patch.recovered` = (patched - B) / (A - B), 1 = B now prefers A's
answer as A does.

A translation's output (A's, B's, B patched) stops at its end token or after `max_new` new tokens, the
sidebar's cap (None: no cap), so its steps are those of the output the other pages show.

Over steps the share is a ratio of sums, 1 - sum JS(A, patched) / sum JS(A, B), over the steps that have
one, so a step with a small gap cannot dominate. Note that A's and B's steps read different prefixes
(each its own output), so at a later step "toward A" mixes the patch with the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..decoding.decoders import greedy_decode
from ..network.kinds import KINDS, get_kind, hook_name, layer_counts
from ..run.interventions import HookFunction, intervene
from ..store.bundle import Bundle
from . import entry
from .ablation import output_bound
from .choices import Site

#: Below this JS divergence (nats; the maximum is ln 2 = 0.69) A's and B's next-token distributions at a
#: step count as agreeing: no gap to close there.
GAP_MIN = 0.05


@dataclass(frozen=True)
class Alignment:
    """Which positions of B take A's activation on one side ("source" or "target")."""

    side: str
    pairs: tuple[tuple[int, int], ...]  # (position in B, position in A)
    # "same_length" or "token", or why nothing is aligned: "no_token", "token_missing", "token_count"
    reason: str
    count_a: int = 0  # occurrences of the token in A ("token*" reasons)
    count_b: int = 0

    @property
    def unaligned(self) -> int:
        """How many positions of B get nothing from A."""
        return self._n_b - len(self.pairs)

    _n_b: int = 0  # positions of B on this side


def align(tokens_a: list[str], tokens_b: list[str], side: str, token: str | None = None) -> Alignment:
    """Pair positions of B with positions of A: all of them at equal length, else the chosen token's
    occurrences (k-th with k-th, only when the token occurs equally often in both)."""
    if len(tokens_a) == len(tokens_b):
        n = len(tokens_b)
        return Alignment(side, tuple((i, i) for i in range(n)), "same_length", _n_b=n)
    if not token:
        return Alignment(side, (), "no_token", _n_b=len(tokens_b))
    in_a = [i for i, t in enumerate(tokens_a) if t == token]
    in_b = [i for i, t in enumerate(tokens_b) if t == token]
    counts = {"count_a": len(in_a), "count_b": len(in_b), "_n_b": len(tokens_b)}
    if not in_a or not in_b:
        return Alignment(side, (), "token_missing", **counts)
    if len(in_a) != len(in_b):
        return Alignment(side, (), "token_count", **counts)
    return Alignment(side, tuple(zip(in_b, in_a, strict=True)), "token", **counts)


def _check_site(bundle: Bundle, site: Site) -> None:
    cfg = bundle.cfg
    stack = get_kind(site.kind).stack
    n = cfg.n_enc_layers if stack == "encoder" else cfg.n_dec_layers
    if site.what == "head":
        n = layer_counts(cfg)[site.kind]
    if not 0 <= site.layer < n:
        where = site.kind if site.what == "head" else stack
        raise ValueError(f"{where} has layers 0..{n - 1}, got {site.layer}")
    if site.head is not None and not 0 <= site.head < cfg.n_heads:
        raise ValueError(f"the model has heads 0..{cfg.n_heads - 1}, got {site.head}")


@dataclass
class _Sentence:
    text: str  # as the model reads it
    source_ids: list[int]
    prefix: list[int]
    src: torch.Tensor  # [1, src_pos]
    tgt: torch.Tensor  # [1, tgt_pos] prefix + greedy output (teacher forcing)
    rows: list[int]  # decoder rows that predict a token of the output (and its end)
    targets: list[int]  # the token each row predicts
    output: str
    source_tokens: list[str]
    target_tokens: list[str]


def _sentence(bundle: Bundle, text: str, direction: str | None, max_new: int | None = None) -> _Sentence:
    model, tok, out_tok = bundle.model, bundle.tokenizer, bundle.target_tokenizer
    cfg = model.cfg
    p = bundle.task.prepare(text, cfg.max_len, direction)
    bound = output_bound(cfg, max_new)
    generated = greedy_decode(model, [p.source_ids], [p.prefix], out_tok.eos_id, bound)[0]
    full = (p.prefix + generated)[: cfg.max_len]
    stopped = len(p.prefix) + len(generated) < cfg.max_len and (bound is None or len(generated) < bound)
    targets = full[len(p.prefix):] + ([out_tok.eos_id] if stopped else [])
    first = len(p.prefix) - 1
    return _Sentence(p.text, p.source_ids, p.prefix, torch.tensor([p.source_ids]), torch.tensor([full]),
                     list(range(first, first + len(targets))), targets,
                     out_tok.decode(full[len(p.prefix):]), tok.tokens(p.source_ids), out_tok.tokens(full))


def _inputs(model, s: _Sentence) -> tuple[torch.Tensor, ...]:
    return (s.tgt,) if model.cfg.decoder_only else (s.src, s.tgt)  # a decoder-only model reads tgt alone


def prompt_alignment(a: _Sentence, b: _Sentence, position: int | None = None) -> Alignment:
    """A language model's pairs: every prompt position (or the one `position`) of B with the same of A,
    only when the prompts have equal token counts."""
    n_a, n_b = len(a.prefix), len(b.prefix)
    if n_a != n_b:
        return Alignment("target", (), "prompt_length", count_a=n_a, count_b=n_b, _n_b=len(b.target_tokens))
    chosen = range(n_b) if position is None or not 0 <= position < n_b else [position]
    reason = "prompt" if len(chosen) == n_b else "position"
    return Alignment("target", tuple((i, i) for i in chosen), reason, _n_b=len(b.target_tokens))


def patch_edit(hook: str, rows_b: list[int], values: torch.Tensor, head: int | None,
               per_row: bool = False) -> HookFunction:
    """The edit that overwrites positions rows_b of the tensor at `hook` with `values` [len(rows_b), ...].

    per_row: batch row h patches head h only (values [len(rows_b), head, d_head]); else every batch
    row gets the patch (of `head`, or of the whole tensor when head is None).
    """
    index = torch.tensor(rows_b, dtype=torch.long)

    def overwrite(out: torch.Tensor) -> torch.Tensor:
        out = out.clone()
        n = out.shape[1]
        keep = index < n  # greedy decoding: positions not reached yet
        idx, val = index[keep], values[keep]
        if per_row:
            for h in range(out.shape[0]):
                out[h, idx, h] = val[:, h]
        elif head is None:
            out[:, idx] = val
        else:
            out[:, idx, head] = val
        return out

    # Rows are absolute positions: on the target side greedy decoding must feed the whole prefix.
    return HookFunction(hook, overwrite, recompute=hook.startswith("decoder."), what="patched from A")


@dataclass(frozen=True)
class PatchStep:
    position: int  # decoder row of B predicting `token`
    token: str  # B's own token at this step
    kl: float  # KL(B intact || B patched), nats
    p_intact: float  # p(token) in B intact
    p_patched: float  # p(token) in B patched
    toward_a: float | None  # share of the JS gap to A closed (module docstring); None: not aligned / no gap
    a_token: str | None  # A's token at the aligned step (None: not aligned)
    gap: float | None = None  # JS(A, B intact) at the aligned step, nats
    moved: float | None = None  # JS(A, B patched) at the aligned step


@dataclass(frozen=True)
class Patch:
    site: Site
    alignment: Alignment
    text_a: str
    text_b: str
    output_a: str
    output_b: str
    output: str  # B re-decoded greedily with the patch
    steps: tuple[PatchStep, ...]
    answers: tuple[str, str] | None = None  # a language model's: A's and B's first output tokens
    logit_diff: tuple[float, float, float] | None = None  # logit(A's) - logit(B's): A, B, B patched

    @property
    def recovered(self) -> float | None:
        """(patched - B) / (A - B) of the logit difference (None: no answers, or the same one)."""
        if self.logit_diff is None or self.answers[0] == self.answers[1]:
            return None
        a, b, patched = self.logit_diff
        return (patched - b) / (a - b)

    @property
    def mean_kl(self) -> float:
        return float(np.mean([s.kl for s in self.steps])) if self.steps else 0.0

    @property
    def toward_a(self) -> float | None:
        """1 - sum JS(A, patched) / sum JS(A, B) over the steps with a gap (None: none has one)."""
        counted = [s for s in self.steps if s.toward_a is not None]
        if not counted:
            return None
        return 1.0 - sum(s.moved for s in counted) / sum(s.gap for s in counted)


def _js(p_log: torch.Tensor, q_log: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence (nats) over the last axis, float64."""
    p, q = p_log.exp(), q_log.exp()
    m_log = torch.log((p + q) / 2).clamp_min(-1e30)
    return (0.5 * (p * (p_log - m_log)).sum(-1) + 0.5 * (q * (q_log - m_log)).sum(-1)).clamp_min(0.0)


def _step_pairs(a: _Sentence, b: _Sentence, token: str | None) -> dict[int, int]:
    """B's decoding row -> A's decoding row predicting from the aligned position (target side)."""
    target = align(a.target_tokens, b.target_tokens, "target", token)
    rows_a = set(a.rows)
    return {pb: pa for pb, pa in target.pairs if pb in b.rows and pa in rows_a}


def _answer_logit_diff(a: _Sentence, b: _Sentence, *logits: torch.Tensor) -> tuple[float, ...]:
    """logit(A's first token) - logit(B's) at the end of each prompt ([1, pos, vocab] logits of A, B, …)."""
    ta, tb = a.targets[0], b.targets[0]
    return tuple(float(lg[0, s.rows[0], ta] - lg[0, s.rows[0], tb])
                 for lg, s in zip(logits, (a,) + (b,) * (len(logits) - 1), strict=True))


@entry
@torch.no_grad()
def patch(bundle: Bundle, text_a: str, text_b: str, site: Site, token: str | None = None,
          direction: str | None = None, max_new: int | None = None, position: int | None = None) -> Patch:
    """B run with `site` taken from A at the aligned positions (see the module docstring); a language
    model's at every prompt position, or at `position` alone. `max_new` bounds every output decoded here
    (a language model's: LM_NEW_TOKENS when None; a translation's: none when None).

    Raises InputError for a sentence the model cannot read, ValueError for a site the model lacks or a
    translation bounded at no new token.
    """
    _check_site(bundle, site)
    output_bound(bundle.cfg, max_new, needs_output=True)  # a translation at 0 has no step that could move
    model, tok = bundle.model, bundle.target_tokenizer  # every id named here is an output id
    lm = model.cfg.decoder_only
    with model.lock:
        model.eval()
        a, b = _sentence(bundle, text_a, direction, max_new), _sentence(bundle, text_b, direction, max_new)
        logits_a, cache_a = model.run_with_cache(*_inputs(model, a), names_filter=lambda n: n == site.hook)
        logits_b = model(*_inputs(model, b))
        side = "source" if site.side == "source" else "target"
        tokens = {"source": (a.source_tokens, b.source_tokens), "target": (a.target_tokens, b.target_tokens)}
        alignment = prompt_alignment(a, b, position) if lm else align(*tokens[side], side, token)
        rows_b = [pb for pb, _ in alignment.pairs]
        act = cache_a[site.hook][0]  # [pos, (head, d_head) | d_model]
        values = act[[pa for _, pa in alignment.pairs]]
        if site.head is not None:
            values = values[:, site.head]  # [aligned, d_head]
        with intervene(model, patch_edit(site.hook, rows_b, values, site.head)):
            logits_p = model(*_inputs(model, b))
            bound = output_bound(model.cfg, max_new)
            generated = greedy_decode(model, [b.source_ids], [b.prefix], tok.eos_id, bound)[0]
    la = torch.log_softmax(logits_a[0].double(), -1)  # [tgt_pos_a, vocab]
    lb = torch.log_softmax(logits_b[0].double(), -1)  # [tgt_pos_b, vocab]
    lp = torch.log_softmax(logits_p[0].double(), -1)
    if lm:  # only the first step reads aligned prefixes (the prompts)
        pairs = {b.rows[0]: a.rows[0]} if alignment.reason != "prompt_length" else {}
    else:
        pairs = _step_pairs(a, b, token)
    steps = []
    for row, target in zip(b.rows, b.targets, strict=True):
        kl = float((lb[row].exp() * (lb[row] - lp[row])).sum().clamp_min(0.0))
        toward, a_tok, gap, moved = None, None, None, None
        if row in pairs:
            ra = pairs[row]
            a_tok = tok.id_to_token(a.targets[a.rows.index(ra)])
            gap, moved = float(_js(la[ra], lb[row])), float(_js(la[ra], lp[row]))
            if gap >= GAP_MIN:
                toward = 1.0 - moved / gap
        steps.append(PatchStep(row, tok.id_to_token(target), kl, float(lb[row, target].exp()),
                               float(lp[row, target].exp()), toward, a_tok, gap, moved))
    answers = (tok.id_to_token(a.targets[0]), tok.id_to_token(b.targets[0])) if lm else None
    diff = _answer_logit_diff(a, b, logits_a, logits_b, logits_p) if lm else None
    return Patch(site, alignment, a.text, b.text, a.output, b.output, tok.decode(generated), tuple(steps),
                 answers, diff)


@dataclass(frozen=True)
class PatchEffect:
    kind: str
    layer: int
    head: int
    mean_kl: float  # mean over B's steps of KL(B intact || B patched)
    toward_a: float | None  # share of the gap to A closed, as Patch.toward_a (None: no step with a gap)
    aligned: int  # positions of B patched
    recovered: float | None = None  # a language model's: as Patch.recovered (model/lab/patching_lm.py)


@entry
@torch.no_grad()
def rank_patches(bundle: Bundle, text_a: str, text_b: str, token: str | None = None,
                 direction: str | None = None, batched: bool = True,
                 max_new: int | None = None) -> list[PatchEffect]:
    """Every head patched alone from A into B, ranked by how much it moves B (mean KL), largest first;
    A's and B's outputs stop after at most `max_new` new tokens (None: at their end tokens).

    One pass per attention module: a batch of n_heads copies of B, row h patching head h (heads of one
    module see the same input, so this equals patching each alone). `batched=False`: one pass per head.
    """
    if bundle.cfg.decoder_only:  # its clean/corrupted prompts are ranked in model/lab/patching_lm.py
        raise ValueError("rank a language model's sites with model.lab.patching_lm.rank_heads")
    output_bound(bundle.cfg, max_new, needs_output=True)
    model = bundle.model
    cfg = model.cfg
    H = cfg.n_heads
    out: list[PatchEffect] = []
    with model.lock:
        model.eval()
        a, b = _sentence(bundle, text_a, direction, max_new), _sentence(bundle, text_b, direction, max_new)
        logits_a, cache_a = model.run_with_cache(a.src, a.tgt, names_filter=lambda n: n.endswith("hook_z"))
        logits_b = model(b.src, b.tgt)
        la = torch.log_softmax(logits_a[0].double(), -1)
        lb = torch.log_softmax(logits_b[0].double(), -1)
        pairs = _step_pairs(a, b, token)
        rows = torch.tensor(b.rows)
        aligned_rows = [r for r in b.rows if r in pairs]
        gap = _js(la[[pairs[r] for r in aligned_rows]], lb[aligned_rows]) if aligned_rows else None
        tokens = {"source": (a.source_tokens, b.source_tokens), "target": (a.target_tokens, b.target_tokens)}
        for kind in KINDS:
            side = get_kind(kind).queries
            alignment = align(*tokens[side], side, token)
            rows_b = [pb for pb, _ in alignment.pairs]
            for layer in range(layer_counts(cfg)[kind]):
                name = hook_name(kind, layer, "z")
                values = cache_a[name][0][[pa for _, pa in alignment.pairs]]  # [aligned, head, d_head]
                if batched:
                    with intervene(model, patch_edit(name, rows_b, values, None, per_row=True)):
                        logits_p = model(b.src.expand(H, -1), b.tgt.expand(H, -1))  # [H, tgt_pos, vocab]
                else:
                    parts = []
                    for h in range(H):
                        with intervene(model, patch_edit(name, rows_b, values[:, h], h)):
                            parts.append(model(b.src, b.tgt))
                    logits_p = torch.cat(parts)
                lp = torch.log_softmax(logits_p.double(), -1)  # [H, tgt_pos, vocab]
                kl = (lb[rows].exp() * (lb[rows] - lp[:, rows])).sum(-1).clamp_min(0.0).mean(-1)  # [H]
                toward = [None] * H
                if gap is not None:
                    moved = _js(la[[pairs[r] for r in aligned_rows]], lp[:, aligned_rows])  # [H, aligned]
                    ok = gap >= GAP_MIN
                    if bool(ok.any()):
                        share = 1.0 - moved[:, ok].sum(-1) / gap[ok].sum()  # [H]
                        toward = [float(v) for v in share]
                out += [PatchEffect(kind, layer, h, float(kl[h]), toward[h], len(rows_b)) for h in range(H)]
    return sorted(out, key=lambda e: -e.mean_kl)
