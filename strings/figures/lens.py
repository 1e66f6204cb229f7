"""Logit lens (viz.lens): the layer x position grid and one position through the layers."""

from __future__ import annotations

EN: dict[str, str] = {
    "lens.row_embed": "emb",
    "lens.axis_layer": "layer (emb = embeddings)",
    "lens.axis_position": "position: token read",
    "lens.axis_rank": "rank (1 = top)",
    "lens.axis_entropy": "entropy (nats)",
    "lens.hover_cell": "layer <b>{row}</b> · position {pos} (reads <b>{token}</b>)",
    "lens.hover_plain": "layer {row} · position {pos}",
    "lens.hover_final": "final choice <b>{token}</b>: rank {rank}, p = {prob}",
    "lens.hover_entropy": "entropy {value} nats",
    "lens.hover_click": "click to choose position {pos}",
    "lens.hover_row": "layer {row} · top token <b>{token}</b>",
    "lens.series_prob": "p({token})",
    "lens.series_rank": "rank of {token}",
    "lens.series_entropy": "entropy",
}

ZH: dict[str, str] = {
    "lens.row_embed": "嵌入",
    "lens.axis_layer": "层（嵌入 = 嵌入层输出）",
    "lens.axis_position": "位置：读入的 token",
    "lens.axis_rank": "排名（1 = 最高）",
    "lens.axis_entropy": "熵（nats）",
    "lens.hover_cell": "第 <b>{row}</b> 层 · 位置 {pos}（读入 <b>{token}</b>）",
    "lens.hover_plain": "第 {row} 层 · 位置 {pos}",
    "lens.hover_final": "最终选择 <b>{token}</b>：排名 {rank}，p = {prob}",
    "lens.hover_entropy": "熵 {value} nats",
    "lens.hover_click": "点击选择位置 {pos}",
    "lens.hover_row": "第 {row} 层 · 最可能的 token <b>{token}</b>",
    "lens.series_prob": "p（{token}）",
    "lens.series_rank": "{token} 的排名",
    "lens.series_entropy": "熵",
}
