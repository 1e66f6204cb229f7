"""Byte-level BPE tokens (GPT-2, Llama 3, Qwen2, SmolLM2) as readable text.

Such a vocabulary spells every byte as a printable character (GPT-2's table: a space is ``Ġ``, a
newline ``Ċ``), and a token may hold part of a character: SmolLM2 writes 一个 as one token but 苹 as
three. Shown as stored, a Chinese sentence is mojibake (``èĭ¹``). Here each token becomes the text
its bytes spell, and tokens that do not hold whole characters are grouped into the **smallest run of
tokens that decodes to whole characters**: each is labelled with its group's text and its part,
``苹 1/3``, ``苹 2/3``, ``苹 3/3`` (a thin space before the part). Merging word pieces
(viz/wordpieces.py) joins a group's parts into one unit, as it joins ``##`` pieces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

#: Between a group's text and a token's part in it (a thin space: a plain one would show as ␣).
PART = "\u2009"
_PART_LABEL = re.compile(PART + r"(\d+)/(\d+)$")


@cache
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table, in which byte-level BPE vocabularies are spelled."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1),
                 *range(ord("\u00ae"), ord("\u00ff") + 1)]
    others = [b for b in range(256) if b not in printable]
    return {**{b: chr(b) for b in printable}, **{b: chr(256 + i) for i, b in enumerate(others)}}


@cache
def _unicode_to_byte() -> dict[str, int]:
    return {c: b for b, c in bytes_to_unicode().items()}


def token_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token spells, or None when it is not spelled in the byte alphabet (a
    special token written as raw text, e.g. ``<|im_start|>``, is ASCII and so spells itself)."""
    table = _unicode_to_byte()
    if not all(c in table for c in token):
        return None
    return bytes(table[c] for c in token)


def readable_tokens(tokens: Sequence[str]) -> list[str]:
    """Each token as the text it spells; a token holding part of a character as ``text i/n``."""
    spelled = [token_bytes(t) for t in tokens]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if spelled[i] is None:
            out.append(tokens[i])
            i += 1
            continue
        end, text = _smallest_whole_run(spelled, i)
        if end == i + 1:
            out.append(text)
        else:
            n = end - i
            out.extend(f"{text}{PART}{k}/{n}" for k in range(1, n + 1))
        i = end
    return out


def _smallest_whole_run(spelled: list[bytes | None], start: int) -> tuple[int, str]:
    """(end, text) of the shortest run from ``start`` whose bytes decode to whole characters; a run
    that never does (bytes that are no UTF-8) is the start token alone, its bytes shown escaped."""
    data = b""
    for end in range(start, min(len(spelled), start + 8)):  # a character is at most 4 bytes
        if spelled[end] is None:
            break
        data += spelled[end]
        try:
            return end + 1, data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return start + 1, spelled[start].decode("utf-8", errors="backslashreplace")


def part_of(label: str) -> tuple[int, int] | None:
    """(k, n) of a label ``text k/n`` (token k of a group of n), None for a whole token."""
    m = _PART_LABEL.search(label)
    return (int(m[1]), int(m[2])) if m else None


def group_text(label: str) -> str:
    """A label's text without its part."""
    return _PART_LABEL.sub("", label)
