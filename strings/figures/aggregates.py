"""Aggregates over heads and layers (viz.aggregates): mean over heads, attention rollout."""

from __future__ import annotations

EN: dict[str, str] = {
    "mean.title": "Layer {layer}: mean over heads — not a head of the model",
    "rollout.title": "Attention rollout ({how}) — an estimate of flow through residual paths",
    "rollout.with_residual": "with residual",
    "rollout.without_residual": "without residual",
    "rollout.subtitle": "product of head-averaged layers; not a head of the model",
}

ZH: dict[str, str] = {
    "mean.title": "第 {layer} 层：各个头的平均 —— 不是模型里的某个头",
    "rollout.title": "注意力展开（{how}）—— 估计信息如何沿残差连接逐层流动",
    "rollout.with_residual": "计入残差连接",
    "rollout.without_residual": "不计残差连接",
    "rollout.subtitle": "各层按头平均后逐层相乘；不是模型里的某个头",
}
