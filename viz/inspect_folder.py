"""Reading a ``python -m model inspect`` folder for ``python -m viz``: checked before anything is drawn.

The folder comes from anywhere (a colleague, a download), so nothing in it is trusted:

* ``meta.json`` is read only up to :data:`MAX_META_BYTES`, and every field a figure uses is checked for
  its type (token lists are lists of strings, ``config`` a dict, ``shape_trace`` a list of steps, …)
  and against the arrays it labels (one token per query row / key column).
* ``activations.npz`` is read lazily, one member at a time and only the members a figure asks for. Each
  member's ``.npy`` header (shape, dtype) is read from the zip stream and checked *before* its data:
  numbers only (no pickles, no object or text arrays), at most :data:`MAX_ARRAY_BYTES` each and
  :data:`MAX_READ_BYTES` in all. A small zip that declares a huge member therefore allocates nothing.

Every refusal is a :class:`UsageError` naming the file and the field; the command line prints it as
one ``error:`` line with exit status 2. No torch.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

KINDS = ("encoder", "decoder", "cross")
#: meta.json is a few hundred kB for long inputs; anything far larger is not an inspect output.
MAX_META_BYTES = 64 * 2**20
#: One member: a long input on a large model stays far below this (a 512-token, 16-head pattern is 16 MiB).
MAX_ARRAY_BYTES = 2**30
#: All members read by one command together.
MAX_READ_BYTES = 2 * 2**30
_CHUNK = 16 * 2**20
_NUMERIC_KINDS = "biuf"  # bool, int, unsigned, float: what the figures can draw
_ZIP_ERRORS = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, NotImplementedError,
               RuntimeError)  # RuntimeError: an encrypted member
_HOOK = {"encoder": "encoder.blocks.{layer}.attn", "decoder": "decoder.blocks.{layer}.self_attn",
         "cross": "decoder.blocks.{layer}.cross_attn"}  # as viz.deck.attention_path (not imported: plotly)


class UsageError(Exception):
    """Bad input: printed as one ``error:`` line, exit status 2."""


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


# --------------------------------------------------------------------------- activations.npz


class NpzArchive(Mapping):
    """``activations.npz`` as a read-only mapping name -> array, each member read on first use after
    its header is checked (see the module docstring). :meth:`shape` reads only the header."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._read = 0
        self._headers: dict[str, tuple[tuple[int, ...], bool, np.dtype]] = {}
        self._arrays: dict[str, np.ndarray] = {}
        try:
            with zipfile.ZipFile(self.path) as z:
                names = z.namelist()
        except _ZIP_ERRORS as e:
            raise UsageError(f"cannot read {self.path}: {e or type(e).__name__}") from e
        self._members = {n[: -len(".npy")]: n for n in names if n.endswith(".npy")}

    def __contains__(self, key: object) -> bool:
        return key in self._members

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def _fail(self, key: str, why: str) -> UsageError:
        return UsageError(f"{self.path}: {key} {why}")

    def _header(self, key: str, fp) -> tuple[tuple[int, ...], bool, np.dtype]:
        version = npy.read_magic(fp)
        if version not in ((1, 0), (2, 0)):
            raise self._fail(key, f"is a .npy file of version {version[0]}.{version[1]}, not 1.0 or 2.0")
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = read(fp)
        if dtype.hasobject or dtype.kind not in _NUMERIC_KINDS:
            raise self._fail(key, f"holds {dtype.str} values, not numbers (object and text arrays are "
                             "not read)")
        if any(d < 0 for d in shape):
            raise self._fail(key, f"declares the impossible shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > MAX_ARRAY_BYTES:
            raise self._fail(key, f"declares shape {shape} of {dtype.name} ({_size(nbytes)}), more than the "
                             f"{_size(MAX_ARRAY_BYTES)} one array may have here")
        return tuple(shape), bool(fortran), dtype

    def shape(self, key: str) -> tuple[int, ...]:
        """The member's shape from its header (its data is not read). KeyError if there is none."""
        if key not in self._headers:
            member = self._members[key]
            try:
                with zipfile.ZipFile(self.path) as z, z.open(member) as fp:
                    self._headers[key] = self._header(key, fp)
            except _ZIP_ERRORS as e:
                raise self._fail(key, f"cannot be read ({e or type(e).__name__})") from e
        return self._headers[key][0]

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self._arrays:
            return self._arrays[key]
        shape = self.shape(key)
        _, fortran, dtype = self._headers[key]
        nbytes = math.prod(shape) * dtype.itemsize
        if self._read + nbytes > MAX_READ_BYTES:
            raise self._fail(key, f"would take the data read past {_size(MAX_READ_BYTES)}")
        buf = bytearray(nbytes)
        try:
            with zipfile.ZipFile(self.path) as z, z.open(self._members[key]) as fp:
                self._header(key, fp)
                view, done = memoryview(buf), 0
                while done < nbytes:
                    got = fp.readinto(view[done: done + _CHUNK])
                    if not got:
                        raise self._fail(key, f"ends after {done:,} of the {nbytes:,} bytes its header "
                                         "declares")
                    done += got
        except _ZIP_ERRORS as e:
            raise self._fail(key, f"cannot be read ({e or type(e).__name__})") from e
        self._read += nbytes
        array = np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
        self._arrays[key] = array
        return array


# --------------------------------------------------------------------------- meta.json


def read_meta(meta_file: Path) -> dict:
    """The parsed meta.json; UsageError when it is too large, not UTF-8 JSON, or nested too deeply."""
    try:
        with open(meta_file, "rb") as f:
            data = f.read(MAX_META_BYTES + 1)
        if len(data) > MAX_META_BYTES:
            raise UsageError(f"{meta_file} is larger than {_size(MAX_META_BYTES)}: not an inspect meta.json")
        return json.loads(data.decode("utf-8"))
    except RecursionError as e:
        raise UsageError(f"cannot read {meta_file}: it is nested too deeply to be an inspect "
                         "meta.json") from e
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise UsageError(f"cannot read {meta_file}: {e}") from e


def _kind_of(value: object) -> str:
    """A JSON value's kind as a sentence says it: "a number", "an object", "null"."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return {int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_list(value: object) -> bool:
    return isinstance(value, list) and all(_is_int(v) for v in value)


def _step_problem(step: object) -> str | None:
    """What is wrong with one shape-trace step for the figures that read it (None: nothing)."""
    if not isinstance(step, dict):
        return f"is {_kind_of(step)}, not an object"
    for key in ("name", "op"):
        if not isinstance(step.get(key), str):
            return f"has {key} that is {_kind_of(step.get(key))}, not a string"
    if not _int_list(step.get("out_shape")):
        return "has an out_shape that is not a list of integers"
    if "in_shapes" in step and not (isinstance(step["in_shapes"], list)
                                    and all(_int_list(s) for s in step["in_shapes"])):
        return "has in_shapes that are not lists of integers"
    if "out_symbol" in step and not isinstance(step["out_symbol"], list):
        return "has an out_symbol that is not a list"
    if "in_symbols" in step and not (isinstance(step["in_symbols"], list)
                                     and all(isinstance(s, list) for s in step["in_symbols"])):
        return "has in_symbols that are not lists"
    return None


def meta_problem(meta: dict) -> str | None:
    """The first field of an inspect meta.json whose type the figures cannot use, as "field …"."""
    for key in ("source_tokens", "target_tokens"):
        value = meta[key]
        if not isinstance(value, list):
            return f"{key} must be a list of strings, not {_kind_of(value)}"
        bad = [t for t in value if not isinstance(t, str)]
        if bad:
            return f"{key} must be a list of strings, but holds {_kind_of(bad[0])}"
    if not isinstance(meta["config"], dict):
        return f"config must be an object, not {_kind_of(meta['config'])}"
    for key in ("n_enc_layers", "n_dec_layers"):
        if key in meta["config"] and not (_is_int(meta["config"][key]) and meta["config"][key] >= 0):
            return f"config.{key} must be a whole number >= 0, not {meta['config'][key]!r}"[:200]
    if not isinstance(meta["shape_trace"], list):
        return f"shape_trace must be a list of steps, not {_kind_of(meta['shape_trace'])}"
    for i, step in enumerate(meta["shape_trace"]):
        problem = _step_problem(step)
        if problem:
            return f"shape_trace[{i}] {problem}"
    if "input_text" in meta and not isinstance(meta["input_text"], str):
        return f"input_text must be a string, not {_kind_of(meta['input_text'])}"
    return None


# --------------------------------------------------------------------------- the folder


NEEDED = ("source_tokens", "target_tokens", "config", "shape_trace")


def read_inspect(folder: str | Path) -> tuple[NpzArchive, dict]:
    """(activations, meta) of an inspect output folder; UsageError when it is not one. The activations
    are read lazily (:class:`NpzArchive`); meta.json is read and type-checked here."""
    d = Path(folder)
    if not d.is_dir():
        raise UsageError(f"{folder} is not a folder (expected the --out folder of `python -m model inspect`)")
    npz, meta_file = d / "activations.npz", d / "meta.json"
    if not npz.is_file() or not meta_file.is_file():
        raise UsageError(f"{folder} is not a `python -m model inspect` output: it needs activations.npz "
                         "and meta.json")
    meta = read_meta(meta_file)
    activations = NpzArchive(npz)
    if not isinstance(meta, dict) or any(k not in meta for k in NEEDED):
        raise UsageError(f"{meta_file} is not an inspect meta.json (needs {', '.join(NEEDED)})")
    problem = meta_problem(meta)
    if problem:
        raise UsageError(f"{meta_file}: {problem}")
    return activations, meta


def _meta_file(activations: NpzArchive) -> Path:
    return activations.path.with_name("meta.json")


def attention_path(kind: str, layer: int) -> str:
    return _HOOK[kind].format(layer=int(layer))


def n_layers(activations: Mapping, kind: str) -> int:
    n = 0
    while f"{attention_path(kind, n)}.hook_pattern" in activations:
        n += 1
    return n


def member_shape(activations: NpzArchive, name: str, ndim: int, dims: str) -> tuple[int, ...]:
    """The header shape of a member the figure needs: present, ``ndim``-D, no empty axis."""
    if name not in activations:
        raise UsageError(f"{activations.path} has no {name}, which this figure needs")
    shape = activations.shape(name)
    if len(shape) != ndim:
        raise UsageError(f"{activations.path}: {name} has shape {shape}; expected {ndim}-D {dims}")
    if 0 in shape:
        raise UsageError(f"{activations.path}: {name} has shape {shape}, with an empty axis")
    return shape


def _same_count(activations: NpzArchive, meta: dict, field: str, member: str, n: int, what: str) -> None:
    """The token list ``field`` labels the ``n`` rows/columns/positions of ``member`` one to one."""
    if len(meta[field]) != n:
        raise UsageError(f"{_meta_file(activations)}: {field} has {len(meta[field])} tokens, but {member} in "
                         f"{activations.path} has {n} {what}")


def check_head(activations: NpzArchive, meta: dict, kind: str, layer: int, head: int) -> None:
    """The head exists, and its pattern (and scores) fit the token lists that label them."""
    layers = n_layers(activations, kind)
    if layers == 0:
        raise UsageError(f"this model has no {kind} attention (kinds here: "
                         f"{', '.join(k for k in KINDS if n_layers(activations, k)) or 'none'})")
    if not 0 <= layer < layers:
        raise UsageError(f"--layer {layer} is out of range: {kind} attention has layers 0..{layers - 1}")
    path = attention_path(kind, layer)
    shape = member_shape(activations, f"{path}.hook_pattern", 4, "[batch, head, query, key]")
    if not 0 <= head < shape[1]:
        raise UsageError(f"--head {head} is out of range: heads 0..{shape[1] - 1}")
    query_field, key_field = {"encoder": ("source_tokens",) * 2, "decoder": ("target_tokens",) * 2,
                              "cross": ("target_tokens", "source_tokens")}[kind]
    for field, n, what in ((query_field, shape[2], "query rows"), (key_field, shape[3], "key columns")):
        _same_count(activations, meta, field, f"{path}.hook_pattern", n, what)
    scores = f"{path}.hook_scores"
    if scores in activations and activations.shape(scores) != shape:
        raise UsageError(f"{activations.path}: {scores} has shape {activations.shape(scores)}, its pattern "
                         f"{shape}")


def check_deck(activations: NpzArchive, meta: dict, kind: str, layer: int) -> None:
    """What the deck's other slides read beyond the head's pattern (see :func:`viz.deck.deck_figures`)."""
    path = attention_path(kind, layer)
    p_shape = activations.shape(f"{path}.hook_pattern")
    rope = f"{path}.hook_rot_q" in activations
    dims = "[batch, position, head, d_head]"
    q = member_shape(activations, f"{path}.hook_{'rot_q' if rope else 'q'}", 4, dims)
    k = member_shape(activations, f"{path}.hook_{'rot_k' if rope else 'k'}", 4, dims)
    v = member_shape(activations, f"{path}.hook_v", 4, dims)
    if q[1:3] != p_shape[2:0:-1] or k[1] != p_shape[3] or v != k or k[3] != q[3] or q[2] % k[2]:
        raise UsageError(f"{activations.path}: {path}'s q {q}, k {k} and v {v} do not fit its pattern "
                         f"{p_shape}")
    n_src = len(meta["source_tokens"])
    embed = member_shape(activations, "encoder.embed.hook_embed", 3, "[batch, position, d_model]")
    _same_count(activations, meta, "source_tokens", "encoder.embed.hook_embed", embed[1], "positions")
    pos = "encoder.embed.hook_pos_embed"
    if pos in activations:
        shape = activations.shape(pos)
        if len(shape) < 2 or 0 in shape or math.prod(shape[:-1]) < n_src:
            raise UsageError(f"{activations.path}: {pos} has shape {shape}; expected [..., position, "
                             f"d_model] with at least {n_src} positions")
    stacks = [s for s in ("encoder", "decoder") if f"{s}.blocks.0.hook_resid_post" in activations]
    if not stacks:
        raise UsageError(f"{activations.path} has no residual stream (encoder.blocks.0.hook_resid_post)")
    for stack in stacks:
        field = "source_tokens" if stack == "encoder" else "target_tokens"
        for name in _residual_points(activations, stack):
            shape = member_shape(activations, name, 3, "[batch, position, d_model]")
            _same_count(activations, meta, field, name, shape[1], "positions")
    _check_split_merge(meta, path, _meta_file(activations))


def _residual_points(activations: Mapping, stack: str) -> list[str]:
    """The hook names :func:`viz.deck.residual_norms` reads for ``stack`` (without reading them)."""
    points, layer = [f"{stack}.embed.hook_resid_in"], 0
    while f"{stack}.blocks.{layer}.hook_resid_post" in activations:
        points += [n for hook in ("hook_resid_mid", "hook_resid_mid2", "hook_resid_post")
                   if (n := f"{stack}.blocks.{layer}.{hook}") in activations]
        layer += 1
    return points + ([f"{stack}.hook_out"] if f"{stack}.hook_out" in activations else [])


def _check_split_merge(meta: dict, path: str, meta_file: Path) -> None:
    from viz.split_merge import SPLIT_MERGE

    steps = {s["op"]: s for s in meta["shape_trace"] if s["name"] == path}
    for _, op, which in SPLIT_MERGE:
        step = steps.get(op)
        shapes: Sequence = (step or {}).get("in_shapes" if which == "in" else "out_shape") or []
        symbols: Sequence = (step or {}).get("in_symbols" if which == "in" else "out_symbol") or []
        if which == "in":
            shapes, symbols = (shapes or [None])[0] or [], (symbols or [None])[0] or []
        if step is None or not shapes or len(shapes) != len(symbols):
            raise UsageError(f"{meta_file}: shape_trace has no usable step {op!r} of {path} (the "
                             "split-and-merge slide needs its shape and symbols)")
