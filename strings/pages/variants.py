"""Architecture variants: the same task trained with one architectural change at a time, side by side."""

EN = {
    "page.variants.title": "Architecture variants",
    "variants.title": "Architecture variants",
    "variants.intro": "Tutorials list design choices — where the norm goes, how positions are encoded, which "
    "norm, how many key/value heads — but rarely show what each one does. Here the reverse model (it writes a "
    "word backwards) was trained several times with the same data, steps, seed and schedule, changing **one** "
    "thing each time. Every figure below is measured on those models; the page reports what they show, "
    "including when a change makes no difference at this size.",
    "variants.missing": "Some variant models are not in `assets/models/` yet: {names}. Train them (about a "
    "minute each) with `python -m model train-variants --force`, then reload this page.",
    "variants.table_header": "All variants",
    "variants.col.model": "model",
    "variants.col.change": "what changes",
    "variants.col.em": "test exact match",
    "variants.col.loss": "training loss (last {n} steps)",
    "variants.col.valid": "validation loss (end)",
    "variants.col.params": "parameters",
    "variants.col.kv_heads": "key/value heads",
    "variants.table_caption": "Test exact match: share of the 500 test words reversed without a single wrong "
    "letter (stored in each model's metrics.json when it was shipped, on the float16 weights). Training loss "
    "includes label smoothing. The model without positional encoding is the pitfall lab's, trained with the "
    "same recipe.",
    "variants.change.base": "nothing (the reference)",
    "variants.axis.norm_place": "Post-LN vs Pre-LN",
    "variants.axis.position": "Positional encoding: sinusoidal, learned, rotary, none",
    "variants.axis.norm": "LayerNorm vs RMSNorm",
    "variants.axis.attention": "MHA vs GQA vs MQA",
    "variants.axis_pick": "Compare",
    "variants.axis_help": "Each comparison shows the base model and the variants that change that one thing.",
    "variants.explain.norm_place": "**Pre-LN** normalises the input of each sublayer: `x + f(norm(x))`; "
    "**Post-LN** (the original paper) normalises after adding the residual connection: `norm(x + f(x))`. "
    "Same learning rate (3e-3) and warmup (50 steps) for both.",
    "variants.explain.position": "How the model learns where a letter is: a fixed **sinusoidal** table added to "
    "the token embeddings, a **learned** table, **rotary** (RoPE: queries and keys rotated by position inside "
    "every attention layer, nothing added to the embeddings), or **none**.",
    "variants.explain.norm": "**LayerNorm** subtracts the mean and divides by the standard deviation, then "
    "scales and shifts; **RMSNorm** only divides by the root mean square and scales (no mean, no bias).",
    "variants.explain.attention": "**MHA**: each of the 4 query heads has its own key and value head. "
    "**GQA**: 2 key/value heads, each shared by 2 query heads. **MQA**: 1 key/value head shared by all 4. "
    "Fewer key/value heads mean fewer parameters and a smaller cache when generating.",
    "variants.curves_caption": "The training loss of every optimiser step, all models of this comparison on "
    "the same axes.",
    "variants.em_title": "Test exact match",
    "variants.measured": "Measured: the highest test exact match here is {best} ({best_em}), the lowest "
    "{worst} ({worst_em}); the spread is {spread}.",
    "variants.measured_same": "Measured: every model here reaches a test exact match between {worst_em} and "
    "{best_em} (spread {spread}): at this size and with 600 steps, this change makes no clear difference.",
    "variants.word": "All models read {word}, with the right answer fed to the decoder (teacher forcing), so "
    "every heatmap has the same rows. Cross-attention, layer {layer}, head {head} (the sidebar's layer and "
    "head):",
    "variants.word_default": "(The sidebar's model is not a letter model, or the sidebar's text is not a word "
    "these models can read, so the page uses a fixed word.)",
    "variants.clamped": "These models have {layers} decoder layers and {heads} heads: the sidebar's choice was "
    "brought into that range.",
    "variants.map_title": "{model}: layer {layer}, head {head}",
    "variants.writes": "Writes {output}; weight on the right source letter: {score}.",
    "variants.best_head": "Its most aligned cross-attention head: layer {layer}, head {head} ({score}).",
    "variants.kv_header": "Key/value cache per generated token",
    "variants.kv_explain": "When a decoder writes token by token it keeps the keys and values of every "
    "earlier position of its self-attention, so each step computes only the new ones. This cache grows with "
    "every token, and its size per token is set by the number of **key/value** heads, not of query heads.",
    "variants.kv_caption": "Measured on each model: incremental decoding for {n} tokens, then the bytes of "
    "every cached key and value tensor (float32, as the app runs them), divided by the tokens. The formula "
    "2 × decoder layers × key/value heads × d_head × 4 bytes gives the same number for each.",
    "variants.kv_col.model": "model",
    "variants.kv_col.kv_heads": "key/value heads",
    "variants.kv_col.measured": "measured (float32, bytes)",
    "variants.kv_col.formula": "formula (float32, bytes)",
    "variants.kv_col.float16": "as float16 (bytes)",
    "variants.kv_col.ratio": "share of MHA",
    "variants.kv_col.em": "test exact match",
    "variants.kv_scaled": "At the translation model's size (d_model {d_model}, {heads} heads, {layers} decoder "
    "layers) the same formula gives, in float16: MHA {mha} bytes, GQA with {gqa_heads} key/value heads {gqa} "
    "bytes, MQA {mqa} bytes per generated token.",
    "variants.kv_cross": "Cross-attention's keys and values come from the encoder output; this project's "
    "decoding recomputes them at each step, so they hold no cache here. A cache of them would be counted per "
    "source token, with the same ratio between MHA, GQA and MQA.",
    "variants.how": "How these were made: `python -m model train-variants --force --threads 1` trains and ships "
    "every variant one after another (a run checkpoints every 100 steps; `--resume` carries a stopped run "
    "on). The base model is also the one the page \"Training, step by step\" scrubs through.",
}

