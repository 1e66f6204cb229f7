"""Representation projector (viz.projector): one layer's word vectors in 2-D and the sense ratio by layer."""

from __future__ import annotations

EN: dict[str, str] = {
    "projector.fig.no_label": "(no label)",
    "projector.fig.sentences": "sentences",
    "projector.fig.sentence_number": "sentence",
    "projector.fig.legend": "sense",
    "projector.fig.hover": "sentence {number} · <b>{sense}</b><br>{sentence}<br>word tokens: {pieces}",
    "projector.fig.hover_xy": "PC1 {x} · PC2 {y}",
    "projector.fig.axis_pc": "principal component {k} ({share} of the variance)",
    "projector.fig.series_ratio": "between ÷ within",
    "projector.fig.series_between": "between senses",
    "projector.fig.series_within": "within a sense",
    "projector.fig.chosen": "layer shown above",
    "projector.fig.hover_row": "layer {row}",
    "projector.fig.axis_ratio": "ratio",
    "projector.fig.axis_distance": "mean cosine distance",
    "projector.fig.axis_layer": "layer (emb = embeddings)",
}

ZH: dict[str, str] = {
    "projector.fig.no_label": "（无标签）",
    "projector.fig.sentences": "句子",
    "projector.fig.sentence_number": "句子",
    "projector.fig.legend": "词义",
    "projector.fig.hover": "第 {number} 句 · <b>{sense}</b><br>{sentence}<br>这个词的 token：{pieces}",
    "projector.fig.hover_xy": "主成分 1：{x} · 主成分 2：{y}",
    "projector.fig.axis_pc": "第 {k} 主成分（占方差的 {share}）",
    "projector.fig.series_ratio": "词义之间 ÷ 词义之内",
    "projector.fig.series_between": "不同词义之间",
    "projector.fig.series_within": "同一词义之内",
    "projector.fig.chosen": "上图所示的层",
    "projector.fig.hover_row": "层：{row}",
    "projector.fig.axis_ratio": "比值",
    "projector.fig.axis_distance": "平均余弦距离",
    "projector.fig.axis_layer": "层（嵌入 = 嵌入层输出）",
}
