"""Words drawn inside figures (titles, axis titles, legends, hover text): one module per figure family
(the viz module that draws it), each with ``EN`` and ``ZH``, read through :func:`viz.labels.label`.

Tokens of the model are data and never translated: they come in as (escaped) parameters, never
written into a template. Plotly placeholders such as ``%{z:.3f}`` come in the same way, so no
template here holds a literal brace.
"""
