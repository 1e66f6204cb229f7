"""Writing a file whole: nothing half-written is ever seen under the file's name.

Every file the project writes in one piece (checkpoints, tokenizers, the corpus copy, atlases,
snapshots, the command line's outputs, exported figures) goes through :func:`atomic_write`: the
bytes go to a temporary file in the same folder, which is renamed over the target only once it is
complete, and removed if anything fails. Standard library only, so ``viz`` may use it too.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write", "atomic_write_json", "delete_inside"]


def temporary_prefix(path: Path) -> str:
    """The start of the temporary file's name :func:`atomic_write` writes ``path`` through. It keeps
    only the start of the target's name: a legal 255-byte name plus the random part would be past
    the file system's limit."""
    return f".{Path(path).name[:32]}."


def atomic_write(path: Path | str, data: bytes | str | Callable[[Path], object], *,
                 encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically and return ``path``.

    ``data`` is bytes, text (written in ``encoding``), or a function that writes the file at the
    temporary path it is given (for writers that take a file name, e.g. safetensors' ``save_file``).
    The file gets ordinary permissions for a new file (the umask's), not the temporary file's
    private ones. The folder must exist.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode(encoding) if isinstance(data, str) else data)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: Path | str, value: object, *, indent: int | None = 1) -> Path:
    """``value`` as UTF-8 JSON (non-ASCII kept as is), written atomically."""
    return atomic_write(path, json.dumps(value, ensure_ascii=False, indent=indent))


def delete_inside(path: Path | str, root: Path | str) -> None:
    """Delete ``path`` (a file or a folder tree) only if it lies directly inside ``root``.

    Every deletion the command line makes goes through here: its temporary files and folders are
    created inside a folder the command owns, and a path that resolves anywhere else (``/``, ``..``,
    a symlink out) is refused with a RuntimeError instead of deleted.
    """
    root = Path(root).resolve()
    if root == Path(root.anchor):  # "owning" the filesystem's root would let anything through
        raise RuntimeError(f"refusing to delete {path}: {root} is not a folder this project owns")
    target = Path(path)
    if target.is_symlink() or target.resolve().parent != root or target.resolve() == root:
        raise RuntimeError(f"refusing to delete {path}: not directly inside {root}")
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)


def file_digest(path: Path | str) -> str:
    """SHA-256 of the file, read in 8 MiB pieces."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while piece := f.read(8 * 2**20):
            digest.update(piece)
    return digest.hexdigest()
