"""Glue of the representation projector page: the preset sentences with their sense labels, reading the
sentences a user types ("label: sentence", one a line), the link's values, and the projection of the cached
word states for one set of labels. No torch: the states come through the gateway."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app_support import gateway as G
from app_support import lab
from model.lab.projector import MAX_SENTENCES, Projection, WordStates, project

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


@dataclass(frozen=True)
class Preset:
    word: str
    senses: tuple[str, str]  # label keys (strings ``projector.sense.<key>``), in the order of ``sentences``
    sentences: tuple[tuple[str, str], ...]  # (sense key, sentence)


def _preset(word: str, first: str, second: str, a: Sequence[str], b: Sequence[str]) -> Preset:
    return Preset(word, (first, second), tuple((first, s) for s in a) + tuple((second, s) for s in b))


#: The seeds' flagship case (苹果 the company and the fruit) and its English counterpart ("bank" of money
#: and of a river): 12 sentences of each sense, the word once in each, never first, and at about the same
#: places in both senses (mean token position within 1.1 of each other on every model), so that where the
#: word stands does not separate the senses by itself: MiniLM and the translation model add a position to
#: each embedding, and a first list with every river bank at the end of its sentence gave MiniLM a ratio of
#: 1.68 at the embeddings (position, not meaning; 1.03 now). A decoder-only model has read nothing before
#: a first word (the same vector in every sentence, and SmolLM2, read without <bos>, holds its attention
#: sink there), so "苹果公司发布新品" is read as "今天苹果公司发布新品。".
PRESETS: dict[str, Preset] = {
    "apple": _preset("苹果", "company", "fruit", (
        "今天苹果公司发布新品。", "昨天苹果发布了新款手机。", "他在苹果公司做工程师。",
        "我买了一台苹果电脑。", "这家供应商给苹果生产芯片。", "很多人排队买苹果的新手机。",
        "投资者都在关注苹果的财报。", "我哥哥在苹果公司上班。", "上个月苹果在上海开了一家新店。",
        "三星和苹果在法庭上打官司。", "去年苹果的市值超过了两万亿美元。", "她想去苹果公司实习。",
    ), (
        "我吃了一个苹果", "这个苹果很甜。", "妈妈买了一袋苹果。", "树上的苹果已经熟了。",
        "她把苹果切成了小块。", "每天吃一个苹果对身体好。", "这些红苹果是从山东运来的。",
        "他削了一个苹果给奶奶。", "这些苹果放久了会变软。", "我们秋天去果园摘苹果。",
        "桌子上有三个青苹果。", "她用苹果做了一个蛋糕。",
    )),
    "bank": _preset("bank", "money", "river", (
        "The bank raised interest rates.", "The bank approved our loan.", "My bank sent me a new card.",
        "The bank charged me a fee for the transfer.", "She opened an account at the bank.",
        "I need to deposit this check at the bank.", "He works at a bank in the city.",
        "You can withdraw cash at any bank.", "The robbers broke into the bank at night.",
        "The central bank cut rates again.", "Our bank offers loans to small firms.",
        "Interest rates at the bank went up.",
    ), (
        "The bank was covered in wet mud.", "The bank of the river was steep.",
        "The bank was slippery after the rain.", "The bank of the lake was full of reeds.",
        "We sat on the river bank.", "Ducks rested on the grassy bank.", "He climbed up the steep bank.",
        "The boat drifted toward the bank.", "Fish were jumping near the muddy bank.",
        "The river overflowed its bank after the storm.", "They had a picnic on the bank of the lake.",
        "The fisherman stood on the bank all morning.",
    )),
}


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
