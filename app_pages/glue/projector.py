"""Glue of the representation projector page: the preset sentences with their sense labels, reading the
sentences a user types ("label: sentence", one a line), the link's values, and the projection of the cached
word states for one set of labels. No torch: the states come through the gateway."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app_support import gateway as G
from app_support import lab
from model.lab.projector import MAX_SENTENCES, PRESETS, Preset, Projection, WordStates, project

__all__ = ["COLOR_BY", "DEFAULT_COLOR", "MAX_CHARS", "MAX_LABEL_CHARS", "MAX_SENTENCES", "MAX_WORD_CHARS",
           "OWN", "PRESETS", "Preset", "Typed", "default_preset", "parse_lines", "preset_lines",
           "preset_names", "projection"]

#: What the points are coloured by (URL ``color``): their sense label, or each sentence its own colour.
COLOR_BY = ("sense", "sentence")
DEFAULT_COLOR = "sense"
#: The choice of typing one's own sentences (URL ``preset=own``; they travel as ``sentences``).
OWN = "own"
#: Characters of the sentence box (a link's too): 64 sentences of ~90 characters.
MAX_CHARS = 6000
MAX_WORD_CHARS = 40
#: Longest text before a colon read as a label ("Note: ..." longer than this is a sentence).
MAX_LABEL_CHARS = 24


def preset_names() -> tuple[str, ...]:
    """The choices of the sentence menu: the presets, then typing one's own."""
    return (*PRESETS, OWN)


def default_preset(lang: str) -> str:
    """The flagship 苹果 in the Chinese interface, "bank" in the English one."""
    return "apple" if lang == "zh" else "bank"


def preset_lines(name: str, sense_name) -> str:
    """A preset as the sentence box shows it: "label: sentence" a line, the labels in the page's
    language (``sense_name(key)``), so that typing one's own starts from it."""
    return "\n".join(f"{sense_name(key)}: {s}" for key, s in PRESETS[name].sentences)


@dataclass(frozen=True)
class Typed:
    """The sentences read from the box, each with its label ("" = none)."""

    sentences: tuple[str, ...]
    labels: tuple[str, ...]
    dropped: int  # lines past MAX_SENTENCES, not read


_LABELLED = re.compile(r"^\s*([^:：]{1," + str(MAX_LABEL_CHARS) + r"}?)\s*[:：]\s*(.+)$")


def parse_lines(text: str, limit: int = MAX_SENTENCES) -> Typed:
    """One sentence a line; "label: sentence" (a half- or full-width colon) gives it a label. Empty lines
    are ignored; lines past ``limit`` are counted, not read."""
    sentences, labels = [], []
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    for line in lines[:limit]:
        m = _LABELLED.match(line)
        label, sentence = (m.group(1).strip(), m.group(2).strip()) if m else ("", line)
        sentences.append(sentence)
        labels.append(label)
    return Typed(tuple(sentences), tuple(labels), max(0, len(lines) - limit))


def projection(model: str, word: str, sentences: tuple[str, ...], labels: tuple[str, ...]) -> tuple[
        WordStates, Projection]:
    """The word's states (computed once per model, word and sentences, through the gateway) and their
    projection for these labels (remembered on the states: changing a label runs no model)."""
    states = lab.projector.word_states(model, word, sentences)
    view = G.derived(states, ("projection", labels), lambda: project(states, labels))
    return states, view
