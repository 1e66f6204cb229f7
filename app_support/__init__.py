"""The app-wide core between the Streamlit pages and model/ + viz/: the app's state, the one cache of
model results, the shared sidebar, URL state, and what several pages share. No torch here, and nothing
draws a figure (figures come from viz/). What one page alone needs is its glue, ``app_pages/glue/<key>.py``
(never imported from here). Every module:

* :mod:`app_support.anatomy` — a model's parameters part by part and its block's wiring, from its config.
* :mod:`app_support.byte_cache` — a cache bounded in bytes, the store behind the gateway.
* :mod:`app_support.gateway` — models loaded once, every model result cached.
* :mod:`app_support.head_summaries` — the statistics and aggregates pages' per-head summaries, streamed.
* :mod:`app_support.i18n` — the session's interface language over the string tables.
* :mod:`app_support.lab` — every ``@entry`` experiment of model/lab/, served cached (``lab.<module>.<fn>``).
* :mod:`app_support.interventions` — what the ablation, patching and attribution pages share.
* :mod:`app_support.messages` — notes about the input; the analysis and layer tensors of the input.
* :mod:`app_support.models` — what the picker says about a model (labels, examples, input limits).
* :mod:`app_support.navigation` — the page menu along the top, a popover per section; the first visit's line.
* :mod:`app_support.overview` — every head of a long input, a layer at a time (heads, focus, compare).
* :mod:`app_support.pages` — the page registry: files, titles, sections, URL parameters, redirects.
* :mod:`app_support.reverse_models` — what the training, variants and pitfalls pages share.
* :mod:`app_support.selection` — chart and table clicks turned into a (layer, head).
* :mod:`app_support.session_memory` — what a session keeps between runs, and nothing once it has gone.
* :mod:`app_support.sidebar` — draws the shared sidebar's widgets (and the way back to the talk deck).
* :mod:`app_support.strategy` — the decoding strategy's sidebar controls and URL word.
* :mod:`app_support.token_display` — word pieces merged, special tokens hidden: attention as pages draw it.
* :mod:`app_support.ui` — small display helpers (charts, notes, safe text).
* :mod:`app_support.url_state` — shareable URL state (parsing, writing, early stops), texts cut to the box.
* :mod:`app_support.user_models` — the session's own models: zip uploads and the models folder.
* :mod:`app_support.view` — ``View``, the app's state, ``current_view()`` and hand-offs between pages.
* :mod:`app_support.weighting` — the attention pages' weight | weight × ‖value‖ option.
"""
