"""Every experiment of ``model/lab/`` a page may ask for, served through the gateway's store.

One class per ``model/lab/`` module, one line per ``@entry`` function: ``lab.ablation.rank_heads(name,
text, ...)`` is ``model.lab.ablation.rank_heads(bundle, text, ...)`` on the loaded model, its result
kept by :func:`app_support.gateway.served` (keyed on the model names, their weights and the other
arguments). Spelled out, so that an editor follows a page's call here and from here into ``model/lab/``;
``tests/app/test_app_support.py`` checks that every ``@entry`` function is here and nothing else.
"""

from __future__ import annotations

from app_support.gateway import served
from model.lab import (
    ablation as _ablation,
)
from model.lab import (
    atlas as _atlas,
)
from model.lab import (
    atlas_files as _atlas_files,
)
from model.lab import (
    atlas_shards as _atlas_shards,
)
from model.lab import (
    attribution as _attribution,
)
from model.lab import (
    cost as _cost,
)
from model.lab import (
    deck as _deck,
)
from model.lab import (
    detectors as _detectors,
)
from model.lab import (
    families as _families,
)
from model.lab import (
    flow as _flow,
)
from model.lab import (
    induction as _induction,
)
from model.lab import (
    lens as _lens,
)
from model.lab import (
    masks as _masks,
)
from model.lab import (
    model as _model,
)
from model.lab import (
    patching as _patching,
)
from model.lab import (
    patching_lm as _patching_lm,
)
from model.lab import (
    pitfalls as _pitfalls,
)
from model.lab import (
    positional as _positional,
)
from model.lab import (
    projector as _projector,
)
from model.lab import (
    training as _training,
)
from model.lab import (
    variants as _variants,
)
from model.lab import (
    versus as _versus,
)
from model.lab import (
    worked as _worked,
)


class ablation:
    """``model.lab.ablation``."""

    ablate = served(_ablation.ablate)
    ablated_analysis = served(_ablation.ablated_analysis)
    continuation = served(_ablation.continuation)
    exact_match_ablated = served(_ablation.exact_match_ablated)
    rank_heads = served(_ablation.rank_heads)
    sample_texts = served(_ablation.sample_texts)


class atlas:
    """``model.lab.atlas``."""

    atlas_inputs = served(_atlas.atlas_inputs)
    held_out_dataset = served(_atlas.held_out_dataset)
    read_atlas = served(_atlas.read_atlas)
    weights_key = served(_atlas.weights_key)


class atlas_files:
    """``model.lab.atlas_files``."""

    read_atlas = served(_atlas_files.read_atlas)
    weights_key = served(_atlas_files.weights_key)


class atlas_shards:
    """``model.lab.atlas_shards``."""

    read_detectors = served(_atlas_shards.read_detectors)


class attribution:
    """``model.lab.attribution``."""

    agreement = served(_attribution.agreement)
    attribute = served(_attribution.attribute)


class cost:
    """``model.lab.cost``."""

    measure_cost = served(_cost.measure_cost)


class deck:
    """``model.lab.deck``."""

    residual_stream = served(_deck.residual_stream)


class detectors:
    """``model.lab.detectors``."""

    probe_scores = served(_detectors.probe_scores)
    text_scores = served(_detectors.text_scores)


class families:
    """``model.lab.families``."""

    family_column = served(_families.family_column)


class flow:
    """``model.lab.flow``."""

    check_edges = served(_flow.check_edges)
    flow_graph = served(_flow.flow_graph)


class induction:
    """``model.lab.induction``."""

    induction_report = served(_induction.induction_report)


class lens:
    """``model.lab.lens``."""

    logit_lens = served(_lens.logit_lens)


class masks:
    """``model.lab.masks``."""

    causal_demo_run = served(_masks.causal_demo_run)
    default_other = served(_masks.default_other)
    layer_run = served(_masks.layer_run)
    padded_batch = served(_masks.padded_batch)
    sliding_windows = served(_masks.sliding_windows)


class model:
    """``model.lab.model``."""

    archive = served(_model.archive)
    archive_scopes = served(_model.archive_scopes)
    training_record = served(_model.training_record)


class patching:
    """``model.lab.patching``."""

    patch = served(_patching.patch)
    rank_patches = served(_patching.rank_patches)


class patching_lm:
    """``model.lab.patching_lm``."""

    rank_heads = served(_patching_lm.rank_heads)
    rank_residual = served(_patching_lm.rank_residual)


class pitfalls:
    """``model.lab.pitfalls``."""

    dimension_run = served(_pitfalls.dimension_run)
    fault_problems = served(_pitfalls.fault_problems)
    layer_run = served(_pitfalls.layer_run)
    masked_row_demo = served(_pitfalls.masked_row_demo)
    order_run = served(_pitfalls.order_run)
    trained_run = served(_pitfalls.trained_run)
    trained_word = served(_pitfalls.trained_word)
    truncation_run = served(_pitfalls.truncation_run)


class positional:
    """``model.lab.positional``."""

    layer_rotations = served(_positional.layer_rotations)
    position_biases = served(_positional.position_biases)
    position_table = served(_positional.position_table)
    rope_frequencies = served(_positional.rope_frequencies)
    rope_scores = served(_positional.rope_scores)
    sentence_input_vectors = served(_positional.sentence_input_vectors)
    sinusoid_shift = served(_positional.sinusoid_shift)


class projector:
    """``model.lab.projector``."""

    word_states = served(_projector.word_states)


class training:
    """``model.lab.training``."""

    step_run = served(_training.step_run)
    steps = served(_training.steps)
    timeline = served(_training.timeline)


class variants:
    """``model.lab.variants``."""

    variant_row = served(_variants.variant_row)
    variant_view = served(_variants.variant_view)


class versus:
    """``model.lab.versus``."""

    compare = served(_versus.compare)
    tokenizer_match = served(_versus.tokenizer_match)


class worked:
    """``model.lab.worked``."""

    layer_tensors_for = served(_worked.layer_tensors_for)
