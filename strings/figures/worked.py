"""Attention computed by hand (viz.worked): the steps table, q·k per dimension, the weights."""

from __future__ import annotations

EN: dict[str, str] = {
    "worked.col.dot": "q·k (raw score)",
    "worked.col.scaled": "÷ √{d}",
    "worked.col.scaled_by": "÷ {s}",
    "worked.col.masked": "after the mask",
    "worked.col.exp": "exp(score − max)",
    "worked.col.weight": "weight",
    "worked.col.bias": "+ position bias",
    "worked.col.masked_biased": "score + bias, after the mask",
    "worked.row.z": "z = sum",
    "worked.masked": "(masked)",
    "worked.axis_product": "q_i · k_i",
    "worked.hover_product": "dimension {dim}: q = {q}, k = {k}<br>q · k = {product}",
    "worked.products_title": "q of query <b>{query}</b> times k of key <b>{key}</b>, dimension by dimension",
    "worked.products_sum": "the bars add up to the dot product q · k = {total}",
    "worked.weights_title": "Attention weights after the softmax (grey = masked)",
}

ZH: dict[str, str] = {
    "worked.col.dot": "点积 q·k（原始分数）",
    "worked.col.scaled": "÷ √{d}",
    "worked.col.scaled_by": "÷ {s}",
    "worked.col.masked": "掩码之后",
    "worked.col.exp": "e^(分数 − 最大值)",
    "worked.col.weight": "权重",
    "worked.col.bias": "+ 位置偏置",
    "worked.col.masked_biased": "分数 + 偏置，掩码之后",
    "worked.row.z": "z = 求和",
    "worked.masked": "（被掩码遮住）",
    "worked.axis_product": "q_i · k_i",
    "worked.hover_product": "维度 {dim}：q = {q}，k = {k}<br>q · k = {product}",
    "worked.products_title": "查询 <b>{query}</b> 的 q 与键 <b>{key}</b> 的 k 逐维相乘",
    "worked.products_sum": "所有柱子加起来就是点积 q · k = {total}",
    "worked.weights_title": "softmax 之后的注意力权重（灰色 = 被掩码遮住）",
}
