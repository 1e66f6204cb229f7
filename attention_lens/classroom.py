"""The two classroom views of the app's "How it works" and "Probing" pages, as figures: one word's hidden
state over many sentences in 2-D (the representation projector), and one sentence through the three model
families (encoder-only, encoder-decoder, decoder-only). They run the pages' ``model/lab/`` experiments and
draw the pages' ``viz/`` figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from model.lab import families as _families
from model.lab import projector as _projector
from model.lab.choices import FAMILY_MODELS
from viz.families import word_attention_bars
from viz.masks import mask_matrix
from viz.projector import projection_scatter

from .checks import ArgumentError, check_choice, check_index
from .models import Model, load

__all__ = ["PRESETS", "families", "projector"]

#: The projector's sentence sets by name: "apple" (苹果 the company and the fruit), "bank" (money, river).
PRESETS = tuple(_projector.PRESETS)


def _bundle(model: Model | str) -> Any:
    return (model if isinstance(model, Model) else load(model)).bundle


def projector(model: Model | str, word: str | None = None, sentences: Sequence[str] | None = None,
              labels: Sequence[str] | None = None, *, preset: str | None = None, row: int | None = None,
              color_by: str = "sense", lang: str = "en") -> go.Figure:
    """``word``'s hidden state in each of ``sentences`` at layer row ``row`` (0: the embeddings; None: the
    last layer), in 2-D (PCA), coloured by ``labels`` (each sentence's sense) — the projector page. A
    ``preset`` ("apple", "bank") gives the word, the sentences and their senses.

    >>> import attention_lens as al
    >>> sentences = ["The bank raised rates.", "We sat on the river bank.", "My bank sent a card.",
    ...              "The bank was steep."]
    >>> fig = al.projector("minilm", "bank", sentences, ["money", "river", "money", "river"])
    >>> sorted({trace.name for trace in fig.data})
    ['money', 'river']
    """
    if preset is not None:
        chosen = _projector.PRESETS[check_choice(preset, PRESETS, "preset")]
        word = chosen.word if word is None else word
        labels = [sense for sense, _ in chosen.sentences]
        sentences = [s for _, s in chosen.sentences]
    if not isinstance(word, str) or not word.strip():
        raise ArgumentError("word must be the word to follow (or give a preset)")
    if not sentences or isinstance(sentences, str):
        raise ArgumentError("sentences must be a list of sentences holding the word (or give a preset)")
    labels = [""] * len(sentences) if labels is None else list(labels)
    if len(labels) != len(sentences):
        raise ArgumentError(f"labels has {len(labels)} entries for {len(sentences)} sentences")
    check_choice(color_by, ("sense", "sentence"), "color_by")
    states = _projector.word_states(_bundle(model), word, tuple(sentences))
    view = _projector.project(states, tuple(labels))
    n_rows = view.coords.shape[0]
    chosen_row = n_rows - 1 if row is None else check_index(row, n_rows, "row", "(0 = the embeddings)")
    return projection_scatter(view.coords[chosen_row], view.labels, [sentences[i] for i in states.kept],
                              states.pieces, explained=view.explained[chosen_row], color_by=color_by,
                              title=f"{word} · row {chosen_row}", lang=lang)


def families(sentence: str, word: str, *, occurrence: int = 0, lang: str = "en") -> list[go.Figure]:
    """One sentence through the three model families of the "Three families" page (MiniLM, the translation
    model, SmolLM2): for each, the mask of its self-attention over the sentence and where ``word`` (its
    ``occurrence``-th time) looks, averaged over the layers and heads — six figures, family by family.

    >>> import attention_lens as al
    >>> figs = al.families("The cat sat on the mat.", "cat")  # doctest: +SKIP
    """
    if not isinstance(word, str) or not word.strip():
        raise ArgumentError("word must be a word of the sentence")
    figures = []
    for family, name in FAMILY_MODELS.items():
        column = _families.family_column(load(name).bundle, sentence)
        kind = column.self_kind
        n = column.read_tokens if family == "decoder_only" else len(column.mask_tokens[kind][0])
        queries, keys = column.mask_tokens[kind]
        figures.append(mask_matrix(column.masks[kind][:n, :n], queries[:n], keys[:n],
                                   title=f"{family}: {name}", width=290, lang=lang))
        positions = column.word_positions(word, occurrence)
        if not positions:
            raise ArgumentError(f"word {word!r} (occurrence {occurrence}) is not in {name}'s tokens")
        hidden = column.masks[kind][positions].all(0)
        figures.append(word_attention_bars(column.word_row(positions), column.tokens, positions, hidden,
                                           title=f"{family}: where '{word}' looks", lang=lang))
    return figures
