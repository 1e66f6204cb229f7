"""Glue between the Streamlit pages and model/ + viz/: caching, the shared sidebar, URL state.

Nothing here draws a figure; figures come from viz/. Pages import from here:

* :mod:`app_support.models` — cached model loading and per-input analysis.
* :mod:`app_support.pages` — the page registry: files, titles, sections, URL parameters, redirects.
* :mod:`app_support.sidebar` — the shared sidebar and the view it selects.
* :mod:`app_support.url_state` — shareable URL state (parsing, writing, early stops).
* :mod:`app_support.messages` — notes about the input, and the analysis of the sidebar's sentence.
* :mod:`app_support.ui` — small display helpers (charts, notes, safe text).
"""
