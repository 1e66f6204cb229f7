"""Tasks: what a model's input and output text are, and where its training pairs come from.

A task turns user text into source ids and a decoder prefix (with notes for the user about
truncation, script conversion and unknown characters), and provides (source, target) id pairs
for training. The training loop, the CLI and the app only talk to this interface.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..core.messages import Message
from .char_tokenizer import CharTokenizer
from .prepared import InputError, Prepared, check_text
from .tokenizers import FramedTokenizer, WordPieceTokenizer

Example = tuple[list[int], list[int]]  # (source ids ending in eos, target ids: prefix ... eos)


def _finish(
    tokenizer, text: str, ids: list[int], max_len: int, prefix: list[int], direction, notes
) -> Prepared:
    limit = max_len - 1  # room for eos
    truncated_from = None
    if len(ids) > limit:
        truncated_from = len(ids)
        ids = ids[:limit]
        notes.append(
            Message(
                "input_truncated", {"tokens": truncated_from, "max_len": max_len, "kept": limit}, "warning"
            )
        )
    unknown = tokenizer.unknown_characters(text)
    if unknown:
        shown = " ".join(repr(c) for c in unknown[:10])
        notes.append(Message("unknown_characters", {"count": len(unknown), "shown": shown}, "warning"))
    source = ids + [tokenizer.eos_id]
    return Prepared(text, source, tokenizer.tokens(source), prefix, direction, notes, truncated_from)


def _target_unknown(unknown: list[str]) -> Message:
    # Shown as the Python list, as the note has always read.
    return Message("target_unknown_characters", {"shown": str(unknown)}, "warning")


class SyntheticTask:
    """A string-to-string puzzle over lowercase letters: copy it, reverse it or sort it."""

    ALPHABET = "abcdefghijklmnopqrstuvwxyz"
    KINDS = {
        "copy": lambda s: s,
        "reverse": lambda s: s[::-1],
        "sort": lambda s: "".join(sorted(s)),
    }
    EXAMPLES = {"copy": "attention", "reverse": "attention", "sort": "transformer"}

    def __init__(self, kind: str, min_len: int = 3, max_len: int = 12):
        if kind not in self.KINDS:
            raise ValueError(f"unknown synthetic task {kind!r}; expected one of {sorted(self.KINDS)}")
        self.kind, self.min_len, self.max_len = kind, min_len, max_len
        self.tokenizer = CharTokenizer(self.ALPHABET)
        self.directions: list[str] = []

    name = property(lambda self: self.kind)
    #: The tokenizer of the decoder's ids: the one tokenizer (one shared vocabulary).
    target_tokenizer = property(lambda self: self.tokenizer)
    example = property(lambda self: self.EXAMPLES[self.kind])

    def target_text(self, text: str) -> str:
        return self.KINDS[self.kind](text)

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        text = check_text(text)
        notes = []
        lowered = text.lower()
        if lowered != text:
            notes.append(Message("input_lowercased", {}, "info"))
        ids = self.tokenizer.encode(lowered)
        return _finish(self.tokenizer, lowered, ids, max_len, [self.tokenizer.bos_id], None, notes)

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        """A given output, normalised like the training targets: (ids, notes for the user)."""
        lowered = check_text(text).lower()
        unknown = self.tokenizer.unknown_characters(lowered)
        notes = [_target_unknown(unknown)] if unknown else []
        return self.tokenizer.encode(lowered), notes

    def examples(self, split: str, n: int | None = None) -> list[Example]:
        seed = {"train": 0, "valid": 1, "test": 2}[split]
        rng = random.Random(f"{self.kind}-{seed}")
        n = n or (20000 if split == "train" else 500)
        tok = self.tokenizer
        out = []
        for _ in range(n):
            s = "".join(rng.choice(self.ALPHABET) for _ in range(rng.randint(self.min_len, self.max_len)))
            target = [tok.bos_id] + tok.encode(self.target_text(s)) + [tok.eos_id]
            out.append((tok.encode(s) + [tok.eos_id], target))
        return out

    def references(self, split: str, n: int | None = None) -> list[tuple[str, str, str | None]]:
        """(source text, reference target text, direction) for evaluation."""
        tok = self.tokenizer
        return [(tok.decode(s), tok.decode(t), None) for s, t in self.examples(split, n)]

    def to_dict(self) -> dict:
        return {"type": "synthetic", "kind": self.kind, "min_len": self.min_len, "max_len": self.max_len}

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")


class TranslationTask:
    """Chinese <-> English in one model; the decoder starts with a tag naming the target language."""

    DIRECTIONS = ("zh->en", "en->zh")
    #: The tokenizer of the decoder's ids: the one tokenizer (one shared vocabulary).
    target_tokenizer = property(lambda self: self.tokenizer)

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.directions = list(self.DIRECTIONS)

    name = "translation"
    example = "我吃了一个苹果"

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        from .zh_script import detect_language, to_simplified

        text = check_text(text)
        notes = []
        if direction is None or direction == "auto":
            direction = "zh->en" if detect_language(text) == "zh" else "en->zh"
        if direction not in self.DIRECTIONS:
            choices = ", ".join(self.DIRECTIONS)
            params = {"direction": direction, "choices": choices}
            raise InputError(Message("unknown_direction", params, "error"))
        if direction == "zh->en":
            text, converted = to_simplified(text)
            if converted:
                notes.append(Message("input_script_converted", {}, "info"))
        target_lang = direction.split("->")[1]
        ids = self.tokenizer.encode(text)
        prefix = [self.tokenizer.lang_tag_id(target_lang)]
        return _finish(self.tokenizer, text, ids, max_len, prefix, direction, notes)

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        """A given output, normalised like the training targets: (ids, notes for the user)."""
        from .zh_script import to_simplified

        text = check_text(text)
        notes = []
        if direction == "en->zh":
            text, converted = to_simplified(text)
            if converted:
                notes.append(Message("target_script_converted", {}, "info"))
        unknown = self.tokenizer.unknown_characters(text)
        if unknown:
            notes.append(_target_unknown(unknown))
        return self.tokenizer.encode(text), notes

    def splits(self):
        from .tatoeba import splits

        return splits()

    def examples(self, split: str, n: int | None = None) -> list[Example]:
        tok = self.tokenizer
        out = []
        for pair in self.splits()[split][:n]:
            zh, en = tok.encode(pair.zh), tok.encode(pair.en)
            out.append((zh + [tok.eos_id], [tok.lang_tag_id("en")] + en + [tok.eos_id]))
            out.append((en + [tok.eos_id], [tok.lang_tag_id("zh")] + zh + [tok.eos_id]))
        return out

    def references(self, split: str, n: int | None = None) -> list[tuple[str, str, str]]:
        out = []
        for pair in self.splits()[split][:n]:
            out.append((pair.zh, pair.en, "zh->en"))
            out.append((pair.en, pair.zh, "en->zh"))
        return out

    def to_dict(self) -> dict:
        return {"type": "translation"}

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")


class EncodeTask:
    """Text in, encoder states out: the task of an encoder-only model (satisfies protocols.Task).

    ``prepare`` gives ``[CLS] pieces [SEP]`` (``<s> ... </s>``) as the source and an empty decoder
    prefix; there is no target, no training data and no decoding. A model trained to read its input
    after a fixed text (e5's "query: ") gets it as ``prefix``: the source's first pieces, said in a note.
    """

    directions: list[str] = []
    name = "encode"
    #: The tokenizer of the decoder's ids: the one tokenizer (one shared vocabulary).
    target_tokenizer = property(lambda self: self.tokenizer)

    def __init__(self, tokenizer: FramedTokenizer, example: str = "", trained_len: int | None = None,
                 prefix: str = ""):
        self.tokenizer = tokenizer
        self.example = example
        # Longest input (tokens, [CLS]/[SEP] included) the model was trained on, when its folder
        # says (sentence-transformers' max_seq_length); longer inputs run with a note.
        self.trained_len = trained_len
        self.prefix = prefix
        # No piece spans the space after the prefix, so its pieces are the same before any text.
        self.prefix_tokens = len(tokenizer.encode(prefix.rstrip())) if prefix else 0

    def prepare(self, text: str, max_len: int, direction: str | None = None) -> Prepared:
        text = check_text(text)
        tok = self.tokenizer
        notes = []
        normalized = tok.normalize(text)
        if normalized != text and normalized == normalized.lower() and text.lower() != text:
            notes.append(Message("input_uncased", {}, "info"))
        if self.prefix:
            notes.append(Message("input_prefixed", {"prefix": self.prefix.strip(),
                                                    "tokens": self.prefix_tokens}, "info"))
        ids = tok.encode(self.prefix + text)
        limit = max_len - 2  # room for [CLS] and [SEP]
        truncated_from = None
        if len(ids) > limit:
            truncated_from = len(ids)
            notes.append(Message("input_truncated_pieces",
                                 {"tokens": len(ids), "max_len": max_len, "kept": limit}, "warning"))
            ids = ids[:limit]
        unknown = tok.unknown_characters(text)
        if unknown:
            shown = " ".join(repr(w) for w in unknown[:10])
            notes.append(Message(tok.unknown_note, {"count": len(unknown), "shown": shown}, "warning"))
        source = [tok.bos_id, *ids, tok.eos_id]
        if self.trained_len is not None and len(source) > self.trained_len:
            notes.append(Message("beyond_trained_length",
                                 {"tokens": len(source), "max_len": max_len, "trained": self.trained_len},
                                 "info"))
        return Prepared(self.prefix + text, source, tok.tokens(source), [], None, notes, truncated_from,
                        source_prefix=min(self.prefix_tokens, len(ids)))

    def target_ids(self, text: str, direction: str | None = None) -> tuple[list[int], list[Message]]:
        raise InputError(Message("no_decoder", {}, "error"))

    def examples(self, split: str, n: int | None = None) -> list:
        raise NotImplementedError("an encode task has no training pairs (the model comes pretrained)")

    def references(self, split: str, n: int | None = None) -> list:
        return []

    def to_dict(self) -> dict:
        out = {"type": "encode", "tokenizer": "wordpiece", "example": self.example}
        if self.trained_len is not None:
            out["trained_len"] = self.trained_len
        if self.prefix:
            out["prefix"] = self.prefix
        return out

    def save_tokenizer(self, directory: Path) -> None:
        self.tokenizer.save(Path(directory) / "tokenizer.json")


def task_from_dict(data: dict, directory: Path, tokenizer_file: Path | None = None):
    """Rebuild a saved task; its tokenizer is read from ``tokenizer_file`` (default:
    directory/tokenizer.json)."""
    if not isinstance(data, dict):
        raise ValueError(f"config.json: 'task' must be an object, not {data!r}")
    kind = data.get("type")
    tokenizer_file = Path(directory) / "tokenizer.json" if tokenizer_file is None else Path(tokenizer_file)
    if kind == "synthetic":
        if not isinstance(data.get("kind"), str) or data["kind"] not in SyntheticTask.KINDS:
            raise ValueError(f"config.json: unknown synthetic task {data.get('kind')!r}")
        task = SyntheticTask(data["kind"], int(data.get("min_len", 3)), int(data.get("max_len", 12)))
        saved = CharTokenizer.load(tokenizer_file)
        if saved.alphabet != task.tokenizer.alphabet:
            raise ValueError(f"{tokenizer_file} does not match the synthetic task's alphabet")
        return task
    if kind == "encode":  # an encoder-only model (model/store/formats/bert.py), saved in our own format

        example = data.get("example", "")
        example = example if isinstance(example, str) else ""
        trained = data.get("trained_len")
        if not (isinstance(trained, int) and not isinstance(trained, bool) and trained > 0):
            trained = None
        return EncodeTask(WordPieceTokenizer.load(tokenizer_file), example, trained)
    if kind == "continue":  # a decoder-only LM (model/store/formats/hf_decoder.py), saved in our own format
        from .lm_task import ContinueTask, PieceTokenizer

        def special(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

        pad = special("pad_id") or 0
        tok = PieceTokenizer.load(tokenizer_file, special("bos_id"), special("eos_id"), pad)
        example = data.get("example") if isinstance(data.get("example"), str) else ""
        return ContinueTask(tok, example, add_bos=data.get("add_bos") is True)
    if kind == "translation":
        from .translation_tokenizer import TranslationTokenizer

        return TranslationTask(TranslationTokenizer.load(tokenizer_file))
    if kind == "induction":  # our own decoder-only models (model/data/lm_training.py)
        from .lm_training import InductionTask

        task = InductionTask(int(data.get("min_len", 5)), int(data.get("max_len", 20)))
        if CharTokenizer.load(tokenizer_file).alphabet != task.tokenizer.alphabet:
            raise ValueError(f"{tokenizer_file} does not match the induction task's alphabet")
        return task
    if kind == "sentences":
        from .lm_training import SentencesTask
        from .translation_tokenizer import TranslationTokenizer

        return SentencesTask(TranslationTokenizer.load(tokenizer_file))
    raise ValueError(f"unknown task type {kind!r} in the checkpoint's config")
