"""Your own corpus for the head atlas and the detectors (model/lab/atlas_shards.py runs it).

    corpus = read_corpus(Path("prompts.jsonl"))            # every prompt, with the file's hash
    dataset = corpus_dataset(corpus, n=1000, seed=0)        # a seeded sample (or all of it)

A corpus file is plain text (one prompt or sentence a line; blank lines skipped), JSONL (one JSON object a
line with a string ``text`` field) or Parquet (a string ``text`` column), told apart by the file's
suffix (``.jsonl``/``.ndjson``, ``.parquet``; anything else is plain text). Every bound is checked before
anything large is read or allocated, each with a one-line message: the file's size, the number of
prompts, the length of one prompt.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .atlas_result import AtlasError, Dataset

#: Bounds of a corpus file: bytes on disk, prompts, characters of one prompt.
MAX_CORPUS_BYTES = 1 << 30
MAX_PROMPTS = 1_000_000
MAX_PROMPT_CHARS = 20_000

JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class Corpus:
    """Every prompt of a corpus file, in file order."""

    name: str  # the file's name, as the atlas page shows it
    texts: list[str]
    sha256: str  # of the file's bytes: part of the atlas's cache key
    form: str  # "text", "jsonl" or "parquet"


def _form(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    return "text"


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_prompt(text: object, where: str) -> str:
    if not isinstance(text, str):
        raise AtlasError(f"{where}: the text is not a string ({type(text).__name__})")
    if len(text) > MAX_PROMPT_CHARS:
        raise AtlasError(f"{where}: {len(text):,} characters, more than the {MAX_PROMPT_CHARS:,} "
                         "a prompt may hold")
    return text


def _check_count(n: int, path: Path) -> None:
    if n > MAX_PROMPTS:
        raise AtlasError(f"{path.name}: more than {MAX_PROMPTS:,} prompts; "
                         "cut the corpus or sample it beforehand")


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise AtlasError(f"{path.name}: not UTF-8 text (byte {e.start})") from None
    return text.splitlines()


def _read_text(path: Path) -> list[str]:
    texts = []
    for i, line in enumerate(_lines(path), 1):
        if line.strip():
            texts.append(_check_prompt(line, f"{path.name} line {i}"))
            _check_count(len(texts), path)
    return texts


def _read_jsonl(path: Path) -> list[str]:
    texts = []
    for i, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        where = f"{path.name} line {i}"
        if len(line) > 4 * MAX_PROMPT_CHARS:
            raise AtlasError(f"{where}: {len(line):,} characters, too long for one prompt's record")
        try:
            record = json.loads(line)
        except ValueError as e:
            raise AtlasError(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(record, dict) or "text" not in record:
            raise AtlasError(f"{where}: no \"text\" field")
        texts.append(_check_prompt(record["text"], where))
        _check_count(len(texts), path)
    return texts


def _read_parquet(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow comes with streamlit
        raise AtlasError("reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        meta = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own error types for a broken file
        raise AtlasError(f"{path.name}: not a Parquet file ({str(e).splitlines()[0]})") from None
    if "text" not in meta.schema_arrow.names:
        raise AtlasError(f"{path.name}: no \"text\" column (columns: {', '.join(meta.schema_arrow.names)})")
    _check_count(meta.metadata.num_rows, path)  # from the footer, before any row is read
    column = meta.read(columns=["text"]).column("text").to_pylist()
    return [_check_prompt(t, f"{path.name} row {i}") for i, t in enumerate(column, 1)]


def read_corpus(path: Path | str) -> Corpus:
    """Every prompt of the corpus file at ``path``; AtlasError (one line) when it cannot be read or is past
    a bound."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise AtlasError(f"corpus file not found: {path}")
    size = path.stat().st_size
    if size > MAX_CORPUS_BYTES:
        raise AtlasError(f"{path.name}: {size:,} bytes, more than the {MAX_CORPUS_BYTES:,} "
                         "a corpus file may hold")
    form = _form(path)
    texts = {"text": _read_text, "jsonl": _read_jsonl, "parquet": _read_parquet}[form](path)
    if not texts:
        raise AtlasError(f"{path.name}: no prompt in the file")
    return Corpus(path.name, texts, file_hash(path), form)


def sample_indices(total: int, n: int | None, seed: int) -> list[int]:
    """``n`` distinct prompt indices drawn with ``seed``, in file order (all of them when n is None or
    at least ``total``)."""
    if n is None or n >= total:
        return list(range(total))
    if n < 1:
        raise AtlasError(f"the sample must hold at least one prompt, got {n}")
    return sorted(np.random.default_rng(seed).choice(total, size=n, replace=False).tolist())


def corpus_dataset(corpus: Corpus, n: int | None = None, seed: int = 0) -> Dataset:
    """The prompts the atlas runs over: all of the corpus, or ``n`` of them sampled with ``seed``."""
    picked = sample_indices(len(corpus.texts), n, seed)
    texts = [corpus.texts[i] for i in picked]
    how = (f"{len(texts)} of {len(corpus.texts)} prompts, sampled with seed {seed}"
           if len(texts) < len(corpus.texts) else f"all {len(texts)} prompts")
    return Dataset(texts=texts, directions=[None] * len(texts), references=[""] * len(texts),
                   description=f"corpus {corpus.name}: {how}, each read once", total=len(corpus.texts))
