"""The talk deck's and the exports' figure words (viz.deck, viz.export, python -m viz deck)."""

from __future__ import annotations

EN: dict[str, str] = {
    # residual stream norms (slide 4)
    "deck.resid.title": "Residual stream: mean ‖x‖ per position, through the layers",
    "deck.resid.pre": "Pre-LN: the norm sits inside each branch, the stream itself grows; one final norm",
    "deck.resid.post": "Post-LN: the norm sits after each residual add, so the stream is re-normalised",
    "deck.resid.axis": "point of the residual stream",
    "deck.resid.value": "mean ‖x‖ over positions",
    "deck.resid.band": "{stack}: min–max over positions",
    "deck.resid.encoder": "encoder",
    "deck.resid.decoder": "decoder",
    "deck.resid.point.in": "embedding + position",
    "deck.resid.point.mid": "L{layer} + attention",
    "deck.resid.point.mid2": "L{layer} + cross-attention",
    "deck.resid.point.post": "L{layer} + FFN",
    "deck.resid.point.out": "final output",
    # one query (slide 1)
    "deck.query.title": "Query {query}: softmax(q·k / √{d}) over the keys → weights for the sum of values",
    # the exported deck (python -m viz deck)
    "deck.html.title": "Attention Lens: the talk, six slides",
    "deck.html.sentence": "Sentence: {text}",
    "deck.html.hint": "← → or PageUp / PageDown: previous / next slide",
    "deck.slide.1": "1 · Attention in one sentence",
    "deck.slide.2": "2 · Multi-head split",
    "deck.slide.3": "3 · Why positional encoding",
    "deck.slide.4": "4 · Residual + LayerNorm",
    "deck.slide.5": "5 · The whole architecture",
    "deck.slide.6": "6 · A live case",
    "deck.slide.3.offline": "Token embedding vs positional encoding, per position (the word-order test "
    "needs the model: open the app)",
    # vector heatmap (one rectangle per cell)
    "export.vector.subtitle": "one vector rectangle per cell",
}

ZH: dict[str, str] = {
    "deck.resid.title": "残差连接上的数据流（残差流）：每个位置的平均 ‖x‖，逐层变化",
    "deck.resid.pre": "Pre-LN：归一化在每个分支内部，残差流本身不断变大；最后有一次归一化",
    "deck.resid.post": "Post-LN：归一化在每次残差连接相加之后，所以数据流被重新归一化",
    "deck.resid.axis": "残差连接数据流上的位置点",
    "deck.resid.value": "各位置 ‖x‖ 的平均值",
    "deck.resid.band": "{stack}：各位置的最小值–最大值",
    "deck.resid.encoder": "编码器",
    "deck.resid.decoder": "解码器",
    "deck.resid.point.in": "嵌入 + 位置",
    "deck.resid.point.mid": "第{layer}层 + 注意力",
    "deck.resid.point.mid2": "第{layer}层 + 交叉注意力",
    "deck.resid.point.post": "第{layer}层 + 前馈网络",
    "deck.resid.point.out": "最终输出",
    "deck.query.title": "查询 {query}：对各个键做 softmax(q·k / √{d}) → 给值向量加权求和的权重",
    "deck.html.title": "Attention Lens：讲解注意力的六张幻灯片",
    "deck.html.sentence": "句子：{text}",
    "deck.html.hint": "← → 或上下翻页键（PageUp / PageDown）：上一张 / 下一张幻灯片",
    "deck.slide.1": "1 · 一句话说清注意力",
    "deck.slide.2": "2 · 多头拆分",
    "deck.slide.3": "3 · 为什么需要位置编码",
    "deck.slide.4": "4 · 残差连接 + 层归一化",
    "deck.slide.5": "5 · 整个架构",
    "deck.slide.6": "6 · 一个现场实例",
    "deck.slide.3.offline": "每个位置的 token 嵌入与位置编码（打乱词序的测试需要模型：请在应用中打开）",
    "export.vector.subtitle": "每个格子一个矢量矩形",
}
