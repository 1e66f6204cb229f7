"""Figure words of the information-flow page and of the weight × ‖value‖ option."""

EN = {
    "flow.by_weight": "by weight",
    "flow.by_norm": "by weight × ‖value‖",
    "flow.mean_share": "mean share over the query rows",
    "flow.head": "head {head}",
    "flow.edge.mlp": "MLP",
    "flow.edge.residual": "residual",
    "flow.hover.attention": "layer {layer} · head {head} (strongest): {dst} reads {src}<br>importance {importance}",
    "flow.hover.attention_residual": "layer {layer}: {dst} keeps its residual past attention<br>importance {importance}",
    "flow.hover.mlp": "layer {layer}: the MLP at {dst}<br>importance {importance}",
    "flow.hover.mlp_residual": "layer {layer}: {dst} keeps its residual past the MLP<br>importance {importance}",
    "flow.positions": "position",
    "flow.layers": "layer",
    "flow.embeddings": "embeddings",
    "flow.importance": "importance in the graph",
    "flow.effect": "change of log p(prediction) when knocked out",
    "flow.hover.cross_attention": "layer {layer} · cross-attention head {head} (strongest): {dst} reads the "
    "source's {src}<br>importance {importance}",
    "flow.hover.cross_residual": "layer {layer}: {dst} keeps its residual past cross-attention<br>importance "
    "{importance}",
    "flow.encoder": "encoder",
    "flow.side.source": "source (encoder)",
    "flow.side.target": "translation (decoder)",
}

ZH = {
    "flow.by_weight": "按权重",
    "flow.by_norm": "按权重 × ‖值‖",
    "flow.mean_share": "在各查询行上的平均份额",
    "flow.head": "第 {head} 个头",
    "flow.edge.mlp": "前馈网络",
    "flow.edge.residual": "残差连接",
    "flow.hover.attention": "第 {layer} 层 · 第 {head} 个头（最强）：{dst} 读取 {src}<br>重要性 {importance}",
    "flow.hover.attention_residual": "第 {layer} 层：{dst} 经注意力旁的残差连接保留自身<br>重要性 {importance}",
    "flow.hover.mlp": "第 {layer} 层：{dst} 处的前馈网络<br>重要性 {importance}",
    "flow.hover.mlp_residual": "第 {layer} 层：{dst} 经前馈网络旁的残差连接保留自身<br>重要性 {importance}",
    "flow.positions": "位置",
    "flow.layers": "层",
    "flow.embeddings": "嵌入",
    "flow.importance": "在图中的重要性",
    "flow.effect": "敲除后 log p(预测) 的变化",
    "flow.hover.cross_attention": "第 {layer} 层 · 交叉注意力的第 {head} 个注意力头（最强）：{dst} 读取源句的 {src}<br>"
    "重要性 {importance}",
    "flow.hover.cross_residual": "第 {layer} 层：{dst} 经交叉注意力旁的残差连接保留自身<br>重要性 {importance}",
    "flow.encoder": "编码器",
    "flow.side.source": "源句（编码器）",
    "flow.side.target": "译文（解码器）",
}
