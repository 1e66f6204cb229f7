"""Three families, one sentence (viz.families): one word's attention row as bars."""

from __future__ import annotations

EN: dict[str, str] = {
    "families.bar_title": "The word's attention row (mean over every layer and head)",
    "families.bar_word": "the word's own token(s)",
    "families.bar_other": "other tokens",
    "families.bar_hidden": "hidden by the mask (weight 0)",
    "families.axis_weight": "attention weight",
    "families.bar_window": "positions {first}–{last} of {n}",
}

ZH: dict[str, str] = {
    "families.bar_title": "这个词的注意力行（所有层和所有头的平均）",
    "families.bar_word": "这个词自己的 token",
    "families.bar_other": "其他 token",
    "families.bar_hidden": "被掩码遮住（权重为 0）",
    "families.axis_weight": "注意力权重",
    "families.bar_window": "第 {first}–{last} 个位置（共 {n} 个）",
}
