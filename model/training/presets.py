"""Named training recipes: the shipped models are made by `python -m model train --preset NAME`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..data.tasks import SyntheticTask, TranslationTask
from ..network.config import ModelConfig, TrainConfig


@dataclass(frozen=True)
class Preset:
    model: ModelConfig
    train: TrainConfig
    task: str  # "copy" / "reverse" / "sort" (synthetic) or "translation"
    description: str
    ship_dtype: str = "float32"  # dtype of the weights written into assets/
    label: str = ""  # short menu label of the shipped model ("" = its name)
    group: str = "didactic"  # model group in menus (see model.registry.GROUPS)
    order: int = 99  # position within its group
    # label/description in other interface languages: {"zh": {"label": ..., "description": ...}}
    i18n: tuple[tuple[str, str, str], ...] = ()


def _didactic(kind: str, steps: int, description: str, order: int, description_zh: str) -> Preset:
    task = SyntheticTask(kind)
    return Preset(
        ModelConfig(
            vocab_size=task.tokenizer.vocab_size, d_model=64, n_heads=4, d_ff=256, n_enc_layers=2,
            n_dec_layers=2, dropout=0.0, max_len=16,
        ),
        TrainConfig(lr=3e-3, warmup_steps=50, max_steps=steps, batch_tokens=2048, eval_every=200,
                    save_every=0, log_every=50),
        kind,
        description,
        label=f"{kind} · didactic",
        group="didactic",
        order=order,
        i18n=(("zh", "label", f"{kind} · 教学模型"), ("zh", "description", description_zh)),
    )


PRESETS: dict[str, Preset] = {
    "reverse": _didactic("reverse", 600, "reverses a lowercase word: cross-attention is an anti-diagonal", 1,
                         "把一个小写单词倒过来写：交叉注意力是一条反对角线"),
    "copy": _didactic("copy", 400, "copies a lowercase word: cross-attention is a diagonal", 2,
                      "原样复制一个小写单词：交叉注意力是一条对角线"),
    "sort": _didactic("sort", 900, "sorts the letters of a word: each output letter looks up its source", 3,
                      "把单词的字母排序：每个输出字母去源里找到它自己"),
    "default": Preset(
        ModelConfig(
            vocab_size=8000, d_model=256, n_heads=8, d_ff=1024, n_enc_layers=3, n_dec_layers=3,
            dropout=0.1, norm_first=True, norm="layernorm", activation="relu", pos_encoding="sinusoidal",
            max_len=64,
        ),
        TrainConfig(lr=1e-3, warmup_steps=800, max_steps=4000, batch_tokens=4096, max_batch_size=384,
                    eval_every=500, save_every=250, log_every=25, num_threads=2),
        "translation",
        "Chinese <-> English translation, trained on Tatoeba sentence pairs",
        ship_dtype="float16",
        label="default · 中文 ↔ English",
        group="main",
        order=0,
        i18n=(
            ("zh", "label", "default · 中文 ↔ English"),
            ("zh", "description", "中英互译，用 Tatoeba 句对训练"),
        ),
    ),
}


def make_task(preset: Preset, tokenizer_path: Path):
    """The preset's task; a translation tokenizer is trained (train split only) unless
    tokenizer_path exists."""
    if preset.task == "translation":
        from ..data.translation_tokenizer import TranslationTokenizer, build_default_tokenizer

        path = Path(tokenizer_path)
        if path.exists():
            return TranslationTask(TranslationTokenizer.load(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        return TranslationTask(build_default_tokenizer(path, preset.model.vocab_size))
    return SyntheticTask(preset.task)


def with_overrides(preset: Preset, steps: int | None = None, threads: int | None = None) -> Preset:
    train = preset.train
    if steps is not None:
        train = replace(train, max_steps=steps)
    if threads is not None:
        train = replace(train, num_threads=threads)
    return replace(preset, train=train)
