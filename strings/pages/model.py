"""The model page: shape trace, parameters, configuration, evaluation, training curve.

Also the meanings of the shape symbols (``model.symbol.<symbol>``), of the configuration fields
(``model.config.<field>``) and the display names of evaluation and training-history entries
(``model.eval_name.*``, ``model.figure.*``, ``model.series.*``), looked up by app_pages.glue.model.
In English those display names are the stored names themselves.
"""

EN = {
    "model.title": "{title}: {name}",
    "model.intro": "What is inside the network: the path a sentence takes through it with every tensor's "
    "shape, where its parameters live, and how it was configured and trained. How it encodes "
    "word order has a page of its own: **Positional encoding**.",
    "model.metric.parameters": "Parameters",
    "model.metric.layers": "Layers (encoder + decoder)",
    "model.metric.heads": "Heads per layer",
    "model.metric.widths": "d_model / d_head",
    "model.tab.trace": "Shape trace",
    "model.tab.parameters": "Parameters",
    "model.tab.config": "Config & metrics",
    "model.tab.training": "Training curve",
    # shape trace
    "model.trace.intro": "Every step of one forward pass on the sidebar's sentence, in order, with the **real "
    "shapes** of its tensors and the **symbolic shapes** the code expects. A hook name marks a tensor "
    "the model can record (the attention pages compute each head's `hook_scores` and `hook_pattern` from the "
    "recorded queries and keys).",
    "model.trace.empty": "The input is empty. Type a sentence in the sidebar to trace its shapes.",
    "model.trace.symbols": "Symbols in this pass: ",
    "model.trace.filter": "Filter steps (e.g. `cross_attn`, `blocks.1`, `softmax`)",
    "model.trace.count": "{shown} of {total} steps.",
    "model.trace.download": "Download every hooked tensor of this sentence (activations.npz + meta.json)",
    "model.trace.download_caption": "The same files as `python -m model inspect --out DIR`: one float32 array per "
    "hook name, and the tokens, output, config, shape trace and parameter counts.",
    "model.trace.symbols_meaning": "What the symbols mean",
    "model.trace.fused": "This input is long enough (heads x query positions x key positions of at least "
    "{cells} in a layer) that the pass runs each attention layer as one **fused attention** step "
    "(`scaled_dot_product_attention`): Q K^T, the scaling, the mask and the softmax happen in one kernel that "
    "never holds the L x L weights, so the trace shows that one step instead of four. The pass records the "
    "queries and keys the softmax saw; when a page looks at a head, its scores and pattern are computed again "
    "from them (the same numbers up to float32 rounding).",
    "model.trace.part": "Which part to download",
    "model.trace.part_option": "{part} (about {size} MiB)",
    "model.trace.part_layer": "{kind}, layer {layer}",
    "model.trace.part_head": "{kind}, layer {layer}, head {head}",
    "model.trace.part_caption": "Every hook of this sentence would take more than the {limit} MiB one archive may "
    "hold (the attention weights grow with the square of its length): the archive holds one kind, one layer "
    "(its block's tensors and its weights) or one head's weights. `python -m model inspect` takes the same "
    "choice as `--kind`, `--layer`, `--head`.",
    "model.col.symbol": "symbol",
    "model.col.setting": "setting",
    "model.col.value": "value",
    "model.col.meaning": "meaning",
    # what each shape symbol stands for
    "model.symbol.B": "batch: sentences run together (1 here)",
    "model.symbol.L_src": "source positions (encoder tokens)",
    "model.symbol.L_tgt": "target positions (decoder tokens)",
    "model.symbol.d_model": "width of the residual stream",
    "model.symbol.h": "query heads per attention layer",
    "model.symbol.h_kv": "key/value heads (fewer than h = grouped-query attention)",
    "model.symbol.d_head": "width of one head = d_model / h",
    "model.symbol.d_ff": "hidden width of the feed-forward network",
    "model.symbol.V": "vocabulary size",
    # parameters
    "model.params.chart": "Chart",
    "model.params.chart.treemap": "treemap",
    "model.params.chart.bar": "bar",
    "model.params.caption": "Parameters per module (tied embedding matrices counted once). Each attention layer "
    "holds `{attn_formula}` = {attn} weights (Q, K, V, output); each feed-forward layer `{ffn_formula}` = {ffn}.",
    # configuration and evaluation
    "model.config.title": "Configuration",
    "model.config.vocab_size": "tokens in the shared source/target vocabulary (special tokens included)",
    "model.config.d_model": "width of every token vector in the residual stream",
    "model.config.n_heads": "attention heads per attention layer",
    "model.config.n_kv_heads": "key/value heads (empty = one per query head)",
    "model.config.d_ff": "hidden width of the feed-forward network in each block",
    "model.config.n_enc_layers": "encoder blocks",
    "model.config.n_dec_layers": "decoder blocks",
    "model.config.dropout": "dropout rate used in training (off when you run it here)",
    "model.config.norm_first": "Pre-LN (normalise before each sublayer) if true; Post-LN as in the 2017 paper "
    "if false",
    "model.config.norm": "normalisation layer",
    "model.config.activation": "feed-forward non-linearity",
    "model.config.pos_encoding": "how token positions are encoded",
    "model.config.max_len": "longest sequence the model accepts, special tokens included",
    "model.config.tie_embeddings": "one matrix for source and target embeddings and the output projection",
    "model.config.pad_id": "token id of padding",
    "model.config.norm_eps": "epsilon of the normalisation layers",
    "model.eval.title": "Evaluation",
    "model.eval.metric": "{name} {figure}",
    "model.eval.n": "{name}: {n} test sentences.",
    "model.eval.caption": "chrF: character n-gram F-score (0–100, higher is better); BLEU: word n-gram precision "
    "(0–100). For the didactic models, exact match is the share of outputs that are exactly right.",
    "model.eval.none": "No evaluation results are stored with this model.",
    "model.eval.raw": "Raw metrics and training info",
    # evaluation and history entries (English: the stored names)
    "model.eval.caption_lm": "Loss: the mean cross-entropy per predicted token on held-out text (nats, lower is "
    "better); perplexity = e^loss, roughly how many tokens the model hesitates between at each step; tokens: "
    "how many tokens were predicted.",
    "model.eval_name.zh": "Chinese",
    "model.eval_name.en": "English",
    "model.figure.loss": "loss",
    "model.figure.perplexity": "perplexity",
    "model.figure.tokens": "tokens",
    "model.eval_name.task": "task",
    "model.eval_name.zh->en": "zh->en",
    "model.eval_name.en->zh": "en->zh",
    "model.figure.chrf": "chrf",
    "model.figure.bleu": "bleu",
    "model.figure.exact_match": "exact_match",
    "model.figure.accuracy": "accuracy",
    "model.series.loss": "loss",
    "model.series.valid_loss": "valid_loss",
    "model.score_series": "{name}_{figure}",
    # training curve
    "model.history.none": "No training history is stored with this model.",
    "model.history.loss": "Loss",
    "model.history.loss_caption": "Cross-entropy (with label smoothing) on training batches; valid_loss on "
    "held-out sentences.",
    "model.history.run_start": "From step {step} on, a second run: trained on from the first run's weights "
    "with a fresh learning-rate warmup and decay (its steps are counted on from the first run's).",
    "model.history.quality": "Translation quality during training",
    "model.history.quality_caption": "chrF / BLEU on a validation sample at each evaluation.",
    "model.chart.step": "step",
    "model.chart.series": "series",
    "model.chart.value": "value",
    # where the parameters are, by formula (tested against the modules)
    "model.params.formula_header": "Where the parameters are: the formula",
    "model.params.col.part": "part",
    "model.params.col.formula": "formula",
    "model.params.col.count": "parameters",
    "model.params.formula_total": "Sum of the formula: **{total}**; the modules themselves hold **{real}** "
    "(tied matrices counted once).",
    "model.params.formula_off": "The formula gives {total}, the modules hold {real}: this model has parts "
    "the formula does not know.",
    "model.params.part.embed": "token embedding",
    "model.params.part.target_embed": "the decoder's own token embedding (target vocabulary)",
    "model.params.part.positions": "learned positions",
    "model.params.part.rel_bias": "relative position bias (first layer of each stack)",
    "model.params.part.token_types": "token-type embedding",
    "model.params.part.embed_norm": "norm of the embeddings",
    "model.params.part.encoder": "encoder blocks",
    "model.params.part.decoder": "decoder blocks",
    "model.params.part.final_norm": "final norms",
    "model.params.part.unembed": "output projection (not tied)",
    "model.params.part.logits_bias": "bias added to every logit (final_logits_bias)",
    "model.params.part.attn": "attention: W_q, W_k, W_v, W_o",
    "model.params.part.attn_bias": "attention biases",
    "model.params.part.qk_norm": "QK-norm",
    "model.params.part.cross": "cross-attention",
    "model.params.part.ffn": "FFN matrices",
    "model.params.part.ffn_bias": "FFN biases",
    "model.params.part.norms": "the block's norms",
}

