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
    task: str  # "copy" / "reverse" / "sort" (synthetic), "translation", "induction" or "sentences"
    description: str
    ship_dtype: str = "float32"  # dtype of the weights written into assets/
    label: str = ""  # short menu label of the shipped model ("" = its name)
    group: str = "didactic"  # model group in menus (see model.store.registry.GROUPS)
    order: int = 99  # position within its group
    # label/description in other interface languages: {"zh": {"label": ..., "description": ...}}
    i18n: tuple[tuple[str, str, str], ...] = ()
    # Pitfall models: the one line of code the fault changes, as the page shows it ("" = no fault).
    fault_line: str = ""
    listed: bool = True  # False = the model picker hides it (the pitfall models live on their own page)
    # Weight snapshots saved during training, evenly spaced from step 0 to the last step
    # (model/training/snapshots.py); 0 = none. Shipped as float16 in the model's snapshots/ folder.
    snapshots: int = 0


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


def _language_model(pos_encoding_override: str = "learned", **sizes) -> ModelConfig:
    """A decoder-only network of GPT-2's kind: learned positions (unless overridden), Pre-LN, GELU,
    tied output."""
    return ModelConfig(n_enc_layers=0, decoder_only=True, norm_first=True, norm="layernorm",
                       activation="gelu_tanh", pos_encoding=pos_encoding_override, **sizes)


