"""A shipped model whose tokenizer is byte for byte another's ships none of its own (tiny-gpt reads the
translation model's): it names that model and the file's SHA-256 in config.json, and nothing outside
the shipped models' folder can use the reference."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from model.store import shipping
from model.store.formats.own import load_checkpoint
from model.store.problems import CheckpointError
from model.store.registry import load_model
from model.store.sources import shipped
from model.store.sources.shipped import tokenizer_of

SHIPPED = shipped.REPO_ROOT / "assets" / "models"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tiny_gpt_reads_the_translation_models_tokenizer_and_ships_none():
    config = json.loads((SHIPPED / "tiny-gpt" / "config.json").read_text(encoding="utf-8"))
    assert not (SHIPPED / "tiny-gpt" / "tokenizer.json").exists()
    assert config["tokenizer_from"] == "default"
    assert config["tokenizer_sha256"] == _sha(SHIPPED / "default" / "tokenizer.json")
    assert tokenizer_of(SHIPPED / "tiny-gpt") == SHIPPED / "default" / "tokenizer.json"
    tiny, default = load_model("tiny-gpt"), load_model("default")
    sentence = "我吃了一个苹果。 The cat sat on the mat."
    assert tiny.task.tokenizer.encode(sentence) == default.task.tokenizer.encode(sentence)
    assert tiny.task.tokenizer.vocab_size == default.task.tokenizer.vocab_size == tiny.cfg.vocab_size


def _models(tmp_path: Path, monkeypatch, *names: str) -> Path:
    models = tmp_path / "models"
    for name in names:
        shutil.copytree(SHIPPED / name, models / name)
    monkeypatch.setattr(shipped, "MODELS_DIR", models)
    return models


def _edit(config_file: Path, **edits) -> None:
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config.update(edits)
    config_file.write_text(json.dumps(config), encoding="utf-8")


def test_a_changed_shared_tokenizer_is_refused_in_one_line(tmp_path, monkeypatch):
    models = _models(tmp_path, monkeypatch, "default", "tiny-gpt")
    assert shipped.shipped().load("tiny-gpt").task.tokenizer.vocab_size == 8000
    shared = models / "default" / "tokenizer.json"
    shared.write_bytes(shared.read_bytes() + b" ")  # still valid JSON, another file
    with pytest.raises(CheckpointError, match="SHA-256 differs") as e:
        shipped.shipped().load("tiny-gpt")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("other", ["../default", "/etc", "tiny-gpt", "absent", 7, ""])
def test_tokenizer_from_names_only_another_model_of_the_folder(tmp_path, monkeypatch, other):
    models = _models(tmp_path, monkeypatch, "default", "tiny-gpt")
    _edit(models / "tiny-gpt" / "config.json", tokenizer_from=other)
    with pytest.raises(CheckpointError, match="tokenizer_from must name another model"):
        shipped.shipped().load("tiny-gpt")


def test_a_folder_outside_the_shipped_models_must_hold_its_own_tokenizer(tmp_path, monkeypatch):
    _models(tmp_path, monkeypatch, "default")
    elsewhere = tmp_path / "uploads" / "tiny-gpt"
    shutil.copytree(SHIPPED / "tiny-gpt", elsewhere)
    shutil.copytree(SHIPPED / "default", tmp_path / "uploads" / "default")  # a sibling is not enough
    with pytest.raises(CheckpointError, match="no tokenizer.json of its own: it shares 'default'") as e:
        load_checkpoint(elsewhere)
    assert "\n" not in str(e.value)
    assert tokenizer_of(elsewhere) == elsewhere / "tokenizer.json"


def test_shipping_a_model_with_another_models_tokenizer_shares_it(tmp_path, monkeypatch):
    models = _models(tmp_path, monkeypatch, "default")
    staged = models / ".tiny-gpt.new-test"
    shutil.copytree(SHIPPED / "tiny-gpt", staged)
    shutil.copyfile(SHIPPED / "default" / "tokenizer.json", staged / "tokenizer.json")
    _edit(staged / "config.json", tokenizer_from=None, tokenizer_sha256=None)
    assert shipping.share_tokenizer(staged, "tiny-gpt") == "default"
    config = json.loads((staged / "config.json").read_text(encoding="utf-8"))
    assert not (staged / "tokenizer.json").exists()
    assert (config["tokenizer_from"], config["tokenizer_sha256"]) == ("default", _sha(models / "default" /
                                                                                      "tokenizer.json"))
    shutil.move(staged, models / "tiny-gpt")
    assert shipped.shipped().load("tiny-gpt").task.tokenizer.vocab_size == 8000
    # a tokenizer no other model holds stays where it is
    own = models / ".reverse.new-test"
    shutil.copytree(SHIPPED / "reverse", own)
    assert shipping.share_tokenizer(own, "reverse") is None
    assert (own / "tokenizer.json").is_file()


@pytest.mark.parametrize("where", ["outside", "models-itself"])
def test_sharing_edits_only_a_folder_staged_inside_the_models_folder(tmp_path, monkeypatch, where):
    models = _models(tmp_path, monkeypatch, "default")
    folder = tmp_path / "elsewhere" if where == "outside" else models
    folder.mkdir(exist_ok=True)
    shutil.copyfile(SHIPPED / "default" / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(RuntimeError, match="refusing to edit"):
        shipping.share_tokenizer(folder, "tiny-gpt")
    assert (folder / "tokenizer.json").is_file()  # nothing deleted
