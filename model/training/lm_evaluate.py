"""How well a decoder-only model of ours predicts held-out text: next-token loss and perplexity.

    results = language_model_results(model, task, "test")
    # {"zh": {"loss": 3.6, "perplexity": 37.0, "n": 3156, "tokens": 41000}, "en": {...}}

The loss is the mean cross-entropy per predicted token (nats, no label smoothing), each text read as
in training (<bos> + its tokens + <eos>, every token after <bos> predicted); the perplexity is exp(loss).
Sentences (tiny-gpt) are reported per language, the induction task's sequences as one entry, "task".
"""

from __future__ import annotations

import math

from ..data.lm_training import SentencesTask
from ..network.transformer import Transformer
from .train import validation_loss


def language_model_results(model: Transformer, task, split: str = "test",
                           n: int | None = None) -> dict[str, dict]:
    """{group: {"loss", "perplexity", "n" texts, "tokens" predicted}} on ``split`` (n pairs or sequences)."""
    examples = task.examples(split, n)
    if isinstance(task, SentencesTask):  # examples alternate: each pair's Chinese, then its English
        groups = {"zh": examples[0::2], "en": examples[1::2]}
    else:
        groups = {"task": examples}
    out = {}
    for name, group in groups.items():
        group = [(s, t) for s, t in group if len(t) - 1 <= model.cfg.max_len]
        loss = validation_loss(model, group)
        out[name] = {"loss": round(loss, 4), "perplexity": round(math.exp(loss), 2), "n": len(group),
                     "tokens": sum(len(t) - 1 for _, t in group)}
    return out
