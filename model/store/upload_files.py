"""An upload's files: a model zip checked and unpacked, or a .gguf file copied, into a new folder.

A zip is checked before anything is written: its size, its entry count (read from the end record
before the directory is parsed), every entry's name (no absolute paths, no ``..``), type (no
symbolic links or other special files), encryption, and the total unpacked size declared in the
central directory. While extracting, the bytes actually written are counted again against each
entry's declared size and the total, so a header that lies cannot fill the disk. Pickles are
never extracted. A .gguf file is counted against the upload limit while it is copied; its header
is checked when it loads (formats/gguf_file.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import struct
import zipfile
from pathlib import Path
from typing import BinaryIO

from .problems import UserModelError, _one_line
from .upload_limits import LIMITS, MB, UploadLimits
from .user_folders import _FILE_NAME, TAKEN_SUFFIXES, WEIGHTS, _is_pickle


def _mb(n: int) -> float:
    return round(n / MB, 1)


# --------------------------------------------------------------------------- zips


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record (22 bytes, then the comment)


def _declared_entries(fp: BinaryIO, size: int) -> int:
    """Entry count from the zip's end record, read before zipfile parses the whole directory
    (so a zip claiming millions of entries is refused without building millions of objects)."""
    tail_len = min(size, _EOCD.size + 0xFFFF)
    fp.seek(size - tail_len)
    tail = fp.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        raise zipfile.BadZipFile("no end-of-central-directory record")
    _, _, _, _, total, _, _, _ = _EOCD.unpack(tail[at : at + _EOCD.size])
    return total  # 0xFFFF means ZIP64: more than the 16-bit field holds


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why one central-directory entry is refused (a problem code), or None."""
    name = info.filename
    normal = name.replace("\\", "/")
    parts = normal.split("/")
    if (normal.startswith("/") or re.match(r"[A-Za-z]:", normal) or ".." in parts
            or any(ord(c) < 32 for c in normal)):
        return "zip_unsafe_path"
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return "zip_symlink"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "zip_special"
    if info.flag_bits & 0x1:
        return "zip_encrypted"
    return None


