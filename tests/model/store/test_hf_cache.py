"""The local Hugging Face cache: snapshots (files linked into blobs/) open with --model-dir and by hub
name (``--model ORG/NAME``, ``attention_lens.load``), the picker lists them under their hub names, and a
missing or hostile one is one line. A fake cache under tmp_path (HF_HUB_CACHE / HF_HOME): no network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

from model.cli.main import main  # noqa: E402
from model.store import registry  # noqa: E402
from model.store.problems import UserModelError  # noqa: E402
from model.store.sources.hf_cache import HubCacheSource, hub_cache, is_hub_name, snapshot  # noqa: E402
from model.store.user_folders import load_user_model  # noqa: E402
from tests.model.store.test_hf_decoder import _save  # noqa: E402

REVISION = "0123456789abcdef0123456789abcdef01234567"


def _into_cache(saved: Path, cache: Path, hub_name: str, revision: str = REVISION) -> Path:
    """Lay a saved folder out as the hub's cache does: blobs named by their hash, the snapshot's
    files relative links to them, refs/main naming the revision."""
    repo = cache / ("models--" + hub_name.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snap = repo / "snapshots" / revision
    snap.mkdir(parents=True)
    for f in sorted(saved.iterdir()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        shutil.copyfile(f, repo / "blobs" / digest)
        (snap / f.name).symlink_to(Path("..") / ".." / "blobs" / digest)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    return snap


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Two tiny decoders saved by transformers (Qwen3 and Llama) and a GPT-2 with a pickle only."""
    found = {}
    for kind in ("qwen3", "llama"):
        folder = tmp_path_factory.mktemp(kind)
        _save(kind, folder)
        found[kind] = folder
    return found


@pytest.fixture
def cache(tmp_path, monkeypatch, saved) -> Path:
    """HF_HOME under tmp_path holding Qwen/Qwen3-Tiny and meta-llama/Llama-Tiny, and a repository of an
    architecture we refuse."""
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    hub = tmp_path / "hf" / "hub"
    _into_cache(saved["qwen3"], hub, "Qwen/Qwen3-Tiny")
    _into_cache(saved["llama"], hub, "meta-llama/Llama-Tiny")
    odd = tmp_path / "odd"
    shutil.copytree(saved["llama"], odd)
    (odd / "config.json").write_text('{"model_type": "mamba"}')
    _into_cache(odd, hub, "state-spaces/mamba-tiny")
    return hub


def test_the_cache_folder_follows_the_hub_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub_cache() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hub_cache() == tmp_path / "hub"
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_cache() == tmp_path / "xdg" / "huggingface" / "hub"
    assert is_hub_name("Qwen/Qwen3-0.6B") and not is_hub_name("a/../b") and not is_hub_name("qwen")
    assert not is_hub_name("/etc/passwd") and not is_hub_name("a/b/c")


def test_a_snapshot_folder_opens_with_model_dir_and_equals_the_saved_folder(cache, saved, capsys):
    snap = cache / "models--Qwen--Qwen3-Tiny" / "snapshots" / REVISION
    assert (snap / "model.safetensors").is_symlink()
    ours, direct = load_user_model(snap), load_user_model(saved["qwen3"])
    ids = torch.tensor([[5, 9, 14, 3, 22]])
    with torch.no_grad():
        assert torch.equal(ours.model(ids), direct.model(ids))
    assert main(["generate", "--model-dir", str(snap), "--max-new-tokens", "3", "w5 w6 w7"]) == 0
    assert capsys.readouterr().out.strip()


def test_model_org_name_generates_from_the_cache_and_equals_model_dir(cache, capsys):
    args = ["--max-new-tokens", "4", "w5 w6 w7"]
    assert main(["generate", "--model", "Qwen/Qwen3-Tiny", *args]) == 0
    by_name = capsys.readouterr().out
    snap = cache / "models--Qwen--Qwen3-Tiny" / "snapshots" / REVISION
    assert main(["generate", "--model-dir", str(snap), *args]) == 0
    assert capsys.readouterr().out == by_name and by_name.strip()


