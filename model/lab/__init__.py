"""The experiments the app's pages run on a loaded model, one module each.

Each module takes a :class:`model.store.bundle.Bundle` and plain values and returns plain results
(dataclasses of numpy arrays, numbers, strings): the app caches them by model and arguments
(``app_support/gateway.py``) and draws them (``viz/``). Every change to the forward pass goes
through :mod:`model.run.interventions` (an experiment's own change is a ``HookFunction`` edit), which
always undoes it; never through the weights.

    choices.py        what the pages choose from and are told (heads, patch sites, bounds); no torch
    model.py          the model page: training record and the full archive of one input
    masks.py          the masks page: a padded batch of two sentences, and what the masks hide
    pitfalls.py       the pitfall lab: the model run with one fault switched on
    ablation.py       which head matters: remove one at a time
    patching.py       activation patching between two sentences
    patching_lm.py    activation patching on a decoder-only language model, every site at once
    attribution.py    attribution beside attention
    flow.py           norm-based attention and the information-flow graph of a prediction
    lens.py           the logit lens: what each layer would predict if the model stopped there
    detectors.py      head detectors: one score per role for every head
    atlas.py          the head atlas: what every head does over a whole dataset
    atlas_prompts.py  the prompt set a decoder-only model's atlas runs over
    atlas_result.py   what an atlas holds: statistics, roles, the result
    atlas_stats.py    the atlas's statistics, numpy only
    atlas_files.py    the atlas on disk, keyed on the weights
    atlas_corpus.py   your own corpus file (text, JSONL, Parquet): bounds and a seeded sample
    atlas_shards.py   the atlas and detectors over a corpus in shards: one process, a pool or Ray
    induction.py      what the induction model learned
    positional.py     the positional-encoding lab
    projector.py      one word's hidden state at every layer, in 2-D
    families.py       three model families, one sentence
    versus.py         model vs model: each head matched with its nearest head of the other
    variants.py       the architecture variants side by side
    training.py       the training page: a model at a chosen training step
    cost.py           what attention costs as the input grows
    deck.py           the live deck's residual-stream slide
    worked.py         one attention layer's full activations, for the worked example
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Entry", "entry"]


@dataclass(frozen=True)
class Entry:
    """How the app may call an experiment function (read by ``app_support/gateway.py``)."""

    models: int = 1  # how many leading arguments are loaded models (Bundles): the app passes names
    frees_memory: bool = False  # results of hundreds of MB: collect garbage before and after


def entry(fn: Callable | None = None, *, models: int = 1, frees_memory: bool = False) -> Callable:
    """Mark ``fn`` as a function the app's pages may ask for (through the gateway, cached by model
    and arguments). Its arguments must be hashable values (or lists of them) and it must not keep
    or change what it is given; it returns plain results. ``fn`` itself is returned unchanged."""
    if fn is None:
        return lambda f: entry(f, models=models, frees_memory=frees_memory)
    fn.lab_entry = Entry(models, frees_memory)
    return fn
