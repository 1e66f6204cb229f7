"""Attention patterns: one head's heatmap (viz.heatmap) and every head's grid (viz.grid)."""

from __future__ import annotations

EN: dict[str, str] = {
    # single head
    "heatmap.title": "Attention pattern (rows: query attends → columns: key)",
    # all heads
    "grid.title": "All heads: attention pattern of every layer × head",
    "grid.subtitle": (
        "{n_layers} layers × {n_heads} heads · rows: query → columns: key · click a tile to open it"
    ),
    "grid.pooled_max": "each cell = {block} × {block} positions, max (click a tile for every position)",
    "grid.pooled_mean": "each cell = {block} × {block} positions, mean (click a tile for every position)",
    "value.block_max": "max weight in block",
    "value.block_mean": "mean weight in block",
    "hover.query_key_ranges": "queries #{q0}–{q1} → keys #{k0}–{k1}",
    "hover.not_shown": "<i>not shown</i> (masked, or hidden by the filter)",
    "note.window": "queries {q0}–{q1} of {n_q} × keys {k0}–{k1} of {n_k}",
    "note.scores_in_window": "pre-softmax score in hover for windows of up to {cells} cells",
    "note.hidden_below": "weights below {threshold} hidden (empty)",
    "note.hidden_share": "per row only the strongest links holding {share} of its weight (rest empty)",
    "heatmap.pooled_max": "each cell = {block} × {block} positions, max of the block",
    "heatmap.pooled_mean": "each cell = {block} × {block} positions, mean of the block",
    "value.in_block_max": "{name}, max in block",
    "value.in_block_mean": "{name}, mean in block",
    "hover.query_key_blocks": "queries #{query} → keys #{key}",
}

ZH: dict[str, str] = {
    "heatmap.title": "注意力模式（行：查询 → 列：键）",
    "grid.title": "全部注意力头：每一层、每个头的注意力模式",
    "grid.subtitle": "{n_layers} 层 × 每层 {n_heads} 个头 · 行：查询 → 列：键 · 点击小图即可打开这个头",
    "grid.pooled_max": "每格 = {block} × {block} 个位置，取最大值（点击小图可看每个位置）",
    "grid.pooled_mean": "每格 = {block} × {block} 个位置，取平均值（点击小图可看每个位置）",
    "value.block_max": "块内最大权重",
    "value.block_mean": "块内平均权重",
    "hover.query_key_ranges": "查询 #{q0}–{q1} → 键 #{k0}–{k1}",
    "hover.not_shown": "<i>未显示</i>（被掩码遮住，或被筛选隐藏）",
    "note.window": "第 {q0}–{q1} 个查询（共 {n_q} 个）× 第 {k0}–{k1} 个键（共 {n_k} 个）",
    "note.scores_in_window": "窗口不超过 {cells} 个格子时，悬停提示才显示 softmax 之前的分数",
    "note.hidden_below": "低于 {threshold} 的权重已隐藏（留空）",
    "note.hidden_share": "每行只显示合计占该行权重 {share} 的最强连接（其余留空）",
    "heatmap.pooled_max": "每格 = {block} × {block} 个位置，取块内最大值",
    "heatmap.pooled_mean": "每格 = {block} × {block} 个位置，取块内平均值",
    "value.in_block_max": "{name}（块内最大值）",
    "value.in_block_mean": "{name}（块内平均值）",
    "hover.query_key_blocks": "查询 #{query} → 键 #{key}",
}
