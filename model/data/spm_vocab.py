"""Marian's tokenizer: pieces from SentencePiece models (``source.spm`` for what the encoder reads,
``target.spm`` for a typed reference and for decoding), ids from ``vocab.json``.

The ``.spm`` files' own ids are never used: Marian's vocabulary (``vocab.json``, piece -> id) is the
model's, and a piece it does not hold is ``<unk>``. Language tokens such as ``>>fra<<`` are in the
vocabulary but never typed: the task puts them before the source. ``</s>`` ends every source and
``<pad>`` is the decoder's start (both by id).

Both files are size-capped before they are read, and a model file SentencePiece cannot parse is one
``ValueError`` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

#: Largest .spm model and vocab.json read (opus-mt's are ~0.8 MB and ~1.5 MB).
MAX_SPM_BYTES = 32 * 2**20
MAX_VOCAB_BYTES = 64 * 2**20
WORD_START = "\u2581"


def _sized(path: Path, limit: int) -> bytes:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path} is larger than {limit // 2**20} MiB; not reading it")
    return path.read_bytes()


def read_spm(path: Path):
    """A SentencePiece model from ``path`` (ValueError naming it if it is not one)."""
    import sentencepiece

    data = _sized(path, MAX_SPM_BYTES)
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(data)
    except (RuntimeError, OSError, TypeError) as e:
        raise ValueError(f"{path} is not a SentencePiece model ({str(e)[:80]})") from e
    if processor.GetPieceSize() < 1:
        raise ValueError(f"{path} is not a SentencePiece model (no pieces)")
    return processor


def read_vocab(path: Path) -> dict[str, int]:
    """``vocab.json``: an object of piece -> id (ValueError naming the file otherwise)."""
    try:
        vocab = json.loads(_sized(path, MAX_VOCAB_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path} is not a JSON vocabulary ({str(e)[:80]})") from e
    if not isinstance(vocab, dict) or not vocab:
        raise ValueError(f"{path} must hold an object of piece -> id")
    bad = [k for k, v in vocab.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
    if bad:
        raise ValueError(f"{path}: the id of {bad[0][:40]!r} is not a whole number >= 0")
    if len(set(vocab.values())) != len(vocab):
        raise ValueError(f"{path}: two pieces share an id")
    return vocab


class SpmVocabTokenizer:
    """Marian's tokenizer (satisfies ``model.core.protocols.Tokenizer``): ``encode`` cuts source text with
    the source model, :meth:`encode_target` a reference with the target model, both looked up in one
    vocabulary."""

    word_marker = WORD_START
    unknown_note = "unknown_characters"

    def __init__(self, source_spm, target_spm, vocab: dict[str, int], eos: str = "</s>", unk: str = "<unk>",
                 pad: str = "<pad>"):
        for role, token in (("eos", eos), ("unk", unk), ("pad", pad)):
            if token not in vocab:
                raise ValueError(f"the vocabulary has no {token} token ({role})")
        self._source, self._target, self._vocab = source_spm, target_spm, vocab
        self._pieces = {i: p for p, i in vocab.items()}
        self._eos, self._unk, self._pad = vocab[eos], vocab[unk], vocab[pad]
        self._specials = frozenset((self._eos, self._pad))

    @classmethod
    def load(cls, folder: Path, source: str = "source.spm", target: str = "target.spm",
             vocab: str = "vocab.json", **specials: str) -> SpmVocabTokenizer:
        folder = Path(folder)
        return cls(read_spm(folder / source), read_spm(folder / target), read_vocab(folder / vocab),
                   **specials)

    def target_side(self, vocab: dict[str, int]) -> SpmVocabTokenizer:
        """The tokenizer of a model with separate vocabularies' target side: target.spm's pieces looked up
        in ``vocab`` (target_vocab.json), for what the decoder reads and writes."""
        return SpmVocabTokenizer(self._target, self._target, vocab)

    # ------------------------------------------------------------- properties
    pad_id = property(lambda self: self._pad)
    eos_id = property(lambda self: self._eos)
    bos_id = property(lambda self: self._pad)  # no start token: the decoder starts from <pad>
    unk_id = property(lambda self: self._unk)

    @property
    def vocab_size(self) -> int:
        return max(self._pieces) + 1

    def is_special(self, i: int) -> bool:
        return int(i) in self._specials

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    # ------------------------------------------------------------ encode/decode
    def _ids(self, pieces: list[str]) -> list[int]:
        return [self._vocab.get(p, self._unk) for p in pieces]

    def pieces(self, text: str) -> list[str]:
        """The source model's pieces of ``text`` (before the vocabulary lookup)."""
        return self._source.encode(text, out_type=str)

    def encode(self, text: str) -> list[int]:
        """Ids of the source text, without </s>."""
        return self._ids(self.pieces(text))

    def encode_target(self, text: str) -> list[int]:
        """Ids of a target-language text (a typed reference), cut by the target model."""
        return self._ids(self._target.encode(text, out_type=str))

    def unknown_characters(self, text: str) -> list[str]:
        """The pieces of ``text`` the vocabulary does not hold (each becomes <unk>), their word marker
        dropped."""
        return [p.lstrip(WORD_START) or p for p in self.pieces(text) if p not in self._vocab]

    def normalize(self, text: str) -> str:
        return self._source.decode_pieces(self.pieces(text))

    def id_to_token(self, i: int) -> str:
        token = self._pieces.get(int(i))
        if token is None:
            raise IndexError(f"token id {i} is not in the vocabulary")
        return token

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.id_to_token(i) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (the target model joins the pieces); special, unknown and language tokens
        dropped."""
        pieces = [self._pieces[int(i)] for i in ids if int(i) in self._pieces and int(i) not in self._specials
                  and int(i) != self._unk and not self._pieces[int(i)].startswith(">>")]
        return self._target.decode_pieces(pieces)

    def save(self, path: Path | str) -> None:
        raise NotImplementedError("Marian's tokenizer is read from its folder "
                                  "(source.spm, target.spm, vocab.json)")
