"""Compare page: the same head on two sentences. Preset sentences are model input and stay as they are."""

EN = {
    "compare.intro": "The same word can mean different things: does the model *attend* differently when the "
    "context changes? Type two sentences that share a word, pick the shared token, and compare the "
    "selected head on both (same layer, head and colour scale), the token's attention row in each, "
    "and a ranking of the heads whose attention changes most.",
    "compare.preset.apple": "苹果: company vs. fruit",
    "compare.preset.bank": "bank: money vs. river",
    "compare.preset.anagram": "listen / silent (same letters)",
    "compare.preset.banana": "banana / bandana",
    "compare.presets": "Presets — one click:",
    # the sentences' names, in the boxes and in the compare figure (viz.compare) alike
    "compare.sentence_a": "Sentence A",
    "compare.sentence_b": "Sentence B",
    "compare.empty": "Sentence {which} is empty — type a sentence that shares a word with the other one.",
    "compare.input_error": "Sentence {which}: {error}",
    "compare.output": "Output: **{output}**",
    "compare.embedding": "Cosine similarity of the two sentence embeddings: **{cos}**",
    "compare.embedding_help": "What this model is for: each sentence becomes one vector of {d} numbers, the mean "
    "of the encoder output over all its tokens (the start and end tokens included: [CLS] and [SEP], or <s> and "
    "</s>), divided by its length, as sentence-transformers does. 1 = the same direction; how low unrelated "
    "sentences go depends on the model: near 0 for MiniLM, about 0.7 for e5, whose vectors all lie in a "
    "narrow cone (compare its cosines with each other, not with MiniLM's).",
    "compare.subheader": "{kind} · layer {layer} · head {head}, on both sentences",
    "compare.no_shared": "The two sentences share no query token for this attention kind, so their rows cannot be "
    "compared. Try sentences with a word in common (or another attention kind).",
    "compare.token": "Shared token to follow",
    "compare.token_help": "Tokens present in both sentences (as queries of this attention kind). Word starts in the "
    "translation model's English tokens carry “▁”.",
    "compare.row_diff_caption": "Top two: where the token looks in each sentence. Bottom: B − A on the keys both "
    "sentences share (blue = more attention in B, red = less).",
    "compare.ranking_title": "**Heads ranked by how much this token's attention changes**",
    "compare.select_row": "Select a row to show that head above.",
}

ZH = {
    "compare.intro": "同一个词在不同的语境里可以有不同的意思：语境变了，模型的*注意力*（attention）会不会也跟着变？"
    "输入两个含有同一个词的句子，选出它们共有的 token，然后对比三样东西：所选注意力头在两个句子上的"
    "注意力图（同一层、同一个头、同一个色标）；这个 token 在两句中各自的注意力行；以及按注意力变化"
    "大小排列的注意力头排名。",
    "compare.preset.apple": "苹果：公司还是水果",
    "compare.preset.bank": "`bank`：银行还是河岸",
    "compare.preset.anagram": "`listen` / `silent`（字母相同）",
    "compare.preset.banana": "`banana` / `bandana`",
    "compare.presets": "预设示例（点一下即可）：",
    "compare.sentence_a": "句子 A",
    "compare.sentence_b": "句子 B",
    "compare.empty": "句子 {which} 是空的——请输入一个与另一句有共同词语的句子。",
    "compare.input_error": "句子 {which}：{error}",
    "compare.output": "输出：**{output}**",
    "compare.embedding": "两个句子嵌入（embedding）的余弦相似度：**{cos}**",
    "compare.embedding_help": "这正是这个模型的用途：每个句子变成一个 {d} 维的嵌入向量——编码器输出在全部 token 上的平均"
    "（包括开始和结束 token：`[CLS]` 和 `[SEP]`，或 `<s>` 和 `</s>`），再除以它的长度，和 `sentence-transformers` "
    "的做法一样。1 表示方向相同；无关句子的得分有多低取决于模型：MiniLM 接近 0，e5 约为 0.7，"
    "因为它的向量都落在一个很窄的锥体里（e5 的余弦值只能彼此比较，不能和 MiniLM 的比较）。",
    "compare.subheader": "{kind} · 第 {layer} 层 · 头 {head}：两个句子上的对比",
    "compare.no_shared": "在这种注意力类型下，两个句子没有共同的查询（query）token，所以无法比较它们的行。"
    "试试含有共同词语的句子（或换一种注意力类型）。",
    "compare.token": "要跟踪的共有 token",
    "compare.token_help": "两个句子里都出现的 token（作为这种注意力类型的查询）。在翻译模型的英文 token 里，"
    "一个词的开头带有“▁”。",
    "compare.row_diff_caption": "上面两张图：这个 token 在各自句子里看向哪里。下面一张：在两个句子共有的键（key）上"
    "的差 B − A（蓝色 = 在 B 中注意力更多，红色 = 更少）。",
    "compare.ranking_title": "**按这个 token 的注意力变化大小排列的注意力头**",
    "compare.select_row": "选中一行，上方就会显示那个注意力头。",
}
