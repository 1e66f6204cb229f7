"""Per-page glue: what one page needs beyond its widgets and the app-wide core (:mod:`app_support`), named by
the page's key (``app_pages/<key>.py`` imports ``app_pages/glue/<key>.py``, or ``<key>_<part>.py``) and
imported by that page only (and by tests and benchmarks). No torch, no figures; model results come through
the gateway. A page whose needs are a few lines keeps them in its own file (cost). Every module:

* :mod:`app_pages.glue.ablation` — the exact-match sample and a language model's ranking in slices.
* :mod:`app_pages.glue.atlas` — whether a model has an atlas, where it is stored, its tables and links.
* :mod:`app_pages.glue.attribution` — integration steps offered and rank agreement of one step.
* :mod:`app_pages.glue.deck` — what each slide needs from the model, and the deck's navigation and look.
* :mod:`app_pages.glue.decoding` — beam search as tree nodes and tables, sampling steps, reference losses.
* :mod:`app_pages.glue.detectors` — the roles and thresholds, links to a head, the table of the best heads.
* :mod:`app_pages.glue.flow` — the information-flow page's clicks, edge table and what it applies to.
* :mod:`app_pages.glue.lens` — the ids the logit lens reads, the window of positions, colour choices, clicks.
* :mod:`app_pages.glue.model` — shape symbols, configuration, evaluation and training history named.
* :mod:`app_pages.glue.patching` — which positions of B take A's activation, a language model's rankings.
* :mod:`app_pages.glue.pitfalls` — the pitfall lab's menus, a fault's runs, the heads' entropy.
* :mod:`app_pages.glue.projector` — preset and typed sentences, link values, the projection for a labelling.
* :mod:`app_pages.glue.single` — the window of a long pattern the single-head page draws.
* :mod:`app_pages.glue.single_export` — the single-head page's CSV and NPZ downloads.
* :mod:`app_pages.glue.training` — the scrubbed model, and the step and loss a link or the slider asks for.
* :mod:`app_pages.glue.variants` — the comparisons offered, their missing models, the key/value formula.
* :mod:`app_pages.glue.versus` — which models B may be, its default, why two models cannot be compared.
"""
