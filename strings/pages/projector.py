"""Representation projector page: one word's vector at every layer over many sentences, and where its senses
come apart."""

EN = {
    "page.projector.title": "Representation projector",
    "projector.intro": "Take one word and many sentences that contain it. After every layer the model holds "
    "one vector per token in its residual stream; this page takes **the word's vector in each sentence** and "
    "draws them on a plane: the two directions in which these vectors differ most at that layer (principal "
    "component analysis, PCA). Colour the points by the sense each sentence gives the word and move through "
    "the layers: where the colours come apart, the model's vectors tell the senses apart.",
    "projector.letters": "This model reads strings of letters, not sentences: a word has no senses here to tell "
    "apart. Choose MiniLM, the translation model or a language model in the sidebar.",
    "projector.preset": "Sentences",
    "projector.preset.apple": "苹果: the company or the fruit (24 Chinese sentences)",
    "projector.preset.bank": "bank: money or a river (24 English sentences)",
    "projector.preset.own": "My own sentences",
    "projector.preset_help": "Two prepared lists, each sentence with its sense, or your own sentences (in the "
    "link as `preset`; your own travel as `sentences`). Choosing your own starts from the list shown before.",
    "projector.sense.company": "company",
    "projector.sense.fruit": "fruit",
    "projector.sense.money": "money",
    "projector.sense.river": "river",
    "projector.word": "Word",
    "projector.word_help": "The word looked for in every sentence (not case-sensitive; a word of letters must "
    "stand alone: `bank` is not found in `banking`). Where it occurs twice, the first is used. In the link "
    "as `word`.",
    "projector.sentences": "Your sentences, one a line: label: sentence",
    "projector.sentences_help": "Write each sentence on its own line. Text before the first colon (up to 24 "
    "characters) is its sense label, e.g. `fruit: I ate an apple.`; a line without one is drawn but left out of "
    "the ratio. At most {limit} sentences.",
    "projector.clipped": "The sentences in the link had {cut_from} characters; the box takes at most {limit}, "
    "so only the first {limit} were kept.",
    "projector.cap": "Only the first {limit} sentences are read: {dropped} more lines were left out.",
    "projector.color": "Colour by",
    "projector.color.sense": "sense label",
    "projector.color.sentence": "sentence",
    "projector.color_help": "By sense: one colour per label, in the legend. By sentence: each sentence its own "
    "colour and number (the shape still shows its sense). In the link as `color`.",
    "projector.no_word": "Type a word to look for in the sentences.",
    "projector.no_sentences": "Type at least two sentences that contain the word, one a line.",
    "projector.reads.encoder_only": "Read in the encoder: every token sees the whole sentence, the words after "
    "the word included.",
    "projector.reads.encoder_decoder": "Read in the translation model's encoder, which reads your sentence "
    "(its decoder reads the translation): every token sees the whole sentence.",
    "projector.reads.decoder_only": "Read in the decoder of this decoder-only model. Its attention is causal: the "
    "word's vector has seen only the tokens before it, so the words after it (公司 in 苹果公司…) cannot change "
    "it, and where the word comes first every sentence gives it the same vector.",
    "projector.running": "Reading {n} sentences through every layer…",
    "projector.skipped": "{n} of {total} sentences skipped:",
    "projector.skip.absent": "sentence {number} (“{sentence}”): “{word}” is not in it.",
    "projector.skip.lost": "sentence {number} (“{sentence}”): the model's tokens do not hold “{word}” (its "
    "tokenizer writes it as something else, e.g. `[UNK]`).",
    "projector.skip.cut": "sentence {number} (“{sentence}”): “{word}” comes after the {max_len} tokens the "
    "model reads.",
    "projector.skip.unreadable": "sentence {number} (“{sentence}”): the model cannot read this text.",
    "projector.too_few": "Only {n} sentence(s) hold the word: at least two are needed to draw anything.",
    "projector.pieces_mean": "On this model the word is **{n} tokens** in the first sentence ({pieces}): each "
    "point is the **mean** of those tokens' vectors.",
    "projector.pieces_vary": "The word is not cut the same way in every sentence ({lo} to {hi} tokens); each "
    "point is the mean of its own sentence's tokens.",
    "projector.pieces_one": "On this model the word is one token ({pieces}).",
    "projector.repeated": "The word occurs more than once in {n} sentence(s) (number {which}); the first "
    "occurrence is used.",
    "projector.at_start": "The word begins {n} sentence(s) (number {which}). This model has read nothing "
    "before it there, so each such sentence gives it the same vector, whatever follows; and the first "
    "position of a text is where a language model parks attention it does not need (an attention sink), with "
    "a vector unlike any other. Start those sentences with another word to compare senses fairly.",
    "projector.no_ratio": "No ratio: it needs at least two sense labels and two sentences with one label. "
    "Colour by sentence, or give the sentences labels.",
    "projector.summary": "The senses lie farthest apart at **{where}**: between ÷ within = **{ratio}** "
    "(embeddings: {first}; last layer: {last}).",
    "projector.where.embed": "the embeddings",
    "projector.where.block": "layer {row}",
    "projector.embed_position": "At the embeddings the word's vector is the same token's vector in every "
    "sentence, plus its position where the model adds one: any separation there comes from where the word "
    "stands, not from what it means.",
    "projector.row": "Layer",
    "projector.row_help": "The layer whose vectors are drawn (emb = the embeddings the first layer receives). "
    "Opens at the layer where the senses lie farthest apart. In the link as `row`.",
    "projector.scatter_title": "“{word}” at {where}: one point per sentence",
    "projector.scatter_caption": "The plane is fitted at this layer alone (PCA of the word's vectors, centred): "
    "the axes of two layers are different directions. The two components hold {pc1} and {pc2} of the variance; "
    "the rest is not drawn.",
    "projector.ratio_title": "“{word}”: distance between senses ÷ within a sense, by layer",
    "projector.ratio_caption": "Ratio = mean cosine distance (`1 − cos`) between sentences of different senses ÷ "
    "mean cosine distance between sentences of the same sense, over the full vectors (not the 2-D picture). "
    "1: the senses are mixed; above 1: they lie apart. Cosine ignores the vectors' lengths, which grow from "
    "layer to layer. A gap: every vector is the same there (e.g. the embeddings of one token), so there is "
    "nothing to divide.",
    "projector.computed": "{n} sentences in {batches} padded batch(es) in {seconds} s; the vectors are read at "
    "`{hook}`.",
    "projector.table": "Every layer",
    "projector.sentences_table": "The sentences read",
    "projector.col.layer": "layer",
    "projector.col.ratio": "between ÷ within",
    "projector.col.between": "between senses",
    "projector.col.within": "within a sense",
    "projector.col.pc1": "variance share, component 1",
    "projector.col.pc2": "variance share, component 2",
    "projector.col.number": "number",
    "projector.col.sense": "sense",
    "projector.col.sentence": "sentence as read",
    "projector.col.pieces": "the word's tokens",
}

