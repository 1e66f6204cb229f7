"""Glue between the Streamlit pages and model/ + viz/: the app's state, the one cache of model
results, the shared sidebar, URL state. No torch here, and nothing draws a figure (figures come from
viz/). Pages import from here:

* :mod:`app_support.gateway` — models loaded once, every model result cached (``lab.<module>.<fn>``).
* :mod:`app_support.view` — ``View``, the app's state, and ``current_view()``.
* :mod:`app_support.sidebar` — draws the shared sidebar's widgets.
* :mod:`app_support.models` — what the picker says about a model (labels, examples, input limits).
* :mod:`app_support.pages` — the page registry: files, titles, sections, URL parameters, redirects.
* :mod:`app_support.url_state` — shareable URL state (parsing, writing, early stops).
* :mod:`app_support.messages` — notes about the input, and the analysis of the sidebar's sentence.
* :mod:`app_support.ui` — small display helpers (charts, notes, safe text).
"""
