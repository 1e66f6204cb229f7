"""Training loop: AdamW, warmup then cosine decay, clipping, label smoothing, resumable checkpoints.

`train(...)` reports progress through a callback so the command line (a tqdm bar, `TqdmProgress`)
and the app can both show it. Runs save into a folder (see checkpoint.py) plus optimizer/trainer state, and
`resume=True` carries on from there, with the same batch order as an uninterrupted run.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..data.batches import pad_batch
from ..data.tasks import Example
from ..network.config import ModelConfig, TrainConfig
from ..network.transformer import Transformer
from ..store.bundle import read_json
from ..store.formats.own import load_checkpoint, save_checkpoint
from .average import keep_weights


@dataclass
class Progress:
    step: int
    max_steps: int
    loss: float  # mean training loss since the last report
    lr: float
    tokens_per_s: float
    eta_s: float
    epoch: int
    valid: dict | None = None  # filled on evaluation steps


def make_batches(
    examples: list[Example], batch_tokens: int, max_batch_size: int, seed: int
) -> list[list[int]]:
    """Length-bucketed batches of example indices with about batch_tokens (padded) tokens each, shuffled."""
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), len(examples[i][1])))
    batches, current, width = [], [], 0
    for i in order:
        w = max(width, len(examples[i][0]) + len(examples[i][1]))
        if current and (w * (len(current) + 1) > batch_tokens or len(current) >= max_batch_size):
            batches.append(current)
            current, w = [], len(examples[i][0]) + len(examples[i][1])
        current.append(i)
        width = w
    if current:
        batches.append(current)
    random.Random(seed).shuffle(batches)
    return batches


def collate(examples: list[Example], idx: list[int], pad_id: int):
    src = pad_batch([examples[i][0] for i in idx], pad_id)  # [batch, src_pos]
    tgt = pad_batch([examples[i][1] for i in idx], pad_id)  # [batch, tgt_pos+1]
    return src, tgt[:, :-1], tgt[:, 1:]  # teacher forcing: input shifted right of the output


def lr_at(step: int, tc: TrainConfig) -> float:
    if step < tc.warmup_steps:
        return tc.lr * (step + 1) / tc.warmup_steps
    progress = min(1.0, (step - tc.warmup_steps) / max(1, tc.max_steps - tc.warmup_steps))
    return tc.lr * (tc.min_lr_ratio + (1 - tc.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def loss_fn(
    logits: torch.Tensor, target: torch.Tensor, pad_id: int, smoothing: float, ignore_pad: bool = True
) -> torch.Tensor:
    """Mean cross-entropy over target tokens; padding targets are skipped unless ignore_pad is False
    (the padding fault, ModelConfig.mask_padding=False: the model is also trained to predict padding)."""
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        target.reshape(-1),
        ignore_index=pad_id if ignore_pad else -100,
        label_smoothing=smoothing,
    )


def gradient_norm(parameters) -> float:
    """Global L2 norm of the gradients (what clip_grad_norm_ measures), without changing them."""
    norms = [p.grad.detach().norm(2) for p in parameters if p.grad is not None]
    return float(torch.linalg.vector_norm(torch.stack(norms), 2)) if norms else 0.0


def _compact(x: float) -> float | None:
    """A per-step figure for history.json: 5 significant digits; None for inf/NaN (not valid JSON)."""
    return float(f"{x:.5g}") if math.isfinite(x) else None


def step_series(history: list[dict]) -> dict[str, list]:
    """Every optimiser step's figures, gathered from the history records:
    {"step": [1, 2, ...], "loss": [...], "grad_norm": [...]}.

    loss is that step's training loss (label smoothing included; padding included only for a model
    trained with mask_padding=False); grad_norm the global gradient norm before any clipping. None
    stands for a non-finite value. Records without per-step arrays (older checkpoints) add nothing.
    """
    out: dict[str, list] = {"step": [], "loss": [], "grad_norm": []}
    for r in history:
        losses, norms = r.get("step_losses"), r.get("step_grad_norms")
        if not isinstance(losses, list) or not isinstance(norms, list) or len(losses) != len(norms):
            continue
        first = r["step"] - len(losses) + 1
        out["step"].extend(range(first, r["step"] + 1))
        out["loss"].extend(losses)
        out["grad_norm"].extend(norms)
    return out


@torch.no_grad()
def validation_loss(model: Transformer, examples: list[Example], batch_tokens: int = 4096) -> float:
    """Mean per-token cross-entropy (no smoothing) over examples, padding ignored."""
    model.eval()
    total, count = 0.0, 0
    pad = model.cfg.pad_id
    for idx in make_batches(examples, batch_tokens, 512, seed=0):
        src, tgt_in, tgt_out = collate(examples, idx, pad)
        logits = model.teacher_forced(src, tgt_in)
        n = int((tgt_out != pad).sum())
        total += float(loss_fn(logits, tgt_out, pad, 0.0)) * n
        count += n
    model.train()
    return total / max(count, 1)


def fit_to_max_len(examples: list[Example], max_len: int) -> list[Example]:
    """Drop training pairs longer than the model accepts (they would be cut mid-sentence)."""
    return [(s, t) for s, t in examples if len(s) <= max_len and len(t) - 1 <= max_len]


@dataclass
class _RunState:
    """Where a run stands: what trainer.json holds, so a resumed run carries on with the same batches."""

    step: int = 0
    epoch: int = 0
    batch_pos: int = 0  # next batch of this epoch's batch order


@dataclass
class _SinceRecord:
    """What the steps since the last history record measured."""

    t_last: float  # when the last record was written (perf_counter)
    tokens: int = 0  # source + target tokens, padding excluded
    loss_sum: float = 0.0
    loss_n: int = 0
    step_losses: list[float | None] = field(default_factory=list)  # per step since the last history record
    step_grad_norms: list[float | None] = field(default_factory=list)  # global gradient norm before clipping

    def add(self, tokens: int, loss: float, grad_norm: float) -> None:
        self.tokens += tokens
        self.loss_sum += loss
        self.loss_n += 1
        self.step_losses.append(_compact(loss))
        self.step_grad_norms.append(_compact(grad_norm))


def train(
    model_config: ModelConfig,
    train_config: TrainConfig,
    task,
    out_dir: Path,
    callback: Callable[[Progress], None] | None = None,
    resume: bool = False,
    evaluate: Callable[[Transformer], dict] | None = None,
    info: dict | None = None,
    init_from: Path | None = None,
    on_step: Callable[[int, Transformer], None] | None = None,
    keep_checkpoints: bool = False,
) -> Transformer:
    """Train a model on task's train split, saving checkpoints in out_dir; returns the model.

    evaluate(model) -> dict is called at each validation point (e.g. BLEU on a sample) and its
    figures join the history. on_step(step, model) is called before the first step and after every
    optimiser step (e.g. snapshots.SnapshotSaver). init_from starts a new run (fresh optimizer and
    schedule) from the weights and history of another checkpoint, e.g. a shipped model whose run
    folder is gone. keep_checkpoints also keeps the float32 weights of every checkpoint as
    ``checkpoints/step-NNNNNN.safetensors`` in out_dir (for averaging the last few, see average.py).
    """
    out_dir = Path(out_dir)
    tc = train_config
    train_ex, valid_ex = _seeded_examples(model_config, tc, task)
    model = Transformer(model_config)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, betas=tc.betas, weight_decay=tc.weight_decay)
    history, at = _starting_point(model, opt, model_config, tc, out_dir, resume, init_from)

    def save(final: bool = False) -> None:
        meta = {"step": at.step, "train": tc.to_dict(), "final": final, **(info or {})}
        _save_run(out_dir, model, opt, task, meta, history, at, keep_checkpoints)

    pad = model_config.pad_id
    model.train()
    since = _SinceRecord(time.perf_counter())
    t_start, step_start = time.perf_counter(), at.step
    if on_step is not None:
        on_step(at.step, model)
    while at.step < tc.max_steps:
        batches = make_batches(train_ex, tc.batch_tokens, tc.max_batch_size, seed=tc.seed * 1000 + at.epoch)
        while at.batch_pos < len(batches) and at.step < tc.max_steps:
            src, tgt_in, tgt_out = collate(train_ex, batches[at.batch_pos], pad)
            at.batch_pos += 1
            loss, grad_norm = _optimiser_step(model, opt, src, tgt_in, tgt_out, lr_at(at.step, tc), tc)
            at.step += 1
            since.add(int((src != pad).sum() + (tgt_out != pad).sum()), loss, grad_norm)
            if on_step is not None:
                on_step(at.step, model)
            evaluating = tc.eval_every and (at.step % tc.eval_every == 0 or at.step == tc.max_steps)
            if at.step % tc.log_every == 0 or evaluating or at.step == tc.max_steps:
                now = time.perf_counter()
                eta = (now - t_start) / max(at.step - step_start, 1) * (tc.max_steps - at.step)
                record = _history_record(since, at, tc, now)
                valid = _validate(model, valid_ex, evaluate) if evaluating else None
                if valid is not None:
                    record.update(valid)
                history.append(record)
                if callback:
                    callback(Progress(at.step, tc.max_steps, record["loss"], record["lr"],
                                      record["tokens_per_s"], eta, at.epoch, valid))
                since = _SinceRecord(time.perf_counter())
            if tc.save_every and at.step % tc.save_every == 0:
                save()
        if at.batch_pos >= len(batches):
            at.epoch, at.batch_pos = at.epoch + 1, 0
    save(final=True)
    model.eval()
    return model


def _seeded_examples(model_config: ModelConfig, tc: TrainConfig, task) -> tuple[list[Example], list[Example]]:
    """Seed python and torch for the run, then (training pairs, at most 2000 validation pairs) that fit."""
    if tc.num_threads:
        torch.set_num_threads(tc.num_threads)
    random.seed(tc.seed)
    torch.manual_seed(tc.seed)
    train_ex = fit_to_max_len(task.examples("train"), model_config.max_len)
    valid_ex = fit_to_max_len(task.examples("valid"), model_config.max_len)[:2000]
    if not train_ex:
        raise ValueError("the task produced no training examples that fit max_len")
    return train_ex, valid_ex


def _starting_point(model: Transformer, opt: torch.optim.Optimizer, model_config: ModelConfig,
                    tc: TrainConfig, out_dir: Path, resume: bool,
                    init_from: Path | None) -> tuple[list[dict], _RunState]:
    """(history, where the run stands) of a fresh run, a resumed one (``resume`` and out_dir holds a
    run: weights, optimizer and position restored) or one started from ``init_from``'s weights."""
    trainer_file = out_dir / "trainer.json"
    if resume and trainer_file.exists():
        bundle = load_checkpoint(out_dir)
        if bundle.cfg != model_config:
            raise ValueError(f"cannot resume: {out_dir} holds a model with another config")
        model.load_state_dict(bundle.model.state_dict())
        opt.load_state_dict(torch.load(out_dir / "optimizer.pt", weights_only=True))
        state = read_json(trainer_file)
        at = _RunState(state["step"], state["epoch"], state["batch_pos"])
        torch.manual_seed(tc.seed + at.step)
        return bundle.history, at
    if init_from is not None:
        start = load_checkpoint(init_from)
        if start.cfg != model_config:
            raise ValueError(f"cannot start from {init_from}: it holds a model with another config")
        model.load_state_dict(start.model.state_dict())
        offset = start.info.get("step", 0)
        history = [{**r, "note": f"from {init_from}"} for r in start.history]
        torch.manual_seed(tc.seed + offset)
        return history, _RunState()
    return [], _RunState()


