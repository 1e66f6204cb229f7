"""The models the app and the command line offer: a model name -> the source that holds it.

Sources are asked in order (``model_sources()``: the shipped folder, installed packages, then the
local Hugging Face cache); an
earlier source hides a later one's model of the same name. A user's own models (opened or
uploaded in this process) are found by their made-up names first. Everything a model says about
itself before loading comes from its source as a :class:`ModelInfo`; loading gives a
:class:`Bundle`. Names are plain names, never paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .bundle import Bundle
from .info import GROUPS, ModelInfo
from .names import UnknownModelError, check_model_name, is_model_name
from .problems import CheckpointError
from .sources import user
from .sources.hf_cache import HubCacheSource
from .sources.packages import PackageSource
from .sources.shipped import REPO_ROOT, FolderSource, shipped
from .sources.user import UserModel, unregister_user_model, user_model, user_model_names

__all__ = [
    "DEFAULT_MODEL", "GROUPS", "REPO_ROOT", "Bundle", "CheckpointError", "FolderSource", "ModelInfo",
    "ModelSource", "UnknownModelError", "UserModel", "available_models", "check_model_name",
    "example_input", "is_model_name", "load_model", "model_dir", "model_info", "model_infos",
    "model_sources", "register_user_model", "unregister_user_model", "user_model", "user_model_names",
]

DEFAULT_MODEL = "default"


class ModelSource(Protocol):
    """What the registry asks of a source of models (see model/store/sources/)."""

    name: str

    def names(self) -> list[str]: ...
    def folder(self, name: str) -> Path | None: ...
    def info(self, name: str) -> ModelInfo: ...
    def load(self, name: str) -> Bundle: ...


def model_sources() -> list[ModelSource]:
    """Where models are looked up, first match wins (read at call time: tests point it elsewhere)."""
    return [shipped(), PackageSource(), HubCacheSource()]


def _holders() -> dict[str, ModelSource]:
    """Model name -> the first source that holds it."""
    found: dict[str, ModelSource] = {}
    for source in model_sources():
        for name in source.names():
            found.setdefault(name, source)
    return found


def _source_of(name: str) -> ModelSource:
    check_model_name(name)
    source = _holders().get(name)
    if source is None:
        have = ", ".join(available_models()) or "none"
        if name == DEFAULT_MODEL:
            raise UnknownModelError(
                "The default Chinese<->English model is not in assets/models/default yet. "
                "Train it with `python -m model train --preset default --ship` "
                f"or pick another model (available: {have})."
            )
        raise UnknownModelError(f"No model named {name!r}. Available models: {have}.")
    return source


def model_info(name: str) -> ModelInfo:
    """What model ``name`` says about itself (read without loading weights).

    Raises UnknownModelError for a name no source holds, CheckpointError for a broken config.
    """
    entry = user_model(name)
    if entry is not None:
        return user.user_model_info(entry)
    return _source_of(name).info(name)


def model_infos(broken: list[tuple[str, str]] | None = None) -> list[ModelInfo]:
    """Every readable model, in menu order (group, then order, then name).

    A model whose config cannot be read is left out; pass a list as ``broken`` to receive
    ``(name, reason)`` for each, so a caller can name it.
    """
    infos = []
    for name, source in _holders().items():
        try:
            infos.append(source.info(name))
        except CheckpointError as e:
            if broken is not None:
                broken.append((name, str(e)))
    return sorted(infos, key=lambda i: (GROUPS.index(i.group), i.order, i.name))


def available_models() -> list[str]:
    """Names of every model, in menu order (broken ones last, so they can be named)."""
    broken: list[tuple[str, str]] = []
    names = [i.name for i in model_infos(broken)]
    return names + sorted(name for name, _ in broken)


def model_dir(name: str) -> Path:
    """The folder model ``name`` is read from."""
    check_model_name(name)
    entry = user_model(name)
    if entry is not None:
        return entry.directory
    folder = _source_of(name).folder(name)
    assert folder is not None
    return folder


def load_model(name: str) -> Bundle:
    entry = user_model(name)
    if entry is not None:
        return user.load(entry)
    return _source_of(name).load(name)


def example_input(name: str) -> str:
    """An input worth trying on this model, read from its config without loading the weights."""
    return model_info(name).example


def register_user_model(directory: Path, label: str, fmt: str, owner: str, slug: str = "model",
                        size: int = 0, checked: Bundle | None = None) -> UserModel:
    """Give a checked user folder a fresh plain name, never one a model source already uses;
    ``checked``, the bundle the checks loaded, is what the first :func:`load_model` of it returns."""
    return user.register(directory, label, fmt, owner, set(_holders()), slug, size, checked)
