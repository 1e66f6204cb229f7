"""Uploads: a model zip checked and unpacked into one owner's private space.

A zip is checked before anything is written: its size, its entry count (read from the end record
before the directory is parsed), every entry's name (no absolute paths, no ``..``), type (no
symbolic links or other special files), encryption, and the total unpacked size declared in the
central directory. While extracting, the bytes actually written are counted again against each
entry's declared size and the total, so a header that lies cannot fill the disk. Pickles are
never extracted.

:class:`UserModelSpace` holds one owner's uploads (an app session, a command-line run) in a
private temporary folder, bounded in models and bytes, and removes them on :meth:`close` (also at
interpreter exit). The folders it holds are checked and read by ``user_folders``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import struct
import tempfile
import threading
import weakref
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .registry import register_user_model
from .sources.user import UserModel, unregister_user_model, user_model
from .user_folders import (
    _FILE_NAME,
    MB,
    TAKEN_SUFFIXES,
    WEIGHTS,
    UserModelError,
    _is_pickle,
    _one_line,
    detect_format,
    load_user_model,
)


@dataclass(frozen=True)
class UploadLimits:
    """Bounds on one upload; every number is stated in the messages that enforce it."""

    # The zip as uploaded, in bytes (Streamlit's default server.maxUploadSize is 200 MB).
    max_zip_bytes: int = 200 * MB
    # All files taken from one zip together, unpacked, in bytes (declared sizes and bytes written).
    max_unpacked_bytes: int = 512 * MB
    # Entries (files and folders) in one zip's central directory.
    max_entries: int = 64


LIMITS = UploadLimits()


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


def _slug(label: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-.")[:32].strip("-.")
    return slug or "model"


def _label(text: str) -> str:
    """A name the user gave (file or folder), safe to show: no control characters, at most 60 characters."""
    clean = "".join(c for c in str(text) if c.isprintable()).strip()
    return (clean or "model")[:60]


#: Uploads of all owners together, in bytes (a server holds at most SERVER_MAX_BYTES of them).
_SERVER = {"bytes": 0}
_SERVER_LOCK = threading.Lock()
SERVER_MAX_BYTES = int(os.environ.get("ATTENTION_LENS_UPLOADS_MAX_MB", "2048")) * MB


def upload_root() -> Path:
    """Where every owner's temporary folder goes (ATTENTION_LENS_UPLOAD_DIR, else the system's temp)."""
    configured = os.environ.get("ATTENTION_LENS_UPLOAD_DIR")
    root = Path(configured) if configured else Path(tempfile.gettempdir()) / "attention-lens-uploads"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def sweep_stale_uploads() -> list[Path]:
    """Delete upload folders left by processes that are gone (e.g. a server that was killed).

    Each space's folder is named ``<pid>-<random>`` after the process that made it; folders of
    live processes, and anything else in the upload folder, are left alone. Returns what was deleted.
    """
    removed = []
    root = upload_root()
    for p in root.iterdir():
        m = re.fullmatch(r"([0-9]{1,10})-[A-Za-z0-9_]+", p.name)
        if m and p.is_dir() and not p.is_symlink() and int(m.group(1)) != os.getpid() and not _pid_alive(
                int(m.group(1))):
            _remove_tree(p, root)
            removed.append(p)
    return removed


def _close_space(folder_box: list, names: list, used: list, root_box: list) -> None:
    for name in list(names):
        unregister_user_model(name)
    names.clear()
    with _SERVER_LOCK:
        _SERVER["bytes"] -= used[0]
    used[0] = 0
    if folder_box:
        _remove_tree(folder_box.pop(), root_box[0])


class UserModelSpace:
    """One owner's models of their own: uploads in a private temporary folder, and folders opened
    in place. Bounded in models and bytes; :meth:`close` (also run at interpreter exit, or when
    the space is garbage-collected) unregisters them all and deletes the folder."""

    def __init__(self, owner: str, max_models: int = 3, max_bytes: int = 600 * MB,
                 limits: UploadLimits = LIMITS):
        self.owner = owner
        self.max_models = max_models  # models of one owner at once (each is loaded in memory when used)
        self.max_bytes = max_bytes  # unpacked uploads of one owner together, in bytes
        self.limits = limits
        self._folder: list[Path] = []  # made on the first upload
        self._root: list[Path] = []  # the upload folder it was made in (what it may be deleted from)
        self._names: list[str] = []
        self._used = [0]
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close_space, self._folder, self._names, self._used,
                                          self._root)

    @property
    def names(self) -> list[str]:
        """This owner's models, oldest first."""
        return [n for n in self._names if user_model(n) is not None]

    @property
    def folder(self) -> Path | None:
        return self._folder[0] if self._folder else None

    @property
    def bytes_used(self) -> int:
        return self._used[0]

    def _check_room(self) -> None:
        if len(self._names) >= self.max_models:
            raise UserModelError("space_models", count=len(self._names))

    def add_zip(self, source: BinaryIO | Path, filename: str) -> UserModel:
        """Check, unpack, load (to check everything) and register an uploaded zip."""
        display = _label(Path(str(filename)).name)
        with self._lock:
            self._check_room()
            if not self._folder:
                sweep_stale_uploads()
                self._root.append(upload_root())
                self._folder.append(Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=self._root[0])))
            dest = self._folder[0] / f"upload-{secrets.token_hex(4)}"
            info = extract_zip(source, dest, display, self.limits)
            size = info["bytes"]
            try:
                if self._used[0] + size > self.max_bytes:
                    raise UserModelError("space_bytes", size_mb=_mb(size),
                                         left_mb=_mb(max(0, self.max_bytes - self._used[0])),
                                         limit_mb=_mb(self.max_bytes))
                with _SERVER_LOCK:
                    if _SERVER["bytes"] + size > SERVER_MAX_BYTES:
                        raise UserModelError("server_bytes", used_mb=_mb(_SERVER["bytes"]),
                                             limit_mb=_mb(SERVER_MAX_BYTES))
                    _SERVER["bytes"] += size
                self._used[0] += size
                try:
                    return self._register(dest, display, stem=Path(display).stem, size=size)
                except BaseException:
                    self._used[0] -= size
                    with _SERVER_LOCK:
                        _SERVER["bytes"] -= size
                    raise
            except BaseException:
                _remove_tree(dest, self._folder[0])
                raise

    def add_folder(self, folder: Path, root: Path | None = None, label: str | None = None) -> UserModel:
        """Check, load and register a folder read in place (``root``: it must lie inside that folder)."""
        folder = Path(folder)
        display = _label(label or folder.name)
        with self._lock:
            self._check_room()
            return self._register(folder, display, stem=display, size=0, root=root)

    def _register(self, folder: Path, display: str, stem: str, size: int,
                  root: Path | None = None) -> UserModel:
        fmt = detect_format(folder, display, root)
        checked = load_user_model(folder, display=display, root=root)  # every check, now, with its message
        entry = register_user_model(folder, display, fmt, self.owner, _slug(stem), size, checked=checked)
        self._names.append(entry.name)
        return entry

    def remove(self, name: str) -> None:
        """Forget one of this owner's models and delete its files if they were uploaded."""
        with self._lock:
            if name not in self._names:
                return
            entry = user_model(name)
            self._names.remove(name)
            unregister_user_model(name)
            if entry is not None and entry.size:
                self._used[0] -= entry.size
                with _SERVER_LOCK:
                    _SERVER["bytes"] -= entry.size
                if self._folder and entry.directory.parent == self._folder[0]:
                    _remove_tree(entry.directory, self._folder[0])

    def close(self) -> None:
        """Unregister every model and delete the temporary folder (safe to call twice)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive


def server_upload_bytes() -> int:
    """Bytes of uploaded models the server holds now, all owners together."""
    return _SERVER["bytes"]
