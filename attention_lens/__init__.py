"""Attention Lens as a Python library: load a model, run a text, draw the app's figures.

    >>> import attention_lens as al
    >>> run = al.load("reverse").run("attention")
    >>> run.output
    'noitnetta'
    >>> fig = al.head_view(run, kind="cross", layer=1, head=0)   # a plotly Figure
    >>> fig.data[-1].z.shape
    (10, 10)

The same figures take attention you computed elsewhere (Hugging Face ``outputs.attentions``, a
TransformerLens cache, a ``[layer, head, query, key]`` array, BertViz's encoder–decoder keywords) with
its tokens: ``al.attention_heads(outputs.attentions, tokens)``. That path needs no torch.

Nothing here computes on its own: models are opened by the command line's loader, texts run by the
analysis every page draws, figures drawn by the pages' ``viz/`` functions, interventions are the
Intervene pages' ``model/lab/`` functions (see each module's docstring).

    checks.py         ArgumentError, the exception every bad argument gets
    models.py         load, Model, Run
    attention.py      as_attention, Attention: attention of your own, checked
    figures.py        head_view, attention_heads, token_focus, logit_lens, head_detectors, compare,
                      save_figure
    interventions.py  ablate, rank_heads, patch, rank_patches, attribute, head_edits, Site
    classroom.py      projector, families: the projector's and the three families' figures
    flow.py           norm_view, information_flow, flow_edges: weight × ‖value‖ and the information flow
    cli.py            the attention-lens command (app, notebook, figure, python -m model's commands)

Importing it changes one thing outside itself: when nobody chose plotly's renderer (neither
``PLOTLY_RENDERER`` nor ``plotly.io.renderers.default`` set before), it is set to ``"notebook"``, which
embeds plotly.js in the notebook, so figures show inline in Jupyter and VS Code without a network.
The models and interventions are imported when first used, so the figures of your own attention run
without torch.
"""

from __future__ import annotations

import importlib
import os
import sys

_PLOTLY_BEFORE = "plotly.io" in sys.modules  # read before anything here imports plotly
#: The renderers plotly picks by itself (plotly/io/_renderers.py): one of these was not the user's choice.
_AUTOMATIC = (
    None,
    "",
    "browser",
    "plotly_mimetype",
    "plotly_mimetype+notebook",
    "vscode",
    "colab",
    "kaggle",
    "azure",
    "nteract",
    "cocalc",
    "databricks",
)
#: What importing the package sets plotly's default renderer to (never "notebook_connected": a CDN).
RENDERER = "notebook"


def _set_renderer() -> None:
    import plotly.io as pio

    if os.environ.get("PLOTLY_RENDERER"):
        return
    if _PLOTLY_BEFORE and pio.renderers.default not in _AUTOMATIC:
        return  # the user's own choice
    pio.renderers.default = RENDERER


_set_renderer()

from .attention import Attention, as_attention  # noqa: E402
from .checks import ArgumentError  # noqa: E402
from .figures import (  # noqa: E402
    attention_heads,
    compare,
    head_detectors,
    head_view,
    logit_lens,
    save_figure,
    token_focus,
)

#: Public names served from modules that import torch, loaded when first asked for.
_LAZY = {
    "load": "models",
    "Model": "models",
    "Run": "models",
    "ablate": "interventions",
    "rank_heads": "interventions",
    "patch": "interventions",
    "rank_patches": "interventions",
    "attribute": "interventions",
    "head_edits": "interventions",
    "Site": "interventions",
    "projector": "classroom",
    "families": "classroom",
    "norm_view": "flow",
    "information_flow": "flow",
    "flow_edges": "flow",
}

__all__ = [
    "ArgumentError",
    "Attention",
    "Model",
    "Run",
    "Site",
    "ablate",
    "as_attention",
    "attention_heads",
    "attribute",
    "compare",
    "families",
    "flow_edges",
    "head_detectors",
    "head_edits",
    "head_view",
    "information_flow",
    "load",
    "logit_lens",
    "norm_view",
    "patch",
    "projector",
    "rank_heads",
    "rank_patches",
    "save_figure",
    "token_focus",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'attention_lens' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
