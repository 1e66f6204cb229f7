"""Continuing a text: the task of a decoder-only language model (GPT-2, Llama, Qwen2, Mistral).

``prepare(text)`` gives the prompt's token ids (BOS first when the model wants one) as both the
source and the decoder prefix, so every decoding strategy (model/decoding/) continues it as it
continues a translation's prefix, with no encoder output to attend to. There is no training data:
such models come pretrained.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from ..core.messages import Message
from .byte_tokens import readable_tokens
from .chat_form import ChatForm, chat_form_and_reason
from .prepared import InputError, Prepared, check_text
from .tokenizer_files import TokenizerFile, read_tokenizer


class PieceTokenizer(TokenizerFile):
    """Any Hugging Face ``tokenizer.json`` (byte-level BPE, SentencePiece BPE, ...), with the special
    ids the model's config.json names (satisfies ``model.core.protocols.Tokenizer``)."""

    def __init__(self, tokenizer: Tokenizer, bos_id: int | None, eos_id: int | None, pad_id: int):
        self._tok = tokenizer
        self._tok.no_padding()
        self._tok.no_truncation()
        self._bos, self._eos, self._pad = bos_id, eos_id, pad_id
        self._specials = frozenset(i for i in (bos_id, eos_id) if i is not None)
        # A byte-level vocabulary spells bytes as printable characters (a space is "Ġ"): its tokens
        # are shown as the text they spell (model/data/byte_tokens.py).
        self.byte_level = type(tokenizer.decoder).__name__ == "ByteLevel"

    @classmethod
    def load(cls, path: Path | str, bos_id: int | None, eos_id: int | None, pad_id: int) -> PieceTokenizer:
        return cls(read_tokenizer(Path(path)), bos_id, eos_id, pad_id)

    def tokens(self, ids) -> list[str]:
        """Display strings for ``ids``: as stored, or for a byte-level vocabulary the text each token
        spells, a token holding part of a character labelled with its group's text and its part."""
        raw = [self._raw(i) for i in ids]
        return readable_tokens(raw) if self.byte_level else raw

    def id_to_token(self, i: int) -> str:
        """Display string of one id, read alone (a part of a character shows its bytes escaped)."""
        return self.tokens([i])[0]

    def _raw(self, i: int) -> str:
        token = self._tok.id_to_token(int(i))
        if token is None:
            raise IndexError(f"token id {i} out of range [0, {self._tok.get_vocab_size()})")
        return token

    @property
    def pad_id(self) -> int:
        return self._pad

    @property
    def bos_id(self) -> int:
        return self._pad if self._bos is None else self._bos

    @property
    def eos_id(self) -> int:
        return self._pad if self._eos is None else self._eos

    @property
    def has_bos(self) -> bool:
        return self._bos is not None

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    def is_special(self, i: int) -> bool:
        return int(i) in self._specials

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def unknown_characters(self, text: str) -> list[str]:
        unk = self._tok.token_to_id("<unk>")
        if unk is None:  # byte-level BPE has no unknown token: every text is covered
            return []
        enc = self._tok.encode(text, add_special_tokens=False)
        return [text[a:b] for tid, (a, b) in zip(enc.ids, enc.offsets, strict=True) if tid == unk]


#: The forms a chat model reads a prompt in: as typed, or as a user's message in its chat template.
FORMS = ("raw", "chat")


class ContinueTask:
    """Text in, the model's continuation out (satisfies protocols.Task).

    A model whose file carries a chat template reads a prompt in one of two forms, offered where a
    translation model offers its directions: ``"raw"`` (the text as typed, continued) or ``"chat"``
    (the text as a user's message in the template, answered). None is the raw form.
    """

    name = "continue"
    #: The tokenizer of the decoder's ids: the one tokenizer (one shared vocabulary).
    target_tokenizer = property(lambda self: self.tokenizer)

    def __init__(self, tokenizer: PieceTokenizer, example: str = "", add_bos: bool = False,
                 chat: ChatForm | None = None, chat_template: str | None = None):
        self.tokenizer = tokenizer
        self.example = example
        self.add_bos = add_bos and tokenizer.has_bos  # Llama-style models read BOS first; GPT-2 does not
        # The template comes with the model file: it is rendered (in a bounded child process) only
        # when the forms are first asked for, so a raw prompt never pays for a hostile template.
        self._template = chat_template if chat is None else None
        self._chat, self._chat_reason = chat, None
        self._rendered = chat is not None or not chat_template

    def _render(self) -> None:
        if not self._rendered:
            self._chat, self._chat_reason = chat_form_and_reason(self._template)
            self._rendered = True

    @property
    def chat(self) -> ChatForm | None:
        """The chat form the model's template gives (None: no template, or one that gives none)."""
        self._render()
        return self._chat

    @property
    def chat_reason(self) -> str | None:
        """Why a model that carries a chat template has no chat form (one line), else None."""
        self._render()
        return self._chat_reason

    @property
    def directions(self) -> list[str]:
        """The forms offered: raw and chat for a model with a chat form, none otherwise."""
        return list(FORMS) if self.chat is not None else []

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        text = check_text(text)
        if direction is not None and direction not in self.directions:
            params = {"direction": direction, "choices": ", ".join(self.directions) or "none"}
            raise InputError(Message("unknown_direction", params, "error"))
        if direction == "chat":
            text = self.chat.apply(text)
        tok = self.tokenizer
        ids = ([tok.bos_id] if self.add_bos else []) + tok.encode(text)
        notes, truncated_from = [], None
        if len(ids) > max_len:
            truncated_from = len(ids)
            notes.append(Message("input_truncated_pieces",
                                 {"tokens": len(ids), "max_len": max_len, "kept": max_len}, "warning"))
            ids = ids[:max_len]
        return Prepared(text, ids, tok.tokens(ids), list(ids), direction, notes, truncated_from)

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        """A reference continuation's ids (no BOS: it follows the prompt)."""
        return self.tokenizer.encode(check_text(text)), []

    def examples(self, split: str, n: int | None = None) -> list:
        raise NotImplementedError("a continue task has no training pairs (the model comes pretrained)")

    def references(self, split: str, n: int | None = None) -> list:
        return []

    def to_dict(self) -> dict:
        tok = self.tokenizer
        return {"type": "continue", "tokenizer": "pieces", "example": self.example, "add_bos": self.add_bos,
                "bos_id": tok._bos, "eos_id": tok._eos, "pad_id": tok.pad_id}

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")
