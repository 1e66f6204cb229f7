"""Activation patching on a decoder-only language model, every site at once: prompt A (clean) and
prompt B (corrupted) of equal token counts, A's activation put into B's run over the prompt, and per
site how far B's next-token distribution at the end of the prompt moves toward A's answer.

    heads = rank_heads(bundle, "The Eiffel Tower is in the city of", "The Colosseum is in the city of")
    grid = rank_residual(bundle, a, b)          # the residual stream after each block, one position each

Per site (only the prompt is read: what the first answer token is predicted from):

    recovered   (LD patched - LD B) / (LD A - LD B), LD = logit(A's answer) - logit(B's answer), the
                first greedy token of each; 1 = B prefers A's answer as much as A does, 0 = unmoved
                (None when both prompts give the same first token)
    mean_kl     KL(B intact || B patched) of that next-token distribution

A head is patched at every prompt position (its z from A); the residual stream at one (block,
position). A site in block L cannot change the blocks before L, so each block's batch starts there from
B's intact residual stream and the batches of later blocks join it (model.lab.ablation.joined_run);
`layers` = (start, stop) ranks a slice of blocks (a page's progress bar). `batched=False` runs the
plain reference: one full pass of B per site under `intervene`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..network.kinds import hook_name
from ..run.interventions import HookFunction, intervene
from ..store.bundle import Bundle
from . import entry
from .ablation import joined_run
from .patching import PatchEffect, patch_edit


@dataclass(frozen=True)
class ResidualEffect:
    layer: int  # the block whose output (hook_resid_post) is patched
    position: int  # the prompt position patched
    token: str  # B's token there
    mean_kl: float  # KL(B intact || B patched) at the end of the prompt
    recovered: float | None  # as in the module docstring


@dataclass
class _Pair:
    a: torch.Tensor  # [1, pos] prompt A
    b: torch.Tensor  # [1, pos] prompt B
    answers: tuple[int, int]  # the first greedy token after A and after B
    tokens_b: list[str]


def _pair(bundle: Bundle, text_a: str, text_b: str, direction: str | None) -> _Pair:
    """The two prompts (ValueError when their token counts differ) and their answers' first tokens."""
    model, tok = bundle.model, bundle.tokenizer
    if not model.cfg.decoder_only:
        raise ValueError("rank the sites of an encoder-decoder model with model.lab.patching.rank_patches")
    prompts = [bundle.task.prepare(t, model.cfg.max_len, direction).prefix for t in (text_a, text_b)]
    if len(prompts[0]) != len(prompts[1]):
        counts = f"A {len(prompts[0])}, B {len(prompts[1])}"
        raise ValueError(f"the prompts must have equal token counts ({counts})")
    a, b = torch.tensor([prompts[0]]), torch.tensor([prompts[1]])
    answers = tuple(int(model.named_logits(model(ids)[0, -1]).argmax()) for ids in (a, b))
    return _Pair(a, b, answers, tok.tokens(prompts[1]))


def _scores(model, pair: _Pair, intact_b: torch.Tensor, intact_a: torch.Tensor,
            last_hidden: torch.Tensor) -> tuple[list[float], list[float | None]]:
    """(KL, recovered) per row of the final-normed hidden states [rows, d_model] at the prompt's end."""
    logits = model.unembed(last_hidden).double()  # [rows, vocab]
    ta, tb = pair.answers
    lb = torch.log_softmax(intact_b.double(), -1)  # [vocab]
    kl = (lb.exp() * (lb - torch.log_softmax(logits, -1))).sum(-1).clamp_min(0.0)
    ld_a, ld_b = float(intact_a[ta] - intact_a[tb]), float(intact_b[ta] - intact_b[tb])
    ld = logits[:, ta] - logits[:, tb]
    recovered = [None if ta == tb else float((v - ld_b) / (ld_a - ld_b)) for v in ld]
    return [float(v) for v in kl], recovered


def _final(model, ids: torch.Tensor) -> torch.Tensor:
    """[1, d_model]: the decoder's output (after its final norm) at the end of the prompt."""
    return model.decoder(ids, None, model.attention_padding(ids), None)[:, -1]


