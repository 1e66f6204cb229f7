"""Three families, one sentence: an encoder-only model, the encoder-decoder and a decoder-only model."""

EN = {
    "families.intro": "The original Transformer is an **encoder–decoder**: the encoder *reads* the input, "
    "every position seeing every other one (bidirectional); the decoder *writes* the output one token after "
    "another, each position seeing only earlier ones (causal), and reads the encoder's result through "
    "cross-attention. Today's models mostly keep one half: **encoder-only** models (BERT and its family, "
    "here MiniLM) read a text and turn it into vectors; **decoder-only** models (GPT and its family, here "
    "SmolLM2) continue a text. Below, one sentence goes through one model of each family, side by side.",
    "families.example": "The cat sat on the mat.",
    "families.sentence": "The sentence",
    "families.sentence_help": "All three models read this sentence. MiniLM reads English only (lower case); "
    "the translation model reads English or Chinese; SmolLM2 reads any text.",
    "families.use_sidebar": "Use the sidebar's sentence",
    "families.use_sidebar_help": "Copy the sidebar's sentence here: {text}",
    "families.no_words": "Type a sentence with at least one word.",
    "families.word": "The word to follow",
    "families.word_help": "Each model splits the sentence into its own tokens; the word is mapped to the "
    "token(s) that hold it in each model.",
    "families.word_again": "{word} (occurrence {n})",
    "families.encoder_only.name": "Encoder-only",
    "families.encoder_decoder.name": "Encoder–decoder",
    "families.decoder_only.name": "Decoder-only",
    "families.sees_header": "What each position may see.",
    "families.encoder_only.sees": "Encoder self-attention only, without a mask: every token sees every "
    "token, before and after it (bidirectional).",
    "families.encoder_decoder.sees": "Three attentions: the encoder's is bidirectional; the decoder's "
    "self-attention is causal (grey: the future); cross-attention lets every output token see the whole "
    "input.",
    "families.decoder_only.sees": "Decoder self-attention only, with the causal mask: every token sees "
    "itself and the tokens before it, never a later one; the prompt is read the same way.",
    "families.for_header": "What it is for.",
    "families.encoder_only.for": "A sentence embedding: the encoder's output vectors, averaged over the "
    "tokens, give one vector for the whole sentence, for search and comparison.",
    "families.encoder_decoder.for": "A translation: the decoder writes a new sentence, reading the input "
    "through cross-attention.",
    "families.decoder_only.for": "A continuation: the model writes what comes next, one token at a time.",
    "families.embedding": "Embedding: **{dim}** numbers; before it is scaled to length 1 its length is "
    "**{norm}**. Cosine with a few other sentences:",
    "families.col.sentence": "other sentence",
    "families.col.cosine": "cosine",
    "families.cosine_caption": "Cosine of the two sentence embeddings (1 = the same direction): sentences "
    "close in meaning score higher.",
    "families.encoder_decoder.output": "Translation:",
    "families.decoder_only.output": "Continuation (greedy, at most {n} new tokens):",
    "families.line_breaks": "↵ = a line break the model wrote.",
    "families.word_header": "Attention of “{word}”",
    "families.word_tokens": "Here “{word}” is {n} token(s): {tokens}. The bars: the mean attention row of "
    "these token(s), over every layer and head.",
    "families.word_lost": "This model's tokens do not hold “{word}” (it reads it as an unknown token or not "
    "at all).",
    "families.row_title": "{kind}: the word as the query",
    "families.cross_title": "Cross-attention: how much each output token reads the word",
    "families.axis_output_token": "output token (query)",
    "families.trace_header": "Shapes, from the real tensors:",
    "families.step.ids": "ids",
    "families.step.source_ids": "source ids",
    "families.step.target_ids": "target ids",
    "families.step.embedded": "embedded",
    "families.step.encoder_out": "encoder output",
    "families.step.decoder_out": "decoder output",
    "families.step.logits": "logits",
    "families.step.embedding": "sentence embedding (mean over tokens)",
    "families.read_cut_page": "{model} read the first {read} tokens of this sentence's {total:,}: this page "
    "reads at most {bound} per model, so three models answer together (its own pages read up to {max_len:,}).",
    "families.read_cut_model": "{model} read the first {read} tokens of this sentence's {total:,}: it reads at "
    "most {max_len:,}.",
    "families.words_cut": "The word list holds the first {bound} of the sentence's {n:,} words: no model reads "
    "further on this page (each word is at least one token).",
    "families.positions": "Positions shown",
    "families.positions_help": "The row has {n} positions; the bars show {per} at a time.",
    "families.missing": "{model} is not available here (its model or package is not installed), so this "
    "column stays empty.",
    "families.summary": "Same sentence, three masks, three jobs. The encoder sees the whole sentence at once, "
    "so it is good at *understanding* it; the decoder sees only the past, so it can *generate*, one token "
    "after another; the encoder–decoder does both, and cross-attention connects them. Note that the "
    "decoder-only model's word row has weight only on the word and the tokens before it.",
}

