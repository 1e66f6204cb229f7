"""The talk deck (six slides and an exercise) and the figure/tensor downloads every page offers."""

EN = {
    "page.deck.title": "Talk (slides)",
    "deck.sentence": "Sentence of the talk",
    "deck.sentence_help": "Every slide uses this sentence (it is the sidebar's sentence too).",
    "deck.counter": "Slide {n} / {total}",
    "deck.counter_exercise": "Exercise (after slide {total})",
    "deck.prev": "Previous",
    "deck.next": "Next",
    "deck.keys": "Keys: ← → or PageUp / PageDown (a presentation clicker sends these).",
    "deck.notes": "Speaker notes · about {minutes} min",
    "deck.timing": "Six slides, about {minutes} minutes; the exercise adds about {extra}.",
    "deck.open": "Open the full page: {page}",
    "deck.back": "Back to the talk: slide {n}",
    "deck.other_model": "The talk is written for the translation model; this is {model}.",
    "deck.switch": "Switch to the translation model",
    "deck.needs.decoder": "This slide needs a model with a decoder, and {model} has none.",
    "deck.needs.position": "This slide shuffles the words of a sentence and translates it, with and without "
    "the positional encoding: {model} cannot do that.",
    "deck.download": "The whole deck as HTML (offline)",
    "deck.download_help": "The six slides' figures for this sentence in one HTML file with plotly.js inside: "
    "it opens without a network. ← → step through it.",
    "deck.figure_error": "This figure cannot be drawn for this input: {error}",
    # 1
    "deck.1.title": "Attention in one sentence",
    "deck.1.line1": "Soft lookup by relevance: score every key, softmax, weighted sum of the values.",
    "deck.1.line2": "Query {query} · {kind} · layer {layer} · head {head}",
    "deck.1.notes": "Start from the sentence on the screen. One token, the query, asks which tokens matter to "
    "it: q·k measures the match, dividing by √d_head = {scale} keeps the scores in range, and softmax makes "
    "them positive and sum to 1. The tallest bar, key {top_key}, gets {top} of the weight. This head's output "
    "for the query is Σ weight × value. The full page shows every number of this calculation.",
    # 2
    "deck.2.title": "Multi-head split",
    "deck.2.line1": "d_model {d_model} = h {h} × d_head {d_head}: each head computes its own pattern.",
    "deck.2.line2": "Parallel subspaces of one model, concatenated back: not an ensemble of models.",
    "deck.2.notes": "Read the shapes left to right: every number is a real shape of this sentence's pass. The "
    "split is only a view of the same numbers, so {h} heads cost what one wide head costs. The concatenation "
    "and the output projection W_o mix the heads again: they share the input and the output, so they are "
    "not independent models voting.",
    # 3
    "deck.3.title": "Why positional encoding",
    "deck.3.line1": "Attention alone ignores word order; the positional encoding adds it.",
    "deck.3.line2": "Bars: each token's encoder output, sentence vs shuffled copy (cosine).",
    "deck.3.shuffled": "Shuffled: {tokens}",
    "deck.3.notes": "Without the positional encoding every cosine is 1 (up to {gap}): the encoder cannot see "
    "the order at all, so the shuffled sentence gets the same representation. With it, the lowest cosine is "
    "{low}. Then read the table: the translations of the sentence and of its shuffled copy, with and without "
    "the encoding.",
    "deck.3.col.input": "input",
    "deck.3.col.with": "with positional encoding",
    "deck.3.col.without": "without positional encoding",
    "deck.3.row.original": "the sentence",
    "deck.3.row.shuffled": "shuffled",
    # 4
    "deck.4.title": "Residual + LayerNorm",
    "deck.4.line.pre": "Pre-LN (this model): `x + f(LayerNorm(x))`; the residual stream is normalised only at the end.",
    "deck.4.line.post": "Post-LN (this model): `LayerNorm(x + f(x))`; the residual stream is normalised after every add.",
    "deck.4.line2": "The curve: the size ‖x‖ of the residual stream through the layers.",
    "deck.4.notes": "f is the sub-layer: the attention, then the FFN. Each block only adds its result to the stream: that residual path is why deep stacks "
    "train. Where the LayerNorm sits decides what grows: in Pre-LN the stream's norm grows layer by layer "
    "(here from {first:.1f} to {last:.1f} in the encoder before the final norm); Post-LN keeps it fixed. "
    "The full page shows the block's boxes with their shapes.",
    # 5
    "deck.5.title": "The whole architecture",
    "deck.5.line1": "Embedding + positions → {n_enc} encoder blocks → {n_dec} decoder blocks with cross-attention → vocabulary of {vocab}.",
    "deck.5.line2": "Real shapes for this sentence: {l_src} source tokens, {l_tgt} target tokens.",
    "deck.5.notes": "Walk up the left column: tokens become vectors of d_model, the encoder refines them, "
    "and its output is the memory. The decoder reads its own output so far (masked) and looks at the memory "
    "through cross-attention, whose keys and values come from the encoder. The last step scores every entry "
    "of the vocabulary.",
    # 6
    "deck.6.title": "A live case",
    "deck.6.line1": "One head on your sentence: rows are queries, columns are keys.",
    "deck.6.line2": "The same word in two contexts: 苹果 in 苹果公司发布新品 and in 我吃了一个苹果.",
    "deck.6.pair": "Compare both sentences",
    "deck.6.notes": "Pick a head in the sidebar before the talk. Click the two 苹果 sentences and watch the "
    "row of 苹果 change: in the company sentence it looks at 公司, in the eating one at 吃. The comparison "
    "page puts both side by side and ranks the heads by how much they change.",
    "deck.6.no_pair": "The 苹果 pair needs the Chinese ↔ English translation model.",
    # exercise
    "deck.7.title": "Exercise: attention by hand",
    "deck.7.line1": "Work out the scores and the softmax of the first two positions by hand.",
    "deck.7.line2": "q·k, ÷ √{d_head}, softmax: the tables hold the model's own numbers ({n} tokens).",
    "deck.7.query": "Query {query}",
    "deck.7.six": "Use a six-word sentence: {sentence}",
    "deck.7.notes": "Hand out the q and k vectors (the full page prints them). Ask for the scores of the first "
    "two queries against every key, the division by √d_head, then the softmax: subtract the largest score, "
    "exponentiate, divide by the sum. The tables are the answers; every row sums to 1.",
    # downloads (every page)
    "export.png": "PNG ×2",
    "export.svg": "SVG",
    "export.png_help": "Download this figure as a PNG image at twice the screen resolution (for slides)",
    "export.svg_help": "Download this figure as SVG (for papers; a heatmap's cells are one embedded image, "
    "its axes and text stay vector)",
    "export.group": "Download the figure",
    "export.html": "HTML (offline)",
    "export.html_help": "This figure as one HTML file with plotly.js inside: it opens and stays interactive "
    "without a network.",
    "export.header": "Download the attention of this sentence",
    "export.scope": "Which weights",
    "export.scope.all": "all attention kinds",
    "export.scope.kind": "{kind}",
    "export.scope.layer": "{kind}, layer {layer}",
    "export.scope.head": "{kind}, layer {layer}, head {head}",
    "export.csv": "Weights as CSV",
    "export.npz": "Patterns and scores as NPZ",
    "export.caption": "CSV: one row per weight ({rows} rows), columns kind, layer, head, query, key (positions), "
    "query_token, key_token, weight. The full table of this sentence has {total} rows; above {limit} choose "
    "one kind, one layer or one head. NPZ: every attention pattern and score array (float32), one per hook, "
    "computed layer by layer from the queries and keys the pass recorded.",
    "export.npz_part": "Every pattern and score of this sentence would take {size} MiB, more than the {limit} MiB "
    "one file may hold: the NPZ holds {part} ({bytes} MiB), the most around the weights chosen above that fits.",
}

