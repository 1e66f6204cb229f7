"""Shared zh/en subword tokenizer (HF ``tokenizers`` BPE, no byte fallback).

Design
------
* One vocabulary for both languages, trained on the *train* split only.
* Special tokens with fixed ids: ``<pad>``=0, ``<bos>``=1, ``<eos>``=2,
  ``<unk>``=3, ``<2en>``=4, ``<2zh>``=5 (target-language tags).
* Normalisation (the only changes a round trip may make): Unicode NFC,
  zero-width spaces removed, every whitespace run (incl. the ideographic space
  U+3000, tabs, newlines) collapsed to one ASCII space, leading/trailing
  whitespace stripped.  Case and full-width punctuation are kept.
* Pre-tokenisation: every CJK ideograph, every punctuation/symbol character
  (except an apostrophe inside a word, as in ``don't``) and every digit is its
  own pre-token, together with at most one preceding space.  Everything else
  is split at spaces.  Spaces become the word-start marker ``▁`` (U+2581)
  attached to the following token, SentencePiece style; a text that starts
  with a non-CJK letter gets a leading marker too, so ``Hello`` at the start
  of a sentence is the same token as in ``say Hello``.  BPE merges only happen
  inside a pre-token, so Chinese is always one token per character and
  English words become readable subwords (``▁something``, ``▁Let``, ``'s``).
* Characters never seen in training become ``<unk>`` (one per character).
* Decoding turns ``▁`` back into spaces and drops the one leading space, so
  ``decode(encode(x)) == normalize(x)`` whenever ``x`` has no unknown
  characters: Chinese comes back without spaces, English with normal spaces.

Display (:meth:`TranslationTokenizer.id_to_token`): tokens are shown exactly
as stored, i.e. with the visible ``▁`` marker for a preceding space
(``▁cat``), Chinese characters as themselves, specials as ``<eos>`` etc.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .tokenizer_files import TokenizerFile, read_tokenizer
from .zh_script import CJK_CHAR_CLASS

__all__ = [
    "BOS",
    "EOS",
    "LANG_TAGS",
    "PAD",
    "SPECIAL_TOKENS",
    "UNK",
    "WORD_START",
    "TranslationTokenizer",
    "build_default_tokenizer",
    "coverage_stats",
]

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
LANG_TAGS = {"en": "<2en>", "zh": "<2zh>"}
SPECIAL_TOKENS: tuple[str, ...] = (PAD, BOS, EOS, UNK, LANG_TAGS["en"], LANG_TAGS["zh"])
WORD_START = "\u2581"  # ▁

# Zero-width characters dropped by the normaliser (literal chars, see zh_script).
_ZERO_WIDTH_CLASS = "[" + "\u200b\u2060\ufeff" + "]"
# One pre-token: optional single space + (CJK ideograph | digit | punctuation or
# symbol that is not an apostrophe followed by a letter).
_ISOLATE_PATTERN = r" ?(?:" + CJK_CHAR_CLASS + r"|\p{N}|(?!['" + "\u2019" + r"]\p{L})[\p{P}\p{S}])"
# Printable ASCII is always in the vocabulary, even if absent from training data.
_ASCII_ALPHABET = [chr(c) for c in range(0x21, 0x7F)]
# Leading space is added unless the text starts with one of these.
_NO_PREFIX_PATTERN = r"^ (?=" + CJK_CHAR_CLASS + r"|[\p{P}\p{S}])"


def _build_pipeline(tok: Tokenizer) -> None:
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.NFC(),
            normalizers.Replace(Regex(_ZERO_WIDTH_CLASS), ""),
            normalizers.Replace(Regex(r"\s+"), " "),
            normalizers.Strip(),
            # sentence-initial word-start marker (removed again before CJK/punctuation)
            normalizers.Prepend(" "),
            normalizers.Replace(Regex(_NO_PREFIX_PATTERN), ""),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_ISOLATE_PATTERN), behavior="isolated"),
            pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme="never", split=True),
        ]
    )
    tok.decoder = decoders.Metaspace(replacement=WORD_START, prepend_scheme="always", split=True)


class TranslationTokenizer(TokenizerFile):
    """Wrapper around a HF :class:`tokenizers.Tokenizer` with a fixed special-token layout."""

    def __init__(self, tokenizer: Tokenizer):
        self._tok = tokenizer
        self._check_specials()
        # Literal "<eos>" typed by a user must be encoded as text, not as the special.
        self._tok.encode_special_tokens = True
        self._specials = set(range(len(SPECIAL_TOKENS)))

    # ------------------------------------------------------------------ build
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 8000) -> TranslationTokenizer:
        """Train a BPE vocabulary of ``vocab_size`` entries (specials included).

        Every character seen in ``texts`` (plus printable ASCII) is kept in the
        alphabet; merges need a pair frequency of at least 2.
        """
        tok = Tokenizer(models.BPE(unk_token=UNK, fuse_unk=False, byte_fallback=False))
        _build_pipeline(tok)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=2,
            special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=_ASCII_ALPHABET,
            show_progress=False,
        )
        tok.train_from_iterator(texts, trainer=trainer)
        return cls(tok)

    @classmethod
    def load(cls, path: Path | str) -> TranslationTokenizer:
        """Load a file written by :meth:`save`; raises ``ValueError`` if it is unusable."""
        path = Path(path)
        rebuild = "Delete it and rebuild it with model.translation_tokenizer.build_default_tokenizer()."
        tok = read_tokenizer(path, if_corrupt=rebuild)
        try:
            return cls(tok)
        except ValueError as exc:
            raise ValueError(f"Tokenizer file {path}: {exc}") from exc

    def _check_specials(self) -> None:
        for expected_id, token in enumerate(SPECIAL_TOKENS):
            got = self._tok.token_to_id(token)
            if got != expected_id:
                raise ValueError(
                    f"special token {token!r} has id {got}, expected {expected_id}; "
                    "this is not a TranslationTokenizer vocabulary"
                )
        if not isinstance(self._tok.model, models.BPE):
            raise ValueError("expected a BPE model")

    # ------------------------------------------------------------- properties
    @property
    def pad_id(self) -> int:
        return 0

    @property
    def bos_id(self) -> int:
        return 1

    @property
    def eos_id(self) -> int:
        return 2

    @property
    def unk_id(self) -> int:
        return 3

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(self._specials)

    def is_special(self, i: int) -> bool:
        """True for the tokens the model adds around text (<pad>, <bos>, <eos>, language tags),
        decided by id, so typed text such as "<eos>" never counts. <unk> is not special: it
        stands for a character the user typed."""
        return int(i) in self._specials and int(i) != self.unk_id

    def lang_tag_id(self, lang: str) -> int:
        """Id of the target-language tag: ``"en"`` -> ``<2en>`` (4), ``"zh"`` -> ``<2zh>`` (5)."""
        try:
            return SPECIAL_TOKENS.index(LANG_TAGS[lang])
        except KeyError:
            raise ValueError(f"unknown language {lang!r}; expected 'en' or 'zh'") from None

    # ------------------------------------------------------------ encode/decode
    def normalize(self, text: str) -> str:
        """The text as the tokenizer sees it (what a lossless round trip returns)."""
        return self._tok.normalizer.normalize_str(text).removeprefix(" ")

    def encode(self, text: str) -> list[int]:
        """Token ids for ``text``; no BOS/EOS/tags are added."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Like :meth:`encode` for many texts (parallel inside ``tokenizers``)."""
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids for e in encs]

    def unknown_characters(self, text: str) -> list[str]:
        """Characters of ``text`` that encode to ``<unk>``, in order (with repeats)."""
        enc = self._tok.encode(text, add_special_tokens=False)
        return [
            text[start:end].strip() or text[start:end]
            for tid, (start, end) in zip(enc.ids, enc.offsets, strict=True)
            if tid == self.unk_id
        ]