ZH = {
    "families.intro": "最初的 Transformer 是一个**编码器–解码器**结构：编码器负责*读懂*输入，"
    "每个位置都能看到所有其他位置（双向）；解码器负责*写出*输出，一个 token 接一个 token，"
    "每个位置只能看到前面的位置（因果），并通过交叉注意力读取编码器的结果。"
    "如今的模型大多只保留其中一半：**只有编码器**的模型（BERT 系，这里是 MiniLM）把一段文本读成向量；"
    "**只有解码器**的模型（GPT 系，这里是 SmolLM2）接着一段文本往下写。"
    "下面把同一个句子分别送进每个家族的一个模型，并排对比。",
    "families.example": "猫坐在垫子上。",
    "families.sentence": "句子",
    "families.sentence_help": "三个模型读的都是这个句子。MiniLM 只读英文（小写）；翻译模型读英文或中文；"
    "SmolLM2 什么文本都能读。",
    "families.use_sidebar": "使用侧边栏的句子",
    "families.use_sidebar_help": "把侧边栏的句子复制到这里：{text}",
    "families.no_words": "请输入一个至少含有一个词的句子。",
    "families.word": "要跟踪的词",
    "families.word_help": "每个模型都用自己的方式把句子切成 token；这个词在每个模型里对应到包含它的那些 token。",
    "families.word_again": "{word}（第 {n} 次出现）",
    "families.encoder_only.name": "只有编码器",
    "families.encoder_decoder.name": "编码器–解码器",
    "families.decoder_only.name": "只有解码器",
    "families.sees_header": "每个位置能看到什么。",
    "families.encoder_only.sees": "只有编码器自注意力，没有掩码：每个 token 都能看到所有 token，"
    "无论在它前面还是后面（双向）。",
    "families.encoder_decoder.sees": "三种注意力：编码器的是双向的；解码器的自注意力是因果的（灰色：未来）；"
    "交叉注意力让每个输出 token 都能看到整个输入。",
    "families.decoder_only.sees": "只有解码器自注意力，带因果掩码：每个 token 能看到它自己和它前面的 token，"
    "绝不能看后面的；提示也是这样读的。",
    "families.for_header": "它是做什么用的。",
    "families.encoder_only.for": "句子嵌入：把编码器输出的向量在所有 token 上取平均，得到代表整个句子的一个向量，"
    "用于检索和比较。",
    "families.encoder_decoder.for": "翻译：解码器写出一个新句子，同时通过交叉注意力读取输入。",
    "families.decoder_only.for": "续写：模型一个 token 接一个 token 地写出接下来的内容。",
    "families.embedding": "嵌入：**{dim}** 个数；在被缩放到长度 1 之前，它的长度是 **{norm}**。"
    "与另外几个句子的余弦相似度：",
    "families.col.sentence": "另一个句子",
    "families.col.cosine": "余弦相似度",
    "families.cosine_caption": "两个句子嵌入的余弦相似度（1 = 方向相同）：意思相近的句子得分更高。",
    "families.encoder_decoder.output": "翻译：",
    "families.decoder_only.output": "续写（贪心解码，最多 {n} 个新 token）：",
    "families.line_breaks": "↵ = 模型写出的换行。",
    "families.word_header": "“{word}”的注意力",
    "families.word_tokens": "在这里“{word}”是 {n} 个 token：{tokens}。柱子表示这些 token 的平均注意力行"
    "（对所有层和所有头取平均）。",
    "families.word_lost": "这个模型的 token 里没有“{word}”（它把这个词读成未知 token，或者根本没有读进去）。",
    "families.row_title": "{kind}：这个词作为查询",
    "families.cross_title": "交叉注意力：每个输出 token 在多大程度上读这个词",
    "families.axis_output_token": "输出 token（查询）",
    "families.trace_header": "形状，来自真实的张量：",
    "families.step.ids": "编号",
    "families.step.source_ids": "源编号",
    "families.step.target_ids": "目标编号",
    "families.step.embedded": "嵌入之后",
    "families.step.encoder_out": "编码器输出",
    "families.step.decoder_out": "解码器输出",
    "families.step.logits": "分数（logits）",
    "families.step.embedding": "句子嵌入（对 token 取平均）",
    "families.read_cut_page": "{model} 只读了这个句子 {total:,} 个 token 中的前 {read} 个：这个页面每个模型最多读 "
    "{bound} 个，好让三个模型一起给出结果（它自己的页面最多读 {max_len:,} 个）。",
    "families.read_cut_model": "{model} 只读了这个句子 {total:,} 个 token 中的前 {read} 个：它最多读 {max_len:,} 个。",
    "families.words_cut": "词列表只列出句子 {n:,} 个词中的前 {bound} 个：在这个页面上没有模型会读得更远"
    "（每个词至少是一个 token）。",
    "families.positions": "显示的位置",
    "families.positions_help": "这一行有 {n} 个位置；柱状图一次显示 {per} 个。",
    "families.missing": "{model} 在这里不可用（它的模型或软件包没有安装），所以这一列是空的。",
    "families.summary": "同一个句子，三种掩码，三种用途。编码器一次看到整个句子，所以擅长*理解*它；"
    "解码器只能看到过去，所以能够*生成*，一个 token 接一个 token；编码器–解码器两者兼有，"
    "由交叉注意力把两边连起来。注意：只有解码器的模型中，这个词的注意力行只在这个词和它前面的 token 上有权重。",
}
