"""Step-by-step decoding page."""

EN = {
    "decoding.intro": "The decoder writes the output **one token at a time** (greedy decoding: always the most "
    "likely next token). At each step it reads what it has written so far with **masked "
    "self-attention** and looks back at the source sentence with **cross-attention**; then it "
    "scores every token of its vocabulary. Move the slider to replay the steps.",
    "decoding.slider": "Decoding step",
    "decoding.slider_help": "Step t produces output token t.",
    "decoding.step_read": "**Step {step}** — the decoder has read {tokens}  \nand chooses **{token}**",
    "decoding.step_prob": " (probability {p:.1%}).",
    "decoding.teacher_forced": "Teacher-forced: the output is the given target, not the model's own choice.",
    "decoding.cross_title": "Step {step}: cross-attention of every head",
    "decoding.cross_caption": "One row per decoder layer · head. Each row is a distribution over the source tokens: "
    "where that head looks in the source while this output token is chosen.",
    "decoding.topk_title": "Step {step}: most likely next tokens",
    "decoding.topk_caption": "The model's probabilities for the next token; greedy decoding takes the top one.",
    "decoding.cross_row_title": "Cross-attention row, layer {layer} · head {head}",
    "decoding.self_row_title": "Self-attention row, layer {layer} · head {head}",
    "decoding.rows_caption": "Left: the selected head's cross-attention row at this step. Right: the same head's "
    "masked self-attention row — grey keys lie in the future and cannot be seen.",
}

ZH = {
    "decoding.intro": "解码器**一次一个 token** 地写出输出，用的是贪心解码（greedy decoding）："
    "每一步都取最可能的下一个 token。每一步，它先用**掩码自注意力**（masked self-attention）读取"
    "自己已经写出的内容，再用**交叉注意力**（cross-attention）回看源句子；然后给词表（vocabulary）里的"
    "每个 token 打分。拖动滑块即可一步步回放。",
    "decoding.slider": "解码步",
    "decoding.slider_help": "第 t 步产生第 t 个输出 token。",
    "decoding.step_read": "**第 {step} 步**——解码器已经读入 {tokens}  \n并选择了 **{token}**",
    "decoding.step_prob": "（概率 {p:.1%}）。",
    "decoding.teacher_forced": "教师强制（teacher forcing）：输出是给定的目标序列，而不是模型自己的选择。",
    "decoding.cross_title": "第 {step} 步：每个注意力头的交叉注意力",
    "decoding.cross_caption": "解码器的每个“层 · 头”占一行。每一行是源 token 上的一个分布："
    "在选出这个输出 token 时，那个头在源句子里看向哪里。",
    "decoding.topk_title": "第 {step} 步：最可能的下一个 token",
    "decoding.topk_caption": "模型给出的下一个 token 的概率；贪心解码取概率最高的那个。",
    "decoding.cross_row_title": "交叉注意力的一行，第 {layer} 层 · 头 {head}",
    "decoding.self_row_title": "自注意力的一行，第 {layer} 层 · 头 {head}",
    "decoding.rows_caption": "左：所选注意力头在这一步的交叉注意力行。右：同一个头的掩码自注意力行——"
    "灰色的键位于未来，还看不到。",
}
