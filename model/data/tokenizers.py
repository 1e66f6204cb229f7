"""Tokenizers of pretrained models, read from a Hugging Face ``tokenizer.json`` with ``tokenizers``.

:class:`WordPieceTokenizer` is BERT's: lower-casing and accent stripping (as its normalizer says),
splitting on whitespace and punctuation, then each word into the longest pieces of the vocabulary,
a piece inside a word written ``##piece``. ``[CLS]`` opens and ``[SEP]`` closes every input; the
task (model/pretrained.py) adds them, ``encode`` does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer, models

from .tokenizer_files import TokenizerFile, read_tokenizer

#: Special tokens a BERT vocabulary must hold (name -> role).
BERT_SPECIALS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}

#: Prefix of a word piece that continues the previous piece's word.
CONTINUATION = "##"


class WordPieceTokenizer(TokenizerFile):
    """BERT's WordPiece tokenizer (satisfies ``model.protocols.Tokenizer``).

    ``bos_id`` is ``[CLS]`` and ``eos_id`` is ``[SEP]``: what the model reads first and last.
    Text the user types is always text: "[SEP]" typed in a sentence becomes the pieces
    ``[``, ``sep``, ``]``, never the special token.
    """

    def __init__(self, tokenizer: Tokenizer):
        if not isinstance(tokenizer.model, models.WordPiece):
            raise ValueError(f"expected a WordPiece model, found {type(tokenizer.model).__name__}")
        ids = {}
        for role, token in BERT_SPECIALS.items():
            i = tokenizer.token_to_id(token)
            if i is None:
                raise ValueError(f"the vocabulary has no {token} token")
            ids[role] = i
        self._tok = tokenizer
        # The file may ask for padding/truncation to a fixed length (MiniLM's pads to 128): the task
        # decides the length, so neither is applied here.
        self._tok.no_padding()
        self._tok.no_truncation()
        self._tok.encode_special_tokens = True
        self._ids = ids
        self._specials = frozenset(ids[r] for r in ("pad", "cls", "sep", "mask"))

    @classmethod
    def load(cls, path: Path | str) -> WordPieceTokenizer:
        """Read a ``tokenizer.json``; ValueError (naming the file) if it is not a WordPiece one."""
        path = Path(path)
        tok = read_tokenizer(path)
        try:
            return cls(tok)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc

    # ------------------------------------------------------------- properties
    @property
    def pad_id(self) -> int:
        return self._ids["pad"]

    @property
    def bos_id(self) -> int:
        return self._ids["cls"]

    @property
    def eos_id(self) -> int:
        return self._ids["sep"]

    @property
    def unk_id(self) -> int:
        return self._ids["unk"]

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    def is_special(self, i: int) -> bool:
        """[PAD], [CLS], [SEP], [MASK] (decided by id); [UNK] stands for text the user typed."""
        return int(i) in self._specials

    # ------------------------------------------------------------ encode/decode
    def normalize(self, text: str) -> str:
        """The text as the vocabulary sees it (lower-cased, accents stripped, for MiniLM)."""
        norm = self._tok.normalizer
        return norm.normalize_str(text) if norm is not None else text

    def encode(self, text: str) -> list[int]:
        """Word-piece ids of ``text``, without [CLS]/[SEP]."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def unknown_characters(self, text: str) -> list[str]:
        """The words of ``text`` that became [UNK] (WordPiece replaces a whole word), in order."""
        enc = self._tok.encode(text, add_special_tokens=False)
        return [text[a:b] for tid, (a, b) in zip(enc.ids, enc.offsets, strict=True) if tid == self.unk_id]


def word_starts(tokens: Sequence[str]) -> list[bool]:
    """True where a token begins a word: every token except a ``##`` continuation piece."""
    return [not t.startswith(CONTINUATION) or len(t) == len(CONTINUATION) for t in tokens]
