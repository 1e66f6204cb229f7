"""Models of the user's own (model/store/user_folders.py, uploads.py): folders and zip uploads, good and
hostile.

Every hostile case must end in a UserModelError whose one-line message names the file, leave
nothing behind on disk, and leave the other models usable. A pickle that would run code is refused
without ever being unpickled (a marker file shows whether its payload ran).
"""

from __future__ import annotations

import gc
import io
import json
import os
import pickle
import stat
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import model.store.formats.own as checkpoint_module
from model.__main__ import main
from model.data.tasks import SyntheticTask
from model.network.transformer import Transformer
from model.store.formats.own import save_checkpoint
from model.store.problems import ENGLISH, UserModelError
from model.store.registry import (
    UnknownModelError,
    available_models,
    load_model,
    model_dir,
    model_info,
    user_model,
    user_model_names,
)
from model.store.upload_files import extract_zip
from model.store.upload_limits import UploadLimits
from model.store.uploads import UserModelSpace, sweep_stale_uploads, upload_root
from model.store.user_folders import detect_format, folder_models, load_user_model
from tests.conftest import tiny_config
from tests.paths import REPO_ROOT


@pytest.fixture(autouse=True)
def _private_upload_root(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_UPLOAD_DIR", str(tmp_path / "uploads"))


def _model(seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    task = SyntheticTask("reverse")
    return Transformer(tiny_config(vocab_size=task.tokenizer.vocab_size)).eval()


@pytest.fixture
def folder(tmp_path) -> Path:
    """A tiny own-format checkpoint folder (reverse task)."""
    directory = tmp_path / "mine"
    save_checkpoint(directory, _model(), SyntheticTask("reverse"), info={"label": "Mine", "group": "main"})
    return directory


def _zip(files: dict[str, bytes], **zip_kwargs) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data, **zip_kwargs)
    buf.seek(0)
    return buf


def _files(directory: Path, prefix: str = "") -> dict[str, bytes]:
    return {prefix + p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _logits(model):
    g = torch.Generator().manual_seed(0)
    src, tgt = torch.randint(4, 30, (2, 7), generator=g), torch.randint(4, 30, (2, 5), generator=g)
    with torch.no_grad():
        return model(src, tgt)


# --------------------------------------------------------------------------- good uploads


@pytest.mark.parametrize("prefix", ["", "mine/"], ids=["flat", "zipped folder"])
def test_an_uploaded_zip_loads_as_a_user_model_with_the_same_outputs(folder, prefix):
    space = UserModelSpace("owner-a")
    entry = space.add_zip(_zip(_files(folder, prefix)), "my model.zip")
    try:
        assert space.names == [entry.name] == user_model_names("owner-a")
        assert entry.name.startswith("user-") and entry.fmt == "own" and entry.label == "my model.zip"
        assert entry.directory.parent == space.folder
        info = model_info(entry.name)
        assert (info.group, info.label, info.source) == ("user", "my model.zip", "user")
        assert info.kinds == ("encoder", "decoder", "cross")
        assert model_dir(entry.name) == entry.directory
        bundle = load_model(entry.name)
        assert bundle.name == entry.name
        torch.testing.assert_close(_logits(bundle.model), _logits(_model()), rtol=0, atol=0)
        # the shipped models are untouched and a user model is never listed among them
        assert entry.name not in available_models()
        assert load_model("reverse").cfg.d_model > 0
        assert space.bytes_used == sum(p.stat().st_size for p in entry.directory.iterdir())
    finally:
        space.close()


def test_closing_a_space_deletes_its_files_and_forgets_its_models(folder):
    space = UserModelSpace("owner-b")
    entry = space.add_zip(_zip(_files(folder)), "a.zip")
    root = space.folder
    assert root.is_dir() and root.parent == upload_root()
    space.close()
    assert not root.exists() and space.closed
    assert user_model(entry.name) is None and user_model_names("owner-b") == []
    with pytest.raises(UnknownModelError):
        model_dir(entry.name)
    space.close()  # twice is harmless


def test_a_forgotten_space_is_cleaned_up_when_garbage_collected(folder):
    space = UserModelSpace("owner-gc")
    entry = space.add_zip(_zip(_files(folder)), "a.zip")
    root = space.folder
    del space
    gc.collect()
    assert not root.exists() and user_model(entry.name) is None


def test_remove_deletes_one_upload_and_keeps_the_others(folder):
    space = UserModelSpace("owner-c")
    try:
        a = space.add_zip(_zip(_files(folder)), "a.zip")
        b = space.add_zip(_zip(_files(folder)), "b.zip")
        used_both = space.bytes_used
        space.remove(a.name)
        assert not a.directory.exists() and b.directory.is_dir()
        assert space.names == [b.name] and user_model(a.name) is None
        assert space.bytes_used == used_both // 2
        assert load_model(b.name).cfg.d_model == 32
    finally:
        space.close()


def test_a_space_holds_a_bounded_number_of_models_and_bytes(folder):
    data = _files(folder)
    space = UserModelSpace("owner-d", max_models=2)
    try:
        space.add_zip(_zip(data), "1.zip")
        space.add_zip(_zip(data), "2.zip")
        with pytest.raises(UserModelError) as err:
            space.add_zip(_zip(data), "3.zip")
        assert err.value.code == "space_models" and "2 models" in str(err.value)
        assert len(list(space.folder.iterdir())) == 2
    finally:
        space.close()
    size = sum(len(v) for v in data.values())
    small = UserModelSpace("owner-e", max_bytes=size + size // 2)
    try:
        small.add_zip(_zip(data), "1.zip")
        with pytest.raises(UserModelError) as err:
            small.add_zip(_zip(data), "2.zip")
        assert err.value.code == "space_bytes" and "MB" in str(err.value)
        assert len(list(small.folder.iterdir())) == 1, "the refused upload was deleted"
    finally:
        small.close()


def test_folders_read_in_place_are_never_deleted(folder):
    space = UserModelSpace("owner-f")
    entry = space.add_folder(folder, root=folder.parent)
    assert entry.directory == folder and entry.size == 0
    space.remove(entry.name)
    assert folder.is_dir() and (folder / "model.safetensors").exists()
    space.add_folder(folder, root=folder.parent)
    space.close()
    assert folder.is_dir() and (folder / "model.safetensors").exists()


def test_an_added_model_is_read_from_disk_once_to_check_and_use_it(folder, monkeypatch):
    import model.store.formats.own as user_models_module
    from model.store.registry import load_model

    reads: list[Path] = []
    real = user_models_module.load_checkpoint
    monkeypatch.setattr(user_models_module, "load_checkpoint",
                        lambda directory, **kw: reads.append(Path(directory)) or real(directory, **kw))
    space = UserModelSpace("owner-once")
    entry = space.add_folder(folder, root=folder.parent)
    assert reads == [folder]  # the checks
    first = load_model(entry.name)
    assert reads == [folder] and first.name == entry.name  # the first use takes the checked bundle
    again = load_model(entry.name)  # later loads (e.g. after the app's cache let it go) read the files
    assert reads == [folder, folder] and again.model is not first.model
    pairs = zip(first.model.state_dict().items(), again.model.state_dict().items(), strict=True)
    for (k, a), (_, b) in pairs:
        assert torch.equal(a, b), k
    space.close()


def test_stale_upload_folders_of_dead_processes_are_swept(tmp_path):
    root = upload_root()
    dead = root / "999999999-abc"  # no process has this id
    dead.mkdir()
    (dead / "x").write_text("x")
    mine = root / f"{os.getpid()}-xyz"
    mine.mkdir()
    other = root / "notes"
    other.mkdir()
    assert sweep_stale_uploads() == [dead]
    assert not dead.exists() and mine.is_dir() and other.is_dir()


# --------------------------------------------------------------------------- hostile uploads


def _symlink_zip() -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("config.json", "{}")
        info = zipfile.ZipInfo("model.safetensors")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    buf.seek(0)
    return buf


def _fifo_zip() -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo("config.json")
        info.create_system = 3
        info.external_attr = (stat.S_IFIFO | 0o644) << 16
        z.writestr(info, "")
    buf.seek(0)
    return buf


def _encrypted_zip() -> io.BytesIO:
    """config.json flagged as encrypted (bit 0 of the flags, in the local and the central header)."""
    data = bytearray(_zip({"config.json": b"{}"}).getvalue())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature) + offset
        data[at] |= 0x1
    return io.BytesIO(bytes(data))


def _duplicate_zip(folder) -> io.BytesIO:
    buf = io.BytesIO()
    with pytest.warns(UserWarning), zipfile.ZipFile(buf, "w") as z:
        for name, data in _files(folder).items():
            z.writestr(name, data)
        z.writestr("config.json", "{}")
    buf.seek(0)
    return buf


def _lying_sizes_zip(folder) -> io.BytesIO:
    """model.safetensors declared as 100 bytes in both headers; it unpacks to far more."""
    buf = _zip(_files(folder))
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("model.safetensors")
        real = info.file_size
    packed = struct.pack("<L", real)
    for at in _all(data, packed):
        data[at : at + 4] = struct.pack("<L", 100)
    return io.BytesIO(bytes(data))


def _all(data: bytearray, needle: bytes) -> list[int]:
    found, at = [], data.find(needle)
    while at >= 0:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


def _claims_many_entries() -> io.BytesIO:
    """A tiny zip whose end record claims 60,000 entries: refused before the directory is parsed."""
    data = bytearray(_zip({"config.json": b"{}"}).getvalue())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = struct.pack("<2H", 60000, 60000)
    return io.BytesIO(bytes(data))


def _json_edit(folder, name, edit):
    files = _files(folder)
    data = json.loads(files[name])
    edit(data)
    files[name] = json.dumps(data).encode()
    return _zip(files)


def _weights_edit(folder, edit, tmp_path):
    state = load_file(str(folder / "model.safetensors"))
    edit(state)
    save_file(state, str(tmp_path / "w.safetensors"))
    files = _files(folder)
    files["model.safetensors"] = (tmp_path / "w.safetensors").read_bytes()
    return _zip(files)


def _without(folder, name):
    files = _files(folder)
    del files[name]
    return _zip(files)


def _replace(folder, name, data: bytes):
    files = _files(folder)
    files[name] = data
    return _zip(files)


WEIGHTS = "model.safetensors"
_A_TENSOR = "decoder.blocks.1.cross_attn.W_q.weight"
_A_SHAPE = "encoder.blocks.0.mlp.W_in.weight"


def _bad_width(config):
    config["model"]["d_model"] = 30  # not divisible by n_heads = 4


SMALL = UploadLimits(max_zip_bytes=2_000_000, max_unpacked_bytes=1_000_000, max_entries=8)

# case: (make the zip from the good folder and tmp_path, expected code, text the message must name)
HOSTILE = {
    "dot-dot entry": (lambda f, t: _zip({"../evil.txt": b"x", "config.json": b"{}"}), "zip_unsafe_path",
                      "../evil.txt"),
    "nested dot-dot entry": (lambda f, t: _zip({"m/../../evil.json": b"x"}), "zip_unsafe_path", "evil.json"),
    "absolute entry": (lambda f, t: _zip({"/tmp/evil.json": b"x"}), "zip_unsafe_path", "/tmp/evil.json"),
    "backslash dot-dot entry": (lambda f, t: _zip({"..\\evil.json": b"x"}), "zip_unsafe_path", "evil.json"),
    "drive-letter entry": (lambda f, t: _zip({"C:/evil.json": b"x"}), "zip_unsafe_path", "C:/evil.json"),
    "symlink entry": (lambda f, t: _symlink_zip(), "zip_symlink", "model.safetensors"),
    "fifo entry": (lambda f, t: _fifo_zip(), "zip_special", "config.json"),
    "encrypted entry": (lambda f, t: _encrypted_zip(), "zip_encrypted", "config.json"),
    "duplicate entry": (lambda f, t: _duplicate_zip(f), "zip_duplicate", "config.json"),
    "too many entries": (lambda f, t: _zip({f"f{i}.json": b"{}" for i in range(9)}), "zip_too_many", "9"),
    "end record claims 60000 entries": (lambda f, t: _claims_many_entries(), "zip_too_many", "60000"),
    "zip bomb": (lambda f, t: _zip({"config.json": b"{}", "model.safetensors": bytes(1_500_000)}),
                 "zip_bomb", "1.4 MB"),
    "header lies about a size": (lambda f, t: _lying_sizes_zip(f), None, "model.safetensors"),
    "upload over the size limit": (lambda f, t: io.BytesIO(os.urandom(2_000_001)), "zip_too_big", "1.9 MB"),
    "not a zip": (lambda f, t: io.BytesIO(b"hello, this is not a zip file" * 10), "zip_invalid", "up.zip"),
    "truncated zip": (lambda f, t: io.BytesIO(_zip(_files(f)).getvalue()[:5000]), "zip_invalid", "up.zip"),
    "no config": (lambda f, t: _without(f, "config.json"), "zip_no_config", "up.zip"),
    "missing weights": (lambda f, t: _without(f, "model.safetensors"), "missing_file",
                        "up.zip/model.safetensors"),
    "missing tokenizer": (lambda f, t: _without(f, "tokenizer.json"), "missing_file",
                          "up.zip/tokenizer.json"),
    "invalid JSON": (lambda f, t: _replace(f, "config.json", b'{"model": {'), "checkpoint",
                     "up.zip/config.json"),
    "config is a list": (lambda f, t: _replace(f, "config.json", b"[1]"), "unknown_format",
                         "up.zip/config.json"),
    "unknown format": (lambda f, t: _replace(f, "config.json", b'{"hello": 1}'), "unknown_format",
                       "up.zip/config.json"),
    "unknown architecture": (lambda f, t: _replace(f, "config.json", b'{"model_type": "mamba", '
                                                   b'"architectures": ["MambaForCausalLM"]}'),
                             "unknown_architecture", "up.zip/config.json"),
    "bad model config": (lambda f, t: _json_edit(f, "config.json", _bad_width), "checkpoint",
                         "up.zip/config.json"),
    "truncated weights": (lambda f, t: _replace(f, "model.safetensors", (f / WEIGHTS).read_bytes()[:900]),
                          "checkpoint", "up.zip/model.safetensors"),
    "random weights": (lambda f, t: _replace(f, "model.safetensors", os.urandom(5000)), "checkpoint",
                       "up.zip/model.safetensors"),
    "weights of another shape": (
        lambda f, t: _weights_edit(f, lambda s: s.update({_A_SHAPE: torch.zeros(65, 32)}), t),
        "checkpoint", _A_SHAPE),
    "a tensor missing": (lambda f, t: _weights_edit(f, lambda s: s.pop(_A_TENSOR), t), "checkpoint",
                         _A_TENSOR),
    "tokenizer not JSON": (lambda f, t: _replace(f, "tokenizer.json", b"{"), "checkpoint",
                           "up.zip/tokenizer.json"),
    # Python refuses to convert integers of over 4,300 digits: a ValueError, not a JSONDecodeError.
    "a 5,000-digit integer": (lambda f, t: _replace(f, "config.json", b'{"model": {"d_model": '
                                                    + b"9" * 5000 + b"}}"),
                              "checkpoint", "up.zip/config.json"),
    "a 5,000-digit integer in the tokenizer": (lambda f, t: _replace(f, "tokenizer.json", b'{"v": '
                                                                     + b"9" * 5000 + b"}"),
                                               "checkpoint", "up.zip/tokenizer.json"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_uploads_are_refused_with_one_line_naming_the_file(folder, tmp_path, case, monkeypatch):
    make, code, named = HOSTILE[case]
    # Weights are never read into memory before their header matched the config.
    real_load_file = checkpoint_module.load_file
    header_checked = []

    def guarded_load_file(path, *a, **k):
        header_checked.append(path)
        return real_load_file(path, *a, **k)

    monkeypatch.setattr(checkpoint_module, "load_file", guarded_load_file)
    space = UserModelSpace("hostile", limits=SMALL)
    try:
        with pytest.raises(UserModelError) as err:
            space.add_zip(make(folder, tmp_path), "up.zip")
        message = str(err.value)
        assert "\n" not in message and named in message, message
        assert err.value.code in ENGLISH
        if code is not None:
            assert err.value.code == code, message
        assert space.names == []
        if space.folder is not None:
            assert list(space.folder.iterdir()) == [], "nothing of a refused upload stays on disk"
        if case in ("weights of another shape", "a tensor missing", "truncated weights", "random weights"):
            assert header_checked == [], "the tensors were read before the header was checked"
        assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.json").exists()
    finally:
        space.close()
    # the shipped models still load
    assert load_model("reverse").cfg.d_model > 0


def test_the_lying_header_is_caught_while_extracting(folder, tmp_path):
    """The central directory passes (100 bytes declared); the bytes read are what stop it."""
    with pytest.raises(UserModelError) as err:
        extract_zip(_lying_sizes_zip(folder), tmp_path / "out", "up.zip", SMALL)
    assert err.value.code in ("zip_overrun", "zip_corrupt_entry")
    assert not (tmp_path / "out").exists()


def test_the_byte_count_while_extracting_stops_a_stream_longer_than_declared(tmp_path, monkeypatch):
    """Even if the zip reader handed over more bytes than the header declares, the copy stops."""
    good = _zip({"config.json": b"{}", "model.safetensors": b"x" * 100})

    real_open = zipfile.ZipFile.open

    def open_longer(self, name, *a, **k):
        handle = real_open(self, name, *a, **k)
        if getattr(name, "filename", name) != "model.safetensors":
            return handle
        return io.BytesIO(handle.read() + b"y" * 10_000)  # more than its 100 declared bytes

    monkeypatch.setattr(zipfile.ZipFile, "open", open_longer)
    with pytest.raises(UserModelError) as err:
        extract_zip(good, tmp_path / "out", "up.zip", SMALL)
    assert err.value.code == "zip_overrun" and "model.safetensors" in str(err.value)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- pickles


class _CreatesMarker:
    """Unpickling this opens (creates) a file: stands in for arbitrary code execution."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


BERT_CONFIG = json.dumps(
    {"model_type": "bert", "architectures": ["BertModel"], "num_hidden_layers": 2}
).encode("utf-8")


def _pickle_payload(marker: Path) -> bytes:
    buf = io.BytesIO()
    torch.save({"embeddings.word_embeddings.weight": _CreatesMarker(marker)}, buf)
    return buf.getvalue()


@pytest.fixture
def no_unpickling(monkeypatch):
    """Any attempt to unpickle fails the test loudly."""

    def refuse(*a, **k):
        raise AssertionError("something tried to unpickle")

    monkeypatch.setattr(torch, "load", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)


def test_the_payload_really_runs_code_when_unpickled(tmp_path):
    """Control for the tests below: torch.load without weights_only would run it."""
    marker = tmp_path / "control"
    torch.load(io.BytesIO(_pickle_payload(marker)), weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("weights_name", ["pytorch_model.bin", "model.pt", "model.ckpt"])
def test_a_zip_with_only_pickled_weights_is_refused_without_loading(tmp_path, weights_name, no_unpickling):
    marker = tmp_path / "pwned"
    payload = _pickle_payload(marker)
    upload = _zip({"config.json": BERT_CONFIG, "tokenizer.json": b"{}", weights_name: payload})
    space = UserModelSpace("pickles")
    try:
        with pytest.raises(UserModelError) as err:
            space.add_zip(upload, "bert.zip")
        message = str(err.value)
        assert err.value.code == "pickle" and f"bert.zip/{weights_name}" in message
        assert "safetensors" in message and "save_file" in message and "weights_only=True" in message
        assert "\n" not in message
    finally:
        space.close()
    assert not marker.exists()


def test_pickles_are_never_extracted_next_to_safetensors(folder, tmp_path, no_unpickling):
    marker = tmp_path / "pwned"
    files = _files(folder)
    files["pytorch_model.bin"] = _pickle_payload(marker)
    files["optimizer.pt"] = _pickle_payload(marker)
    done = extract_zip(_zip(files), tmp_path / "out", "m.zip")
    assert sorted(done["pickles"]) == ["optimizer.pt", "pytorch_model.bin"]
    assert not (tmp_path / "out" / "pytorch_model.bin").exists()
    assert not (tmp_path / "out" / "optimizer.pt").exists()
    assert load_user_model(tmp_path / "out").cfg.d_model == 32
    assert not marker.exists()


def test_a_folder_with_only_a_pickle_is_refused_and_says_how_to_convert(tmp_path, no_unpickling):
    marker = tmp_path / "pwned"
    d = tmp_path / "hf"
    d.mkdir()
    (d / "config.json").write_bytes(BERT_CONFIG)
    (d / "pytorch_model.bin").write_bytes(_pickle_payload(marker))
    with pytest.raises(UserModelError) as err:
        load_user_model(d)
    assert err.value.code == "pickle" and "pytorch_model.bin" in str(err.value)
    assert not marker.exists()


def test_a_pickle_disguised_as_safetensors_is_not_unpickled(folder, tmp_path, no_unpickling):
    marker = tmp_path / "pwned"
    upload = _replace(folder, "model.safetensors", _pickle_payload(marker))
    space = UserModelSpace("disguise")
    try:
        with pytest.raises(UserModelError) as err:
            space.add_zip(upload, "m.zip")
        assert "m.zip/model.safetensors" in str(err.value)
    finally:
        space.close()
    assert not marker.exists()


# --------------------------------------------------------------------------- folders


def test_formats_are_detected_from_config_json(folder, tmp_path):
    assert detect_format(folder) == "own"
    bert = tmp_path / "bert"
    bert.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (bert / name).write_bytes(b"{}")
    (bert / "config.json").write_bytes(BERT_CONFIG)
    assert detect_format(bert) == "bert"
    (bert / "config.json").write_text('{"model_type": "mamba"}')
    with pytest.raises(UserModelError, match="mamba"):
        detect_format(bert)


def test_sharded_weights_are_named(tmp_path):
    d = tmp_path / "sharded"
    d.mkdir()
    (d / "config.json").write_bytes(BERT_CONFIG)
    (d / "model-00001-of-00002.safetensors").write_bytes(b"")
    with pytest.raises(UserModelError) as err:
        detect_format(d)
    assert err.value.code == "sharded"


def test_the_folder_picker_lists_only_folders_inside_its_root(folder, tmp_path):
    root = tmp_path / "models"
    root.mkdir()
    (root / "good").symlink_to(folder)  # a link out of the root
    inside = root / "inside"
    save_checkpoint(inside, _model(), SyntheticTask("reverse"))
    (root / "afile.json").write_text("{}")
    (root / ".hidden").mkdir()
    assert folder_models(root) == ["inside"]
    with pytest.raises(UserModelError) as err:
        detect_format(root / "good", "good", root=root)
    assert err.value.code == "outside_root"
    # a file inside a picked folder that links out of the root is refused too
    linked = root / "linked"
    linked.mkdir()
    for p in inside.iterdir():
        (linked / p.name).write_bytes(p.read_bytes())
    (linked / "model.safetensors").unlink()
    (linked / "model.safetensors").symlink_to(folder / "model.safetensors")
    with pytest.raises(UserModelError) as err:
        detect_format(linked, "linked", root=root)
    assert err.value.code == "outside_root" and "linked/model.safetensors" in str(err.value)
    assert detect_format(inside, "inside", root=root) == "own"


def tiny_bert_folder(directory: Path, seed: int = 0) -> Path:
    """A BERT-style folder as Hugging Face writes it: MiniLM's config shrunk to 2 layers of width 32,
    MiniLM's own WordPiece tokenizer.json, and random weights under Hugging Face's names."""
    from model.store.formats.bert import bert_config, bert_name_map
    from model.store.formats.own import expected_shapes
    from model.store.sources.packages import PRETRAINED, pretrained_path

    source = pretrained_path(PRETRAINED[0])
    assert source is not None, "the MiniLM package is part of the normal set-up"
    hf = json.loads((source / "config.json").read_text())
    hf.update(hidden_size=32, num_attention_heads=4, intermediate_size=64, num_hidden_layers=2)
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(hf))
    (directory / "tokenizer.json").write_bytes((source / "tokenizer.json").read_bytes())
    cfg = bert_config(hf, directory)
    shapes = expected_shapes(cfg)
    g = torch.Generator().manual_seed(seed)
    weights = {theirs: torch.randn(shapes[ours], generator=g) * 0.05
               for ours, theirs in bert_name_map(cfg.n_enc_layers).items()}
    save_file(weights, str(directory / "model.safetensors"))
    return directory


def test_a_bert_style_zip_is_converted_into_our_transformer(tmp_path):
    from model.run.analysis import analyze
    from model.store.formats.bert import load_bert_folder

    folder = tiny_bert_folder(tmp_path / "bert")
    files = _files(folder, "bert/")
    files["bert/1_Pooling/config.json"] = b"{}"  # sub-folders are not taken
    files["bert/pytorch_model.bin"] = b"never extracted"
    space = UserModelSpace("bert-owner")
    try:
        entry = space.add_zip(_zip(files), "tiny-bert.zip")
        assert entry.fmt == "bert"
        assert sorted(p.name for p in entry.directory.iterdir()) == ["config.json", "model.safetensors",
                                                                       "tokenizer.json"]
        info = model_info(entry.name)
        assert (info.group, info.kinds, info.task) == ("user", ("encoder",), "encode")
        bundle = load_model(entry.name)
        assert bundle.cfg.n_dec_layers == 0 and bundle.cfg.n_enc_layers == 2 and bundle.cfg.d_model == 32
        mine = analyze(bundle, info.example)
        direct = analyze(load_bert_folder(folder), info.example)
        assert mine.source_tokens == direct.source_tokens and mine.source_tokens[0] == "[CLS]"
        for key, value in direct.activations.items():
            np.testing.assert_array_equal(mine.activations[key], value)
    finally:
        space.close()


def test_a_bert_style_folder_with_weights_for_another_config_is_refused_before_loading(tmp_path, monkeypatch):
    folder = tiny_bert_folder(tmp_path / "bert")
    hf = json.loads((folder / "config.json").read_text())
    hf["intermediate_size"] = 128  # the weights were made for 64
    (folder / "config.json").write_text(json.dumps(hf))
    import safetensors

    def no_tensor_reads(*a, **k):
        raise AssertionError("a tensor was read before the header was checked")

    monkeypatch.setattr(safetensors.safe_open, "get_tensor", no_tensor_reads, raising=False)
    with pytest.raises(UserModelError) as err:
        load_user_model(folder, display="bert")
    assert "bert/model.safetensors" in str(err.value) and "\n" not in str(err.value)


def test_a_bert_folder_is_either_converted_or_refused_with_a_message(tmp_path):
    d = tmp_path / "bert"
    d.mkdir()
    (d / "config.json").write_bytes(BERT_CONFIG)
    (d / "tokenizer.json").write_text("{}")
    save_file({"embeddings.word_embeddings.weight": torch.zeros(4, 4)}, str(d / "model.safetensors"))
    with pytest.raises(UserModelError) as err:  # incomplete weights: the converter (if any) refuses them
        load_user_model(d, display="bert")
    assert "\n" not in str(err.value) and "bert" in str(err.value)


# --------------------------------------------------------------------------- command line


def test_cli_model_dir_runs_a_folder_and_a_zip(folder, tmp_path, capsys):
    expected = None
    for target in (folder, tmp_path / "m.zip"):
        if target.suffix == ".zip":
            target.write_bytes(_zip(_files(folder, "mine/")).getvalue())
        assert main(["translate", "--model-dir", str(target), "abc", "hello"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert len(out) == 2
        expected = expected or out
        assert out == expected
    assert not list(Path(os.environ["ATTENTION_LENS_UPLOAD_DIR"]).glob("*")), "the CLI left nothing behind"


def test_cli_inspect_and_evaluate_take_model_dir(folder, tmp_path, capsys):
    assert main(["inspect", "--model-dir", str(folder), "--text", "abc", "--out", str(tmp_path / "o")]) == 0
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert meta
    assert main(["evaluate", "--model-dir", str(folder), "-n", "3"]) == 0
    assert "exact match" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,named",
    [
        (["--model", "assets/models/reverse"], "--model-dir"),  # a path is never taken as a name
        (["--model", "../reverse"], "not a model name"),
        (["--model-dir", "/no/such/folder"], "/no/such/folder"),
        (["--model-dir", "assets/models/reverse/config.json"], "config.json is not a folder"),
    ],
)
def test_cli_paths_and_names_are_kept_apart(args, named, capsys):
    assert main(["translate", *args, "abc"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and named in err


def test_cli_refuses_a_hostile_zip_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(_zip({"../evil.json": b"{}"}).getvalue())
    assert main(["translate", "--model-dir", str(bad), "abc"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.zip" in err and "../evil.json" in err
    assert not (tmp_path / "evil.json").exists()


def test_cli_model_and_model_dir_are_exclusive(folder, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["translate", "--model", "reverse", "--model-dir", str(folder), "abc"])
    assert exit_.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_the_upload_limit_is_the_same_everywhere():
    """Streamlit's widget limit (.streamlit/config.toml), the page's and the zip check's are one figure."""
    import tomllib

    from app_support.user_models import UPLOAD_LIMIT_MB
    from model.store.upload_limits import LIMITS

    root = REPO_ROOT
    config = tomllib.loads((root / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == UPLOAD_LIMIT_MB == LIMITS.max_zip_bytes // 2**20 == 200


def test_cli_atlas_takes_model_dir(folder, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path / "atlas"))
    assert main(["atlas", "--model-dir", str(folder), "--sentences", "4"]) == 0
    out = capsys.readouterr()
    assert "mine" in out.err and out.out.strip()
    assert (tmp_path / "atlas" / "mine").is_dir()


def test_all_sessions_together_hold_a_bounded_number_of_bytes(folder, monkeypatch):
    import model.store.uploads as um

    data = _files(folder)
    size = sum(len(v) for v in data.values())
    monkeypatch.setattr(um, "SERVER_MAX_BYTES", um.server_upload_bytes() + size + size // 2)
    first, second = UserModelSpace("server-a"), UserModelSpace("server-b")
    try:
        first.add_zip(_zip(data), "a.zip")
        with pytest.raises(UserModelError) as err:
            second.add_zip(_zip(data), "b.zip")  # another owner, but the server is full
        assert err.value.code == "server_bytes" and second.names == []
        first.close()  # closing one owner frees its share for the others
        assert second.add_zip(_zip(data), "b.zip").name in second.names
    finally:
        first.close()
        second.close()


def test_upload_clean_up_deletes_only_inside_its_own_folder(tmp_path):
    from model.store.upload_files import _remove_tree

    root = tmp_path / "uploads"
    (root / "mine").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (root / "link").symlink_to(outside, target_is_directory=True)
    for bad in (root, outside, root / ".." / "outside", Path("/")):
        with pytest.raises(RuntimeError, match="refusing to delete"):
            _remove_tree(bad, root)
    _remove_tree(root / "link", root)  # the link goes, not what it points to
    assert not (root / "link").exists() and (outside / "keep.txt").read_text() == "keep"
    _remove_tree(root / "mine", root)
    assert not (root / "mine").exists() and root.is_dir()
