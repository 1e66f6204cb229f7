"""Single head page."""

EN = {
    "single.intro": "Attention lets every token (a **query**, one row) collect information from other tokens "
    "(the **keys**, the columns). Each row holds the weights that query gives to every key; a row always "
    "sums to 1. Dark cells are where this head *looks*. Pick the attention kind, layer and head in the "
    "sidebar.",
    "single.scale": "Scale colours to this head's strongest weight",
    "single.scale_help": "Off: a fixed 0–1 scale, so heads can be compared. On: the darkest colour is this "
    "head's largest weight, which shows structure in heads whose weights are all small.",
    "single.figure_title": "Attention of layer {layer} · head {head}",
    "single.note_axes": "Rows: **queries** (the token doing the looking). Columns: **keys** (the tokens looked "
    "at). Hover a cell for its weight and its pre-softmax score (the scaled dot product q·k/√d_head).",
    "single.note_masked": "Grey cells are **masked**: in the decoder a token may not look at tokens that come "
    "after it (they have not been generated yet), so their weight is exactly 0.",
    "single.note_cross": "Cross-attention: output tokens (rows) read the encoder's source tokens (columns).",
    "single.numbers": "The numbers behind the picture",
    "single.numbers_caption": "Attention weights (rows sum to 1; empty = masked).",
}

ZH = {
    "single.intro": "注意力让每个 token 从其他 token 收集信息：发出“看”的 token 叫**查询**（query），占一行；"
    "被看的 token 叫**键**（key），占一列。每一行是这个查询分给各个键的权重，一行的权重之和总是 1。"
    "颜色越深，说明这个注意力头越“看”向那里。在侧边栏选择注意力类型、层和头。",
    "single.scale": "按本注意力头的最大权重缩放颜色",
    "single.scale_help": "关闭：固定的 0–1 色标，便于比较不同的头。打开：最深的颜色对应这个头的最大权重，"
    "权重普遍很小的头也能看出结构。",
    "single.figure_title": "第 {layer} 层 · 头 {head} 的注意力",
    "single.note_axes": "行：**查询**（query），即发出“看”的 token。列：**键**（key），即被看的 token。"
    "鼠标悬停在格子上，可看到权重和 softmax 之前的分数（缩放点积 q·k/√d_head）。",
    "single.note_masked": "灰色格子被**掩码**（mask）遮住：在解码器里，一个 token 不能看它后面的 token"
    "（它们还没有生成），所以权重恰好是 0。",
    "single.note_cross": "交叉注意力：输出 token（行）读取编码器给出的源 token（列）。",
    "single.numbers": "图背后的数字",
    "single.numbers_caption": "注意力权重（每行之和为 1；空白 = 被掩码遮住）。",
}
