"""T5's tokenizer, from a ``tokenizer.json`` when the folder has one, else from ``spiece.model`` alone.

T5's vocabulary is SentencePiece unigram pieces: ``<pad>`` 0 (also the decoder's first token), ``</s>`` 1
(closes every source), ``<unk>`` 2, then the pieces, then the sentinels ``<extra_id_99>`` .. ``<extra_id_0>``
that pretraining used and translation never types. There is no start token and no mask token.

:class:`T5FileTokenizer` reads a ``tokenizer.json`` with ``tokenizers``. :class:`T5SpmTokenizer` reads
``spiece.model`` with the ``sentencepiece`` package: its ids are the model's own, and the ids past its last
piece (up to the config's vocabulary) are the sentinels, named as T5 names them. The file is size-capped
before it is read (model/data/spm_vocab.py's reader).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer, models

from .spm_vocab import WORD_START, read_spm
from .tokenizer_files import read_tokenizer
from .tokenizers import FramedTokenizer

#: T5's roles: the decoder starts from <pad> (no start token), and it has no mask token.
T5_SPECIALS = {"pad": "<pad>", "unk": "<unk>", "cls": "<pad>", "sep": "</s>", "mask": "<pad>"}
SENTINEL = "<extra_id_{}>"


class T5FileTokenizer(FramedTokenizer):
    """T5's unigram tokenizer as its ``tokenizer.json`` holds it; ``</s>`` closes every source."""

    SPECIALS = T5_SPECIALS
    word_marker = WORD_START
    unknown_note = "unknown_characters"

    def __init__(self, tokenizer: Tokenizer):
        if not isinstance(tokenizer.model, models.Unigram):
            raise ValueError(f"expected a Unigram model, found {type(tokenizer.model).__name__}")
        super().__init__(tokenizer)

    @classmethod
    def load(cls, path: Path | str) -> T5FileTokenizer:
        path = Path(path)
        try:
            return cls(read_tokenizer(path))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc


class T5SpmTokenizer:
    """T5's tokenizer from ``spiece.model`` (satisfies ``model.core.protocols.Tokenizer``); ``vocab_size``:
    the model's vocabulary, whose ids past the SentencePiece model's pieces are sentinels."""

    word_marker = WORD_START
    unknown_note = "unknown_characters"

    def __init__(self, processor, vocab_size: int):
        self._sp = processor
        self._n = processor.GetPieceSize()
        ids = {}
        for role, token in (("pad", "<pad>"), ("eos", "</s>"), ("unk", "<unk>")):
            i = processor.PieceToId(token)
            if processor.IdToPiece(i) != token:
                raise ValueError(f"the SentencePiece model has no {token} piece ({role})")
            ids[role] = i
        self._pad, self._eos, self._unk = ids["pad"], ids["eos"], ids["unk"]
        self._size = max(vocab_size, self._n)
        self._specials = frozenset((self._pad, self._eos))

    @classmethod
    def load(cls, path: Path | str, vocab_size: int) -> T5SpmTokenizer:
        return cls(read_spm(Path(path)), vocab_size)

    pad_id = property(lambda self: self._pad)
    bos_id = property(lambda self: self._pad)  # no start token: the decoder starts from <pad>
    eos_id = property(lambda self: self._eos)
    unk_id = property(lambda self: self._unk)
    vocab_size = property(lambda self: self._size)

    def is_special(self, i: int) -> bool:
        return int(i) in self._specials

    def token_to_id(self, token: str) -> int | None:
        if token.startswith("<extra_id_") and token.endswith(">") and token[10:-1].isdigit():
            i = self._size - 1 - int(token[10:-1])
            return i if self._n <= i < self._size else None
        i = self._sp.PieceToId(token)
        return i if self._sp.IdToPiece(i) == token else None

    def encode(self, text: str) -> list[int]:
        """Piece ids of ``text``, without </s>."""
        return list(self._sp.EncodeAsIds(text))

    def id_to_token(self, i: int) -> str:
        i = int(i)
        if 0 <= i < self._n:
            return self._sp.IdToPiece(i)
        if self._n <= i < self._size:
            return SENTINEL.format(self._size - 1 - i)
        raise IndexError(f"token id {i} is not in the vocabulary")

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.id_to_token(i) for i in ids]

    def unknown_characters(self, text: str) -> list[str]:
        """The pieces of ``text`` that became <unk>, their word marker dropped."""
        pieces = self._sp.EncodeAsPieces(text)
        ids = self._sp.EncodeAsIds(text)
        return [p.lstrip(WORD_START) or p for p, i in zip(pieces, ids, strict=True) if i == self._unk]

    def normalize(self, text: str) -> str:
        return self._sp.DecodePieces(self._sp.EncodeAsPieces(text))

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``: padding, </s>, <unk> and sentinels dropped."""
        dropped = self._specials | {self._unk}
        kept = [int(i) for i in ids if 0 <= int(i) < self._n and int(i) not in dropped]
        return self._sp.DecodeIds(kept)

    def save(self, path: Path | str) -> None:
        raise NotImplementedError("T5's SentencePiece tokenizer is read from its folder (spiece.model)")
