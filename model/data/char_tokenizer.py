"""Character tokenizer over a fixed alphabet, for the didactic models."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")


class CharTokenizer:
    """One token per character of `alphabet`; anything else is <unk>. Ids 0-3 are the specials."""

    def __init__(self, alphabet: str):
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet has repeated characters")
        self.alphabet = alphabet
        self.itos = list(SPECIALS) + list(alphabet)
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = 0, 1, 2, 3

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(c, self.unk_id) if c in self.alphabet else self.unk_id for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.itos[i] for i in ids if i >= len(SPECIALS) and i < len(self.itos))

    def id_to_token(self, i: int) -> str:
        return self.itos[i] if 0 <= i < len(self.itos) else "<unk>"

    def is_special(self, i: int) -> bool:
        """True for the tokens the model adds around text (<pad>, <bos>, <eos>). <unk> is not
        special: it stands for a character the user typed."""
        return i in (self.pad_id, self.bos_id, self.eos_id)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.id_to_token(i) for i in ids]

    def unknown_characters(self, text: str) -> list[str]:
        return sorted({c for c in text if c not in self.alphabet})

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"type": "char", "alphabet": self.alphabet}, ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> CharTokenizer:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("type") != "char" or not isinstance(data.get("alphabet"), str):
                raise ValueError("not a character tokenizer file")
            return cls(data["alphabet"])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError, AttributeError,
                RecursionError) as e:
            raise ValueError(f"cannot read tokenizer {path}: {e}") from e
