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
    "single.hide": "Hide weak links",
    "single.hide.off": "show all",
    "single.hide.below": "below a weight",
    "single.hide.share": "keep the strongest per row",
    "single.hide_help": "Weak links clutter the heatmap of a long sentence. **Below a weight** hides every weight "
    "under the chosen value. **Keep the strongest per row** keeps, for each query (row), its strongest links until "
    "together they hold the chosen share of the row's weight (a row sums to 1), and hides the rest. Hidden cells "
    "are empty (white); masked cells stay grey.",
    "single.min": "Hide weights below",
    "single.min_help": "An attention weight lies between 0 and 1; the weights of a row sum to 1.",
    "single.share": "Keep per row the strongest links holding",
    "single.share_help": "At 90%, each row keeps the fewest strongest links that together hold at least 90% of "
    "its weight.",
    "single.note_below": "Weights below {weight} are hidden (empty cells).",
    "single.note_share": "Each row shows only its strongest links holding {share} of its weight; the rest are "
    "hidden (empty cells).",
    "single.window_q": "Queries (rows) shown, of {n}",
    "single.window_k": "Keys (columns) shown, of {n}",
    "single.note_window": "Only a window is shown: queries {q0}–{q1} and keys {k0}–{k1} of the whole {n_q} × {n_k} "
    "pattern. Move the sliders to see the rest.",
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
    "single.hide": "隐藏较弱的连接",
    "single.hide.off": "全部显示",
    "single.hide.below": "低于某个权重",
    "single.hide.share": "每行只留最强的",
    "single.hide_help": "句子一长，热力图就被大量较弱的连接挤满。**低于某个权重**：隐藏所有小于所选值的权重。"
    "**每行只留最强的**：对每个查询（一行），从最强的连接开始保留，直到它们合计达到该行权重（每行之和为 1）"
    "的所选比例，其余的隐藏。被隐藏的格子留空（白色），被掩码遮住的格子仍是灰色。",
    "single.min": "隐藏低于此值的权重",
    "single.min_help": "注意力权重在 0 到 1 之间，每行的权重之和为 1。",
    "single.share": "每行保留的最强连接合计占该行权重的",
    "single.share_help": "例如 90%：每行保留尽量少的几个最强连接，使它们合计至少占该行权重的 90%。",
    "single.note_below": "低于 {weight} 的权重已隐藏（空白格子）。",
    "single.note_share": "每行只显示合计占该行权重 {share} 的最强连接，其余已隐藏（空白格子）。",
    "single.window_q": "显示哪些查询（行），共 {n} 个",
    "single.window_k": "显示哪些键（列），共 {n} 个",
    "single.note_window": "这里只显示一个窗口：整个 {n_q} × {n_k} 的注意力模式中第 {q0}–{q1} 个查询、"
    "第 {k0}–{k1} 个键。拖动滑块可以查看其余部分。",
}