def _top_files(infos: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
    """Files at the zip's top level, or inside its one top folder (a zipped folder): name -> entry."""
    files = [i for i in infos if not i.is_dir()]
    paths = [i.filename.replace("\\", "/").strip("/").split("/") for i in files]
    firsts = {p[0] for p in paths}
    strip = 1 if paths and len(firsts) == 1 and all(len(p) > 1 for p in paths) else 0
    return {"/".join(p[strip:]): i for p, i in zip(paths, files, strict=True)}


def extract_zip(source: BinaryIO | Path, dest: Path, display: str, limits: UploadLimits = LIMITS) -> dict:
    """Check and unpack a model zip into the new folder ``dest``; returns what was done.

    ``{"bytes": written, "files": [names], "skipped": [names not taken], "pickles": [names never
    extracted]}``. On any problem ``dest`` is deleted and a UserModelError names the zip and entry.
    """
    dest = Path(dest)
    dest.mkdir(parents=False, exist_ok=False)
    try:
        return _extract(source, dest, display, limits)
    except BaseException:
        _remove_tree(dest, dest.parent)  # made just above, so ours
        raise


def _extract(source: BinaryIO | Path, dest: Path, display: str, limits: UploadLimits) -> dict:
    own_handle = isinstance(source, str | Path)
    fp: BinaryIO = open(source, "rb") if own_handle else source  # noqa: SIM115
    try:
        fp.seek(0, os.SEEK_END)
        size = fp.tell()
        if size > limits.max_zip_bytes:
            raise UserModelError("zip_too_big", file=display, size_mb=_mb(size),
                                 limit_mb=_mb(limits.max_zip_bytes))
        try:
            declared = _declared_entries(fp, size)
            if declared > limits.max_entries:
                raise UserModelError("zip_too_many", file=display, count=declared, limit=limits.max_entries)
            fp.seek(0)
            archive = zipfile.ZipFile(fp)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
            raise UserModelError("zip_invalid", file=display, detail=_one_line(e)) from e
        with archive:
            infos = archive.infolist()
            if len(infos) > limits.max_entries:
                raise UserModelError("zip_too_many", file=display, count=len(infos), limit=limits.max_entries)
            seen: set[str] = set()
            for info in infos:
                problem = _entry_problem(info)
                if problem:
                    raise UserModelError(problem, file=display, entry=info.filename[:200])
                key = info.filename.replace("\\", "/").strip("/")
                if key in seen:
                    raise UserModelError("zip_duplicate", file=display, entry=info.filename[:200])
                seen.add(key)
            total = sum(i.file_size for i in infos)
            if total > limits.max_unpacked_bytes:
                raise UserModelError("zip_bomb", file=display, size_mb=_mb(total),
                                     limit_mb=_mb(limits.max_unpacked_bytes))
            top = _top_files(infos)
            taken = {n: i for n, i in top.items()
                     if "/" not in n and _FILE_NAME.fullmatch(n) and n.lower().endswith(TAKEN_SUFFIXES)}
            pickles = sorted(n for n in top if "/" not in n and _is_pickle(n))
            skipped = sorted(n for n in top if n not in taken and n not in pickles)
            if "config.json" not in taken and not any(n.lower().endswith(".gguf") for n in taken):
                raise UserModelError("zip_no_config", file=display)
            if WEIGHTS not in taken and pickles:
                raise UserModelError("pickle", file=f"{display}/{pickles[0]}", name=pickles[0])
            written_total, files = 0, []
            for n, info in sorted(taken.items()):
                if len(files) >= limits.max_entries:  # counted again while extracting
                    raise UserModelError("zip_too_many", file=display, count=len(files) + 1,
                                         limit=limits.max_entries)
                target = dest / n
                if target.resolve().parent != dest.resolve():
                    raise UserModelError("zip_unsafe_path", file=display, entry=info.filename[:200])
                written = 0
                try:
                    with archive.open(info) as src, open(target, "xb") as out:
                        while chunk := src.read(MB):
                            written += len(chunk)
                            written_total += len(chunk)
                            if written > info.file_size or written_total > limits.max_unpacked_bytes:
                                raise UserModelError("zip_overrun", file=display, entry=info.filename[:200])
                            out.write(chunk)
                except UserModelError:
                    raise
                except (zipfile.BadZipFile, EOFError, OSError, ValueError, RuntimeError,
                        NotImplementedError) as e:
                    raise UserModelError("zip_corrupt_entry", file=display, entry=info.filename[:200],
                                         detail=_one_line(e)) from e
                files.append(n)
            return {"bytes": written_total, "files": files, "skipped": skipped, "pickles": pickles}
    finally:
        if own_handle:
            fp.close()


# --------------------------------------------------------------------------- one owner's uploads


def _remove_tree(path: Path, root: Path) -> None:
    """Delete a folder this module created, only if it lies inside ``root`` (the folder it was made in).

    A path that resolves to ``root`` itself or anywhere outside it (``/``, ``..``, a symlink out) is
    refused with a RuntimeError instead of deleted; a symlink itself is removed, never followed.
    """
    path, root = Path(path), Path(root).resolve()
    resolved = path.parent.resolve() / path.name  # the link itself, not where it points
    if resolved == root or not resolved.is_relative_to(root):
        raise RuntimeError(f"refusing to delete {path}: not inside {root}")
    if path.is_symlink():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _copy_gguf(source: BinaryIO, dest: Path, display: str, limits: UploadLimits) -> int:
    """Copy an uploaded .gguf file into the new folder ``dest`` as model.gguf, at most the upload
    limit (counted while copying, whatever the upload claims); returns its size."""
    if not display.lower().endswith(".gguf"):
        raise UserModelError("zip_invalid", file=display, detail="not a .zip or a .gguf file")
    dest.mkdir()
    written = 0
    try:
        with open(dest / "model.gguf", "wb") as out:
            while piece := source.read(8 * MB):
                written += len(piece)
                if written > limits.max_zip_bytes:
                    limit = _mb(limits.max_zip_bytes)
                    raise UserModelError("zip_too_big", file=display, size_mb=f"over {limit}", limit_mb=limit)
                out.write(piece)
    except BaseException:
        _remove_tree(dest, dest.parent)
        raise
    return written
