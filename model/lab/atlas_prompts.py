"""The prompt set a decoder-only model's atlas runs over: it has no test split of pairs, so its heads
are read over held-out prompts, each continued by a few tokens of the model's own.

    dataset = prompt_set(bundle, n=200)

- our induction model: the task's test sequences, each followed by the first half of its repeat,
  so the model should finish the repeat (what its induction heads are for);
- every other language model (our tiny-gpt, SmolLM2, an uploaded GPT-2 / Llama / Qwen): sentences
  of the Tatoeba test split, Chinese and English alternating, evenly spaced over the split.
"""

from __future__ import annotations

import numpy as np

from ..data.lm_training import InductionTask
from ..data.tatoeba import splits
from ..store.bundle import Bundle
from .atlas_result import AtlasError, Dataset
from .choices import ATLAS_NEW_TOKENS

#: Default number of prompts: SmolLM2 reads 50 in about 40 CPU seconds.
DEFAULT_PROMPTS = 50


def prompt_set(bundle: Bundle, n: int | None = None) -> Dataset:
    """``n`` held-out prompts (default 50) for a decoder-only model; AtlasError when n < 1."""
    n = DEFAULT_PROMPTS if n is None else n
    if n < 1:
        raise AtlasError(f"the sample must hold at least one prompt, got {n}")
    if isinstance(bundle.task, InductionTask):
        total = len(bundle.task.sequences("test"))
        picked = [bundle.task.sequences("test")[i] for i in spaced(total, n)]
        texts = [s + s[: len(s) // 2] for s in picked]
        what = "test sequences, each with half its repeat"
    else:
        pairs = splits()["test"]
        total = 2 * len(pairs)
        want = max(1, min(len(pairs), (n + 1) // 2))
        texts = [text for i in spaced(len(pairs), want) for text in (pairs[i].zh, pairs[i].en)][:n]
        what = "Tatoeba test sentences, Chinese and English alternating"
    return Dataset(
        texts=texts,
        directions=[None] * len(texts),
        references=[""] * len(texts),
        description=f"prompt set: {len(texts)} of {total} {what}, "
                    f"each continued by {ATLAS_NEW_TOKENS} tokens",
        total=total,
    )


def spaced(total: int, n: int) -> list[int]:
    """``n`` distinct indices evenly spread over range(total), first and last included."""
    n = max(1, min(n, total))
    return sorted({int(round(x)) for x in np.linspace(0, total - 1, n)})
