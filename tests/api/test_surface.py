"""The public surface of ``attention_lens``: its names, their signatures, their doctests, its imports.

Removing or renaming a public name, or changing an argument, fails here: a visible decision.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys

import pytest

import attention_lens
from tests.paths import REPO_ROOT as ROOT

SURFACE = {
    "ArgumentError": "a ValueError",
    "Attention": "(patterns: 'dict[str, np.ndarray]', tokens: 'dict[str, tuple[list[str], list[str]]]', "
    "masks: 'dict[str, np.ndarray | None] | None' = None)",
    "Model": "(bundle: 'Bundle')",
    "Run": "(model: 'Model', analysis: 'Analysis', text: 'str', settings: 'dict', keep: 'str')",
    "Site": "(what: 'str', kind: 'str', layer: 'int', head: 'int | None' = None) -> None",
    "ablate": "(model: 'Model | str', text: 'str', direction: 'str | None' = None, heads=(), mode: 'str' = 'zero', "  # noqa: E501
    "top_k: 'int' = 5, max_new: 'int | None' = None) -> '_ablation.Ablation'",
    "as_attention": "(attentions: 'object' = None, tokens: 'Sequence[str] | None' = None, *, kind: 'str | None' = "  # noqa: E501
    "None, encoder_attention: 'object' = None, decoder_attention: 'object' = None, "
    "cross_attention: 'object' = None, encoder_tokens: 'Sequence[str] | None' = None, "
    "decoder_tokens: 'Sequence[str] | None' = None, batch: 'int' = 0, "
    "byte_tokens: 'bool | None' = None) -> 'Attention'",
    "attention_heads": "(source: 'Any', tokens: 'Any' = None, *, kind: 'str | None' = None, page: 'int' = 0, "
    "title: 'str | None' = None, lang: 'str' = 'en') -> 'go.Figure'",
    "attribute": "(model: 'Model | str', text: 'str', direction: 'str | None' = None, n_steps: 'int' = 32, "
    "max_new: 'int | None' = None, outputs: 'int | None' = None) -> 'Any'",
    "compare": "(a: 'Any', b: 'Any', *, kind: 'str | None' = None, layer: 'int' = 0, head: 'int' = 0, "
    "names: 'tuple[str, str] | None' = None, title: 'str | None' = None, lang: 'str' = 'en') "
    "-> 'go.Figure'",
    "head_detectors": "(model: 'Any', role: 'str' = 'induction', *, seed: 'int' = 0, title: 'str | None' = None, "  # noqa: E501
    "lang: 'str' = 'en') -> 'go.Figure'",
    "families": "(sentence: 'str', word: 'str', *, occurrence: 'int' = 0, lang: 'str' = 'en') "
    "-> 'list[go.Figure]'",
    "flow_edges": "(run: 'Any', *, position: 'int | None' = None, threshold: 'float' = 0.04) "
    "-> 'pd.DataFrame'",
    "information_flow": "(run: 'Any', *, position: 'int | None' = None, threshold: 'float' = 0.04, "
    "title: 'str | None' = None, lang: 'str' = 'en') -> 'go.Figure'",
    "norm_view": "(run: 'Any', *, kind: 'str | None' = None, layer: 'int' = 0, head: 'int' = 0, "
    "title: 'str | None' = None, lang: 'str' = 'en') -> 'go.Figure'",
    "head_edits": "(model: 'Model | str', heads: 'Any', mode: 'str' = 'zero') -> 'tuple'",
    "head_view": "(source: 'Any', tokens: 'Any' = None, *, kind: 'str | None' = None, layer: 'int' = 0, "
    "head: 'int' = 0, query_range: 'tuple[int, int] | None' = None, key_range: "
    "'tuple[int, int] | None' = None, zmax: 'float | None' = 1.0, title: 'str | None' = None, "
    "lang: 'str' = 'en') -> 'go.Figure'",
    "load": "(name_or_path: 'str | Path') -> 'Model'",
    "logit_lens": "(run: 'Any', *, value: 'str' = 'top', title: 'str | None' = None, lang: 'str' = 'en') "
    "-> 'go.Figure'",
    "patch": "(model: 'Model | str', text_a: 'str', text_b: 'str', site: 'Site', token: 'str | None' = None, "
    "direction: 'str | None' = None, max_new: 'int | None' = None, position: 'int | None' = None) -> 'Any'",
    "projector": "(model: 'Model | str', word: 'str | None' = None, "
    "sentences: 'Sequence[str] | None' = None, labels: 'Sequence[str] | None' = None, *, "
    "preset: 'str | None' = None, row: 'int | None' = None, "
    "color_by: 'str' = 'sense', lang: 'str' = 'en') -> 'go.Figure'",
    "rank_heads": "(model: 'Model | str', text: 'str', direction: 'str | None' = None, mode: 'str' = 'zero', "
    "batched: 'bool' = True, max_new: 'int | None' = None, layers: 'tuple[int, int] | None' = None, "
    "output: 'tuple[int, ...] | None' = None) -> 'list'",
    "rank_patches": "(model: 'Model | str', text_a: 'str', text_b: 'str', token: 'str | None' = None, "
    "direction: 'str | None' = None, batched: 'bool' = True, max_new: 'int | None' = None) -> 'list'",
    "save_figure": "(fig: 'go.Figure', path: 'str | Path', *, scale: 'float' = 2, lang: 'str' = 'en') -> 'Path'",  # noqa: E501
    "token_focus": "(source: 'Any', token: 'int | str', tokens: 'Any' = None, *, kind: 'str | None' = None, "
    "side: 'str' = 'from', title: 'str | None' = None, lang: 'str' = 'en') -> 'go.Figure'",
}

RUN_METHODS = {
    "run": "(self, text: 'str', direction: 'str | None' = None, strategy: 'Strategy | str | None' = None, *, "
    "target: 'str | None' = None, max_new_tokens: 'int | None' = None, edits: 'tuple' = (), "
    "keep: 'str' = 'attention') -> 'Run'",
    "pattern": "(self, kind: 'str | None' = None, layer: 'int' = 0, head: 'int' = 0) -> 'np.ndarray'",
    "scores": "(self, kind: 'str | None' = None, layer: 'int' = 0, head: 'int' = 0) -> 'np.ndarray'",
    "attention": "(self, kind: 'str | None' = None, what: 'str' = 'pattern') -> 'np.ndarray'",
    "hook": "(self, name: 'str') -> 'np.ndarray'",
    "save": "(self, folder: 'str | Path', max_mb: 'float' = 256) -> 'Path'",
    "tokens_for": "(self, kind: 'str | None' = None) -> 'tuple[list[str], list[str]]'",
}


def _modules() -> list[str]:
    return ["attention_lens"] + [
        f"attention_lens.{m.name}" for m in pkgutil.iter_modules(attention_lens.__path__)
    ]


def test_the_public_names_are_these_and_each_has_its_signature():
    assert sorted(attention_lens.__all__) == sorted(SURFACE)
    for name, expected in SURFACE.items():
        obj = getattr(attention_lens, name)
        if name == "ArgumentError":  # an exception: its signature is ValueError's
            assert issubclass(obj, ValueError)
            continue
        assert str(inspect.signature(obj)) == expected, name


def test_the_model_and_run_methods_keep_their_signatures():
    from attention_lens import Model, Run

    for name, expected in RUN_METHODS.items():
        owner = Model if name == "run" else Run
        assert str(inspect.signature(getattr(owner, name))) == expected, name
    for name in ("name", "config", "family", "kinds"):
        assert isinstance(getattr(Model, name), property), name
    for name in ("tokens", "source_tokens", "target_tokens", "output", "kinds", "hooks", "trace", "notes"):
        assert isinstance(getattr(Run, name), property), name


def test_every_public_function_has_a_docstring_with_an_example():
    for name in SURFACE:
        obj = getattr(attention_lens, name)
        if name == "Site":  # model/lab/choices.py's value type, re-exported as the patch page uses it
            continue
        assert obj.__doc__ and ">>>" in obj.__doc__, name
    for name in RUN_METHODS:
        owner = attention_lens.Model if name == "run" else attention_lens.Run
        assert ">>>" in (getattr(owner, name).__doc__ or ""), name


def test_the_interventions_take_the_lab_functions_arguments():
    """The page's arguments, after the model: the same names, defaults and order as model/lab's."""
    from model.lab import ablation, attribution, patching

    for ours, theirs in (
        (attention_lens.ablate, ablation.ablate),
        (attention_lens.rank_heads, ablation.rank_heads),
        (attention_lens.patch, patching.patch),
        (attention_lens.rank_patches, patching.rank_patches),
        (attention_lens.attribute, attribution.attribute),
    ):
        a = [(p.name, p.default) for p in list(inspect.signature(ours).parameters.values())[1:]]
        b = [(p.name, p.default) for p in list(inspect.signature(theirs).parameters.values())[1:]]
        assert a == b, ours.__name__


@pytest.mark.parametrize("module", _modules())
def test_the_examples_run(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{module}: {result.failed} of {result.attempted} examples failed"
    if module not in ("attention_lens.checks", "attention_lens.cli"):  # cli: a command (test_install)
        assert result.attempted > 0, module


def _fresh(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in __import__("os").environ.items() if k != "PLOTLY_RENDERER"},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_own_attention_draws_without_torch_and_nothing_imports_streamlit_or_app_support():
    code = (
        "import json, sys, numpy as np\n"
        "import attention_lens as al\n"
        "fig = al.attention_heads(np.full((2, 3, 4, 4), 0.25), list('abcd'))\n"
        "fig = al.head_view(np.full((2, 3, 4, 4), 0.25), list('abcd'), layer=1, head=2)\n"
        "before = 'torch' in sys.modules\n"
        "import attention_lens.models, attention_lens.interventions\n"
        "print(json.dumps({'torch_before': before, 'ui': sorted({m.split('.')[0] for m in sys.modules}"
        " & {'streamlit', 'app_support', 'app_pages'})}))\n"
    )
    assert _fresh(code) == {"torch_before": False, "ui": []}


def test_importing_sets_the_offline_notebook_renderer_unless_one_was_chosen():
    chosen = _fresh(
        "import json, plotly.io as pio\npio.renderers.default = 'svg'\nimport attention_lens\n"
        "print(json.dumps(pio.renderers.default))"
    )
    assert chosen == "svg"
    fresh = _fresh("import json, attention_lens, plotly.io as pio\nprint(json.dumps(pio.renderers.default))")
    assert fresh == "notebook"  # embeds plotly.js: never notebook_connected, which fetches from a CDN
