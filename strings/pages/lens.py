"""Logit-lens page: what each layer would predict, read through the final norm and the output embedding."""

EN = {
    "lens.grid_window": "The grid shows positions {first}–{last} of {n}, where each cell's token stays readable: "
    "pick a position below to move it.",
    "page.lens.title": "Logit lens",
    "lens.intro": "After every layer, each position's vector in the residual stream is sent through the "
    "model's **final norm** and **output embedding**, exactly as the model computes its real output after "
    "the last layer. Each cell of the grid is that layer's guess for the **next token** at that position: "
    "its most likely token (the text) and that token's probability (the colour). Row *emb* reads the "
    "embeddings before the first layer; the top row is the model's own output.",
    "lens.caveat": "The intermediate layers were **not trained to be read this way**: only the last layer "
    "feeds the output embedding during training. An early layer whose guess looks poor may simply speak "
    "another \"language\" than the output embedding. No tuned lens (a probe trained per layer) is used here: "
    "every row is the plain logit lens.",
    "lens.encoder_only": "This model is encoder-only: it has no output embedding that predicts a next token "
    "(and no masked-language-model head here), so there is nothing for a logit lens to read.",
    "lens.side_lm": "Read on the prompt and on the continuation the model wrote: {prompt} prompt tokens, "
    "{output} output tokens.",
    "lens.side_decoder": "Read on the decoder side: the decoder reads its start token and the output the "
    "model produced ({output} tokens, teacher-forced), with the source in the encoder.",
    "lens.window": "The input has {n} positions; the lens projects the last {shown} (positions {start} to "
    "{stop}). The model still reads the whole input.",
    "lens.running": "Reading every layer through the output embedding…",
    "lens.view": "Colour",
    "lens.view.top": "probability of the top token",
    "lens.view.final": "probability of the final choice",
    "lens.view.entropy": "entropy",
    "lens.view_help": "The text of each cell is always its top token; the colour shows the quantity chosen "
    "here. The final choice is the model's own top next token at that position (the top row).",
    "lens.grid_title": "Each layer's top next token at each position",
    "lens.value.top": "p(top token)",
    "lens.value.final": "p(final choice)",
    "lens.value.entropy": "entropy (nats)",
    "lens.click": "Click a cell to choose its position. The dashed line marks where the output begins; a "
    "position's column predicts the token after it.",
    "lens.pos": "Position",
    "lens.pos_help": "The position whose path through the layers is drawn below (in the link as `pos`).",
    "lens.pos_option": "{pos}: {token}",
    "lens.at_pos": "At position {pos} (reads **{token}**) the model's final choice is **{final}** "
    "(p = {prob}). It is the top token first at layer **{first}**, and stays the top token from layer "
    "**{stays}** on.",
    "lens.position_title": "Position {pos}: the final choice through the layers",
    "lens.position_caption": "Top: the final choice's probability at each layer. Middle: its rank among "
    "all {vocab} tokens of the vocabulary (1 = top; logarithmic axis). Bottom: the entropy of each layer's "
    "distribution, in nats (at most `ln {vocab}` = {max_entropy}).",
    "lens.table": "Every layer at this position",
    "lens.col.layer": "layer",
    "lens.col.top": "top token",
    "lens.col.top_prob": "p(top)",
    "lens.col.rank": "rank of the final choice",
    "lens.col.prob": "p(final choice)",
    "lens.col.entropy": "entropy (nats)",
    "lens.check": "Check: the top row is the model's own output distribution; against the analysis's top-5 "
    "probabilities it differs by at most {delta} (`float32` rounding).",
}

ZH = {
    "lens.grid_window": "网格显示第 {first}–{last} 个位置（共 {n} 个），这样每个格子里的 token 都看得清："
    "在下面选一个位置就能移动它。",
    "page.lens.title": "逐层透镜（logit lens）",
    "lens.intro": "在每一层之后，把每个位置在残差连接上的向量（残差流）送入模型的**最终归一化**和**输出嵌入**，"
    "与模型在最后一层之后计算真实输出的方式完全相同。网格的每个单元格就是这一层对该位置**下一个 token** 的猜测："
    "最可能的 token（文字）及其概率（颜色）。*嵌入* 这一行读取第一层之前的嵌入；最上面一行就是模型自己的输出。",
    "lens.caveat": "中间层**并没有被训练成可以这样读取**：训练时只有最后一层接到输出嵌入上。"
    "某个早期层的猜测看起来很差，可能只是因为它使用的“语言”与输出嵌入不同。这里没有使用调校透镜"
    "（tuned lens），即为每一层单独训练的探针：每一行都是最朴素的逐层透镜。",
    "lens.encoder_only": "这是一个只有编码器的模型：它没有预测下一个 token 的输出嵌入"
    "（这里也没有掩码语言模型头），所以逐层透镜无从读取。",
    "lens.side_lm": "读取的是提示和模型续写的内容：{prompt} 个提示 token，{output} 个输出 token。",
    "lens.side_decoder": "读取的是解码器一侧：解码器读入起始 token 和模型生成的输出（{output} 个 token，"
    "教师强制），源句由编码器读入。",
    "lens.window": "输入共有 {n} 个位置；逐层透镜只投影最后 {shown} 个（位置 {start} 到 {stop}）。"
    "模型仍然读入整个输入。",
    "lens.running": "正在把每一层送入输出嵌入…",
    "lens.view": "颜色",
    "lens.view.top": "最可能 token 的概率",
    "lens.view.final": "最终选择的概率",
    "lens.view.entropy": "熵",
    "lens.view_help": "每个单元格的文字始终是最可能的 token；颜色显示这里选择的量。"
    "最终选择是模型自己在该位置给出的最可能的下一个 token（最上面一行）。",
    "lens.grid_title": "每一层在每个位置上最可能的下一个 token",
    "lens.value.top": "p（最可能的 token）",
    "lens.value.final": "p（最终选择）",
    "lens.value.entropy": "熵（nats）",
    "lens.click": "点击单元格即可选择其位置。虚线标出输出开始的地方；每个位置的这一列预测的是它后面的 token。",
    "lens.pos": "位置",
    "lens.pos_help": "下面画出这个位置穿过各层的路径（链接里记为 `pos`）。",
    "lens.pos_option": "{pos}：{token}",
    "lens.at_pos": "在位置 {pos}（读入 **{token}**），模型的最终选择是 **{final}**（p = {prob}）。"
    "它在第 **{first}** 层首次成为最可能的 token，并从第 **{stays}** 层起一直保持最可能。",
    "lens.position_title": "位置 {pos}：最终选择在各层的变化",
    "lens.position_caption": "上：最终选择在每一层的概率。中：它在词表全部 {vocab} 个 token 中的排名"
    "（1 = 最高；对数坐标轴）。下：每一层分布的熵，单位 nats（最大为 `ln {vocab}` = {max_entropy}）。",
    "lens.table": "这个位置上的每一层",
    "lens.col.layer": "层",
    "lens.col.top": "最可能的 token",
    "lens.col.top_prob": "p（最可能）",
    "lens.col.rank": "最终选择的排名",
    "lens.col.prob": "p（最终选择）",
    "lens.col.entropy": "熵（nats）",
    "lens.check": "检验：最上面一行就是模型自己的输出分布；与分析结果的前 5 个概率相比，最大差异为 {delta}"
    "（`float32` 舍入误差）。",
}
