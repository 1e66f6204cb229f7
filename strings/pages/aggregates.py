"""Mean over heads & attention rollout page."""

EN = {
    "aggregates.title": "Mean over heads & attention rollout",
    "aggregates.intro": "Two popular summaries. Neither is something the model computes — each is **our** way of "
    "squeezing many heads into one picture, and both hide what individual heads do.",
    "aggregates.mean_header": "Mean over the {n_heads} heads of layer {layer}",
    "aggregates.mean_caption": "The plain average of the layer's heads. The layer's real output *concatenates* the "
    "heads and mixes them with a learned matrix, so a head with a sharp pattern may be washed out here.",
    "aggregates.rollout_header": "Attention rollout through all layers",
    "aggregates.rollout_cross": "Rollout multiplies self-attention matrices layer by layer (tokens → same tokens), "
    "so it is defined for encoder or decoder self-attention, not for cross-attention. Pick a "
    "self-attention kind in the sidebar.",
    "aggregates.residual": "Count the residual connection",
    "aggregates.residual_help": "Each block adds its input back to its output; rollout models this by adding the "
    "identity to each layer's mean attention (Abnar & Zuidema, 2020).",
    "aggregates.rollout_units": "The rollout is computed over the model's own tokens (those are what the model "
    "mixes), then merged and hidden like the other figures: to a word = the sum over its tokens, from a word = "
    "their mean.",
    "aggregates.rollout_caption": "Row i estimates how much the top layer's token i draws on each input token, by "
    "multiplying the head-averaged attention of every layer (with the residual path). "
    "It is an estimate of information flow, not an attention pattern of the model.",    "aggregates.rollout_streamed": "Computed exactly at every length, not from pooled blocks: one layer's mean "
    "over heads at a time (a block of rows of that layer's heads at a time), multiplied into the product, then "
    "remembered for this input. On a long input the first view takes seconds (every head is computed once).",
}

ZH = {
    "aggregates.title": "注意力头的平均与注意力展开",
    "aggregates.intro": "两种常用的汇总方式。它们都不是模型自己算出来的东西——都是**我们**把许多注意力头"
    "压进一张图的办法，而且都看不出单个头各自在做什么。",
    "aggregates.mean_header": "第 {layer} 层 {n_heads} 个注意力头的平均",
    "aggregates.mean_caption": "这一层各个头的简单平均。这一层真正的输出是把各个头*拼接*起来，"
    "再用一个学到的矩阵混合，所以模式很尖锐的头在这里可能被冲淡。",
    "aggregates.rollout_header": "贯穿所有层的注意力展开（rollout）",
    "aggregates.rollout_cross": "注意力展开把自注意力矩阵逐层相乘（token → 同一组 token），"
    "所以它只对编码器或解码器的自注意力有定义，不适用于交叉注意力。请在侧边栏选择一种自注意力。",
    "aggregates.residual": "计入残差连接（residual connection）",
    "aggregates.residual_help": "每个模块都把自己的输入加回到输出上；注意力展开在每一层的平均注意力上"
    "加一个单位矩阵来模拟这一点（Abnar & Zuidema, 2020）。",
    "aggregates.rollout_units": "注意力展开先在模型自己的 token 上计算（模型混合的正是这些 token），"
    "再像其他图一样合并词片、隐藏特殊 token：指向一个词的权重 = 它各个 token 的和，来自一个词的权重 = 它们的平均。",
    "aggregates.rollout_caption": "第 i 行估计最顶层的第 i 个 token 在多大程度上取自每个输入 token："
    "做法是把每一层按头平均后的注意力逐层相乘（并计入残差连接这条通路）。"
    "它是对信息流动的一种估计，而不是模型的某个注意力模式。",    "aggregates.rollout_streamed": "在任何长度下都精确计算，而不是用合并后的区块近似：每次只算一层按头平均的注意力"
    "（每次只算这一层各个头的一块行），乘进累积的乘积里，然后为这个输入记住结果。输入很长时，第一次查看要花几秒"
    "（每个注意力头都要算一遍）。",
}
