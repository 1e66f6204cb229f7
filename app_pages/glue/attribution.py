"""What the attribution page needs beyond what it asks the gateway for (``lab.attribution``): the
integration steps offered, the size of the agreement measurement, and the rank correlations of one
step's series with its attribution."""

from __future__ import annotations

import numpy as np

from model.lab.attribution import spearman

#: Integration steps offered (the midpoint rule's error shrinks as they grow; the page prints it).
STEP_CHOICES = (8, 16, 32, 64, 128)
DEFAULT_STEPS = 32
#: A language model's defaults: each output token costs one backward pass through the whole model,
#: so fewer integration steps and only the first output tokens (the page offers more).
LM_DEFAULT_STEPS = 16
OUTPUT_CHOICES = (1, 2, 4, 8)
LM_DEFAULT_OUTPUTS = 2
#: Sentences and integration steps of the agreement measurement.
AGREEMENT_SENTENCES = 12
AGREEMENT_STEPS = 16


def rank_agreement(series: dict[str, np.ndarray], target: np.ndarray) -> dict[str, float]:
    """Series name -> Spearman rank correlation of |series| with ``target`` (one step, over the source)."""
    return {name: spearman(np.abs(values), target) for name, values in series.items()}
