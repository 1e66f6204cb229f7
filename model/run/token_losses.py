"""Per-token loss of a teacher-forced analysis: what training minimised, token by token."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..store.bundle import Bundle
from .analysis import Analysis


def training_smoothing(bundle: Bundle) -> float:
    """The label smoothing the model was trained with (0.0 when its config does not say)."""
    train = bundle.info.get("train") if isinstance(bundle.info, dict) else None
    value = train.get("label_smoothing", 0.0) if isinstance(train, dict) else 0.0
    return float(value) if isinstance(value, int | float) else 0.0


@dataclass(frozen=True)
class TokenLosses:
    """Per-token loss of a teacher-forced analysis: the decoder read the reference, as in training."""

    tokens: list[str]  # the reference tokens each step had to predict (eos last when it fits)
    nll: np.ndarray  # [step] -log p(reference token): cross-entropy without label smoothing
    smoothed: np.ndarray  # [step] the training loss: (1 - eps)·nll + eps·(mean over the vocabulary of -log p)
    smoothing: float  # eps, the model's training label smoothing
    model_tokens: list[str]  # the token the model finds most likely at each step
    model_probs: np.ndarray  # [step] its probability
    differs: np.ndarray  # [step] bool: the model's own choice is not the reference token

    @property
    def mean_nll(self) -> float:
        return float(self.nll.mean())

    @property
    def mean_smoothed(self) -> float:
        return float(self.smoothed.mean())


def token_losses(result: Analysis, smoothing: float) -> TokenLosses:
    """Per-token losses of a teacher-forced analysis; their mean equals the training loss function
    (model/training/train.py loss_fn) on the same (source, reference) pair (tested)."""
    steps = result.steps
    nll = np.array([-np.log(max(s.prob, 1e-45)) for s in steps], dtype=np.float64)  # [step]
    uniform = np.array([s.mean_nll for s in steps], dtype=np.float64)  # [step]
    smoothed = (1.0 - smoothing) * nll + smoothing * uniform  # [step]
    return TokenLosses(
        tokens=[s.token for s in steps],
        nll=nll,
        smoothed=smoothed,
        smoothing=float(smoothing),
        model_tokens=[s.top_tokens[0] for s in steps],
        model_probs=np.array([s.top_probs[0] for s in steps], dtype=np.float64),
        differs=np.array([s.top_ids[0] != s.token_id for s in steps], dtype=bool),
    )