def _save_run(out_dir: Path, model: Transformer, opt: torch.optim.Optimizer, task, meta: dict,
              history: list[dict], at: _RunState, keep_checkpoints: bool) -> None:
    """The checkpoint, optimizer state and trainer.json: all a resumed run needs."""
    save_checkpoint(out_dir, model, task, info=meta, history=history)
    if keep_checkpoints:
        keep_weights(out_dir, at.step, model)
    torch.save(opt.state_dict(), out_dir / "optimizer.pt")
    (out_dir / "trainer.json").write_text(
        json.dumps({"step": at.step, "epoch": at.epoch, "batch_pos": at.batch_pos})
    )


def _optimiser_step(model: Transformer, opt: torch.optim.Optimizer, src: torch.Tensor, tgt_in: torch.Tensor,
                    tgt_out: torch.Tensor, lr: float, tc: TrainConfig) -> tuple[float, float]:
    """One optimiser step at learning rate ``lr``: (its training loss, the gradient norm before clipping)."""
    cfg = model.cfg
    for group in opt.param_groups:
        group["lr"] = lr
    logits = model.teacher_forced(src, tgt_in)
    loss = loss_fn(logits, tgt_out, cfg.pad_id, tc.label_smoothing, ignore_pad=cfg.mask_padding)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if tc.grad_clip is None:
        grad_norm = gradient_norm(model.parameters())
    else:  # clip_grad_norm_ returns the norm it measured before clipping
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip))
    opt.step()
    return float(loss.detach()), grad_norm


