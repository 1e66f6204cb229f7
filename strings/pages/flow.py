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
    "flow.note_norm": "Shown: weight × ‖value‖, each row rescaled to sum to 1; hover and the numbers below give "
    "these shares, not the softmax's weights.",
    "flow.disagree_title": "Where weight and weight × ‖value‖ disagree most (layer {layer} · head {head})",
    "flow.disagree_caption": "For each key, the mean over the query rows of its share by weight and by "
    "weight × ‖value‖; the keys where the two differ most. A key that receives much weight but little "
    "share is a sink: it is looked at, yet sends almost nothing.",
    # the information-flow page
    "page.flow.title": "Information flow",
    "flow.intro": "Which links carry a prediction? Every layer adds to each position's residual stream what "
    "attention brings from other tokens and what the MLP computes. Following Ferrando & Voita (2024, "
    "\"Information flow routes\", as the LLM Transparency Tool computes it), each part's importance is how much "
    "closer it brings the sum: max(‖whole‖₁ − ‖whole − part‖₁, ε), divided by the sum over the parts. Parts "
    "above the threshold are kept and the graph is followed from the chosen position down to the embeddings.",
    "flow.not_applicable.encoder": "This page needs a language model or a translation model with a Pre-LN "
    "residual stream. This is an encoder alone (MiniLM, e5): it makes no prediction for the graph to explain, "
    "and it normalises after each sum (Post-LN), where the parts no longer add up to the stream.",
    "flow.seq2seq_note": "A translation model: the positions are the decoder's (its start and the greedy "
    "translation; the last one predicts the translation's last token). Cross-attention edges come from the "
    "source's {n_source} tokens on the left, from their encoder output, and the encoder's own graph ({n_enc} "
    "layers) is drawn above those tokens, down to its embeddings.",
    "flow.kind.decoder": "self-attention",
    "flow.kind.cross": "cross-attention",
    "flow.kind.encoder": "encoder attention",
    "flow.not_applicable.post_ln": "This model normalises after each sum (Post-LN, as Marian and BART "
    "translation models do): the parts no longer add up to the residual stream, so the page draws no graph "
    "rather than a wrong one.",
    "flow.not_applicable.post_norm": "This model normalises each sublayer's output before adding it (Gemma 3, "
    "OLMo 2): the parts of attention are rescaled by a norm of their sum, so the page draws no graph rather "
    "than a wrong one.",
    "flow.not_applicable.parallel": "This model runs attention and the MLP side by side from one input "
    "(parallel residual, Pythia): there is no state after attention to decompose, so the page draws no graph "
    "rather than a wrong one.",
    "flow.not_applicable.no_residual": "This model was trained without residual connections: there is no "
    "residual stream to decompose.",
    "flow.position": "Explain the state of",
    "flow.position_help": "The graph starts from this position's last residual state. The last prompt token's "
    "state predicts the next token (the default).",
    "flow.position_option": "#{pos} {token}",
    "flow.threshold": "Threshold",
    "flow.threshold_help": "Parts whose share of a state is at or below this are dropped and the rest "
    "renormalised; edges above it are followed. 0.04 is the LLM Transparency Tool's default.",
    "flow.computing": "Following the graph down through the layers…",
    "flow.figure_title": "How the state of #{pos} is built",
    "flow.summary": "Predicted next token: **{token}** (log p = {logp}). {edges} edges kept; {rows} attention "
    "rows decomposed in {seconds} s.",
    "flow.click": "Click an attention edge (its middle) or a token's dot to open that layer and head on the "
    "single-head page. Grey: the residual stream and the MLP; colour: the strongest head of an attention edge; "
    "width: importance.",
    "flow.no_edges": "No edge lies above this threshold.",
    "flow.download": "Edges (CSV)",
    "flow.check_title": "Check an edge",
    "flow.check_intro": "Importance says how much a link builds the state, not that the prediction needs it. "
    "Knocking a link out (the attention from one token to another set to 0 in every head of that layer, the "
    "row renormalised) and measuring the change of the predicted token's log-probability tests it.",
    "flow.check_edge": "Attention edge",
    "flow.check_option": "L{layer}: #{dst} {dst_token} ← #{src} {src_token} ({importance})",
    "flow.check_run": "Knock it out",
    "flow.check_result": "Knocking out layer {layer}'s attention from #{dst} to #{src} changes "
    "log p(**{token}**) by **{delta}**.",
    "flow.table_title": "The top {n} edges: importance vs knock-out effect",
    "flow.table_auto": "Computed for inputs up to {limit} tokens by default (one forward pass per edge).",
    "flow.table_long": "This input has {n} tokens: the table takes {edges} forward passes, about {seconds} s.",
    "flow.table_run": "Compute the table",
    "flow.table_running": "Knocking out {edges} edges…",
    "flow.spearman": "Spearman rank correlation of importance and the drop of log p: **{rho}** over {n} edges "
    "({seconds} s). Near 1: the graph's most important links are the ones the prediction needs most.",
    "flow.spearman_nan": "Too few edges (or all effects equal) for a rank correlation.",
    "flow.col.layer": "layer",
    "flow.col.edge": "edge",
    "flow.col.importance": "importance",
    "flow.col.effect": "Δ log p",
    "flow.scatter_title": "Importance vs knock-out effect",
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
    "它的大小是 α · ‖f(x_j)‖（小林等人的论文《注意力不只是权重》（Kobayashi et al. 2020））。一个头可以把 0.9 的"
    "权重放在一个变换后值向量极小的 token 上——语言模型的第一个 token，许多头把权重停放在这个*汇聚点*上——"
    "而只给真正改变输出的 token 0.05。这里每个权重乘以 ‖f(x_j)‖，每行再除以它的和，因此颜色与权重用同一个 "
    "0–1 色标。",
    "flow.note_norm": "显示的是权重 × ‖值‖，每行缩放为和为 1；悬停提示和下面的数字给出的是这些份额，而不是 softmax 的权重。",
    "flow.disagree_title": "权重与权重 × ‖值‖ 分歧最大之处（第 {layer} 层 · 第 {head} 个头）",
    "flow.disagree_caption": "每个键在各查询行上的平均份额：按权重和按权重 × ‖值‖；列出两者相差最大的键。"
    "得到很多权重却只有很小份额的键是汇聚点：被看着，却几乎什么也不送出。",
    "page.flow.title": "信息流",
    "flow.intro": "哪些连接承载了一个预测？每一层都向每个位置的残差连接（残差流）加上注意力从其他 token 带来的内容"
    "和前馈网络（MLP）算出的内容。按照费兰多与沃伊塔的信息流路径方法（Ferrando, Voita 2024），并照大语言模型透明度工具（LLM Transparency Tool）的算法，"
    "每一部分的重要性是它让总和接近多少：`max(‖整体‖₁ − ‖整体 − 部分‖₁, ε)`，再除以各部分之和。高于阈值的部分被保留，"
    "图从所选位置一路向下追到嵌入。",
    "flow.not_applicable.encoder": "本页需要一个残差连接为 Pre-LN 的语言模型或翻译模型。这只是一个编码器（MiniLM、e5）："
    "它不做可供本图解释的预测，而且在每次相加后归一化（Post-LN），各部分不再加起来等于残差流。",
    "flow.seq2seq_note": "这是一个翻译模型：位置是解码器的（起始符和贪心解码的译文；最后一个位置预测译文的最后一个 token）。"
    "交叉注意力边来自左边源句的 {n_source} 个 token 的编码器输出，编码器自己的图（{n_enc} 层）画在这些 token 上方，"
    "一直追到它的嵌入。",
    "flow.kind.decoder": "自注意力",
    "flow.kind.cross": "交叉注意力",
    "flow.kind.encoder": "编码器注意力",
    "flow.not_applicable.post_ln": "这个模型在每次相加后归一化（Post-LN，`Marian` 和 `BART` 翻译模型也是如此）：各部分不再加起来等于残差连接上的残差流，所以本页不画图，"
    "而不是画一张错的图。",
    "flow.not_applicable.post_norm": "这个模型在相加前先对每个子层的输出做归一化，如某些模型（Gemma 3, OLMo 2）：注意力的各部分"
    "被其总和的范数重新缩放，所以本页不画图，而不是画一张错的图。",
    "flow.not_applicable.parallel": "这个模型从同一个输入并行运行注意力和前馈网络，即并行残差连接，如某些模型（Pythia）：没有“注意力之后"
    "的状态”可分解，所以本页不画图，而不是画一张错的图。",
    "flow.not_applicable.no_residual": "这个模型训练时没有残差连接：没有可分解的残差流。",
    "flow.position": "解释这个位置的状态",
    "flow.position_help": "图从这个位置最后的残差连接状态开始。最后一个提示 token 的状态预测下一个 token（默认）。",
    "flow.position_option": "#{pos} {token}",
    "flow.threshold": "阈值",
    "flow.threshold_help": "在某个状态中份额不超过此值的部分被去掉，其余重新归一化；高于它的边被继续追踪。"
    "0.04 是大语言模型透明度工具（LLM Transparency Tool）的默认值。",
    "flow.computing": "正在沿各层向下追踪这张图…",
    "flow.figure_title": "#{pos} 的状态是怎样构成的",
    "flow.summary": "预测的下一个 token：**{token}**（log p = {logp}）。保留 {edges} 条边；分解了 {rows} 行注意力，"
    "用时 {seconds} 秒。",
    "flow.click": "点击一条注意力边（其中点）或一个 token 的圆点，在单个注意力头页面打开该层和该头。灰色：残差连接与前馈网络（MLP）；"
    "彩色：注意力边中最强的头；粗细：重要性。",
    "flow.no_edges": "没有边高于这个阈值。",
    "flow.download": "边（CSV）",
    "flow.check_title": "检验一条边",
    "flow.check_intro": "重要性说明一条连接对构成状态贡献多少，并不说明预测需要它。敲除一条连接（该层每个头中"
    "从一个 token 到另一个 token 的注意力设为 0，该行重新归一化）并测量预测 token 的 log 概率的变化，就能检验它。",
    "flow.check_edge": "注意力边",
    "flow.check_option": "第 {layer} 层：#{dst} {dst_token} ← #{src} {src_token}（{importance}）",
    "flow.check_run": "敲除它",
    "flow.check_result": "敲除第 {layer} 层从 #{dst} 到 #{src} 的注意力，使 log p(**{token}**) 变化 "
    "**{delta}**。",
    "flow.table_title": "前 {n} 条边：重要性与敲除效果",
    "flow.table_auto": "默认对不超过 {limit} 个 token 的输入计算（每条边一次前向计算）。",
    "flow.table_long": "这个输入有 {n} 个 token：此表需要 {edges} 次前向计算，约 {seconds} 秒。",
    "flow.table_run": "计算此表",
    "flow.table_running": "正在敲除 {edges} 条边…",
    "flow.spearman": "重要性与 log p 下降的斯皮尔曼（Spearman）秩相关：**{rho}**，共 {n} 条边（{seconds} 秒）。接近 1："
    "图中最重要的连接正是预测最需要的连接。",
    "flow.spearman_nan": "边太少（或效果全都相同），无法计算秩相关。",
    "flow.col.layer": "层",
    "flow.col.edge": "边",
    "flow.col.importance": "重要性",
    "flow.col.effect": "Δ log p",
    "flow.scatter_title": "重要性与敲除效果",
}
