"""Language-modelling tasks our own decoder-only models are trained on (model/training/presets.py).

``induction``: random letter sequences written twice (``qhzmt…qhzmt…``). The second copy can only
be predicted by finding the same letter earlier and copying what followed it: the job of a
previous-token head in layer 0 and an induction head in layer 1.

``sentences``: the Tatoeba sentences, Chinese and English, from the training split only, each one
training text (``<bos> sentence <eos>``), for a tiny GPT that continues what a learner types.

Both read a prompt as ``<bos>`` followed by its tokens, which is also the decoder's prefix (there
is no encoder): every decoding strategy continues it.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..core.messages import Message
from .char_tokenizer import CharTokenizer
from .prepared import Prepared, check_text

Example = tuple[list[int], list[int]]  # (no source: [], the training text: <bos> ... <eos>)


class _LanguageModelTask:
    """What both tasks share: a prompt is <bos> + its tokens, continued by the decoder."""

    directions: list[str] = []
    tokenizer: CharTokenizer
    #: The tokenizer of the decoder's ids: the one tokenizer (one shared vocabulary).
    target_tokenizer = property(lambda self: self.tokenizer)

    def _normalise(self, text: str) -> tuple[str, list[Message]]:
        return text, []

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        text, notes = self._normalise(check_text(text))
        tok = self.tokenizer
        ids = [tok.bos_id, *tok.encode(text)]
        truncated_from = None
        if len(ids) > max_len:
            truncated_from = len(ids)
            notes.append(Message("input_truncated", {"tokens": len(ids), "max_len": max_len, "kept": max_len},
                                 "warning"))
            ids = ids[:max_len]
        unknown = tok.unknown_characters(text)
        if unknown:
            shown = " ".join(repr(c) for c in unknown[:10])
            notes.append(Message("unknown_characters", {"count": len(unknown), "shown": shown}, "warning"))
        return Prepared(text, ids, tok.tokens(ids), list(ids), None, notes, truncated_from)

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        """A given continuation's ids (no <bos>: it follows the prompt)."""
        text, notes = self._normalise(check_text(text))
        return self.tokenizer.encode(text), notes

    def references(self, split: str, n: int | None = None) -> list:
        return []

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")

    def _text(self, ids: list[int]) -> list[int]:
        return [self.tokenizer.bos_id, *ids, self.tokenizer.eos_id]


class InductionTask(_LanguageModelTask):
    """Random lowercase letter sequences, each written twice."""

    ALPHABET = "abcdefghijklmnopqrstuvwxyz"
    name = "induction"
    example = "qhzmtvbqhzm"

    def __init__(self, min_len: int = 5, max_len: int = 20):
        self.min_len, self.max_len = min_len, max_len
        self.tokenizer = CharTokenizer(self.ALPHABET)

    def _normalise(self, text: str) -> tuple[str, list[Message]]:
        lowered = text.lower()
        return lowered, ([Message("input_lowercased", {}, "info")] if lowered != text else [])

    def sequences(self, split: str, n: int | None = None) -> list[str]:
        """The split's random sequences (each once; its training text holds it twice)."""
        seed = {"train": 0, "valid": 1, "test": 2}[split]
        rng = random.Random(f"induction-{seed}")
        n = n or (20000 if split == "train" else 500)
        return ["".join(rng.choice(self.ALPHABET) for _ in range(rng.randint(self.min_len, self.max_len)))
                for _ in range(n)]

    def examples(self, split: str, n: int | None = None) -> list[Example]:
        return [([], self._text(self.tokenizer.encode(s + s))) for s in self.sequences(split, n)]

    def to_dict(self) -> dict:
        return {"type": "induction", "min_len": self.min_len, "max_len": self.max_len}


class SentencesTask(_LanguageModelTask):
    """Tatoeba's Chinese and English sentences, one training text each (training split only)."""

    name = "sentences"
    example = "我吃了一个"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def _normalise(self, text: str) -> tuple[str, list[Message]]:
        from .zh_script import to_simplified

        simplified, converted = to_simplified(text)
        return simplified, ([Message("input_script_converted", {}, "info")] if converted else [])

    def splits(self):
        from .tatoeba import splits

        return splits()

    def examples(self, split: str, n: int | None = None) -> list[Example]:
        tok = self.tokenizer
        out = []
        for pair in self.splits()[split][:n]:
            out.append(([], self._text(tok.encode(pair.zh))))
            out.append(([], self._text(tok.encode(pair.en))))
        return out

    def to_dict(self) -> dict:
        return {"type": "sentences"}
