"""The files of one input that a user takes away: ``python -m model inspect --out``, the model page's zip
and the export page's NPZ (``viz/inspect_folder.py`` reads them back without torch).

    scopes.py     what one file holds (everything, a kind, a layer or a head) and its byte limit; no torch
    archive.py    activations.npz and meta.json of an analysis, written layer by layer
"""
