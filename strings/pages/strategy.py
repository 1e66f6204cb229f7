"""The decoding strategy: sidebar controls and the names the pages give it."""

EN = {
    "strategy.label": "Decoding",
    "strategy.help": "How the decoder picks each output token. **Greedy**: always the most likely one. "
    "**Beam search**: keeps several partial outputs (the beam) and returns the most likely whole output it "
    "found. **Sampling**: draws each token at random from the model's probabilities (reshaped by "
    "temperature, top-k and top-p); the seed makes the draw repeatable, so a link shows the same sample. "
    "Every page shows the attention of the output this chooses.",
    "strategy.kind.greedy": "greedy",
    "strategy.kind.beam": "beam search",
    "strategy.kind.sample": "sampling",
    "strategy.beam": "Beam width",
    "strategy.beam_help": "How many partial outputs are kept after each step (1 = greedy decoding).",
    "strategy.length_penalty": "Length penalty",
    "strategy.length_penalty_help": "Whole outputs are ranked by log-probability ÷ length^α. With α = 0 the "
    "plain sum wins, which favours short outputs; α = 1 compares the mean per token.",
    "strategy.temperature": "Temperature",
    "strategy.temperature_help": "The scores are divided by T before the softmax: below 1 sharpens the "
    "distribution (closer to greedy), above 1 flattens it (more surprises).",
    "strategy.top_k": "Top-k",
    "strategy.top_k_help": "Draw only among the k most likely tokens (0 = no limit).",
    "strategy.top_p": "Top-p",
    "strategy.top_p_help": "Draw only among the fewest most likely tokens whose probabilities add up to p "
    "(1 = no limit).",
    "strategy.seed": "Seed",
    "strategy.seed_help": "The random generator's starting point: the same seed gives the same sample.",
    "strategy.bad_url": "The link's decoding strategy “{value}” cannot be read; greedy decoding is used.",
    "strategy.name.greedy": "greedy decoding",
    "strategy.name.beam": "beam search, width {width}, length penalty {penalty}",
    "strategy.name.sample": "sampling, temperature {temperature}, top-k {top_k}, top-p {top_p}, seed {seed}",
    "strategy.output_by": "Output by {strategy}",
    "strategy.greedy_here.intervention": "Outputs on this page are decoded greedily: an intervention is "
    "measured step by step along one output path, the intact model's.",
    "strategy.greedy_here.batch": "The padded batch is decoded greedily, one step for every sentence at once.",
    "strategy.greedy_here.not_sidebar": "The sidebar's {strategy} applies to the other pages.",
}

ZH = {
    "strategy.label": "解码方式",
    "strategy.help": "解码器如何挑选每个输出 token。**贪心解码**：总是取最可能的那个。**束搜索**（beam search）："
    "同时保留几个未写完的输出（即“束”），返回它找到的整体概率最高的输出。**采样**（sampling）：按模型给出的概率"
    "（经温度、前 k 名截断（top-k）与累积概率截断（top-p）调整后）随机抽取每个 token；随机种子让抽取可以重复，所以同一个链接显示同一个采样结果。"
    "每个页面显示的都是这样选出的输出上的注意力。",
    "strategy.kind.greedy": "贪心解码",
    "strategy.kind.beam": "束搜索",
    "strategy.kind.sample": "采样",
    "strategy.beam": "束搜索的束宽",
    "strategy.beam_help": "每一步之后保留几个未写完的输出（1 = 贪心解码）。",
    "strategy.length_penalty": "长度惩罚",
    "strategy.length_penalty_help": "完整的输出按 对数概率 ÷ 长度^α 排序。α = 0 时直接比较总和，"
    "短输出更占便宜；α = 1 时比较每个 token 的平均值。",
    "strategy.temperature": "温度",
    "strategy.temperature_help": "在 softmax 之前把分数除以 T：小于 1 让分布更尖锐（更接近贪心解码），"
    "大于 1 让分布更平坦（更多意外）。",
    "strategy.top_k": "前 k 名（top-k）",
    "strategy.top_k_help": "只在最可能的 k 个 token 中抽取（0 = 不限）。",
    "strategy.top_p": "累积概率（top-p）",
    "strategy.top_p_help": "只在概率之和达到 p 的最少几个最可能 token 中抽取（1 = 不限）。",
    "strategy.seed": "随机种子",
    "strategy.seed_help": "随机数生成器的起点：同一个种子给出同一个采样结果。",
    "strategy.bad_url": "链接里的解码方式“{value}”无法读取；改用贪心解码。",
    "strategy.name.greedy": "贪心解码",
    "strategy.name.beam": "束搜索，束宽 {width}，长度惩罚 {penalty}",
    "strategy.greedy_here.intervention": "此页的输出用贪心解码：干预的效果沿同一条输出路径（完整模型的输出）逐步衡量。",
    "strategy.greedy_here.batch": "填充后的批次用贪心解码，每一步同时为所有句子各生成一个 token。",
    "strategy.greedy_here.not_sidebar": "侧栏选择的{strategy}用于其他页面。",
    "strategy.name.sample": "采样，温度 {temperature}，前 k 名 {top_k}，累积概率 {top_p}，随机种子 {seed}",
    "strategy.output_by": "输出来自{strategy}",
}
