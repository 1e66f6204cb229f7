"""Training scrubber and architecture variants (viz.variants)."""

from __future__ import annotations

EN: dict[str, str] = {
    "scrub.axis_step": "training step",
    "scrub.hover_step": "step {step}",
    "scrub.loss": "training loss",
    "scrub.exact_match": "test exact match",
    "scrub.current": "this step",
    "scrub.timeline_title": "The training run, step {step} marked",
    "scrub.alignment": "weight on the right source letter",
    "scrub.alignment_title": "Cross-attention on the right source letter, per head, over training",
    "scrub.chance": "uniform attention",
    "variants.curves_title": "Training loss, step by step",
    "variants.kv_bytes": "bytes per generated token",
    "variants.kv_title": "Key/value cache per generated token (float32)",
}

ZH: dict[str, str] = {
    "scrub.axis_step": "训练步数",
    "scrub.hover_step": "第 {step} 步",
    "scrub.loss": "训练损失",
    "scrub.exact_match": "测试集完全匹配率",
    "scrub.current": "当前步",
    "scrub.timeline_title": "训练过程（标出第 {step} 步）",
    "scrub.alignment": "落在正确源字母上的权重",
    "scrub.alignment_title": "各注意力头落在正确源字母上的交叉注意力权重随训练的变化",
    "scrub.chance": "均匀注意力",
    "variants.curves_title": "逐步训练损失",
    "variants.kv_bytes": "每生成一个 token 的字节数",
    "variants.kv_title": "每生成一个 token 的键/值缓存（float32）",
}
