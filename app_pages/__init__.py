"""The pages, one file each, named by its key in the page registry (:mod:`app_support.pages`): widgets and
layout only. A page's own model experiment is ``model/lab/<key>.py``, its figures ``viz/<key>.py``, its text
``strings/pages/<key>.py`` (and ``strings/figures/<key>.py``), its glue ``app_pages/glue/<key>.py`` (each
where it has one; ``tests/test_naming.py`` checks the names). Every module:

* :mod:`app_pages.single` — one head's attention pattern as a token x token heatmap (the start page).
* :mod:`app_pages.heads` — every layer x head of one attention kind as small multiples.
* :mod:`app_pages.focus` — one token across every head: where it looks and who looks at it.
* :mod:`app_pages.aggregates` — the mean over heads of one layer, and attention rollout across layers.
* :mod:`app_pages.decoding` — cross-attention through the chosen decoding, one output token at a time.
* :mod:`app_pages.compare` — the same head on two sentences, and which heads change most.
* :mod:`app_pages.stats` — numbers that summarise what each head does, and which heads are alike.
* :mod:`app_pages.model` — the model itself: shape trace, parameters, config, metrics, training curve.
* :mod:`app_pages.mymodels` — the session's own models: uploads and the models folder.
* :mod:`app_pages.atlas` — every head's figures over held-out data, role labels, sentences where a head fires.
* :mod:`app_pages.deck` — the talk: six slides and an exercise, each with a live figure.
* :mod:`app_pages.worked` — the classroom exercise (attention by hand) with the model's own numbers.
* :mod:`app_pages.masks` — padding and causal masks of a real batch, and the decoder without its causal mask.
* :mod:`app_pages.families` — encoder-only, encoder-decoder and decoder-only models on one sentence.
* :mod:`app_pages.architecture` — the loaded model's diagram with real shapes, and the multi-head split.
* :mod:`app_pages.cost` — attention's L² time and memory measured against the input's length.
* :mod:`app_pages.pitfalls` — classic Transformer bugs, each run for real.
* :mod:`app_pages.positional` — the positional encoding: its table, RoPE, the relative-position shift.
* :mod:`app_pages.ablation` — heads switched off, the output re-decoded, every head ranked alone.
* :mod:`app_pages.patching` — one head's output (or residual stream) moved from sentence A into B.
* :mod:`app_pages.attribution` — which input tokens each output token used, beside where attention looks.
* :mod:`app_pages.lens` — the logit lens: each layer's residual stream read as tokens.
* :mod:`app_pages.flow` — which links carry a prediction: the information-flow graph, with edge knock-outs.
* :mod:`app_pages.detectors` — a score per role (previous token, induction, copying, ...) for every head.
* :mod:`app_pages.versus` — two models' heads matched on one sentence.
* :mod:`app_pages.projector` — one word's hidden state over many sentences, projected per layer.
* :mod:`app_pages.training` — the reverse model at each saved step of its training.
* :mod:`app_pages.variants` — the reverse task trained with one architectural change at a time.
* :mod:`app_pages.glue` — per-page glue (its own package docstring lists its modules).
"""