ZH = {
    "page.variants.title": "架构变体",
    "variants.title": "架构变体",
    "variants.intro": "教程里常列出各种设计选择——归一化放在哪里、位置怎样编码、用哪种归一化、有几个键/值头——"
    "却很少展示每一个选择到底有什么影响。这里把单词倒序模型（把单词倒过来写）用相同的数据、步数、随机种子和学习率"
    "计划训练了好几次，每次只改**一处**。下面每个数字都是在这些模型上测得的；本页如实报告结果，包括在这个规模下"
    "某个改动看不出差别的情况。",
    "variants.missing": "有些变体模型还不在 `assets/models/` 中：{names}。请用 "
    "`python -m model train-variants --force` 训练它们（每个大约一分钟），然后重新加载本页。",
    "variants.table_header": "所有变体",
    "variants.col.model": "模型",
    "variants.col.change": "改动",
    "variants.col.em": "测试集完全匹配率",
    "variants.col.loss": "训练损失（最后 {n} 步）",
    "variants.col.valid": "验证损失（结束时）",
    "variants.col.params": "参数量",
    "variants.col.kv_heads": "键/值头数",
    "variants.table_caption": "测试集完全匹配率：500 个测试单词中一个字母都不错地倒写出来的比例（发布模型时用 "
    "`float16` 权重测得，保存在各模型的 metrics.json 中）。训练损失含标签平滑。没有位置编码的模型来自踩坑实验室，"
    "用的是同一个训练配方。",
    "variants.change.base": "无（对照）",
    "variants.axis.norm_place": "Post-LN 与 Pre-LN",
    "variants.axis.position": "位置编码：正弦、可学习、旋转、无",
    "variants.axis.norm": "层归一化（LayerNorm）与 RMSNorm",
    "variants.axis.attention": "MHA、GQA 与 MQA",
    "variants.axis_pick": "比较",
    "variants.axis_help": "每组比较显示基准模型，以及只改了这一处的变体。",
    "variants.explain.norm_place": "**Pre-LN** 对每个子层的输入做归一化：`x + f(norm(x))`；**Post-LN**（原论文）在"
    "加上残差连接之后再归一化：`norm(x + f(x))`。两者的学习率（3e-3）和预热（50 步）相同。",
    "variants.explain.position": "模型怎样得知每个字母的位置：加到 token 嵌入上的固定**正弦**表、**可学习**的表、"
    "**旋转**位置编码（RoPE：在每个注意力层里按位置旋转查询和键，不往嵌入上加任何东西），或者**没有**。",
    "variants.explain.norm": "**层归一化**（LayerNorm）减去均值、除以标准差，再缩放和平移；**RMSNorm** 只除以均方根"
    "再缩放（不减均值，没有偏置）。",
    "variants.explain.attention": "**MHA**：4 个查询头各有自己的键头和值头。**GQA**：2 个键/值头，每个由 2 个查询头"
    "共用。**MQA**：1 个键/值头由全部 4 个查询头共用。键/值头越少，参数越少，生成时的缓存也越小。",
    "variants.curves_caption": "这组比较里所有模型每个优化步的训练损失，画在同一坐标轴上。",
    "variants.em_title": "测试集完全匹配率",
    "variants.measured": "测得：这里测试集完全匹配率最高的是 {best}（{best_em}），最低的是 {worst}（{worst_em}）；"
    "相差 {spread}。",
    "variants.measured_same": "测得：这里每个模型的测试集完全匹配率都在 {worst_em} 到 {best_em} 之间（相差 {spread}）："
    "在这个规模、训练 600 步的情况下，这个改动没有带来明显差别。",
    "variants.word": "所有模型都读 {word}，并把正确答案送进解码器（教师强制），所以每张热力图的行都相同。"
    "交叉注意力，第 {layer} 层，第 {head} 个头（侧栏所选的层和头）：",
    "variants.word_default": "（侧栏的模型不是字母模型，或者侧栏的文本不是这些模型能读的单词，所以本页使用一个固定的单词。）",
    "variants.clamped": "这些模型的解码器有 {layers} 层、每层 {heads} 个头：侧栏的选择已被限制在这个范围内。",
    "variants.map_title": "{model}：第 {layer} 层，第 {head} 个头",
    "variants.writes": "写出 {output}；落在正确源字母上的权重：{score}。",
    "variants.best_head": "它对齐得最好的交叉注意力头：第 {layer} 层，第 {head} 个头（{score}）。",
    "variants.kv_header": "每生成一个 token 的键/值缓存",
    "variants.kv_explain": "解码器逐个 token 生成时，会保留自注意力中之前每个位置的键和值，这样每一步只需计算新的。"
    "这个缓存随每个 token 增长，每个 token 占多少由**键/值**头的数量决定，而不是查询头的数量。",
    "variants.kv_caption": "在每个模型上测得：增量解码 {n} 个 token，然后把缓存里每个键张量和值张量的字节数加起来"
    "（`float32`，与本应用运行时相同），再除以 token 数。公式 2 × 解码器层数 × 键/值头数 × d_head × 4 字节对每个模型"
    "都给出相同的数。",
    "variants.kv_col.model": "模型",
    "variants.kv_col.kv_heads": "键/值头数",
    "variants.kv_col.measured": "实测（32 位浮点，字节）",
    "variants.kv_col.formula": "公式（32 位浮点，字节）",
    "variants.kv_col.float16": "换成 16 位浮点（字节）",
    "variants.kv_col.ratio": "相当于 MHA 的比例",
    "variants.kv_col.em": "测试集完全匹配率",
    "variants.kv_scaled": "按翻译模型的规模（d_model {d_model}，{heads} 个头，解码器 {layers} 层），同一公式在 `float16` "
    "下给出：MHA 每生成一个 token {mha} 字节，{gqa_heads} 个键/值头的 GQA {gqa} 字节，MQA {mqa} 字节。",
    "variants.kv_cross": "交叉注意力的键和值来自编码器的输出；本项目解码时每一步都重新计算它们，所以这里没有它们的缓存。"
    "如果缓存它们，大小按源 token 计，MHA、GQA 和 MQA 之间的比例相同。",
    "variants.how": "制作方法：`python -m model train-variants --force --threads 1` 依次训练并发布每个变体（每 100 步"
    "保存一次检查点；`--resume` 可以接着跑中断的训练）。基准模型也正是“训练过程回放”页面所回放的模型。",
}