def _history_record(since: _SinceRecord, at: _RunState, tc: TrainConfig, now: float) -> dict:
    """The history record of the steps since the last one (validation figures join it later)."""
    return {"step": at.step, "epoch": at.epoch, "loss": since.loss_sum / since.loss_n,
            "lr": lr_at(at.step - 1, tc), "tokens_per_s": since.tokens / max(now - since.t_last, 1e-9),
            "time": time.time(),
            # every step since the previous record (see step_series)
            "step_losses": since.step_losses, "step_grad_norms": since.step_grad_norms}


def _validate(model: Transformer, valid_ex: list[Example],
              evaluate: Callable[[Transformer], dict] | None) -> dict:
    """The validation loss, and evaluate(model)'s figures when given; the model is left in training mode."""
    valid = {"valid_loss": validation_loss(model, valid_ex)}
    if evaluate is not None:
        valid.update(evaluate(model))
        model.train()
    return valid


class TqdmProgress:
    """A training callback that shows progress as a tqdm bar (the CLI's choice; the app passes
    its own callback). Use it as a context manager so the bar is closed even when training stops
    early; validation results are printed as lines above the bar."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.bar: tqdm | None = None

    def __call__(self, p: Progress) -> None:
        if self.bar is None:
            # The first report may come late (log_every, or a resumed run): start the bar there.
            self.bar = tqdm(total=p.max_steps, initial=p.step, file=self.stream, unit="step",
                            dynamic_ncols=True, mininterval=0.5)
        else:
            self.bar.update(p.step - self.bar.n)
        self.bar.set_postfix_str(
            f"ep {p.epoch} loss {p.loss:.3f} lr {p.lr:.2e} {p.tokens_per_s:,.0f} tok/s", refresh=False
        )
        if p.valid:
            metrics = " ".join(f"{k} {v:.3f}" for k, v in p.valid.items() if isinstance(v, int | float))
            self.bar.write(f"step {p.step}: {metrics}", file=self.stream)
        self.bar.refresh()
        if p.step >= p.max_steps:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> TqdmProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