PRESETS: dict[str, Preset] = {
    "reverse": _didactic("reverse", 600, "reverses a lowercase word: cross-attention is an anti-diagonal", 1,
                         "把一个小写单词倒过来写：交叉注意力是一条反对角线"),
    "copy": _didactic("copy", 400, "copies a lowercase word: cross-attention is a diagonal", 2,
                      "原样复制一个小写单词：交叉注意力是一条对角线"),
    "sort": _didactic("sort", 900, "sorts the letters of a word: each output letter looks up its source", 3,
                      "把单词的字母排序：每个输出字母去源里找到它自己"),
    "induction": Preset(
        # RoPE: a head can find "the position before me" from relative positions alone, which a
        # learned table must first discover.
        _language_model(vocab_size=SyntheticTask("copy").tokenizer.vocab_size, d_model=64, n_heads=4,
                        d_ff=256, n_dec_layers=2, dropout=0.0, max_len=48, pos_encoding_override="rope"),
        TrainConfig(lr=1e-3, warmup_steps=200, max_steps=6000, batch_tokens=4096, eval_every=500,
                    save_every=0, log_every=50, label_smoothing=0.0),
        "induction",
        "a 2-layer decoder on random letters written twice: a previous-token head, then an induction head",
        label="induction · didactic",
        group="didactic",
        order=4,
        i18n=(("zh", "label", "induction · 教学模型"),
              ("zh", "description",
               "两层解码器，在重复两遍的随机字母上训练：先是“前一个 token”头，再是归纳头")),
    ),
    "tiny-gpt": Preset(
        _language_model(vocab_size=8000, d_model=256, n_heads=4, d_ff=1024, n_dec_layers=4, dropout=0.1,
                        max_len=64),
        TrainConfig(lr=1e-3, warmup_steps=500, max_steps=6000, batch_tokens=4096, max_batch_size=384,
                    eval_every=500, save_every=250, log_every=25, num_threads=2, label_smoothing=0.0),
        "sentences",
        "a tiny GPT trained on Tatoeba's Chinese and English sentences: it continues what you type",
        ship_dtype="float16",
        label="tiny-gpt · 中文 / English",
        group="didactic",
        order=5,
        i18n=(("zh", "label", "tiny-gpt · 中文 / English"),
              ("zh", "description", "用 Tatoeba 的中英文句子训练的小型 GPT：它接着你输入的内容往下写")),
    ),
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


#: The pitfall lab: the reverse recipe (same model size, steps and seed) with ONE fault each.
#: name -> (model changes, train changes, the code line, label, description, label zh, description zh)
_PITFALLS: dict[str, tuple[dict, dict, str, str, str, str, str]] = {
    "correct": (
        {}, {}, "",
        "correct (reference)", "the reverse model trained exactly as it should be, for comparison",
        "正确（对照）", "按正确方式训练的单词倒序模型，作为对照",
    ),
    "lr-postln-nowarmup": (
        {"norm_first": False}, {"lr": 3e-2, "warmup_steps": 0},
        "lr = 3e-2; warmup_steps = 0; y = norm(x + f(x))  # Post-LN, 10x learning rate, no warmup",
        "lr too high · Post-LN · no warmup",
        "10x the learning rate from the very first step, on a Post-LN network",
        "学习率过高 · Post-LN · 无预热",
        "Post-LN 网络从第一步起就用十倍的学习率，没有预热",
    ),
    "no-scaling": (
        {"scale_scores": False}, {},
        "scores = q @ k.transpose(-2, -1)  # no / sqrt(d_head)",
        "no 1/√d_head scaling", "attention scores go into the softmax without dividing by √d_head",
        "不做 1/√d_head 缩放", "注意力分数不除以 √d_head 就直接送进 softmax",
    ),
    "no-padding-mask": (
        {"mask_padding": False}, {},
        "mask = causal  # no '| key_padding'; and loss over every target, padding included",
        "no padding mask", "attention may look at padding, and the loss also counts padding targets",
        "没有填充掩码", "注意力可以看到填充位置，损失也把填充目标算了进去",
    ),
    "no-clipping": (
        {}, {"grad_clip": None, "warmup_steps": 10},
        "# torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # no gradient clipping",
        "no gradient clipping", "no gradient clipping, and a short warmup (10 steps)",
        "没有梯度裁剪", "不做梯度裁剪，预热也很短（10 步）",
    ),
    "no-positional-encoding": (
        {"pos_encoding": "none"}, {},
        "x = embed(ids) * sqrt(d_model)  # no + positional_encoding",
        "no positional encoding", "token embeddings only: nothing tells the model where a letter is",
        "没有位置编码", "只有词嵌入：模型无从得知每个字母在哪个位置",
    ),
    "one-head": (
        {"n_heads": 1}, {},
        "n_heads = 1  # one attention head of width d_model instead of 4",
        "one attention head", "a single attention head of width 64 in every layer instead of four of 16",
        "只有一个注意力头", "每层只有一个宽 64 的注意力头，而不是四个宽 16 的头",
    ),
    "no-residual": (
        {"residual": False}, {},
        "y = f(norm(x))  # not x + f(norm(x)): no residual connection",
        "no residual connections", "each sublayer's output replaces the stream instead of being added to it",
        "没有残差连接", "每个子层的输出直接取代原来的表示，而不是加到上面",
    ),
    "no-causal-mask": (
        {"causal_in_training": False}, {},
        "mask = None  # decoder self-attention without its causal mask in training",
        "no causal mask in training",
        "in training the decoder sees the very token it must predict; at inference it cannot",
        "训练时没有因果掩码",
        "训练时解码器能看到它要预测的那个词元；推理时却看不到",
    ),
}


def _pitfall(name: str, order: int) -> Preset:
    model_changes, train_changes, line, label, description, label_zh, description_zh = _PITFALLS[name]
    base = PRESETS["reverse"]
    return replace(
        base,
        model=replace(base.model, **model_changes),
        train=replace(base.train, **train_changes),
        description=description,
        ship_dtype="float16",
        label=f"pitfall · {label}",
        group="pitfall",
        order=order,
        i18n=(("zh", "label", f"陷阱 · {label_zh}"), ("zh", "description", description_zh)),
        fault_line=line,
        listed=False,
    )


#: Preset names of the pitfall lab, the correct reference first (`python -m model train-pitfalls`).
PITFALLS = [f"pitfall-{name}" for name in _PITFALLS]
PRESETS.update({f"pitfall-{name}": _pitfall(name, i) for i, name in enumerate(_PITFALLS)})


#: Architecture variants: the reverse recipe (same size, steps, seed and schedule as the pitfall lab's
#: correct model) with ONE architectural change each. name -> (model changes, label, description, label
#: zh, description zh). "base" changes nothing: it is the reference, and it is trained with snapshots.
_VARIANTS: dict[str, tuple[dict, str, str, str, str]] = {
    "base": (
        {}, "base (Pre-LN · sinusoidal · LayerNorm · MHA)",
        "the reverse model as the variants' reference, with weight snapshots saved during training",
        "基准（Pre-LN · 正弦位置编码 · LayerNorm · MHA）",
        "单词倒序模型，作为各变体的对照；训练过程中保存了权重快照",
    ),
    "post-ln": (
        {"norm_first": False}, "Post-LN", "the norm after the residual addition, as in the original paper",
        "Post-LN", "归一化放在残差相加之后，同原论文",
    ),
    "learned-pe": (
        {"pos_encoding": "learned"}, "learned positions", "a learned position embedding instead of sinusoids",
        "可学习位置编码", "用可学习的位置嵌入代替正弦位置编码",
    ),
    "rope": (
        {"pos_encoding": "rope"}, "rotary positions (RoPE)", "queries and keys rotated by position (RoPE)",
        "旋转位置编码（RoPE）", "按位置旋转查询和键（RoPE）",
    ),
    "rmsnorm": (
        {"norm": "rmsnorm"}, "RMSNorm", "RMSNorm (no mean-centring, no bias) instead of LayerNorm",
        "RMSNorm", "用 RMSNorm（不减均值、没有偏置）代替 LayerNorm",
    ),
    "gqa": (
        {"n_kv_heads": 2}, "GQA (2 key/value heads)",
        "grouped-query attention: 4 query heads share 2 key/value heads",
        "GQA（2 个键/值头）", "分组查询注意力：4 个查询头共用 2 个键/值头",
    ),
    "mqa": (
        {"n_kv_heads": 1}, "MQA (1 key/value head)",
        "multi-query attention: 4 query heads share 1 key/value head",
        "MQA（1 个键/值头）", "多查询注意力：4 个查询头共用 1 个键/值头",
    ),
}

#: Weight snapshots of the base variant: 10 intervals, so 11 points from step 0 to the last step.
BASE_SNAPSHOTS = 10


def _variant(name: str, order: int) -> Preset:
    model_changes, label, description, label_zh, description_zh = _VARIANTS[name]
    base = PRESETS["reverse"]
    return replace(
        base,
        model=replace(base.model, **model_changes),
        # A checkpoint every 100 steps lets a stopped run resume; it changes nothing in the training.
        train=replace(base.train, save_every=100),
        description=description,
        ship_dtype="float16",
        label=f"variant · {label}",
        group="variant",
        order=order,
        i18n=(("zh", "label", f"变体 · {label_zh}"), ("zh", "description", description_zh)),
        listed=False,
        snapshots=BASE_SNAPSHOTS if name == "base" else 0,
    )


#: Preset names of the architecture variants, the base first (`python -m model train-variants`).
VARIANTS = [f"variant-{name}" for name in _VARIANTS]
PRESETS.update({f"variant-{name}": _variant(name, i) for i, name in enumerate(_VARIANTS)})
#: The model whose snapshots the training scrubber shows (`python -m model train --preset variant-base`).
SNAPSHOT_MODEL = "variant-base"
#: The variants side by side, one axis each: the models compared (base first). The no-positional-encoding
#: model is the pitfall lab's (the same recipe with pos_encoding="none"), shared rather than shipped twice.
VARIANT_AXES: dict[str, tuple[str, ...]] = {
    "norm_place": ("variant-base", "variant-post-ln"),
    "position": ("variant-base", "variant-learned-pe", "variant-rope", "pitfall-no-positional-encoding"),
    "norm": ("variant-base", "variant-rmsnorm"),
    "attention": ("variant-base", "variant-gqa", "variant-mqa"),
}


def make_task(preset: Preset, tokenizer_path: Path):
    """The preset's task; a translation tokenizer is trained (train split only) unless
    tokenizer_path exists."""
    if preset.task in ("translation", "sentences"):
        from ..data.lm_training import SentencesTask
        from ..data.translation_tokenizer import TranslationTokenizer, build_default_tokenizer

        task = TranslationTask if preset.task == "translation" else SentencesTask
        path = Path(tokenizer_path)
        if path.exists():
            return task(TranslationTokenizer.load(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        return task(build_default_tokenizer(path, preset.model.vocab_size))
    if preset.task == "induction":
        from ..data.lm_training import InductionTask

        return InductionTask()
    return SyntheticTask(preset.task)


def with_overrides(
    preset: Preset, steps: int | None = None, threads: int | None = None, lr: float | None = None,
    warmup: int | None = None,
) -> Preset:
    train = preset.train
    if steps is not None:
        train = replace(train, max_steps=steps)
    if threads is not None:
        train = replace(train, num_threads=threads)
    if lr is not None:
        train = replace(train, lr=lr)
    if warmup is not None:
        train = replace(train, warmup_steps=warmup)
    return replace(preset, train=train)
