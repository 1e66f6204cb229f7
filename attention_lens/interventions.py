"""The Intervene pages' experiments on a loaded model: head ablation, activation patching, attribution.

Each function is the ``model/lab/`` function the page calls (through ``app_support/lab.py``), with the
same arguments after the first: the page passes a model name, here a :class:`~attention_lens.Model`
(or a name, loaded with :func:`~attention_lens.load`). Heads are ``(kind, layer, head)`` triples and
are checked against the model before anything runs.
"""

from __future__ import annotations

from typing import Any

from model.lab import ablation as _ablation
from model.lab import attribution as _attribution
from model.lab import patching as _patching
from model.lab.choices import Site, all_heads

from .checks import ArgumentError
from .models import Model, load

__all__ = ["Site", "ablate", "attribute", "head_edits", "patch", "rank_heads", "rank_patches"]


def _bundle(model: Model | str) -> Any:
    if isinstance(model, str):
        model = load(model)
    if not isinstance(model, Model):
        raise ArgumentError(
            f"model must be an attention_lens Model or a model name, got {type(model).__name__}"
        )
    return model.bundle


def _heads(bundle: Any, heads: Any) -> tuple[tuple[str, int, int], ...]:
    valid = all_heads(bundle.cfg)
    out = []
    for h in heads:
        if not (isinstance(h, tuple | list) and len(h) == 3):
            raise ArgumentError(f"heads must be (kind, layer, head) triples, got {h!r}")
        h = (h[0], h[1], h[2])
        if h not in valid:
            raise ArgumentError(
                f"heads: {h!r} is no head of {bundle.name} (kinds {sorted({k for k, _, _ in valid})}, "
                f"{bundle.cfg.n_heads} heads a layer)"
            )
        out.append(h)
    return tuple(out)


def head_edits(model: Model | str, heads: Any, mode: str = "zero") -> tuple:
    """The edits that switch ``heads`` off (``mode`` "zero" or "mean"), for ``Model.run(..., edits=…)``.

    >>> import attention_lens as al
    >>> m = al.load("reverse")
    >>> off = al.head_edits(m, [("cross", 1, h) for h in range(4)])
    >>> m.run("attention", edits=off).output != m.run("attention").output
    True
    """
    bundle = _bundle(model)
    try:
        return _ablation.head_edits(_heads(bundle, heads), mode)
    except ValueError as e:
        if isinstance(e, ArgumentError):
            raise
        raise ArgumentError(f"mode: {e}") from None


def ablate(
    model: Model | str,
    text: str,
    direction: str | None = None,
    heads=(),
    mode: str = "zero",
    top_k: int = 5,
    max_new: int | None = None,
) -> _ablation.Ablation:
    """The output with ``heads`` removed and, per step of the intact output, how the next-token
    distribution moved (the ablation page: :func:`model.lab.ablation.ablate`).

    >>> import attention_lens as al
    >>> r = al.ablate(al.load("reverse"), "attention", heads=[("cross", 1, h) for h in range(4)])
    >>> r.intact_output, r.output != r.intact_output
    ('noitnetta', True)
    """
    bundle = _bundle(model)
    return _ablation.ablate(bundle, text, direction, _heads(bundle, heads), mode, top_k, max_new)


def rank_heads(
    model: Model | str,
    text: str,
    direction: str | None = None,
    mode: str = "zero",
    batched: bool = True,
    max_new: int | None = None,
    layers: tuple[int, int] | None = None,
    output: tuple[int, ...] | None = None,
) -> list:
    """Every head removed alone, most harmful first by mean KL (:func:`model.lab.ablation.rank_heads`).

    >>> import attention_lens as al
    >>> effects = al.rank_heads(al.load("reverse"), "abc")
    >>> len(effects)  # 3 kinds x 2 layers x 4 heads
    24
    """
    return _ablation.rank_heads(_bundle(model), text, direction, mode, batched, max_new, layers, output)


def patch(
    model: Model | str,
    text_a: str,
    text_b: str,
    site: Site,
    token: str | None = None,
    direction: str | None = None,
    max_new: int | None = None,
    position: int | None = None,
) -> Any:
    """B run with ``site`` (a :class:`Site`: one head's output or the residual stream after a block) taken
    from A at paired positions (the patching page: :func:`model.lab.patching.patch`).

    >>> import attention_lens as al
    >>> p = al.patch(al.load("reverse"), "abc", "abd", al.Site("resid", "encoder", 1))
    >>> p.output_b, p.output
    ('dba', 'cba')
    """
    bundle = _bundle(model)
    if not isinstance(site, Site):
        raise ArgumentError(f"site must be an attention_lens.Site, got {type(site).__name__}")
    return _patching.patch(bundle, text_a, text_b, site, token, direction, max_new, position)


def rank_patches(
    model: Model | str,
    text_a: str,
    text_b: str,
    token: str | None = None,
    direction: str | None = None,
    batched: bool = True,
    max_new: int | None = None,
) -> list:
    """Every head patched alone from A into B, by how much it moves B, largest first
    (:func:`model.lab.patching.rank_patches`); `max_new` caps A's and B's outputs (None: to the end token).

    >>> import attention_lens as al
    >>> len(al.rank_patches(al.load("reverse"), "abc", "abd"))
    24
    """
    return _patching.rank_patches(_bundle(model), text_a, text_b, token, direction, batched, max_new)


def attribute(
    model: Model | str,
    text: str,
    direction: str | None = None,
    n_steps: int = 32,
    max_new: int | None = None,
    outputs: int | None = None,
) -> Any:
    """Gradient × input and integrated gradients of each output token on the source tokens, beside the
    cross-attention (the attribution page: :func:`model.lab.attribution.attribute`).

    >>> import attention_lens as al
    >>> a = al.attribute(al.load("reverse"), "abc", n_steps=8)
    >>> a.integrated.shape  # output steps (c, b, a, <eos>) x source positions
    (4, 4)
    """
    return _attribution.attribute(_bundle(model), text, direction, n_steps, max_new, outputs)
