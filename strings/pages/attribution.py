"""Attribution page: gradient x input and integrated gradients beside cross-attention, and their agreement."""

EN = {
    "page.attribution.title": "Attribution vs attention",
    "attribution.intro": "Does attention explain the prediction? For each output token this page measures how much "
    "each source token **contributed**, from the model's gradients, and puts it next to where cross-attention "
    "**looks**. What is attributed: the log-probability of the model's own token at that step. The inputs: the "
    "source token embeddings (before the positional encoding is added); the baseline replaces them by zeros.",
    "attribution.intro_lm": "Does attention explain the prediction? For each token of the continuation this page "
    "measures how much each prompt token **contributed**, from the model's gradients, and puts it next to where "
    "self-attention **looks** over the prompt. What is attributed: the log-probability of the model's own token at "
    "that step. The inputs: the prompt's token embeddings; the baseline puts the end-of-text token's embedding at "
    "every prompt position (zeros would make the first normalisation jump).",
    "attribution.outputs": "Continuation tokens attributed",
    "attribution.outputs_help": "Each token of the continuation costs one backward pass through the whole model, so "
    "only the first ones are attributed by default.",
    "attribution.lm_bound": "Bound: the first **{outputs}** token(s) of the continuation (of at most {n} new tokens), "
    "{m} integration steps. Raise either above, at the cost of time.",
    "attribution.all.explain_lm": "Rows: the continuation's tokens (teacher-forced on the greedy continuation); "
    "columns: the prompt's tokens. Red raises the token's log-probability, blue lowers it. **Gradient × input** "
    "uses the gradient at the input only; **integrated gradients** average it along the way from the baseline, so "
    "their sum equals the change of the log-probability from the baseline to the input (completeness).",
    "attribution.series.head_lm": "self-attention L{l} H{h}",
    "attribution.series.mean_lm": "self-attention, mean of all heads",
    "attribution.series.rollout_lm": "rollout through the self-attention",
    "attribution.step.rho_lm": "Rank agreement with |integrated gradients| at this step (Spearman ρ), over the "
    "prompt: self-attention layer {layer} head {head} **{rho_head}**, mean of all heads **{mean}**, rollout "
    "**{rollout}**, gradient × input **{gxi}**. One step of one prompt is noise.",
    "attribution.heads_title_lm": "Step {step}: self-attention of every head over the prompt",
    "attribution.step.caption_lm": "The head in the bars is the sidebar's. The attention shown is the step's row "
    "over the prompt's positions only (the rest of its weight is on the continuation so far). Rollout: the "
    "self-attention rolled out through the layers (mean over heads, plus the residual path) — an estimate of "
    "flow through attention alone, not something the model computes.",
    "attribution.agree.lm_skipped": "On a language model the agreement over many prompts is not measured here: "
    "each prompt costs a backward pass through every layer per continuation token.",
    "attribution.no_cross": "This model has no cross-attention, so there is no source for an output token to "
    "draw on. Pick an encoder–decoder model.",
    "attribution.steps": "Integration steps",
    "attribution.steps_help": "Integrated gradients average the gradient at this many points between the baseline "
    "and the input (midpoint rule). More steps: a smaller completeness error, a longer computation.",
    "attribution.all.header": "1 · Every output token, every source token",
    "attribution.all.explain": "Rows: the output tokens (decoding steps, teacher-forced on the greedy output); "
    "columns: the source tokens. Red raises the output token's log-probability, blue lowers it. **Gradient × "
    "input** uses the gradient at the input only; **integrated gradients** average it along the way from the "
    "baseline, so their sum equals the change of the log-probability from the baseline to the input (completeness).",
    "attribution.ig_title": "Integrated gradients",
    "attribution.ig_name": "IG (nats)",
    "attribution.gxi_title": "Gradient × input",
    "attribution.gxi_name": "grad × input",
    "attribution.completeness": "Completeness with {m} steps: the sum of the attributions misses the change of the "
    "log-probability by at most **{max}** nats (step {step}: {share} % of that step's change), median {median} "
    "nats. More steps make it smaller.",
    "attribution.completeness_table": "Completeness, step by step",
    "attribution.col.step": "step",
    "attribution.col.token": "output token",
    "attribution.col.f_input": "log p at the input",
    "attribution.col.f_baseline": "log p at the baseline",
    "attribution.col.delta": "change",
    "attribution.col.sum": "sum of IG",
    "attribution.col.error": "error",
    "attribution.step.header": "2 · One output token: attribution beside attention",
    "attribution.step": "Output step",
    "attribution.step_help": "The decoding step whose output token is explained.",
    "attribution.step.which": "Step {step} chose {token}. Each series is scaled to sum to 1 (absolute values), so "
    "the shapes compare.",
    "attribution.series.ig": "integrated gradients",
    "attribution.series.gxi": "gradient × input",
    "attribution.series.head": "cross-attention L{l} H{h}",
    "attribution.series.mean": "cross-attention, mean of all heads",
    "attribution.series.rollout": "rollout through the encoder",
    "attribution.bars_title": "Step {step}: what the output token used vs where attention looks",
    "attribution.step.rho": "Rank agreement with |integrated gradients| at this step (Spearman ρ): cross-attention "
    "layer {layer} head {head} **{rho_head}**, mean of all heads **{mean}**, rollout **{rollout}**, gradient × "
    "input **{gxi}**. One step of one sentence is noise: see the measurement over many sentences below.",
    "attribution.row_label": "L{l} H{h}",
    "attribution.heads_title": "Step {step}: cross-attention of every head over the source",
    "attribution.step.caption": "The head in the bars is the sidebar's (for another attention kind, its layer and "
    "head in cross-attention). Rollout: the cross-attention row (mean over layers and heads) carried through the "
    "encoder's attention rollout — an estimate of flow through attention alone, not something the model computes.",
    "attribution.agree.header": "3 · Which heads' attention agrees with what the model uses?",
    "attribution.agree.explain": "For every cross-attention head: the Spearman rank correlation between its "
    "attention over the source and |integrated gradients| ({m} steps), at every step of {n} sentences, averaged. "
    "1 = the head ranks the source tokens exactly as the attribution does, 0 = no relation.",
    "attribution.agree.button": "Measure over {n} sentences",
    "attribution.agree.cost": "Takes a few seconds on the didactic models and about half a minute on the "
    "translation model; the result is kept for this model.",
    "attribution.agree.running": "Integrated gradients of {n} sentences …",
    "attribution.agree.matrix_title": "Agreement of each cross-attention head with the attribution",
    "attribution.agree.rho": "Spearman ρ",
    "attribution.agree.numbers": "Measured over {sentences} sentences ({steps} steps): the best head, layer "
    "{best_layer} head {best_head}, reaches ρ = **{best}**, the worst, layer {worst_layer} head {worst_head}, "
    "**{worst}**; the mean of all heads **{mean}**, rollout **{rollout}**. Two gradient methods agree with each "
    "other at ρ = **{gxi}**. The heads' ρ varies from step to step by {spread} on average (standard deviation).",
    "attribution.agree.caveat": "**Attention is not explanation**, in numbers: even the best head ranks the source "
    "tokens like the attribution only at ρ = {best}, and two gradient-based attributions of the same model agree "
    "at ρ = {gxi}. Where a head looks is evidence of what it reads, not proof of what the output depends on.",
    "attribution.agree.sentences": "The sentences",
}

