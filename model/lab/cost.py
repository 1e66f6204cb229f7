"""What attention costs as the input grows: timings for the cost page, bounded in time.

Two measurements, both on one torch thread and with the median of a few repeats:

- :func:`measure_attention`: Q Kᵀ, softmax and · V alone (the part that grows with L²) on random
  tensors with the model's h and d_head, at growing lengths while the time budget lasts;
- :func:`measure_model`: the whole model's forward pass (encoder and teacher-forced decoder) on random
  token ids, at the lengths the model accepts (up to max_len), with the attention core's share.

Every function takes ``budget_s`` and stops before a length it cannot finish in what is left (the next
length is predicted from the last one, ×4 per doubling). :func:`measure_cost` runs both within one
budget (the cost page sets its own).
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from ..store.budget import attention_layers
from ..store.bundle import Bundle
from . import entry
from .choices import COST_LENGTHS

#: Share of the budget for the attention-core sweep; the whole model gets the rest.
CORE_SHARE = 0.7
REPEATS = 5
_THREADS = threading.Lock()  # torch's thread count is global: one measurement at a time


@dataclass(frozen=True)
class Timing:
    """Median seconds per length, and what was left out."""

    lengths: list[int]
    seconds: list[float]
    skipped: list[int] = field(default_factory=list)  # lengths not measured: the budget ran out
    elapsed_s: float = 0.0
    budget_s: float = 0.0
    repeats: int = REPEATS

    @property
    def stopped_early(self) -> bool:
        return bool(self.skipped)


@dataclass(frozen=True)
class ModelTiming(Timing):
    core_seconds: list[float] = field(default_factory=list)  # attention core, one layer, at each length
    n_attention_layers: int = 0  # attention layers in one forward pass (encoder + 2 per decoder block)

    @property
    def shares(self) -> list[float]:
        """Share of the forward time taken by the attention core of every layer (0..1)."""
        return [
            min(1.0, self.n_attention_layers * c / s) if s > 0 else 0.0
            for c, s in zip(self.core_seconds, self.seconds, strict=True)
        ]


def attention_core(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(Q Kᵀ / √d_head) · V: q, k, v [batch, head, L, d_head]; the scores are [batch, head, L, L]."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores, dim=-1) @ v


def _median_time(run: Callable[[], object], repeats: int, deadline: float) -> float | None:
    """Median seconds of ``run`` after one warm-up call; None if the deadline passes first."""
    run()
    times = []
    for _ in range(repeats):
        if time.perf_counter() > deadline:
            return None
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class _OneThread:
    def __enter__(self) -> None:
        _THREADS.acquire()
        self.before = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        torch.set_num_threads(self.before)
        _THREADS.release()


def _sweep(
    lengths: Sequence[int], budget_s: float, repeats: int, timed: Callable[[int], float | None]
) -> tuple[list[int], list[float], list[int], float]:
    """Run ``timed(L)`` for each length while the budget lasts; skip the rest."""
    start = time.perf_counter()
    deadline = start + budget_s
    done: list[int] = []
    secs: list[float] = []
    for i, n in enumerate(lengths):
        left = deadline - time.perf_counter()
        if done:  # predicted cost of this length: warm-up + repeats, growing like L²
            predicted = secs[-1] * (n / done[-1]) ** 2 * (repeats + 1)
            if predicted > left:
                return done, secs, list(lengths[i:]), time.perf_counter() - start
        if left <= 0:
            return done, secs, list(lengths[i:]), time.perf_counter() - start
        t = timed(n)
        if t is None:
            return done, secs, list(lengths[i:]), time.perf_counter() - start
        done.append(int(n))
        secs.append(t)
    return done, secs, [], time.perf_counter() - start


def measure_attention(
    n_heads: int,
    d_head: int,
    *,
    budget_s: float,
    lengths: Sequence[int] = COST_LENGTHS,
    repeats: int = REPEATS,
    batch: int = 1,
    seed: int = 0,
) -> Timing:
    """Median time of the attention core at each length (one thread), while ``budget_s`` lasts."""
    gen = torch.Generator().manual_seed(seed)
    deadline_box: dict[str, float] = {}

    def timed(n: int) -> float | None:
        q, k, v = (torch.randn(batch, n_heads, n, d_head, generator=gen) for _ in range(3))
        return _median_time(lambda: attention_core(q, k, v), repeats, deadline_box["end"])

    with _OneThread(), torch.inference_mode():
        deadline_box["end"] = time.perf_counter() + budget_s
        done, secs, skipped, elapsed = _sweep(lengths, budget_s, repeats, timed)
    return Timing(done, secs, skipped, elapsed, budget_s, repeats)


def model_lengths(max_len: int) -> list[int]:
    """Lengths to run the whole model at: powers of two from 8, and max_len itself."""
    out = [n for n in (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192) if n < max_len]
    return [*out, max_len]


def measure_model(
    model: torch.nn.Module,
    *,
    budget_s: float,
    lengths: Sequence[int] | None = None,
    repeats: int = REPEATS,
    seed: int = 0,
) -> ModelTiming:
    """Median time of one forward pass (source and target both L random tokens, batch 1) at each length
    the model accepts, with the attention core's time at the same length (one layer)."""
    cfg = model.cfg
    lengths = list(lengths) if lengths is not None else model_lengths(cfg.max_len)
    gen = torch.Generator().manual_seed(seed)
    low = cfg.pad_id + 1 if cfg.pad_id + 1 < min(cfg.vocab_size, cfg.output_vocab_size) else 0
    cores: dict[int, float] = {}
    deadline_box: dict[str, float] = {}

    def timed(n: int) -> float | None:
        src = torch.randint(low, cfg.vocab_size, (1, n), generator=gen)
        tgt = torch.randint(low, cfg.output_vocab_size, (1, n), generator=gen)  # the decoder's own vocabulary
        if getattr(cfg, "encoder_only", False):  # forward(src) alone, no decoder
            run_once = lambda: model(src)  # noqa: E731
        elif getattr(cfg, "decoder_only", False):  # one sequence, no source
            run_once = lambda: model(tgt)  # noqa: E731
        else:
            run_once = lambda: model(src, tgt)  # noqa: E731
        t = _median_time(run_once, repeats, deadline_box["end"])
        if t is None:
            return None
        q, k, v = (torch.randn(1, cfg.n_heads, n, cfg.d_head, generator=gen) for _ in range(3))
        core = _median_time(lambda: attention_core(q, k, v), repeats, deadline_box["end"])
        if core is None:
            return None
        cores[n] = core
        return t

    lock = getattr(model, "lock", None)
    with _OneThread(), torch.inference_mode(), lock if lock is not None else _NoLock():
        was_training = model.training
        model.eval()
        try:
            deadline_box["end"] = time.perf_counter() + budget_s
            done, secs, skipped, elapsed = _sweep(lengths, budget_s, repeats, timed)
        finally:
            model.train(was_training)
    return ModelTiming(
        done,
        secs,
        skipped,
        elapsed,
        budget_s,
        repeats,
        core_seconds=[cores[n] for n in done],
        n_attention_layers=attention_layers(cfg),
    )


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@dataclass(frozen=True)
class Cost:
    """Both measurements of one model, and the budget they shared."""

    attention: Timing
    model: ModelTiming
    n_heads: int
    d_head: int
    budget_s: float


@entry
def measure_cost(bundle: Bundle, budget_s: float) -> Cost:
    """Both measurements for the model of ``bundle``, within ``budget_s`` seconds in all: the attention
    core gets :data:`CORE_SHARE` of it, the whole model what the core left."""
    cfg = bundle.cfg
    attention = measure_attention(cfg.n_heads, cfg.d_head, budget_s=budget_s * CORE_SHARE)
    left = max(0.0, budget_s - attention.elapsed_s)
    model = measure_model(bundle.model, budget_s=left)
    return Cost(attention, model, cfg.n_heads, cfg.d_head, budget_s)
