"""Reading and writing Hugging Face ``tokenizers`` JSON files, shared by the tokenizers built on them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer

from ..core.files import atomic_write


def read_tokenizer(path: Path, *, if_corrupt: str = "") -> Tokenizer:
    """The tokenizer in ``path``. FileNotFoundError if it is missing; ValueError naming the file if
    it cannot be read or parsed (``if_corrupt`` is added to that message: what to do about it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read tokenizer file {path}: {exc}") from exc
    try:
        json.loads(text)  # a clear JSON error before tokenizers' generic one
        return Tokenizer.from_str(text)
    except Exception as exc:  # json.JSONDecodeError, or tokenizers' generic Exception
        advice = f" {if_corrupt}" if if_corrupt else ""
        problem = f"{path} is corrupt or not a Hugging Face tokenizers JSON file ({exc})."
        raise ValueError(problem + advice) from exc


def write_tokenizer(tok: Tokenizer, path: Path) -> None:
    """Write ``tok`` to ``path`` atomically (a temporary file in the same folder, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tok.save(str(tmp)))


class TokenizerFile:
    """What every tokenizer built on a ``tokenizers.Tokenizer`` (``self._tok``) shares: ids <-> token
    strings, plain decoding, and saving to one JSON file."""

    _tok: Tokenizer

    def save(self, path: Path | str) -> None:
        """Write one ``tokenizer.json`` file (atomically)."""
        write_tokenizer(self._tok, Path(path))

    def decode(self, ids: Sequence[int]) -> str:
        """Natural text for ``ids``; special tokens (incl. the unknown token) are dropped."""
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=True)

    def id_to_token(self, i: int) -> str:
        """Display string of one id."""
        token = self._tok.id_to_token(int(i))
        if token is None:
            raise IndexError(f"token id {i} out of range [0, {self._tok.get_vocab_size()})")
        return token

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Display strings for ``ids`` (see :meth:`id_to_token`)."""
        return [self.id_to_token(i) for i in ids]
