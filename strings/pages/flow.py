"""The information-flow page, and the weight × ‖value‖ option of the attention pages."""

EN = {
    # the attention pages' option (single head, all heads, token focus)
    "flow.weighting": "Show",
    "flow.weighting.weight": "weight",
    "flow.weighting.norm": "weight × ‖value‖",
    "flow.weighting_help": "**weight**: the softmax's attention weights. **weight × ‖value‖**: each weight times "
    "the size of what that key actually sends through this head, each row rescaled to sum to 1.",
    "flow.no_value_norms": "This analysis holds no value norms (it was saved before they were recorded): shown "
    "by weight.",
    "flow.norm_title": "What weight × ‖value‖ shows",
    "flow.norm_explain": "A weight α says how much of a key's value vector a query takes, not how large that "
    "vector is. What head h adds to the query's residual stream from key j is α · f(x_j), with "
    "f(x) = (x W_V + b_V) W_O restricted to the head; its size is α · ‖f(x_j)‖ (Kobayashi et al. 2020, "
    "\"Attention is not only a weight\"). A head can put 0.9 on a token whose transformed value vector is "
    "tiny — the first token of a language model, a *sink* many heads park their weight on — and 0.05 on one "
    "that changes the output. Here each weight is multiplied by ‖f(x_j)‖ and each row divided by its sum, so "
    "the colours read on the same 0–1 scale as the weights.",
    "flow.disagree_title": "Where weight and weight × ‖value‖ disagree most (layer {layer} · head {head})",
    "flow.disagree_caption": "For each key, the mean over the query rows of its share by weight and by "
    "weight × ‖value‖; the keys where the two differ most. A key that receives much weight but little "
    "share is a sink: it is looked at, yet sends almost nothing.",
}

ZH = {
    "flow.weighting": "显示",
    "flow.weighting.weight": "权重",
    "flow.weighting.norm": "权重 × ‖值‖",
    "flow.weighting_help": "**权重**：softmax 给出的注意力权重。**权重 × ‖值‖**：每个权重乘以该键经这个头真正送出的"
    "向量的大小，每行再缩放为和为 1。",
    "flow.no_value_norms": "这次分析没有记录值向量的范数（保存于记录它们之前）：按权重显示。",
    "flow.norm_title": "权重 × ‖值‖ 显示的是什么",
    "flow.norm_explain": "权重 α 说明一个查询从某个键的值向量（value vector）中取多少，却不说明这个向量有多大。"
    "注意力头 h 从键 j 加到查询的残差连接（残差流）上的是 α · f(x_j)，其中 f(x) = (x W_V + b_V) W_O 限于这个头；"
    "它的大小是 α · ‖f(x_j)‖（Kobayashi 等，2020，《Attention is not only a weight》）。一个头可以把 0.9 的"
    "权重放在一个变换后值向量极小的 token 上——语言模型的第一个 token，许多头把权重停放在这个*汇聚点*上——"
    "而只给真正改变输出的 token 0.05。这里每个权重乘以 ‖f(x_j)‖，每行再除以它的和，因此颜色与权重用同一个 "
    "0–1 色标。",
    "flow.disagree_title": "权重与权重 × ‖值‖ 分歧最大之处（第 {layer} 层 · 第 {head} 个头）",
    "flow.disagree_caption": "每个键在各查询行上的平均份额：按权重和按权重 × ‖值‖；列出两者相差最大的键。"
    "得到很多权重却只有很小份额的键是汇聚点：被看着，却几乎什么也不送出。",
}
