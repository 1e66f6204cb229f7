"""Glue between the Streamlit pages and model/ + viz/: caching, the shared sidebar, URL state.

Nothing here draws a figure; figures come from viz/. Pages import from here:

* :mod:`app_support.models` — cached model loading and per-input analysis.
* :mod:`app_support.state` — the shared sidebar, the current view, shareable URL state.
* :mod:`app_support.ui` — small display helpers (charts, notes, safe text).
"""