@entry
@torch.no_grad()
def rank_heads(bundle: Bundle, text_a: str, text_b: str, direction: str | None = None,
               layers: tuple[int, int] | None = None, batched: bool = True) -> list[PatchEffect]:
    """Every head (of `layers`) patched alone from A into B over the prompt, by `recovered`, largest first."""
    model = bundle.model
    H, n = model.cfg.n_heads, model.cfg.n_dec_layers
    chosen = range(*(layers or (0, n)))
    with model.lock:
        model.eval()
        pair = _pair(bundle, text_a, text_b, direction)
        logits_a, cache_a = model.run_with_cache(pair.a, names_filter=lambda s: s.endswith("hook_z"))
        z_a = {i: cache_a[hook_name("decoder", i, "z")] for i in chosen}  # [1, pos, head, d_head]
        rows = list(range(pair.b.shape[1]))
        if batched:
            edits = [HookFunction(hook_name("decoder", i, "z"), _from_a_in_new_rows(z_a[i]), what="from A")
                     for i in chosen]
            logits_b, hidden = joined_run(model, pair.b, chosen, lambda _i, r: r.expand(H, -1, -1), edits)
            last = hidden[:, -1]  # [layers x H, d_model]
        else:
            logits_b = model(pair.b)
            last = []
            for i in chosen:
                for h in range(H):
                    with intervene(model, patch_edit(hook_name("decoder", i, "z"), rows, z_a[i][0, :, h], h)):
                        last.append(_final(model, pair.b))
            last = torch.cat(last) if last else torch.zeros(0, model.cfg.d_model)
        kl, recovered = _scores(model, pair, logits_b[0, -1], logits_a[0, -1], last)
    out = [PatchEffect("decoder", i, h, kl[j * H + h], None, len(rows), recovered[j * H + h])
           for j, i in enumerate(chosen) for h in range(H)]
    return sorted(out, key=lambda e: -(e.recovered if e.recovered is not None else e.mean_kl))


def _from_a_in_new_rows(z_a: torch.Tensor):
    """z [batch, pos, head, d_head] -> z with head h taken from A's z in the h-th of the layer's new rows."""
    H = z_a.shape[2]

    def edit(z: torch.Tensor) -> torch.Tensor:
        z, first = z.clone(), z.shape[0] - H
        for h in range(H):
            z[first + h, :, h] = z_a[0, :, h]
        return z
    return edit


@entry
@torch.no_grad()
def rank_residual(bundle: Bundle, text_a: str, text_b: str, direction: str | None = None,
                  layers: tuple[int, int] | None = None, batched: bool = True) -> list[ResidualEffect]:
    """The residual stream after each block of `layers`, at each prompt position alone, patched from A
    into B; in block, position order."""
    model = bundle.model
    n = model.cfg.n_dec_layers
    chosen = range(*(layers or (0, n)))
    with model.lock:
        model.eval()
        pair = _pair(bundle, text_a, text_b, direction)
        pos = pair.b.shape[1]
        logits_a, cache_a = model.run_with_cache(pair.a, names_filter=lambda s: s.endswith("hook_resid_post"))
        post = {i: cache_a[f"decoder.blocks.{i}.hook_resid_post"][0] for i in chosen}  # [pos, d_model]
        if batched:
            def joining(j: int, resid: torch.Tensor) -> torch.Tensor:  # block j - 1's output, row p from A
                x = resid.expand(pos, -1, -1).clone()
                x[range(pos), range(pos)] = post[j - 1][range(pos)]
                return x
            # Block i's output is block i + 1's input; the last block's feeds the final norm directly.
            logits_b, hidden = joined_run(model, pair.b, range(chosen.start + 1, min(chosen.stop + 1, n)),
                                          joining)
            last = hidden[:, -1]
            if n - 1 in chosen:
                name = f"decoder.blocks.{n - 1}.hook_resid_post"
                x = joining(n, model.run_with_cache(pair.b, names_filter=lambda s: s == name)[1][name])
                last = torch.cat([last, model.decoder.final_norm(x)[:, -1]])
        else:
            logits_b = model(pair.b)
            last = []
            for i in chosen:
                for p in range(pos):
                    edit = patch_edit(f"decoder.blocks.{i}.hook_resid_post", [p], post[i][[p]], None)
                    with intervene(model, edit):
                        last.append(_final(model, pair.b))
            last = torch.cat(last) if last else torch.zeros(0, model.cfg.d_model)
        kl, recovered = _scores(model, pair, logits_b[0, -1], logits_a[0, -1], last)
    return [ResidualEffect(i, p, pair.tokens_b[p], kl[j * pos + p], recovered[j * pos + p])
            for j, i in enumerate(chosen) for p in range(pos)]
