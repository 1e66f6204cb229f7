"""Load a model and run it on a text: :func:`load`, :class:`Model`, :class:`Run`.

Nothing here computes on its own. A name or path is opened by the command line's own loader
(``python -m model … --model NAME | --model-dir PATH``: :func:`model.cli.common.load_bundle`), a text is
run by :func:`model.run.analysis.analyze` (what every page draws), and :meth:`Run.save` writes the files
of ``python -m model inspect --out`` (:func:`model.cli.models.inspect_files`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from model.cli.common import load_bundle, write_files
from model.cli.models import inspect_files
from model.decoding.strategy import GREEDY, Strategy
from model.export.scopes import ALL, per_position
from model.network.config import ModelConfig
from model.network.kinds import KINDS, hook_name
from model.run.analysis import Analysis, analyze, attention_only
from model.store.bundle import Bundle
from model.store.names import is_model_name
from model.store.registry import UnknownModelError, available_models
from model.store.sources.hf_cache import is_hub_name

from .checks import ArgumentError, check_choice, check_index

__all__ = ["KEEP", "Model", "Run", "load"]

#: What :meth:`Model.run` records: "attention" (each layer's queries and keys: every head's weights are
#: computed when asked, as the app does) or "all" (every hook tensor of the pass, by its hook name).
KEEP = ("attention", "all")
#: Largest archive :meth:`Run.save` writes by default (MiB of tensors), as ``inspect --max-mb``.
SAVE_MAX_MB = 256


def _looks_like_path(value: str | Path) -> bool:
    if isinstance(value, Path):
        return True
    if is_hub_name(value) and not Path(value).exists():  # ORG/NAME of the Hugging Face cache
        return False
    return not is_model_name(value) or value.lower().endswith((".gguf", ".zip"))


def load(name_or_path: str | Path) -> Model:
    """The model the app would open: a shipped or installed model by name (``reverse``, ``default``,
    ``tiny-gpt``, ``minilm``, ``e5``, ``smollm2`` …), a model of the local Hugging Face cache by its hub
    name (``Qwen/Qwen3-0.6B``: never downloaded), or a checkpoint folder, Hugging Face folder,
    ``.zip`` or ``.gguf`` file by path; checked and refused exactly as ``python -m model … --model`` /
    ``--model-dir`` do (UnknownModelError, or UserModelError naming the file at fault).

    >>> import attention_lens as al
    >>> m = al.load("reverse")
    >>> m.name, m.family, m.config.n_heads
    ('reverse', 'encoder-decoder', 4)
    >>> al.load("no-such-model")
    Traceback (most recent call last):
    ...
    model.store.names.UnknownModelError: No model named 'no-such-model'. Available models: ...
    """
    if not isinstance(name_or_path, str | Path):
        raise ArgumentError(f"name_or_path must be a model name or a path, got {type(name_or_path).__name__}")
    if isinstance(name_or_path, str) and not name_or_path.strip():
        raise ArgumentError(f"name_or_path must name a model (one of: {', '.join(available_models())})")
    if _looks_like_path(name_or_path):
        args = argparse.Namespace(model=None, model_dir=str(name_or_path))
    else:
        args = argparse.Namespace(model=name_or_path, model_dir=None)
        try:
            return Model(load_bundle(args))
        except UnknownModelError:
            if not Path(name_or_path).exists():  # a folder of that name beside us: open it as a path
                raise
            args = argparse.Namespace(model=None, model_dir=name_or_path)
    return Model(load_bundle(args))


class Model:
    """A loaded model: ``name``, ``config`` (:class:`~model.network.config.ModelConfig`), ``family``
    ("encoder-only", "decoder-only", "encoder-decoder"), ``kinds`` (its attention kinds) and
    :meth:`run`. ``bundle`` is the loaded :class:`~model.store.bundle.Bundle` the app and the command
    line use (weights, tokenizer, task).

    >>> import attention_lens as al
    >>> al.load("reverse").kinds
    ('encoder', 'decoder', 'cross')
    """

    def __init__(self, bundle: Bundle):
        self.bundle = bundle

    @property
    def name(self) -> str:
        return self.bundle.name

    @property
    def config(self) -> ModelConfig:
        return self.bundle.cfg

    @property
    def family(self) -> str:
        cfg = self.config
        if cfg.encoder_only:
            return "encoder-only"
        return "decoder-only" if cfg.decoder_only else "encoder-decoder"

    @property
    def kinds(self) -> tuple[str, ...]:
        counts = self.bundle.model.attention_layer_counts()
        return tuple(k for k in KINDS if counts.get(k, 0) > 0)

    def __repr__(self) -> str:
        return f"Model({self.name!r}, {self.family}, kinds={self.kinds})"

    def run(
        self,
        text: str,
        direction: str | None = None,
        strategy: Strategy | str | None = None,
        *,
        target: str | None = None,
        max_new_tokens: int | None = None,
        edits: tuple = (),
        keep: str = "attention",
    ) -> Run:
        """Run the model on ``text`` as the app does (:func:`model.run.analysis.analyze`).

        ``direction``: a translation direction ("zh->en", "en->zh"), or "chat" / None for a language
        model (None: detected). ``strategy``: how the output is decoded, a
        :class:`~model.decoding.strategy.Strategy` or its word ("greedy", "beam4-lp1",
        "sample-t0.8-k40-p0.9-s3"); greedy when None. ``target``: teacher-force this output instead.
        ``max_new_tokens``: most new tokens (None: the model's default). ``edits``: interventions
        (:mod:`model.run.interventions`, e.g. :func:`attention_lens.head_edits`). ``keep``: "attention"
        (default) or "all" to record every hook tensor (:meth:`Run.hook`).

        >>> import attention_lens as al
        >>> run = al.load("reverse").run("attention")
        >>> run.output
        'noitnetta'
        >>> al.load("reverse").run("abc", strategy="beam4-lp1").output
        'cba'
        """
        if not isinstance(text, str):
            raise ArgumentError(f"text must be a string, got {type(text).__name__}")
        check_choice(keep, KEEP, "keep")
        if isinstance(strategy, str):
            try:
                strategy = Strategy.parse(strategy)
            except ValueError as e:
                raise ArgumentError(f"strategy: {e}") from None
        elif strategy is not None and not isinstance(strategy, Strategy):
            raise ArgumentError(
                f"strategy must be a Strategy, a word such as 'beam4-lp1' or None, "
                f"got {type(strategy).__name__}"
            )
        if max_new_tokens is not None and (
            isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1
        ):
            raise ArgumentError(
                f"max_new_tokens must be a whole number of at least 1, got {max_new_tokens!r}"
            )
        directions = getattr(self.bundle.task, "directions", ()) or ()
        if direction is not None and direction not in directions:
            have = ", ".join(map(repr, directions)) or "none: pass None"
            raise ArgumentError(
                f"direction must be None or one of this model's directions ({have}), got {direction!r}"
            )
        edits = tuple(edits)
        hooks: Callable[[str], bool] | None = attention_only if keep == "attention" else None
        result = analyze(
            self.bundle,
            text,
            direction,
            target,
            edits=edits,
            strategy=strategy or GREEDY,
            keep=hooks,
            max_new=max_new_tokens,
        )
        return Run(
            self,
            result,
            text,
            dict(
                direction=direction,
                target=target,
                strategy=strategy or GREEDY,
                max_new=max_new_tokens,
                edits=edits,
            ),
            keep,
        )


class Run:
    """One text through one model: the same :class:`~model.run.analysis.Analysis` the app's pages draw
    (``analysis``), read through plain names.

    ``tokens``: what the model reads (the source for a model with an encoder, prompt + output for a
    decoder-only one; byte-level tokens shown as the text they spell, e.g. ``苹 1/3``), ``output``,
    ``kinds``, :meth:`tokens_for`, :meth:`pattern` / :meth:`scores` (one head, computed on demand),
    :meth:`attention` (every head of a kind), :meth:`hook` / ``hooks`` (with ``keep="all"``), ``trace``
    (the shape trace) and :meth:`save`.

    >>> import attention_lens as al
    >>> run = al.load("reverse").run("abc")
    >>> run.tokens, run.target_tokens
    (['a', 'b', 'c', '<eos>'], ['<bos>', 'c', 'b', 'a'])
    >>> run.pattern("cross", 1, 0).shape
    (4, 4)
    """

    def __init__(self, model: Model, analysis: Analysis, text: str, settings: dict, keep: str):
        self.model, self.analysis, self.text, self._settings, self.keep = (
            model,
            analysis,
            text,
            settings,
            keep,
        )

    def __repr__(self) -> str:
        return f"Run({self.model.name!r}, {self.text!r} -> {self.output!r})"

    @property
    def output(self) -> str:
        return self.analysis.output_text

    @property
    def source_tokens(self) -> list[str]:
        return list(self.analysis.source_tokens)

    @property
    def target_tokens(self) -> list[str]:
        return list(self.analysis.target_tokens)

    @property
    def tokens(self) -> list[str]:
        return self.target_tokens if self.model.family == "decoder-only" else self.source_tokens

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in KINDS if self.analysis.layer_counts.get(k, 0) > 0)

    @property
    def notes(self) -> list[str]:
        """What the model said about the input (cut to its length, unknown characters …), in English."""
        return [str(n) for n in self.analysis.notes]

    @property
    def trace(self) -> list[dict]:
        """The shape trace: every step from embedding to vocabulary with its real and symbolic shapes."""
        return self.analysis.trace

    @property
    def hooks(self) -> dict[str, np.ndarray]:
        """Hook name -> the recorded tensor (batch axis kept); empty unless run with ``keep="all"``."""
        return self.analysis.activations

    def kind(self, kind: str | None) -> str:
        """``kind`` checked against this model's attention kinds (None: the first of them)."""
        if kind is None:
            return self.kinds[0]
        return check_choice(kind, self.kinds, "kind")

    def n_layers(self, kind: str | None = None) -> int:
        return self.analysis.n_layers(self.kind(kind))

    @property
    def n_heads(self) -> int:
        return self.model.config.n_heads

    def tokens_for(self, kind: str | None = None) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of an attention kind: rows and columns of its patterns.

        >>> import attention_lens as al
        >>> al.load("reverse").run("ab").tokens_for("cross")
        (['<bos>', 'b', 'a'], ['a', 'b', '<eos>'])
        """
        queries, keys = self.analysis.tokens_for(self.kind(kind))
        return list(queries), list(keys)

    def _head(self, kind: str | None, layer: int, head: int) -> tuple[str, int, int]:
        k = self.kind(kind)
        layer = check_index(layer, self.n_layers(k), "layer", f"of the {k} attention")
        head = check_index(head, self.n_heads, "head", f"of the {k} attention")
        return k, layer, head

    def pattern(self, kind: str | None = None, layer: int = 0, head: int = 0) -> np.ndarray:
        """[query, key] softmax weights of one head (computed for it alone).

        >>> import attention_lens as al
        >>> run = al.load("reverse").run("abc")
        >>> p = run.pattern("cross", 1, 0)   # the decoder's 4 positions x the source's 4
        >>> [round(float(row), 3) for row in p.sum(-1)]
        [1.0, 1.0, 1.0, 1.0]
        """
        return self.analysis.head_attention(*self._head(kind, layer, head))[1]

    def scores(self, kind: str | None = None, layer: int = 0, head: int = 0) -> np.ndarray:
        """[query, key] scaled pre-softmax scores of one head, ``-inf`` where masked.

        >>> import attention_lens as al
        >>> import numpy as np
        >>> bool(np.isneginf(al.load("reverse").run("abc").scores("decoder", 0, 0)[0, 1]))
        True
        """
        return self.analysis.head_attention(*self._head(kind, layer, head))[0]

    def attention(self, kind: str | None = None, what: str = "pattern") -> np.ndarray:
        """[layer, head, query, key] of every head of one kind: "pattern", "scores" or "mask" (True where
        masked). Every head at once: for a long input prefer :meth:`pattern` of the heads you need.

        >>> import attention_lens as al
        >>> al.load("reverse").run("abc").attention("encoder").shape
        (2, 4, 4, 4)
        """
        check_choice(what, ("pattern", "scores", "mask"), "what")
        return np.asarray(self.analysis.attention(self.kind(kind), what))

    def hook(self, name: str) -> np.ndarray:
        """The tensor recorded at hook ``name`` (e.g. ``encoder.blocks.0.hook_resid_post``); the attention
        hooks (``….hook_pattern``, ``….hook_scores``) are computed when the run kept attention only.

        >>> import attention_lens as al
        >>> run = al.load("reverse").run("abc", keep="all")
        >>> run.hook("encoder.blocks.0.hook_resid_post").shape
        (1, 4, 64)
        """
        if name in self.analysis.activations:
            return self.analysis.activations[name]
        for k in self.kinds:
            for layer in range(self.n_layers(k)):
                for what in ("pattern", "scores"):
                    if hook_name(k, layer, what) == name:
                        return np.asarray(self.analysis.attention(k, what)[layer])[None]
        kept = "every hook" if self.keep == "all" else "attention only (run with keep='all' for every hook)"
        raise ArgumentError(f"name {name!r} is no hook this run recorded; it kept {kept}")

    def save(self, folder: str | Path, max_mb: float = SAVE_MAX_MB) -> Path:
        """Write ``activations.npz`` and ``meta.json`` into ``folder``, the files ``python -m model inspect
        --out`` writes (readable by ``python -m viz export``); returns the folder.

        >>> import attention_lens as al, tempfile, os
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     sorted(os.listdir(al.load("reverse").run("abc").save(tmp)))
        ['activations.npz', 'meta.json']
        """
        result = self.analysis
        if self.keep != "all":  # inspect keeps the per-position hooks too: the same pass, recorded so
            s = self._settings
            result = analyze(
                self.model.bundle,
                self.text,
                s["direction"],
                s["target"],
                edits=s["edits"],
                strategy=s["strategy"],
                keep=per_position,
                max_new=s["max_new"],
            )
        try:
            files = inspect_files(self.model.bundle, result, self.text, ALL, int(max_mb * 2**20))
        except ValueError as e:
            raise ArgumentError(f"max_mb: {e}") from None
        out = Path(folder)
        problem = write_files(out, files)
        if problem:
            raise OSError(problem)
        return out