ZH = {
    "page.attribution.title": "归因与注意力",
    "attribution.intro": "注意力能解释预测吗？对于每个输出 token，本页根据模型的梯度测量每个源 token **贡献**了多少，"
    "并把它放在交叉注意力**看向**哪里的旁边。被归因的量：这一步模型自己输出的 token 的对数概率。输入：源 token 的嵌入"
    "（在加上位置编码之前）；基线把它们换成零。",
    "attribution.intro_lm": "注意力能解释预测吗？对于续写中的每个 token，本页根据模型的梯度测量每个提示 token **贡献**了多少，"
    "并把它放在自注意力在提示上**看向**哪里的旁边。被归因的量：这一步模型自己输出的 token 的对数概率。输入：提示的 token "
    "嵌入；基线在提示的每个位置放上文本结束 token 的嵌入（换成零会让第一次归一化发生跳变）。",
    "attribution.outputs": "被归因的续写 token 数",
    "attribution.outputs_help": "续写中的每个 token 都要在整个模型上做一次反向传播，所以默认只归因前几个。",
    "attribution.lm_bound": "上限：续写（最多 {n} 个新 token）的前 **{outputs}** 个 token，积分 {m} 步。"
    "可以在上面调高，但会更慢。",
    "attribution.all.explain_lm": "行：续写的 token（在贪心解码的续写上用教师强制运行）；列：提示的 token。红色提高这个 token "
    "的对数概率，蓝色降低它。**梯度 × 输入**只用输入处的梯度；**积分梯度**沿着从基线到输入的路径对梯度取平均，"
    "所以它们的总和等于对数概率从基线到输入的变化（完备性）。",
    "attribution.series.head_lm": "自注意力 L{l} H{h}",
    "attribution.series.mean_lm": "自注意力，所有头的平均",
    "attribution.series.rollout_lm": "穿过自注意力的注意力展开",
    "attribution.step.rho_lm": "这一步在提示上与 |积分梯度| 的排序一致程度（斯皮尔曼 ρ）：自注意力第 {layer} 层头 {head} "
    "**{rho_head}**，所有头的平均 **{mean}**，注意力展开 **{rollout}**，梯度 × 输入 **{gxi}**。一个提示的一步只是噪声。",
    "attribution.heads_title_lm": "步骤 {step}：每个头的自注意力在提示上的分布",
    "attribution.step.caption_lm": "条形图中的头是侧边栏选中的头。这里只显示这一步在提示位置上的那一行（其余的权重落在已经写出的续写上）。"
    "注意力展开：把自注意力逐层展开（对各头取平均，再加上残差连接的路径）——只是对经由注意力的信息流的估计，并不是模型计算的量。",
    "attribution.agree.lm_skipped": "在语言模型上，本页不测量许多提示上的一致程度：每个提示的每个续写 token 都要在所有层上做一次反向传播。",
    "attribution.no_cross": "这个模型没有交叉注意力，输出 token 没有可以依赖的源。请选择一个编码器–解码器模型。",
    "attribution.steps": "积分步数",
    "attribution.steps_help": "积分梯度在基线和输入之间取这么多个点，对梯度取平均（中点法）。步数越多，完备性误差越小，"
    "计算越久。",
    "attribution.all.header": "1 · 每个输出 token，每个源 token",
    "attribution.all.explain": "行：输出 token（解码步骤，在贪心解码的输出上用教师强制运行）；列：源 token。红色提高输出 "
    "token 的对数概率，蓝色降低它。**梯度 × 输入**只用输入处的梯度；**积分梯度**沿着从基线到输入的路径对梯度取平均，"
    "所以它们的总和等于对数概率从基线到输入的变化（完备性）。",
    "attribution.ig_title": "积分梯度",
    "attribution.ig_name": "积分梯度（奈特）",
    "attribution.gxi_title": "梯度 × 输入",
    "attribution.gxi_name": "梯度 × 输入",
    "attribution.completeness": "{m} 步时的完备性：归因之和与对数概率的变化最多相差 **{max}** 奈特（步骤 {step}："
    "占这一步变化的 {share} %），中位数 {median} 奈特。步数越多，误差越小。",
    "attribution.completeness_table": "完备性，逐步",
    "attribution.col.step": "步骤",
    "attribution.col.token": "输出 token",
    "attribution.col.f_input": "输入处的对数概率",
    "attribution.col.f_baseline": "基线处的对数概率",
    "attribution.col.delta": "变化",
    "attribution.col.sum": "积分梯度之和",
    "attribution.col.error": "误差",
    "attribution.step.header": "2 · 一个输出 token：归因与注意力并排",
    "attribution.step": "输出步骤",
    "attribution.step_help": "要解释的是哪一个解码步骤的输出 token。",
    "attribution.step.which": "步骤 {step} 选择了 {token}。每组数值都缩放到总和为 1（取绝对值），以便比较形状。",
    "attribution.series.ig": "积分梯度",
    "attribution.series.gxi": "梯度 × 输入",
    "attribution.series.head": "交叉注意力 L{l} H{h}",
    "attribution.series.mean": "交叉注意力，所有头的平均",
    "attribution.series.rollout": "穿过编码器的注意力展开",
    "attribution.bars_title": "步骤 {step}：输出 token 用了什么，注意力看向哪里",
    "attribution.step.rho": "这一步与 |积分梯度| 的排序一致程度（斯皮尔曼 ρ）：交叉注意力第 {layer} 层头 {head} "
    "**{rho_head}**，所有头的平均 **{mean}**，注意力展开 **{rollout}**，梯度 × 输入 **{gxi}**。一个句子的一步只是噪声："
    "请看下面在许多句子上的测量。",
    "attribution.row_label": "L{l} H{h}",
    "attribution.heads_title": "步骤 {step}：每个头的交叉注意力在源上的分布",
    "attribution.step.caption": "条形图中的头是侧边栏选中的头（如果是别的注意力类型，就取交叉注意力中相同的层和头）。"
    "注意力展开：把交叉注意力的这一行（对各层和各头取平均）穿过编码器的注意力展开——只是对经由注意力的信息流的估计，"
    "并不是模型计算的量。",
    "attribution.agree.header": "3 · 哪些头的注意力与模型实际用到的一致？",
    "attribution.agree.explain": "对每个交叉注意力头：它在源上的注意力与 |积分梯度|（{m} 步）之间的斯皮尔曼（Spearman）"
    "等级相关系数，在 {n} 个句子的每一步上计算，再取平均。1 = 这个头对源 token 的排序与归因完全相同，0 = 没有关系。",
    "attribution.agree.button": "在 {n} 个句子上测量",
    "attribution.agree.cost": "在教学模型上需要几秒，在翻译模型上大约半分钟；这个模型的结果会被保留。",
    "attribution.agree.running": "正在计算 {n} 个句子的积分梯度 …",
    "attribution.agree.matrix_title": "每个交叉注意力头与归因的一致程度",
    "attribution.agree.rho": "斯皮尔曼 ρ",
    "attribution.agree.numbers": "在 {sentences} 个句子（{steps} 个步骤）上测得：最好的头，第 {best_layer} 层头 "
    "{best_head}，ρ = **{best}**；最差的，第 {worst_layer} 层头 {worst_head}，**{worst}**；所有头的平均 **{mean}**，"
    "注意力展开 **{rollout}**。两种梯度方法彼此之间的一致程度为 ρ = **{gxi}**。各头的 ρ 在不同步骤之间平均变化 {spread}"
    "（标准差）。",
    "attribution.agree.caveat": "用数字说明**注意力不等于解释**：即使是最好的头，它对源 token 的排序与归因的一致程度也只有 "
    "ρ = {best}，而同一个模型的两种基于梯度的归因彼此之间的一致程度是 ρ = {gxi}。一个头看向哪里说明它读取了什么，"
    "但不能证明输出依赖于什么。",
    "attribution.agree.sentences": "这些句子",
}
