"""What the induction model learned, measured on held-out sequences written twice (``s s``).

On the second copy, the next letter can only be found by looking back: a **previous-token head**
(each position attends to the one before it) lets every position carry its predecessor, and an
**induction head** then attends from the current letter to the position *after* that letter's
earlier occurrence, whose letter comes next. Both are measured on every head, with the loss on each
copy: the first copy is random letters (about ln 26 = 3.26 nats a letter), the second is copying.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..network.kinds import hook_name
from ..store.bundle import Bundle
from . import entry


@dataclass(frozen=True)
class InductionReport:
    sequences: int  # held-out sequences measured
    # [layer, head] mean weight from a second-copy letter to the one after its first occurrence
    induction: np.ndarray
    previous: np.ndarray  # [layer, head] mean weight from each position to the one before it
    loss_first: float  # mean next-letter loss over the first copy (nats)
    loss_second: float  # mean next-letter loss over the second copy (nats)

    def best(self, scores: np.ndarray) -> tuple[int, int]:
        """(layer, head) with the highest score."""
        layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
        return int(layer), int(head)


def scores_of(patterns: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(induction, previous-token) score of every head, from one sequence's patterns
    [layer, head, pos, pos] over ``<bos> s s`` with ``len(s) == k``.

    Second-copy letter j sits at 1 + k + j; the letter after its first occurrence at j + 2."""
    queries = np.arange(1 + k, 2 * k)  # second-copy letters that have a next letter in the copy
    induction = patterns[:, :, queries, queries - k + 1].mean(-1)  # [layer, head]
    positions = np.arange(1, patterns.shape[-1])
    previous = patterns[:, :, positions, positions - 1].mean(-1)  # [layer, head]
    return induction, previous


@entry
@torch.no_grad()
def induction_report(bundle: Bundle, n: int = 200) -> InductionReport:
    """The scores and both copies' losses, averaged over ``n`` test-split sequences."""
    task, model = bundle.task, bundle.model
    layers = model.cfg.n_dec_layers
    induction, previous, first, second = [], [], [], []
    for s in task.sequences("test", n):
        k = len(s)
        ids = [task.tokenizer.bos_id, *task.tokenizer.encode(s + s)]
        logits, cache = model.run_with_cache(torch.tensor([ids]))
        patterns = np.stack([cache[hook_name("decoder", i, "pattern")][0].numpy() for i in range(layers)])
        a, b = scores_of(patterns, k)
        induction.append(a)
        previous.append(b)
        losses = F.cross_entropy(logits[0, :-1], torch.tensor(ids[1:]), reduction="none").numpy()  # [pos]
        first.append(losses[1:k].mean())  # predicting first-copy letters 2..k (the first has nothing before)
        second.append(losses[k + 1 :].mean())  # predicting second-copy letters 2..k
    return InductionReport(len(induction), np.mean(induction, 0), np.mean(previous, 0), float(np.mean(first)),
                           float(np.mean(second)))
