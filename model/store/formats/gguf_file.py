"""Reading a GGUF file (llama.cpp's single-file model format) without trusting it.

Everything the header claims is checked against the file before anything big is allocated: the magic
and version, the counts, every string and array length, every metadata type, every tensor's
dimensions, quantisation type and byte range. A file that fails any check is one
:class:`GGUFError` naming it. A valid file then gives

    its metadata as plain Python values        GGUFFile.metadata, GGUFFile.figures()
    its tensors as float32 numpy, on demand    GGUFFile.tensor(name)   (memory-mapped)
    its tokenizer                              GGUFFile.tokenizer()    (a ``tokenizers.Tokenizer``:
                                               byte-level BPE, or SentencePiece BPE)

Layout (little-endian): ``"GGUF"``, version u32, tensor count u64, metadata count u64, the metadata
(key string, type u32, value), the tensor infos (name, n_dims u32, dims u64 each, type u32,
offset u64), padding to ``general.alignment``, then the tensor data.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize, quant_shape_to_byte_shape
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

from ...data.byte_tokens import bytes_to_unicode
from ...data.sentencepiece_bpe import sentencepiece_tokenizer
from ...network.config import SIZE_LIMITS
from ..problems import CheckpointError
from .checked import CheckedCursor, MappedFile

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
#: More tensors or metadata entries than any real model has; a bigger count is a corrupt header.
MAX_TENSORS = 1 << 16
MAX_METADATA = 1 << 16
#: ggml's GGML_MAX_DIMS, and a bound on one dimension / a tensor's element count (1 Ti elements).
MAX_DIMS = 4
MAX_ELEMENTS = 1 << 40
DEFAULT_ALIGNMENT = 32
#: Longest metadata string / array we read: a chat template is ~10 KB, a vocabulary ~300k entries.
#: The file's size bounds both too, but a multi-GB file must not make us build a multi-GB list.
MAX_STRING_BYTES = 16 * 2**20
MAX_ARRAY_LENGTH = 1 << 24
#: Entries a tokenizer array (tokens, their types and scores, merges) may have: the model's vocabulary
#: bound (a merge list is about as long as the vocabulary).
MAX_VOCABULARY = SIZE_LIMITS["vocab_size"]

# Metadata value types: id -> (name, struct format or None for string / array).
_U8, _I8, _U16, _I16, _U32, _I32, _F32, _BOOL, _STRING, _ARRAY, _U64, _I64, _F64 = range(13)
_SCALARS = {_U8: "B", _I8: "b", _U16: "H", _I16: "h", _U32: "I", _I32: "i", _F32: "f",
            _BOOL: "?", _U64: "Q", _I64: "q", _F64: "d"}
_INT_TYPES = (_U8, _I8, _U16, _I16, _U32, _I32, _U64, _I64)


_KIND_NAMES = {int: "an integer", float: "a number", str: "a string"}


class GGUFError(CheckpointError):
    """A GGUF file that is not one, is truncated or corrupt, or uses what we cannot read."""


@dataclass(frozen=True)
class GGUFTensor:
    """Where one tensor lies in the file; ``shape`` is in numpy order (GGUF lists dims reversed)."""

    name: str
    shape: tuple[int, ...]
    qtype: GGMLQuantizationType
    start: int  # absolute byte offset of its data in the file
    nbytes: int


@dataclass(frozen=True)
class GGUFFigures:
    """The figures of a decoder that the metadata states (``<architecture>.*`` keys)."""

    architecture: str
    name: str
    block_count: int
    embedding_length: int
    feed_forward_length: int
    head_count: int
    head_count_kv: int
    context_length: int
    rope_freq_base: float
    norm_epsilon: float
    vocab_size: int


class _Cursor(CheckedCursor):
    """Reads the header from the mapped file, refusing any read that would run past its end."""

    def __init__(self, buf: mmap.mmap, path: Path):
        super().__init__(buf, path, GGUFError, "GGUF")

    def string(self, what: str) -> str:
        n = self.scalar("Q", f"the length of {what}")
        if n > MAX_STRING_BYTES:
            raise self.fail(f"{what} claims {n} bytes (at most {MAX_STRING_BYTES} are read)")
        start = self.take(n, what)
        try:
            return self.buf[start:start + n].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{what} is not UTF-8") from e

    def value(self, vtype: int, key: str, in_array: bool = False):
        """One metadata value of type ``vtype``, as a plain Python value."""
        if vtype in _SCALARS:
            v = self.scalar(_SCALARS[vtype], f"the value of {key!r}")
            # A float32 as the shortest decimal that rounds to it: 1e-05, not 9.999999747378752e-06.
            return v if vtype != _F32 else float(np.format_float_positional(np.float32(v), unique=True))
        if vtype == _STRING:
            return self.string(f"the value of {key!r}")
        if vtype == _ARRAY and not in_array:
            return self.array(key)
        if vtype == _ARRAY:
            raise self.fail(f"metadata {key!r} nests arrays, which GGUF readers do not use")
        raise self.fail(f"metadata {key!r} has unknown value type {vtype}")

    def array(self, key: str) -> list:
        etype = self.scalar("I", f"the element type of {key!r}")
        count = self.scalar("Q", f"the length of {key!r}")
        # Every element takes at least one byte (a string eight), so the file bounds the count.
        least = 8 if etype == _STRING else struct.calcsize(_SCALARS.get(etype, "B"))
        if count > MAX_ARRAY_LENGTH or count * least > len(self.buf) - self.pos:
            raise self.fail(f"metadata {key!r} claims {count} elements, more than the file holds")
        if key.startswith("tokenizer.ggml.") and count > MAX_VOCABULARY:
            # Checked before the elements are read: ten million token strings took 20 s and 1.3 GB.
            raise self.fail(f"metadata {key!r} claims {count:,} entries, more than a vocabulary of at most "
                            f"{MAX_VOCABULARY:,} tokens needs")
        if etype in _SCALARS:  # numbers in one read: tokenizer arrays have ~50k of them
            fmt = _SCALARS[etype]
            start = self.take(count * struct.calcsize(fmt), f"the elements of {key!r}")
            return list(struct.unpack_from(f"<{count}{fmt}", self.buf, start))
        return [self.value(etype, key, in_array=True) for _ in range(count)]


@cache
def _can_dequantize(qtype: GGMLQuantizationType) -> bool:
    """Whether ``gguf`` dequantizes ``qtype`` (tried on one block of zeros)."""
    block, type_size = GGML_QUANT_SIZES[qtype]
    try:
        dequantize(np.zeros((1, type_size), np.uint8), qtype)
    except (NotImplementedError, ValueError, TypeError):
        return False
    return True


#: Integer tensor types: stored as plain numpy numbers, which ``gguf`` does not dequantize.
_PLAIN = {GGMLQuantizationType.I8: np.int8, GGMLQuantizationType.I16: np.int16,
          GGMLQuantizationType.I32: np.int32, GGMLQuantizationType.I64: np.int64,
          GGMLQuantizationType.F64: np.float64}


def _tensor_info(cur: _Cursor) -> tuple[str, tuple[int, ...], GGMLQuantizationType, int, int]:
    """One tensor info: name, numpy shape, type, offset in the data section, byte size."""
    name = cur.string("a tensor name")
    n_dims = cur.scalar("I", f"the rank of tensor {name!r}")
    if not 1 <= n_dims <= MAX_DIMS:
        raise cur.fail(f"tensor {name!r} has {n_dims} dimensions (at most {MAX_DIMS})")
    dims = [cur.scalar("Q", f"the dimensions of tensor {name!r}") for _ in range(n_dims)]
    elements = int(np.prod(dims, dtype=object))
    if min(dims) < 1 or elements > MAX_ELEMENTS:
        raise cur.fail(f"tensor {name!r} has absurd dimensions {dims}")
    type_id = cur.scalar("I", f"the type of tensor {name!r}")
    try:
        qtype = GGMLQuantizationType(type_id)
    except ValueError:
        raise cur.fail(f"tensor {name!r} has unknown quantisation type {type_id}") from None
    if qtype not in _PLAIN and not _can_dequantize(qtype):
        raise cur.fail(f"tensor {name!r} uses quantisation type {qtype.name}, which cannot be dequantized")
    block, type_size = GGML_QUANT_SIZES[qtype]
    if dims[0] % block:
        raise cur.fail(f"tensor {name!r}'s rows ({dims[0]}) are not whole {qtype.name} blocks of {block}")
    offset = cur.scalar("Q", f"the offset of tensor {name!r}")
    nbytes = elements // block * type_size
    return name, tuple(reversed(dims)), qtype, offset, nbytes


class GGUFFile(MappedFile):
    """An open, validated GGUF file. Use as a context manager, or call :meth:`close`."""

    ERROR, KIND, MIN_SIZE = GGUFError, "GGUF", 24

    def _read_header(self) -> None:
        cur = _Cursor(self._map, self.path)
        if self._map[:4] != MAGIC:
            start = bytes(self._map[:4])
            raise GGUFError(f"{self.path} is not a GGUF file (it starts {start!r}, not b'GGUF')")
        cur.pos = 4
        self.version = cur.scalar("I", "the version")
        if self.version not in SUPPORTED_VERSIONS:
            swapped = int.from_bytes(self.version.to_bytes(4, "little"), "big")
            why = "big-endian GGUF" if swapped in SUPPORTED_VERSIONS else f"GGUF version {self.version}"
            raise GGUFError(f"{self.path} uses {why}; only little-endian versions 2 and 3 are read")
        n_tensors, n_kv = cur.scalar("Q", "the tensor count"), cur.scalar("Q", "the metadata count")
        if n_tensors > MAX_TENSORS or n_kv > MAX_METADATA:
            raise cur.fail(f"the header claims {n_tensors} tensors and {n_kv} metadata entries")
        self.metadata: dict = {}
        for _ in range(n_kv):
            key = cur.string("a metadata key")
            if key in self.metadata:
                raise cur.fail(f"metadata {key!r} appears twice")
            self.metadata[key] = cur.value(cur.scalar("I", f"the type of {key!r}"), key)
        infos = [_tensor_info(cur) for _ in range(n_tensors)]
        alignment = self.metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(alignment, int) or alignment < 1 or alignment & (alignment - 1):
            raise cur.fail(f"general.alignment is {alignment!r}, not a power of two")
        data_start = -(-cur.pos // alignment) * alignment
        self.tensors: dict[str, GGUFTensor] = {}
        for name, shape, qtype, offset, nbytes in infos:
            if name in self.tensors:
                raise cur.fail(f"tensor {name!r} appears twice")
            end = data_start + offset + nbytes
            if offset % alignment or end > len(self._map):
                where = "is misaligned" if offset % alignment else (
                    f"(bytes {data_start + offset}..{end}) lies beyond the end of the file "
                    f"({len(self._map)} bytes)")
                raise cur.fail(f"tensor {name!r}'s data {where}")
            self.tensors[name] = GGUFTensor(name, shape, qtype, data_start + offset, nbytes)

    def tensor(self, name: str) -> np.ndarray:
        """Tensor ``name`` as a new float32 array of its numpy shape."""
        info = self.tensors[name]
        raw = np.frombuffer(self._map, np.uint8, info.nbytes, info.start)
        if info.qtype in _PLAIN:
            return raw.view(_PLAIN[info.qtype]).astype(np.float32).reshape(info.shape)
        values = dequantize(raw.reshape(quant_shape_to_byte_shape(info.shape, info.qtype)), info.qtype)
        # F32 comes back as a view of the mapping: copy it so it outlives close() and is writable.
        if info.qtype == GGMLQuantizationType.F32:
            values = values.copy()
        return values.astype(np.float32, copy=False).reshape(info.shape)

    def _typed(self, key: str, kind: type, default=None):
        value = self.metadata.get(key, default)
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            shown = "missing" if value is None else f"{value!r}"
            raise GGUFError(f"{self.path}: metadata {key!r} is {shown}, not {_KIND_NAMES[kind]}")
        return value

    def figures(self) -> GGUFFigures:
        """The decoder's figures; a missing or mistyped one is a GGUFError naming its key."""
        arch = self._typed("general.architecture", str)
        heads = self._typed(f"{arch}.attention.head_count", int)
        tokens = self.metadata.get("tokenizer.ggml.tokens", [])
        return GGUFFigures(
            architecture=arch, name=self._typed("general.name", str, ""),
            block_count=self._typed(f"{arch}.block_count", int),
            embedding_length=self._typed(f"{arch}.embedding_length", int),
            feed_forward_length=self._typed(f"{arch}.feed_forward_length", int),
            head_count=heads, head_count_kv=self._typed(f"{arch}.attention.head_count_kv", int, heads),
            context_length=self._typed(f"{arch}.context_length", int),
            rope_freq_base=self._typed(f"{arch}.rope.freq_base", float, 10000.0),
            norm_epsilon=self._typed(f"{arch}.attention.layer_norm_rms_epsilon", float),
            vocab_size=self._typed(f"{arch}.vocab_size", int, len(tokens)),
        )

    def tokenizer(self) -> Tokenizer:
        """The tokenizer the metadata describes, built as ``transformers`` builds it from a GGUF: a
        byte-level BPE ('gpt2': same vocabulary spelling, merges, special tokens and pre-tokenizer), or
        a SentencePiece BPE ('llama': pieces, scores and types, model/data/sentencepiece_bpe.py)."""
        meta = self.metadata
        kind = meta.get("tokenizer.ggml.model")
        if kind == "llama":
            return self._sentencepiece()
        if kind != "gpt2":
            raise GGUFError(f"{self.path}: tokenizer.ggml.model is {kind!r}; "
                            "only byte-level BPE ('gpt2') and SentencePiece ('llama') are read")
        tokens, merges = meta.get("tokenizer.ggml.tokens"), meta.get("tokenizer.ggml.merges")
        if not _strings(tokens) or not _strings(merges) or any(m.count(" ") != 1 for m in merges):
            raise GGUFError(f"{self.path}: tokenizer.ggml.tokens / .merges are not lists of tokens and pairs")
        token_types = meta.get("tokenizer.ggml.token_type") or [_NORMAL] * len(tokens)
        if len(token_types) != len(tokens):
            raise GGUFError(f"{self.path}: tokenizer.ggml.token_type has {len(token_types)} entries for "
                            f"{len(tokens)} tokens")
        spelling = bytes_to_unicode()
        alphabet = set(spelling.values())
        # Tokens outside the byte alphabet (raw text, e.g. "<think>" in some files) are respelled.
        vocab = {t if set(t) <= alphabet else "".join(spelling[b] for b in t.encode("utf-8")): i
                 for i, t in enumerate(tokens)}
        tok = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ")) for m in merges],
                                   continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False))
        split = _SPLITS.get(meta.get("tokenizer.ggml.pre"))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False) if split is None else (
            pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(split), behavior="isolated"),
                                     pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]))
        tok.decoder = decoders.ByteLevel()
        # CONTROL tokens (<|im_start|>, ...) stay whole and are special; USER_DEFINED ones stay whole.
        # A "control" token outside the byte alphabet is a llama.cpp mislabel, left out as transformers does.
        typed = list(zip(tokens, token_types, strict=True))
        tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                                for t, k in typed if k == _CONTROL and set(t) <= alphabet])
        tok.add_tokens([AddedToken(t, normalized=False, special=False)
                        for t, k in typed if k == _USER_DEFINED and t in vocab])
        bos = meta.get("tokenizer.ggml.bos_token_id")
        add_bos = meta.get("tokenizer.ggml.add_bos_token") is True
        if add_bos and isinstance(bos, int) and 0 <= bos < len(tokens):
            tok.post_processor = processors.TemplateProcessing(
                single=f"{tokens[bos]} $A", pair=f"{tokens[bos]} $A {tokens[bos]} $B",
                special_tokens=[(tokens[bos], bos)])
        return tok

    def _sentencepiece(self) -> Tokenizer:
        meta = self.metadata
        tokens, scores = meta.get("tokenizer.ggml.tokens"), meta.get("tokenizer.ggml.scores")
        types = meta.get("tokenizer.ggml.token_type") or [_NORMAL] * len(tokens or [])
        if not _strings(tokens):
            raise GGUFError(f"{self.path}: tokenizer.ggml.tokens is not a list of pieces")
        if scores is not None and (not isinstance(scores, list) or len(scores) != len(tokens)
                                   or not all(isinstance(x, int | float) for x in scores)):
            raise GGUFError(f"{self.path}: tokenizer.ggml.scores must hold one number per token "
                            f"({len(tokens)})")
        if len(types) != len(tokens) or not all(isinstance(k, int) for k in types):
            raise GGUFError(f"{self.path}: tokenizer.ggml.token_type has {len(types)} entries for "
                            f"{len(tokens)} tokens")
        arch = meta.get("general.architecture")
        return sentencepiece_tokenizer(
            tokens, scores, types,
            add_space_prefix=meta.get("tokenizer.ggml.add_space_prefix", True) is not False,
            space_from_normalizer=arch == "phi3", rank_by_position=arch in ("gemma", "gemma2", "gemma3"))

    @property
    def adds_bos(self) -> bool:
        """Whether the model reads BOS first: the metadata's flag; a SentencePiece vocabulary that does
        not say adds it (llama.cpp's default, and transformers')."""
        flag = self.metadata.get("tokenizer.ggml.add_bos_token")
        return flag is True or (flag is None and self.metadata.get("tokenizer.ggml.model") == "llama")

    def special_token_ids(self) -> dict[str, int]:
        """bos / eos / unknown / padding ids the metadata states, each checked against the vocabulary."""
        n = len(self.metadata.get("tokenizer.ggml.tokens", []))
        found = {}
        for role in ("bos", "eos", "unknown", "padding"):
            key = f"tokenizer.ggml.{role}_token_id"
            if key in self.metadata:
                found[role] = i = self._typed(key, int)
                if not 0 <= i < n:
                    raise GGUFError(f"{self.path}: metadata {key!r} is {i}, outside the {n}-token vocabulary")
        return found

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) else None


def _strings(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


# llama.cpp token types (tokenizer.ggml.token_type).
_NORMAL, _CONTROL, _USER_DEFINED = 1, 3, 4

_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: tokenizer.ggml.pre -> the split regex its merges were learned with (as transformers maps them);
#: any other value (SmolLM2's "smollm" included) gets GPT-2's, which ByteLevel applies itself.
_SPLITS = {pre: _LLAMA3_SPLIT for pre in ("llama3", "llama-v3", "llama-bpe", "falcon3", "smaug-bpe", "dbrx")}
