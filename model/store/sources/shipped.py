"""Folders of checkpoint folders: the shipped ``assets/models/`` (or ``ATTENTION_LENS_MODELS``).

Each model is a folder directly inside, named by its plain model name, holding this project's own
checkpoint. A model whose tokenizer is byte for byte another's ships none of its own: its config.json
names that model and the file's SHA-256 (``"tokenizer_from": "default", "tokenizer_sha256": …``), and
it reads that model's tokenizer.json once the hash matches. Only the shipped models' folder honours
this, only for a plain model name in it, and only when the folder has no tokenizer.json of its own; an
uploaded folder must hold its own. Everything the app shows about a model before loading it (label,
description, example input, task, group, attention kinds, whether the picker lists it) is read from its
``config.json``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...core.files import file_digest
from ..bundle import MAX_JSON_BYTES, Bundle, read_json
from ..formats.own import load_checkpoint
from ..info import ModelInfo, info_from_config
from ..names import is_model_name
from ..problems import CheckpointError

REPO_ROOT = Path(__file__).resolve().parents[3]
MODELS_DIR = Path(os.environ.get("ATTENTION_LENS_MODELS", REPO_ROOT / "assets" / "models"))

_INFO_CACHE: dict[Path, tuple[int, ModelInfo]] = {}


@dataclass(frozen=True)
class FolderSource:
    """A folder whose subfolders are checkpoints, one model each."""

    name: str  # where models come from, e.g. "assets"
    directory: Path  # each model is a folder directly inside

    def names(self) -> list[str]:
        """Plain-named subfolders with a config.json, in name order."""
        if not self.directory.is_dir():
            return []
        return [p.name for p in sorted(self.directory.iterdir())
                if is_model_name(p.name) and (p / "config.json").is_file()]

    def folder(self, name: str) -> Path | None:
        return self.directory / name if name in self.names() else None

    def info(self, name: str) -> ModelInfo:
        """The model's config.json, read without its weights (remembered until the file changes)."""
        config_file = self.directory / name / "config.json"
        try:
            stamp = config_file.stat().st_mtime_ns
        except OSError as e:
            raise CheckpointError(f"cannot read {config_file} ({e.strerror or e})") from e
        cached = _INFO_CACHE.get(config_file)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        config = read_json(config_file)
        if not isinstance(config, dict):
            raise CheckpointError(f"{config_file} must hold a JSON object")
        info = info_from_config(name, config, self.name, self.directory / name)
        _INFO_CACHE[config_file] = (stamp, info)
        return info

    def tokenizer_file(self, name: str) -> Path:
        """The tokenizer.json model ``name`` reads: its own, or the one of the model its config names
        in ``tokenizer_from`` (a plain name of this folder's, never a path)."""
        own = self.directory / name / "tokenizer.json"
        if own.is_file():
            return own
        config_file = self.directory / name / "config.json"
        config = read_json(config_file)
        other = config.get("tokenizer_from") if isinstance(config, dict) else None
        if other is None:
            return own  # missing: the loader says so
        if not (isinstance(other, str) and is_model_name(other) and other != name and other in self.names()):
            raise CheckpointError(f"{config_file}: tokenizer_from must name another model of "
                                  f"{self.directory}, not {str(other)[:80]!r}")
        shared = self.directory / other / "tokenizer.json"
        if not shared.is_file() or shared.stat().st_size > MAX_JSON_BYTES:
            raise CheckpointError(f"{config_file}: {other} has no tokenizer.json to share")
        if file_digest(shared) != config.get("tokenizer_sha256"):
            raise CheckpointError(f"{config_file}: {other}'s tokenizer.json is not the one {name} was "
                                  "shipped with (its SHA-256 differs)")
        return shared

    def load(self, name: str) -> Bundle:
        return load_checkpoint(self.directory / name, name=name, tokenizer_file=self.tokenizer_file(name))


def tokenizer_of(folder: Path) -> Path:
    """The tokenizer.json a checkpoint folder reads: for a folder of the shipped models, the one its
    config shares (:meth:`FolderSource.tokenizer_file`); for any other, its own."""
    folder = Path(folder)
    source = shipped()
    inside = source.directory.is_dir() and folder.resolve().parent == source.directory.resolve()
    if folder.is_dir() and inside:
        return source.tokenizer_file(folder.name)
    return folder / "tokenizer.json"


def shipped() -> FolderSource:
    """The shipped models' folder (read at call time: tests point it elsewhere)."""
    return FolderSource("assets", MODELS_DIR)
