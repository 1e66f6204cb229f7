"""The model registry: what each model says about itself, read from its own config, over several sources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from model.store import registry
from model.store.registry import GROUPS, model_info, model_infos
from model.store.sources.shipped import FolderSource

SHIPPED = registry.REPO_ROOT / "assets" / "models"


def test_shipped_models_describe_themselves():
    infos = {i.name: i for i in model_infos()}
    assert list(infos)[0] == "default"  # the main model opens the menu
    for name in ("default", "reverse", "copy", "sort"):
        config = json.loads((SHIPPED / name / "config.json").read_text(encoding="utf-8"))
        info = infos[name]
        assert (info.label, info.group, info.order, info.example, info.description) == (
            config["label"], config["group"], config["order"], config["example"], config["description"])
        assert info.group in GROUPS and info.listed
        assert info.kinds == ("encoder", "decoder", "cross")
    assert infos["default"].task == "translation" and infos["reverse"].task == "reverse"


def _copy_model(dest: Path, name: str, **edits) -> Path:
    shutil.copytree(SHIPPED / "reverse", dest / name)
    config_file = dest / name / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    for key, value in edits.items():
        if value is None:
            config.pop(key, None)
        elif isinstance(value, dict):
            config[key].update(value)
        else:
            config[key] = value
    config_file.write_text(json.dumps(config), encoding="utf-8")
    return dest / name


@pytest.fixture
def two_sources(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    # only these two folders (no installed packages)
    monkeypatch.setattr(registry, "model_sources",
                        lambda: [FolderSource("assets", first), FolderSource("user", second)])
    return first, second


def test_models_come_from_every_source_and_the_first_wins(two_sources):
    first, second = two_sources
    _copy_model(first, "same", label="from first")
    _copy_model(second, "same", label="from second")
    _copy_model(second, "mine", label="my model", group="variant", order=5)
    infos = {i.name: i for i in model_infos()}
    assert infos["same"].label == "from first" and infos["same"].source == "assets"
    assert infos["mine"].source == "user" and infos["mine"].directory == second / "mine"
    assert registry.load_model("mine").name == "mine"


def test_a_model_without_metadata_gets_plain_defaults(two_sources):
    first, _ = two_sources
    _copy_model(first, "bare", label=None, group=None, order=None, listed=None, description=None)
    info = model_info("bare")
    assert (info.label, info.group, info.order, info.listed, info.description) == (
        "bare",
        "user",
        99,
        True,
        "",
    )


def test_unlisted_models_are_known_but_not_offered(two_sources, monkeypatch):
    from app_support import models as app_models

    first, _ = two_sources
    _copy_model(first, "shown")
    _copy_model(first, "hidden", listed=False, group="variant")
    assert {i.name for i in model_infos()} == {"shown", "hidden"}
    assert app_models.list_models() == ["shown"]
    assert registry.load_model("hidden").name == "hidden"


def test_broken_configs_are_named_not_hidden(two_sources):
    first, _ = two_sources
    _copy_model(first, "good")
    (first / "bad").mkdir()
    (first / "bad" / "config.json").write_text("[" * 50_000, encoding="utf-8")
    broken: list[tuple[str, str]] = []
    assert [i.name for i in model_infos(broken)] == ["good"]
    assert [name for name, _ in broken] == ["bad"] and "config.json" in broken[0][1]
    assert registry.available_models() == ["good", "bad"]


def test_folders_that_are_not_plain_names_are_ignored(two_sources):
    first, _ = two_sources
    _copy_model(first, "ok")
    _copy_model(first, ".hidden")
    _copy_model(first, "has space")
    assert registry.available_models() == ["ok"]
    with pytest.raises(registry.UnknownModelError):
        registry.model_dir("has space")


def test_an_encoder_only_config_has_only_encoder_kinds(two_sources):
    first, _ = two_sources
    _copy_model(first, "enc", model={"n_dec_layers": 0})
    assert model_info("enc").kinds == ("encoder",)


def test_menu_order_is_group_then_order(two_sources):
    first, _ = two_sources
    _copy_model(first, "b_var", group="variant", order=1)
    _copy_model(first, "a_var", group="variant", order=2)
    _copy_model(first, "main", group="main", order=7)
    _copy_model(first, "did", group="didactic", order=0)
    assert [i.name for i in model_infos()] == ["main", "did", "b_var", "a_var"]
