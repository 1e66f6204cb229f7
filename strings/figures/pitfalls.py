"""Pitfall lab (viz.pitfalls): the bug's effect on heads, scores and training curves."""

from __future__ import annotations

EN: dict[str, str] = {
    "pitfalls.head": "head {head}",
    "pitfalls.axis_head": "attention head",
    "pitfalls.entropy": "mean entropy (nats)",
    "pitfalls.entropy_title": "Attention entropy per head, with and without the scaling",
    "pitfalls.with_scaling": "with 1/√d_head (intact)",
    "pitfalls.without_scaling": "without 1/√d_head (fault)",
    "pitfalls.cosine": "cosine similarity",
    "pitfalls.cosine_title": "Same token, original vs shuffled sentence: encoder output",
    "pitfalls.axis_token": "source token (original position)",
    "pitfalls.with_pe": "with positional encoding (intact)",
    "pitfalls.without_pe": "without positional encoding (fault)",
    "pitfalls.trained.correct": "correct model",
    "pitfalls.trained.broken": "trained with the bug",
    "pitfalls.trained.loss": "training loss",
    "pitfalls.trained.grad_norm": "gradient norm (before clipping)",
    "pitfalls.trained.axis_step": "optimiser step",
    "pitfalls.trained.hover_step": "step {step}",
    "pitfalls.trained.curves_title": "Training, step by step: the correct model and the one with the bug",
}

ZH: dict[str, str] = {
    "pitfalls.head": "头 {head}",
    "pitfalls.axis_head": "注意力头",
    "pitfalls.entropy": "平均熵（nats）",
    "pitfalls.entropy_title": "每个注意力头的注意力熵：有缩放与没有缩放",
    "pitfalls.with_scaling": "除以 √d_head（正常）",
    "pitfalls.without_scaling": "不除以 √d_head（故障）",
    "pitfalls.cosine": "余弦相似度",
    "pitfalls.cosine_title": "同一个 token 在原句与打乱句中的编码器输出",
    "pitfalls.axis_token": "源 token（原句中的位置）",
    "pitfalls.with_pe": "加位置编码（正常）",
    "pitfalls.without_pe": "不加位置编码（故障）",
    "pitfalls.trained.correct": "正确的模型",
    "pitfalls.trained.broken": "带着错误训练的模型",
    "pitfalls.trained.loss": "训练损失",
    "pitfalls.trained.grad_norm": "梯度范数（裁剪之前）",
    "pitfalls.trained.axis_step": "优化步数",
    "pitfalls.trained.hover_step": "第 {step} 步",
    "pitfalls.trained.curves_title": "逐步训练过程：正确的模型与带着错误的模型",
}
