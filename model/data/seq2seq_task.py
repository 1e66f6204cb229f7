"""The translation task of a pretrained encoder-decoder read from a Hugging Face folder (Marian, BART, mBART;
model/store/formats/seq2seq.py builds it): each direction is a :class:`Frame`, the ids around the source text
and the decoder's first ids, so a family only says where its language codes go.

    Marian        source: pieces </s>               decoder: <pad> (decoder_start_token_id)
    Marian, many  source: >>fra<< pieces </s>       (the target's token opens the source)
    BART          source: <s> pieces </s>           decoder: </s> <s> (decoder start, forced first token)
    mBART-50      source: en_XX pieces </s>         decoder: </s> zh_CN (the target's code is forced first)
    mBART (cc25)  source: pieces </s> en_XX         decoder: zh_CN
    T5            source: "translate English to German: " + text, cut as one text, </s>
                                                    decoder: <pad> (decoder_start_token_id)

Nothing here is trained: ``examples`` has no pairs. The tokenizer reads the source; ``target_encode`` (Marian:
the target's own SentencePiece model) reads a typed reference. A Marian with separate vocabularies gives a
``target_tokenizer`` of its own (target.spm and target_vocab.json): it reads a typed reference and names every
id the decoder reads or writes; otherwise it is the tokenizer itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.messages import Message
from .prepared import InputError, Prepared, check_text


@dataclass(frozen=True)
class Frame:
    """One direction's ids: before and after the source's pieces, and the decoder's first ids."""

    source_before: tuple[int, ...] = ()
    source_after: tuple[int, ...] = ()
    decoder_prefix: tuple[int, ...] = field(default=())
    #: Text put before the source text, which the tokenizer then cuts as one text (T5's task prefix); its
    #: pieces are the source's first tokens, shown like any other.
    text_prefix: str = ""


class Seq2SeqTask:
    """Text in, the pretrained model's translation out (satisfies protocols.Task). ``frames`` maps each
    direction ("zh->en") to its :class:`Frame`; a model with one way of reading has one entry, keyed ""
    (no direction to choose)."""

    name = "translation"

    def __init__(self, tokenizer, frames: dict[str, Frame], example: str = "",
                 target_encode: Callable[[str], list[int]] | None = None, family: str = "",
                 target_tokenizer=None):
        if not frames:
            raise ValueError("a translation task needs at least one frame")
        self.tokenizer, self.frames, self.example, self.family = tokenizer, dict(frames), example, family
        self.target_tokenizer = tokenizer if target_tokenizer is None else target_tokenizer
        self.target_encode = target_encode or self.target_tokenizer.encode
        self.directions = [d for d in self.frames if d]

    def frame(self, direction: str | None) -> tuple[str | None, Frame]:
        """(the direction read, its frame); "auto" and None are the first direction."""
        if not self.directions:
            return None, self.frames[""]
        if direction is None or direction == "auto":
            direction = self.directions[0]
        if direction not in self.frames:
            choices = ", ".join(self.directions)
            raise InputError(Message("unknown_direction", {"direction": direction, "choices": choices},
                                     "error"))
        return direction, self.frames[direction]

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        text = check_text(text)
        tok = self.tokenizer
        direction, frame = self.frame(direction)
        notes: list[Message] = []
        ids = tok.encode(frame.text_prefix + text)
        limit = max_len - len(frame.source_before) - len(frame.source_after)
        truncated_from = None
        if len(ids) > limit:
            truncated_from = len(ids)
            notes.append(Message("input_truncated", {"tokens": len(ids), "max_len": max_len, "kept": limit},
                                 "warning"))
            ids = ids[:limit]
        unknown = tok.unknown_characters(text)
        if unknown:
            shown = " ".join(repr(c) for c in unknown[:10])
            notes.append(Message("unknown_characters", {"count": len(unknown), "shown": shown}, "warning"))
        source = [*frame.source_before, *ids, *frame.source_after]
        shown = self._prefix_pieces(frame, ids)
        return Prepared(text, source, tok.tokens(source), list(frame.decoder_prefix), direction, notes,
                        truncated_from, source_prefix=shown, source_prefix_start=len(frame.source_before))

    def _prefix_pieces(self, frame: Frame, ids: list[int]) -> int:
        """How many of the source's first pieces are the frame's text prefix (0 when the prefix's own
        pieces are not where the whole text's cut begins)."""
        if not frame.text_prefix:
            return 0
        alone = self.tokenizer.encode(frame.text_prefix.rstrip())
        return len(alone) if ids[: len(alone)] == alone else 0

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        """A typed reference as the decoder reads it after its prefix (the end token is the caller's)."""
        text = check_text(text)
        self.frame(direction)
        unknown = self.target_tokenizer.unknown_characters(text)
        notes = [Message("target_unknown_characters", {"shown": str(unknown)}, "warning")] if unknown else []
        return self.target_encode(text), notes

    def examples(self, split: str, n: int | None = None) -> list:
        raise NotImplementedError("a pretrained translation model has no training pairs here")

    def references(self, split: str, n: int | None = None) -> list:
        return []

    def to_dict(self) -> dict:
        frames = {d: {"source_before": list(f.source_before), "source_after": list(f.source_after),
                      "decoder_prefix": list(f.decoder_prefix), "text_prefix": f.text_prefix}
                  for d, f in self.frames.items()}
        return {"type": "seq2seq", "family": self.family, "frames": frames, "example": self.example}

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")