ZH = {
    "page.projector.title": "表示投影",
    "projector.intro": "选一个词和许多包含它的句子。每一层之后，模型在残差连接上（残差流）为每个 token 保存一个向量；"
    "本页取出**这个词在每个句子中的向量**，把它们画在一个平面上：这一层里这些向量差别最大的两个方向"
    "（主成分分析（PCA））。按每个句子中这个词的词义给点上色，再逐层查看：颜色分开的那一层，"
    "模型的向量就能区分这两个词义。",
    "projector.letters": "这个模型读入的是字母串，不是句子：这里的词没有可以区分的词义。"
    "请在侧边栏选择 MiniLM、翻译模型或语言模型。",
    "projector.preset": "句子",
    "projector.preset.apple": "苹果：公司还是水果（24 个中文句子）",
    "projector.preset.bank": "英文词（bank）：银行还是河岸（24 个英文句子）",
    "projector.preset.own": "我自己的句子",
    "projector.preset_help": "两份准备好的句子列表，每个句子都标有词义；也可以输入自己的句子"
    "（链接里记为 `preset`；自己的句子记为 `sentences`）。选择自己的句子时，从之前显示的列表开始编辑。",
    "projector.sense.company": "公司",
    "projector.sense.fruit": "水果",
    "projector.sense.money": "银行",
    "projector.sense.river": "河岸",
    "projector.word": "词",
    "projector.word_help": "在每个句子中查找的词（不区分大小写；由字母组成的词必须单独出现：`banking` 中找不到 "
    "`bank`）。出现两次时使用第一次。链接里记为 `word`。",
    "projector.sentences": "你的句子，每行一句：标签: 句子",
    "projector.sentences_help": "每个句子单独写一行。第一个冒号之前的文字（最多 24 个字符）是它的词义标签，"
    "例如 `水果: 我吃了一个苹果。`；没有标签的行会画出来，但不计入比值。最多 {limit} 个句子。",
    "projector.clipped": "链接中的句子有 {cut_from} 个字符；输入框最多接受 {limit} 个，所以只保留了前 {limit} 个。",
    "projector.cap": "只读入前 {limit} 个句子：另外 {dropped} 行被略去。",
    "projector.color": "上色依据",
    "projector.color.sense": "词义标签",
    "projector.color.sentence": "句子",
    "projector.color_help": "按词义：每个标签一种颜色，见图例。按句子：每个句子有自己的颜色和编号"
    "（形状仍表示词义）。链接里记为 `color`。",
    "projector.no_word": "请输入要在句子中查找的词。",
    "projector.no_sentences": "请至少输入两个包含这个词的句子，每行一句。",
    "projector.reads.encoder_only": "在编码器中读取：每个 token 都能看到整个句子，包括这个词后面的词。",
    "projector.reads.encoder_decoder": "在翻译模型的编码器中读取，它读入你的句子（解码器读入的是译文）："
    "每个 token 都能看到整个句子。",
    "projector.reads.decoder_only": "在这个只有解码器的模型的解码器中读取。它的注意力是因果的：这个词的向量只看到了"
    "它前面的 token，所以它后面的词（苹果公司…中的公司）无法改变它；这个词出现在句首时，每个句子给它的向量都相同。",
    "projector.running": "正在让 {n} 个句子穿过每一层…",
    "projector.skipped": "{total} 个句子中跳过了 {n} 个：",
    "projector.skip.absent": "第 {number} 句（“{sentence}”）：其中没有 “{word}”。",
    "projector.skip.lost": "第 {number} 句（“{sentence}”）：模型的 token 中找不到 “{word}”"
    "（它的分词器把它写成了别的东西，例如 `[UNK]`）。",
    "projector.skip.cut": "第 {number} 句（“{sentence}”）：“{word}” 出现在模型读入的 {max_len} 个 token 之后。",
    "projector.skip.unreadable": "第 {number} 句（“{sentence}”）：模型无法读入这段文字。",
    "projector.too_few": "只有 {n} 个句子包含这个词：至少需要两个才能画图。",
    "projector.pieces_mean": "在这个模型上，这个词在第一个句子中是 **{n} 个 token**（{pieces}）："
    "每个点是这些 token 的向量的**平均值**。",
    "projector.pieces_vary": "这个词在各个句子中的切分并不相同（{lo} 到 {hi} 个 token）；每个点是它所在句子中这些 "
    "token 的平均值。",
    "projector.pieces_one": "在这个模型上，这个词是一个 token（{pieces}）。",
    "projector.repeated": "这个词在 {n} 个句子中出现了不止一次（第 {which} 句）；使用第一次出现。",
    "projector.at_start": "这个词出现在 {n} 个句子的开头（第 {which} 句）。在那里模型还没有读到它前面的任何内容，"
    "所以无论后面是什么，这些句子给它的向量都相同；而且文本的第一个位置是语言模型安放多余注意力的地方"
    "（注意力汇聚点（attention sink）），那里的向量与其他位置都不一样。要公平地比较词义，请让这些句子以别的词开头。",
    "projector.no_ratio": "没有比值：它至少需要两个词义标签，并且某个标签下至少有两个句子。"
    "可以按句子上色，或者给句子加上标签。",
    "projector.summary": "词义在**{where}**分得最开：词义之间 ÷ 词义之内 = **{ratio}**"
    "（嵌入：{first}；最后一层：{last}）。",
    "projector.where.embed": "嵌入",
    "projector.where.block": "第 {row} 层",
    "projector.embed_position": "在嵌入这一行，这个词在每个句子中的向量都是同一个 token 的向量，"
    "模型若加入位置编码，再加上它的位置：那里的任何分离都来自这个词所在的位置，而不是它的意思。",
    "projector.row": "层",
    "projector.row_help": "画出哪一层的向量（嵌入 = 第一层接收的嵌入）。默认打开词义分得最开的那一层。"
    "链接里记为 `row`。",
    "projector.scatter_title": "“{word}” 在{where}：每个句子一个点",
    "projector.scatter_caption": "这个平面只在这一层上拟合（对这个词的向量做中心化的主成分分析）："
    "两层的坐标轴是不同的方向。两个主成分分别占方差的 {pc1} 和 {pc2}；其余部分没有画出。",
    "projector.ratio_title": "“{word}”：词义之间的距离 ÷ 词义之内的距离，逐层",
    "projector.ratio_caption": "比值 = 不同词义的句子之间的平均余弦距离（`1 − cos`）÷ 同一词义的句子之间的平均余弦距离，"
    "用的是完整的向量（不是二维图）。1：词义混在一起；大于 1：词义分开。余弦不看向量的长度，"
    "而长度在层与层之间会变大。空缺：那里所有向量都相同（例如同一个 token 的嵌入），没有可除的量。",
    "projector.computed": "{n} 个句子，分成 {batches} 个填充批次，用时 {seconds} 秒；向量读取自 `{hook}`。",
    "projector.table": "每一层",
    "projector.sentences_table": "读入的句子",
    "projector.col.layer": "层",
    "projector.col.ratio": "词义之间 ÷ 词义之内",
    "projector.col.between": "不同词义之间",
    "projector.col.within": "同一词义之内",
    "projector.col.pc1": "方差占比，第 1 主成分",
    "projector.col.pc2": "方差占比，第 2 主成分",
    "projector.col.number": "编号",
    "projector.col.sense": "词义",
    "projector.col.sentence": "读入的句子",
    "projector.col.pieces": "这个词的 token",
}
