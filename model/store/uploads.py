"""Uploads: one owner's models of their own, each a zip unpacked or a .gguf file copied (by
:mod:`.upload_files`, which checks them) into the owner's private space.

:class:`UserModelSpace` holds one owner's uploads (an app session, a command-line run) in a
private temporary folder, bounded in models and bytes, and removes them on :meth:`close` (also at
interpreter exit). The folders it holds are checked and read by ``user_folders``.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import threading
import weakref
from pathlib import Path
from typing import BinaryIO

from .problems import UserModelError
from .registry import register_user_model
from .sources.user import UserModel, unregister_user_model, user_model
from .upload_files import _copy_gguf, _mb, _remove_tree, extract_zip
from .upload_limits import LIMITS, MB, UploadLimits
from .user_folders import detect_format, load_user_model


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
        return self._add_upload(display,
                                lambda dest: extract_zip(source, dest, display, self.limits)["bytes"])

    def add_gguf(self, source: BinaryIO, filename: str) -> UserModel:
        """Check, copy, load (to check everything) and register an uploaded .gguf file."""
        display = _label(Path(str(filename)).name)
        return self._add_upload(display, lambda dest: _copy_gguf(source, dest, display, self.limits))

    def _add_upload(self, display: str, fill) -> UserModel:
        """A new upload folder filled by ``fill(dest) -> bytes written``, counted against the session's
        and the server's bounds, then registered; on any failure the folder is deleted."""
        with self._lock:
            self._check_room()
            if not self._folder:
                sweep_stale_uploads()
                self._root.append(upload_root())
                self._folder.append(Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=self._root[0])))
            dest = self._folder[0] / f"upload-{secrets.token_hex(4)}"
            size = fill(dest)
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
