"""Cost page: what attention costs as the input grows (time of the L² part, its fit, memory, whole model)."""

EN = {
    "cost.title": "Cost vs length",
    "cost.intro": "Attention compares every position with every other: for L tokens each head computes an "
    "L × L table of scores. This page **measures** what that costs on this machine, when you open it: the "
    "attention core alone (Q Kᵀ, softmax, · V) at growing lengths, the memory of the score tensor, and the "
    "whole model's forward pass at the lengths it accepts.",
    "cost.measuring": "Measuring (at most {budget} s)…",
    "cost.setting": "Random tensors with this model's h = {h} heads and d_head = {d_head}, batch 1 · one CPU "
    "thread · median of {repeats} runs after a warm-up · {elapsed} s of the {budget} s budget used · "
    "measured once per model and kept.",
    "cost.stopped": "The {budget} s budget ran out: lengths {skipped} were not measured (the last one "
    "measured is L = {last}).",
    "cost.none": "The time budget ran out before a single length could be measured.",
    "cost.core.header": "1 · The L² part: Q Kᵀ, softmax and · V",
    "cost.core.text": "Each point is the median time of softmax(Q Kᵀ / √d_head) · V for one layer, all heads "
    "at once. Both axes are logarithmic: a cost that grows like L² is a straight line of slope 2.",
    "cost.fit": "Least-squares fit on relative error, every part non-negative (a time has no negative part): time(L) ≈ **{a}**·L² + **{b}**·L + **{c}** ms.",
    "cost.fit_few": "At least three lengths are needed for the fit.",
    "cost.doubling.header": "Does doubling L quadruple the cost?",
    "cost.doubling.text": "A cost of a·L² quadruples when L doubles. The measured ratios say where that "
    "holds: at small L the fixed cost of every call (Python, launching the operations, allocating the "
    "output) dominates and the ratio stays well below 4; once the L × L scores are large, the ratio "
    "approaches 4 — and can pass it when the scores no longer fit in the processor's caches.",
    "cost.doubling.summary": "Here the ratio is close to 4 for {pairs}.",
    "cost.doubling.summary_none": "No measured doubling is close to 4 here: the fixed costs still dominate "
    "at these lengths.",
    "cost.memory.header": "2 · Memory of the score tensor",
    "cost.memory.text": "One layer's scores are a `float32` tensor of shape (B, h, L, L): B·h·L²·4 bytes, here "
    "with B = 1 and h = {h}. Doubling L quadruples it. The weights after the softmax take the same again.",
    "cost.model.header": "3 · The whole model",
    "cost.model.text": "One forward pass of the whole model (encoder and decoder, source and target both L "
    "random tokens) at the lengths it accepts, up to max_len = {max_len}. The last column is the share "
    "taken by the attention core of its {layers} attention layers.",
    "cost.model.text_lm": "One forward pass of the whole model (a decoder-only model: one sequence of L random "
    "tokens) at the lengths it reads here, up to max_len = {max_len}. The last column is the share taken by "
    "the attention core of its {layers} attention layers.",
    "cost.model.small": "At these lengths the L² part is a small share: the linear layers (Q, K, V, W_o, "
    "the feed-forward network, the output projection) grow only like L and cost more while L is far "
    "below d_model = {d_model}. The L² part takes over only for much longer inputs than this model "
    "accepts.",
    "cost.model.none": "The time budget ran out before the whole model could be measured.",
}

ZH = {
    "cost.title": "复杂度随长度的变化",
    "cost.intro": "注意力要把每个位置与所有位置逐一比较：L 个 token，每个头都要计算一张 L × L 的分数表。"
    "本页在你打开时，**在这台机器上实测**这样做的代价：不同长度下注意力核心本身（Q Kᵀ、softmax、· V）的耗时、"
    "分数张量占用的内存，以及整个模型在它能接受的长度上做一次前向传播的耗时。",
    "cost.measuring": "正在测量（最多 {budget} 秒）…",
    "cost.setting": "随机张量，使用这个模型的 h = {h} 个头、d_head = {d_head}，批大小为 1 · 单个 CPU 线程 · "
    "预热一次后取 {repeats} 次运行的中位数 · 用掉了 {budget} 秒预算中的 {elapsed} 秒 · 每个模型只测一次并保留结果。",
    "cost.stopped": "{budget} 秒的预算已用完：长度 {skipped} 没有测量（最后测到的是 L = {last}）。",
    "cost.none": "还没来得及测量任何一个长度，时间预算就用完了。",
    "cost.core.header": "1 · L² 部分：Q Kᵀ、softmax 与 · V",
    "cost.core.text": "每个点是一层中 softmax(Q Kᵀ / √d_head) · V 的中位耗时，所有头一起计算。两条坐标轴都是"
    "对数刻度：按 L² 增长的代价在图上是一条斜率为 2 的直线。",
    "cost.fit": "按相对误差做最小二乘拟合，且各项系数都不为负（耗时不可能有负的部分）：耗时(L) ≈ **{a}**·L² + **{b}**·L + **{c}** 毫秒。",
    "cost.fit_few": "至少需要三个长度才能拟合。",
    "cost.doubling.header": "L 翻倍，代价就变成四倍吗？",
    "cost.doubling.text": "a·L² 形式的代价在 L 翻倍时变成四倍。实测的比值告诉我们这在哪里成立：L 较小时，每次调用的"
    "固定开销（解释器、启动各个运算、分配输出）占主导，比值明显小于 4；当 L × L 的分数表变大后，比值接近 4——"
    "分数表放不进处理器缓存时，甚至会超过 4。",
    "cost.doubling.summary": "在这里，比值接近 4 的是：{pairs}。",
    "cost.doubling.summary_none": "这里没有一次翻倍的比值接近 4：在这些长度上，固定开销仍占主导。",
    "cost.memory.header": "2 · 分数张量的内存",
    "cost.memory.text": "一层的分数是形状为 (B, h, L, L) 的 `float32` 张量：B·h·L²·4 字节，这里 B = 1，h = {h}。"
    "L 翻倍，内存变成四倍。softmax 之后的权重还要再占同样多的内存。",
    "cost.model.header": "3 · 整个模型",
    "cost.model.text": "整个模型（编码器和解码器，源和目标都是 L 个随机 token）做一次前向传播的耗时，长度取它能接受的值，"
    "最多 max_len = {max_len}。最后一列是它的 {layers} 个注意力层中注意力核心所占的比例。",
    "cost.model.text_lm": "整个模型（只含解码器：一条 L 个随机 token 的序列）做一次前向传播的耗时，长度取它在这里能读的值，"
    "最多 max_len = {max_len}。最后一列是它的 {layers} 个注意力层中注意力核心所占的比例。",
    "cost.model.small": "在这些长度上，L² 部分只占一小部分：线性层（Q、K、V、W_o、前馈网络、输出投影）的代价只按 L "
    "增长，在 L 远小于 d_model = {d_model} 时反而更贵。只有输入比这个模型能接受的长得多时，L² 部分才会占主导。",
    "cost.model.none": "还没来得及测量整个模型，时间预算就用完了。",
}
