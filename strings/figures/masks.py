"""Masks (viz.masks): the mask itself, the recorded pattern of a padded batch, the causal mask off."""

from __future__ import annotations

EN: dict[str, str] = {
    "masks.mask_title": "Mask (rows: query → columns: key)",
    "masks.legend": "grey −∞ = masked (True) · white = open (False)",
    "masks.cell_masked": "masked (True): the score becomes −∞, the weight 0",
    "masks.cell_open": "open (False): the score is kept",
    "masks.padded_pattern_title": "Recorded attention pattern of the padded batch",
    "masks.row_sum": "Σ = {value}",
    "masks.hover_masked_weight": "masked: recorded weight {value}",
    "masks.future_title": "Decoder self-attention",
    "masks.row_future": "future {value}",
    "masks.note_future": "red frame = the future (keys after the query)",
    "masks.bar_title": "Probability of the model's own next token at each position",
    "masks.bar_with": "with the causal mask",
    "masks.bar_without": "without the causal mask (demonstration)",
    "masks.axis_next_token": "position: the next token (the model's own output)",
    "masks.pooled_mask": (
        "each cell = {block} × {block} positions: the darker, the larger the share of them masked"
    ),
    "masks.cell_share_masked": "{share} of the block masked",
    "masks.row_sum_range": "Σ = {low} … {high}",
}

ZH: dict[str, str] = {
    "masks.mask_title": "掩码（行：查询 → 列：键）",
    "masks.legend": "灰色 −∞ = 被掩码遮住（True）· 白色 = 可以关注（False）",
    "masks.cell_masked": "被掩码遮住（True）：分数变成 −∞，权重为 0",
    "masks.cell_open": "可以关注（False）：分数保持不变",
    "masks.padded_pattern_title": "填充后的批次中实际记录到的注意力模式",
    "masks.row_sum": "Σ = {value}",
    "masks.hover_masked_weight": "被掩码遮住：记录到的权重为 {value}",
    "masks.future_title": "解码器自注意力",
    "masks.row_future": "未来 {value}",
    "masks.note_future": "红框 = 未来（位于查询之后的键）",
    "masks.bar_title": "每个位置上，模型自己输出的下一个 token 的概率",
    "masks.bar_with": "有因果掩码",
    "masks.bar_without": "去掉因果掩码（演示）",
    "masks.axis_next_token": "位置：下一个 token（模型自己的输出）",
    "masks.pooled_mask": "每格 = {block} × {block} 个位置：颜色越深，其中被掩码遮住的比例越大",
    "masks.cell_share_masked": "块内 {share} 被掩码遮住",
    "masks.row_sum_range": "Σ = {low} … {high}",
}