ZH = {
    "model.title": "{title}：{name}",
    "model.intro": "网络里面有什么：一个句子在网络中走过的路径以及每个张量的形状，参数（parameter）都在哪里，"
    "还有模型是怎样配置和训练的。模型如何表示词序，另有专页介绍：**位置编码**。",
    "model.metric.parameters": "参数量",
    "model.metric.layers": "层数（编码器 + 解码器）",
    "model.metric.heads": "每层的注意力头数",
    "model.metric.widths": "d_model / d_head",
    "model.tab.trace": "形状追踪",
    "model.tab.parameters": "参数",
    "model.tab.config": "配置与评测指标",
    "model.tab.training": "训练曲线",
    "model.trace.intro": "对侧边栏里的句子做一次前向传播，按顺序列出每一步：张量的**实际形状**，以及代码所预期的"
    "**符号形状**。带钩子名（hook）的张量可以被模型记录下来（各个注意力页面由记录的查询和键算出每个头的 "
    "`hook_scores` 和 `hook_pattern`）。",
    "model.trace.empty": "输入为空。请在侧边栏输入一个句子，再追踪它的形状。",
    "model.trace.symbols": "本次前向传播中的符号：",
    "model.trace.filter": "筛选步骤（例如 `cross_attn`、`blocks.1`、`softmax`）",
    "model.trace.count": "共 {total} 步，显示 {shown} 步。",
    "model.trace.download": "下载本句所有带钩子（hook）的张量（activations.npz + meta.json）",
    "model.trace.download_caption": "与 `python -m model inspect --out DIR` 输出的文件相同：每个钩子名对应一个 "
    "`float32` 数组，另有 token、输出、配置、形状追踪和参数量。",
    "model.trace.symbols_meaning": "各符号的含义",
    "model.trace.fused": "这个输入足够长（某一层的 头数 x 查询位置数 x 键位置数 至少为 {cells}），所以前向传播把每个"
    "注意力层作为一个**融合注意力**步骤来计算（`scaled_dot_product_attention`）：Q K^T、缩放、掩码和 softmax "
    "在同一个内核里完成，不保存 L x L 的权重，因此形状追踪里显示这一步，而不是四步。前向传播记录了 softmax "
    "看到的查询和键；某个页面查看一个头时，它的分数和模式会由它们重新算出（数值相同，至多差 `float32` 的舍入误差）。",
    "model.trace.part": "下载哪一部分",
    "model.trace.part_option": "{part}（约 {size} MiB）",
    "model.trace.part_layer": "{kind}，第 {layer} 层",
    "model.trace.part_head": "{kind}，第 {layer} 层，第 {head} 个头",
    "model.trace.part_caption": "这个句子的全部钩子张量会超过一个压缩包最多容纳的 {limit} MiB（注意力权重随长度的平方"
    "增长）：压缩包只包含一种注意力、一层（这一块的张量及其权重）或一个头的权重。`python -m model inspect` "
    "用 `--kind`、`--layer`、`--head` 做同样的选择。",
    "model.col.symbol": "符号",
    "model.col.setting": "配置项",
    "model.col.value": "取值",
    "model.col.meaning": "含义",
    "model.symbol.B": "批大小（batch）：一起运行的句子数（这里是 1）",
    "model.symbol.L_src": "源序列的位置数（编码器的 token 数）",
    "model.symbol.L_tgt": "目标序列的位置数（解码器的 token 数）",
    "model.symbol.d_model": "残差流（residual stream）的宽度，即残差连接上每个向量的维度",
    "model.symbol.h": "每个注意力层的查询头数",
    "model.symbol.h_kv": "键/值头数（少于 h 时即分组查询注意力，GQA）",
    "model.symbol.d_head": "单个注意力头的宽度 = d_model / h",
    "model.symbol.d_ff": "前馈网络的隐藏层宽度",
    "model.symbol.V": "词表大小",
    "model.params.chart": "图表类型",
    "model.params.chart.treemap": "矩形树图",
    "model.params.chart.bar": "条形图",
    "model.params.caption": "各模块的参数量（共享的嵌入矩阵只计一次）。每个注意力层有 `{attn_formula}` = {attn} "
    "个权重（Q、K、V 和输出投影）；每个前馈网络层有 `{ffn_formula}` = {ffn} 个。",
    "model.config.title": "配置",
    "model.config.vocab_size": "源和目标共用的词表中的 token 数（含特殊 token）",
    "model.config.d_model": "每个 token 向量的宽度，即残差连接上传递的残差流（residual stream）的宽度",
    "model.config.n_heads": "每个注意力层的注意力头数",
    "model.config.n_kv_heads": "键/值头数（空 = 每个查询头各配一个）",
    "model.config.d_ff": "每个块里前馈网络的隐藏层宽度",
    "model.config.n_enc_layers": "编码器的块数",
    "model.config.n_dec_layers": "解码器的块数",
    "model.config.dropout": "训练时的随机失活（dropout）比例（在这里运行模型时关闭）",
    "model.config.norm_first": "为 `true` 时是 Pre-LN（在每个子层之前做归一化）；为 `false` 时是 2017 年论文中的 "
    "Post-LN",
    "model.config.norm": "归一化层",
    "model.config.activation": "前馈网络的非线性激活函数",
    "model.config.pos_encoding": "位置编码的方式：token 的位置如何编码",
    "model.config.max_len": "模型能接受的最长序列（含特殊 token）",
    "model.config.tie_embeddings": "源嵌入、目标嵌入和输出投影共用同一个矩阵",
    "model.config.pad_id": "填充（padding）token 的编号",
    "model.config.norm_eps": "归一化层里的 ε（防止除以零的小常数）",
    "model.eval.title": "评测",
    "model.eval.metric": "{name} · {figure}",
    "model.eval.n": "{name}：{n} 个测试句子。",
    "model.eval.caption": "chrF：基于字符 n 元组的 F 值（0–100，越高越好）；BLEU：基于词 n 元组的精确率"
    "（0–100）。对于教学模型，完全匹配率是完全正确的输出所占的比例。",
    "model.eval.none": "这个模型没有保存评测结果。",
    "model.eval.raw": "原始评测指标和训练信息",
    "model.eval.caption_lm": "损失：在留出文本上每个被预测 token 的平均交叉熵（nats，越低越好）；困惑度 = e 的损失次方，"
    "大致是模型每一步在多少个 token 之间犹豫；token 数：被预测的 token 个数。",
    "model.eval_name.zh": "中文",
    "model.eval_name.en": "英文",
    "model.figure.loss": "损失",
    "model.figure.perplexity": "困惑度",
    "model.figure.tokens": "token 数",
    "model.eval_name.task": "任务",
    "model.eval_name.zh->en": "中译英",
    "model.eval_name.en->zh": "英译中",
    "model.figure.chrf": "chrF",
    "model.figure.bleu": "BLEU",
    "model.figure.exact_match": "完全匹配率",
    "model.figure.accuracy": "准确率",
    "model.series.loss": "训练损失",
    "model.series.valid_loss": "验证损失",
    "model.score_series": "{name} · {figure}",
    "model.history.none": "这个模型没有保存训练历史。",
    "model.history.loss": "损失",
    "model.history.loss_caption": "训练批次上的交叉熵（带标签平滑）；验证损失（valid_loss）是在留出的句子上算的。",
    "model.history.run_start": "从第 {step} 步起是第二次训练：从第一次训练得到的权重继续训练，学习率重新预热并衰减"
    "（它的步数接着第一次训练往下数）。",
    "model.history.quality": "训练过程中的翻译质量",
    "model.history.quality_caption": "每次评测时，在验证集的一份采样句子上算出的 chrF / BLEU。",
    "model.chart.step": "训练步数",
    "model.chart.series": "曲线",
    "model.chart.value": "数值",
    "model.params.formula_header": "参数在哪里：公式",
    "model.params.col.part": "部分",
    "model.params.col.formula": "公式",
    "model.params.col.count": "参数量",
    "model.params.formula_total": "公式之和：**{total}**；模块自己的参数量：**{real}**（共享的矩阵只计一次）。",
    "model.params.formula_off": "公式给出 {total}，而模块有 {real}：这个模型有公式不知道的部分。",
    "model.params.part.embed": "token 嵌入",
    "model.params.part.target_embed": "解码器自己的 token 嵌入（目标词表）",
    "model.params.part.positions": "学习得到的位置编码",
    "model.params.part.rel_bias": "相对位置偏置（每个栈的第一层）",
    "model.params.part.token_types": "token 类型嵌入",
    "model.params.part.embed_norm": "嵌入的归一化",
    "model.params.part.encoder": "编码器块",
    "model.params.part.decoder": "解码器块",
    "model.params.part.final_norm": "最后的归一化",
    "model.params.part.unembed": "输出投影（不共享）",
    "model.params.part.logits_bias": "加到每个输出分数（logits）上的偏置（final_logits_bias）",
    "model.params.part.attn": "注意力：W_q、W_k、W_v、W_o",
    "model.params.part.attn_bias": "注意力的偏置",
    "model.params.part.qk_norm": "QK 归一化（QK-norm）",
    "model.params.part.cross": "交叉注意力",
    "model.params.part.ffn": "前馈网络的矩阵",
    "model.params.part.ffn_bias": "前馈网络的偏置",
    "model.params.part.norms": "块内的归一化",
}