def coverage_stats(tokenizer: TranslationTokenizer, texts: Sequence[str]) -> dict[str, float]:
    """``unk_rate`` (share of ``<unk>`` tokens), ``mean_tokens`` per text, ``roundtrip`` rate."""
    encoded = tokenizer.encode_batch(texts)
    n_tokens = sum(len(e) for e in encoded)
    n_unk = sum(e.count(tokenizer.unk_id) for e in encoded)
    exact = sum(tokenizer.decode(e) == tokenizer.normalize(t) for e, t in zip(encoded, texts, strict=True))
    return {
        "texts": float(len(texts)),
        "unk_rate": n_unk / max(n_tokens, 1),
        "texts_with_unk": sum(tokenizer.unk_id in e for e in encoded) / max(len(texts), 1),
        "mean_tokens": n_tokens / max(len(texts), 1),
        "roundtrip": exact / max(len(texts), 1),
    }


def build_default_tokenizer(out_path: Path | str, vocab_size: int = 8000) -> TranslationTokenizer:
    """Load the corpus, split it, train on train-split zh + en, save to ``out_path``."""
    from .tatoeba import load_pairs, split_pairs

    train = split_pairs(load_pairs())["train"]
    texts = [p.zh for p in train] + [p.en for p in train]
    tok = TranslationTokenizer.train(texts, vocab_size=vocab_size)
    tok.save(out_path)
    return tok