def test_a_model_not_in_the_cache_says_how_to_get_it_in_one_line(cache, capsys, monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("a network call")

    import socket

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert main(["generate", "--model", "Qwen/Qwen3-0.6B", "hello"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not in the local Hugging Face cache" in err
    assert "huggingface-cli download Qwen/Qwen3-0.6B" in err
    import attention_lens as al

    with pytest.raises(registry.UnknownModelError, match="huggingface-cli download Qwen/Qwen3-0.6B"):
        al.load("Qwen/Qwen3-0.6B")


def test_attention_lens_load_opens_a_hub_name_from_the_cache(cache):
    import attention_lens as al

    m = al.load("meta-llama/Llama-Tiny")
    assert m.family == "decoder-only" and m.name == "models--meta-llama--Llama-Tiny"


def test_refs_main_names_the_snapshot_else_the_newest(cache, saved):
    repo = cache / "models--Qwen--Qwen3-Tiny"
    other = "f" * 40
    _into_cache(saved["llama"], cache, "Qwen/Qwen3-Tiny", revision=other)  # a second snapshot
    (repo / "refs" / "main").write_text(REVISION)
    assert snapshot("Qwen/Qwen3-Tiny") == repo / "snapshots" / REVISION
    (repo / "refs" / "main").unlink()
    os.utime(repo / "snapshots" / other, (2e9, 2e9))
    assert snapshot("Qwen/Qwen3-Tiny") == repo / "snapshots" / other
    (repo / "refs" / "main").write_text("../../../etc")  # not a revision: the newest snapshot
    assert snapshot("Qwen/Qwen3-Tiny") == repo / "snapshots" / other


def test_the_picker_lists_the_cached_models_under_their_hub_names(cache):
    source = HubCacheSource()
    names = source.names()
    assert names == ["models--Qwen--Qwen3-Tiny", "models--meta-llama--Llama-Tiny"]  # mamba refused: left out
    info = source.info("models--Qwen--Qwen3-Tiny")
    assert info.label == "Qwen/Qwen3-Tiny" and info.kinds == ("decoder",) and info.task == "continue"
    assert "(qwen3)" in info.description and info.text("description", "zh") != info.description
    from app_support.models import list_models, model_label

    assert "models--meta-llama--Llama-Tiny" in list_models()
    assert model_label("models--meta-llama--Llama-Tiny") == "meta-llama/Llama-Tiny"
    bundle = registry.load_model("models--meta-llama--Llama-Tiny")
    assert bundle.cfg.decoder_only and registry.model_dir(bundle.name).name == REVISION


def test_a_refused_architecture_by_hub_name_is_one_line(cache, capsys):
    assert main(["generate", "--model", "state-spaces/mamba-tiny", "hello"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "unknown architecture 'mamba'" in err


def test_a_link_out_of_the_repository_is_refused_in_one_line(cache, tmp_path, capsys):
    snap = cache / "models--Qwen--Qwen3-Tiny" / "snapshots" / REVISION
    secret = tmp_path / "elsewhere.json"
    secret.write_text((snap / "tokenizer.json").read_text())
    (snap / "tokenizer.json").unlink()
    (snap / "tokenizer.json").symlink_to(secret)
    with pytest.raises(UserModelError) as caught:
        load_user_model(snap)
    assert caught.value.code == "outside_cache" and "tokenizer.json" in str(caught.value)
    assert "models--Qwen--Qwen3-Tiny" not in HubCacheSource().names()  # not listed either
    assert main(["generate", "--model", "Qwen/Qwen3-Tiny", "w5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "links outside its Hugging Face cache folder" in err
    # a link into another repository of the same cache is not this snapshot's own either
    other_blob = next((cache / "models--meta-llama--Llama-Tiny" / "blobs").iterdir())
    (snap / "tokenizer.json").unlink()
    (snap / "tokenizer.json").symlink_to(other_blob)
    with pytest.raises(UserModelError, match="outside its Hugging Face cache folder"):
        load_user_model(snap)


@pytest.mark.parametrize("change", ["truncated", "longer"])
def test_a_blob_of_the_wrong_size_is_refused_in_one_line(cache, change, capsys):
    snap = cache / "models--Qwen--Qwen3-Tiny" / "snapshots" / REVISION
    blob = (snap / "model.safetensors").resolve()
    data = blob.read_bytes()
    blob.write_bytes(data[:-100] if change == "truncated" else data + b"\0" * 100)
    assert main(["generate", "--model", "Qwen/Qwen3-Tiny", "w5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "model.safetensors" in err


def test_a_loop_of_links_in_a_snapshot_is_refused_in_one_line(cache, capsys):
    snap = cache / "models--Qwen--Qwen3-Tiny" / "snapshots" / REVISION
    (snap / "a.json").symlink_to(snap / "b.json")
    (snap / "b.json").symlink_to(snap / "a.json")
    assert main(["generate", "--model", "Qwen/Qwen3-Tiny", "w5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "a.json links outside its Hugging Face cache folder" in err