ZH = {
    "page.deck.title": "讲解（幻灯片）",
    "deck.sentence": "讲解用的句子",
    "deck.sentence_help": "每张幻灯片都使用这个句子（它也是侧边栏里的句子）。",
    "deck.counter": "第 {n} / {total} 张",
    "deck.counter_exercise": "练习（第 {total} 张之后）",
    "deck.prev": "上一张",
    "deck.next": "下一张",
    "deck.keys": "按键：← → 或上下翻页键（PageUp / PageDown），演示翻页笔发送的就是这些键。",
    "deck.notes": "讲稿备注 · 约 {minutes} 分钟",
    "deck.timing": "六张幻灯片，约 {minutes} 分钟；练习另需约 {extra} 分钟。",
    "deck.open": "打开完整页面：{page}",
    "deck.back": "回到讲解：第 {n} 张",
    "deck.other_model": "这套讲解是为翻译模型写的；当前是 {model}。",
    "deck.switch": "切换到翻译模型",
    "deck.needs.decoder": "这张幻灯片需要带解码器的模型，而 {model} 没有解码器。",
    "deck.needs.position": "这张幻灯片会打乱句子的词序并翻译，分别在有和没有位置编码的情况下进行：{model} 做不到。",
    "deck.download": "整套幻灯片存为 `HTML`（离线可用）",
    "deck.download_help": "把这个句子的六张幻灯片图表放进一个内含 plotly.js 的 `HTML` 文件：不联网也能打开。用 ← → 翻页。",
    "deck.figure_error": "这个输入无法画出这张图：{error}",
    "deck.1.title": "一句话说清注意力",
    "deck.1.line1": "按相关程度的软查找：给每个键打分，做 softmax，再对值向量加权求和。",
    "deck.1.line2": "查询 {query} · {kind} · 第 {layer} 层 · 头 {head}",
    "deck.1.notes": "从屏幕上的句子讲起。一个 token（查询）要问：哪些 token 对我重要？q·k 衡量匹配程度，"
    "除以 √d_head = {scale} 让分数保持在合适的范围，softmax 让它们都为正且加起来等于 1。最高的那根柱子是键 "
    "{top_key}，得到 {top} 的权重。这个头对该查询的输出就是 Σ 权重 × 值向量。完整页面展示了这个计算的每一个数字。",
    "deck.2.title": "多头拆分",
    "deck.2.line1": "d_model {d_model} = h {h} × d_head {d_head}：每个头计算自己的模式。",
    "deck.2.line2": "同一个模型里并行的子空间，最后拼接回来：不是多个模型的集成。",
    "deck.2.notes": "从左到右读形状：每个数字都是这个句子前向传播中的真实形状。拆分只是同一组数字换了一种看法，"
    "所以 {h} 个头的开销和一个宽头一样。拼接和输出投影 W_o 又把各个头混合起来：它们共享输入和输出，"
    "所以不是各自投票的独立模型。",
    "deck.3.title": "为什么需要位置编码",
    "deck.3.line1": "注意力本身不管词序；位置编码把顺序加了进来。",
    "deck.3.line2": "柱子：每个 token 的编码器输出在原句与打乱句之间的余弦相似度。",
    "deck.3.shuffled": "打乱后：{tokens}",
    "deck.3.notes": "没有位置编码时，每个余弦值都是 1（误差在 {gap} 以内）：编码器根本看不到顺序，所以打乱后的句子得到"
    "同样的表示。有位置编码时，最低的余弦值是 {low}。然后看表格：原句和打乱后的句子的翻译，分别在有和没有位置编码时。",
    "deck.3.col.input": "输入",
    "deck.3.col.with": "有位置编码",
    "deck.3.col.without": "没有位置编码",
    "deck.3.row.original": "原句",
    "deck.3.row.shuffled": "打乱后",
    "deck.4.title": "残差连接 + 层归一化",
    "deck.4.line.pre": "Pre-LN（本模型）：`x + f(LayerNorm(x))`；残差连接上的数据流只在最后做层归一化。",
    "deck.4.line.post": "Post-LN（本模型）：`LayerNorm(x + f(x))`；残差连接上的数据流每次相加后都做层归一化。",
    "deck.4.line2": "曲线：残差连接上的数据流的大小 ‖x‖，逐层变化。",
    "deck.4.notes": "f 是子层：先是注意力，然后是前馈网络。每个块只是把自己的结果加到数据流上：正是这条残差连接让很深的堆叠也能训练。层归一化放在哪里"
    "决定了什么会变大：Pre-LN 中数据流的范数一层层变大（这里编码器在最后的层归一化之前从 {first:.1f} 增加到 "
    "{last:.1f}）；Post-LN 则把它保持不变。完整页面展示了块内的各个方框及其形状。",
    "deck.5.title": "整个架构",
    "deck.5.line1": "嵌入 + 位置 → {n_enc} 个编码器块 → {n_dec} 个带交叉注意力的解码器块 → 大小为 {vocab} 的词表。",
    "deck.5.line2": "这个句子的真实形状：{l_src} 个源 token，{l_tgt} 个目标 token。",
    "deck.5.notes": "沿左边一列往上走：token 变成 d_model 维的向量，编码器不断加工它们，其输出就是记忆（memory）。"
    "解码器读取自己到目前为止的输出（带掩码），并通过交叉注意力查看记忆，交叉注意力的键和值来自编码器。"
    "最后一步给词表里的每一项打分。",
    "deck.6.title": "一个现场实例",
    "deck.6.line1": "你的句子上的一个头：行是查询，列是键。",
    "deck.6.line2": "同一个词的两种语境：苹果公司发布新品 和 我吃了一个苹果 中的 苹果。",
    "deck.6.pair": "对比这两个句子",
    "deck.6.notes": "讲解之前先在侧边栏选好一个头。点击两个含“苹果”的句子，看“苹果”那一行怎样变化：在公司的句子里它看向"
    "“公司”，在吃的句子里看向“吃”。对比页面把两句并排显示，并按变化大小给各个头排序。",
    "deck.6.no_pair": "“苹果”这组句子需要中英翻译模型。",
    "deck.7.title": "练习：手算注意力",
    "deck.7.line1": "手算前两个位置的分数和 softmax。",
    "deck.7.line2": "q·k，÷ √{d_head}，softmax：表格里是模型自己的数字（{n} 个 token）。",
    "deck.7.query": "查询 {query}",
    "deck.7.six": "换成一个六个词的句子：{sentence}",
    "deck.7.notes": "把 q 和 k 向量发给大家（完整页面会把它们打印出来）。让大家算出前两个查询对每个键的分数，"
    "除以 √d_head，再做 softmax：减去最大的分数，取指数，再除以总和。表格就是答案；每一行加起来都等于 1。",
    "export.png": "PNG ×2",
    "export.svg": "SVG",
    "export.png_help": "把这张图下载为两倍屏幕分辨率的 PNG 图片（用于幻灯片）",
    "export.svg_help": "把这张图下载为 SVG（用于论文；热力图的格子是一张嵌入的图片，坐标轴和文字仍是矢量）",
    "export.group": "下载这张图",
    "export.html": "`HTML`（离线可用）",
    "export.html_help": "把这张图存为一个内含 plotly.js 的 `HTML` 文件：不联网也能打开，并且仍可交互。",
    "export.header": "下载这个句子的注意力",
    "export.scope": "导出哪些权重",
    "export.scope.all": "所有注意力种类",
    "export.scope.kind": "{kind}",
    "export.scope.layer": "{kind}，第 {layer} 层",
    "export.scope.head": "{kind}，第 {layer} 层，第 {head} 个头",
    "export.csv": "权重存为 `CSV`",
    "export.npz": "模式和分数存为 npz",
    "export.caption": "`CSV`：每个权重一行（{rows} 行），列为 `kind, layer, head, query, key`（注意力种类、层、头，查询和键的位置）、"
    "`query_token, key_token, weight`。这个句子的完整表格有 {total} 行；超过 {limit} 行时请选择一种注意力、一层或一个头。"
    "npz：每个注意力模式和分数数组（`float32`），每个记录点一个，由前向计算记录的查询和键逐层算出。",
    "export.npz_part": "这个句子的全部模式和分数需要 {size} MiB，超过一个文件最多容纳的 {limit} MiB："
    "npz 只包含{part}（{bytes} MiB）：在上面所选权重的范围内能放下的最大部分。",
}
