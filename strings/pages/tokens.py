"""How the attention pages show a sentence's tokens: word pieces merged into words, [CLS]/[SEP] hidden.

Keys ending in ``_sp`` are the words for a SentencePiece tokenizer (e5: ``▁`` begins a word, ``<s>``
and ``</s>`` frame the input, a fixed prefix comes before the text); the others are WordPiece's (MiniLM).
"""

EN = {
    "tokens.merge": "Merge word pieces into words",
    "tokens.merge_help": "This model's tokenizer cuts rare words into pieces (`em ##bed ##ding ##s`). Merged, "
    "each word is one row and one column: attention **to** a word is the **sum** over its pieces (the weight "
    "a query puts on the whole word), attention **from** a word is the **mean** over its pieces (their "
    "average distribution). Rows that summed to 1 still do.",
    "tokens.special": "`[CLS]` and `[SEP]`",
    "tokens.special.show": "show",
    "tokens.special.hide": "hide",
    "tokens.special.renorm": "hide, renormalise rows",
    "tokens.special_help": "The special tokens `[CLS]` and `[SEP]` often take most of a head's weight. "
    "**Hide** drops their rows and columns and leaves the other weights as they are: a row then sums to "
    "the weight it did not put on them (less than 1). **Hide, renormalise rows** also divides each row by "
    "that weight, so every row sums to 1 again (attention among the words only).",
    "tokens.note.merged": "Word pieces merged into words: attention to a word = sum over its pieces, "
    "attention from a word = mean over its pieces.",
    "tokens.note.hide": "`[CLS]` and `[SEP]` hidden; the rows are not renormalised: each sums to the weight it "
    "puts on the words shown (less than 1).",
    "tokens.note.renorm": "`[CLS]` and `[SEP]` hidden and every row renormalised to sum to 1 (each token's row "
    "divided by the weight it puts on the tokens shown, before pieces are averaged).",
    "tokens.merge_help_sp": "This model's tokenizer (SentencePiece) marks the piece that begins a word with "
    "`▁`; the pieces after it continue the word (`▁To` `ken` `izer` `s` → `▁Tokenizers`). Merged, each word is one row and "
    "one column: attention **to** a word is the **sum** over its pieces, attention **from** a word is the "
    "**mean** over its pieces. Rows that summed to 1 still do. Chinese has no spaces, so SentencePiece "
    "puts no `▁` inside a clause (`▁我` `喜欢` `吃` `苹果` would be one word): a piece of Chinese (or "
    "Japanese, Thai) and a punctuation mark are each a unit of their own, and a lone `▁` joins the piece "
    "after it.",
    "tokens.special_sp": "`<s>`, `</s>` and the prefix",
    "tokens.special_help_sp": "The special tokens `<s>` and `</s>` often take most of a head's weight. The "
    "prefix the model reads before every text (e5's `query:`, the tokens `▁que` `ry` `:`; a word of the "
    "prefix, not attention's query) is not your text either, so it is hidden with them. **Hide** drops their rows and columns and leaves the other weights "
    "as they are: a row then sums to the weight it did not put on them (less than 1). **Hide, renormalise "
    "rows** also divides each row by that weight, so every row sums to 1 again (attention among your words "
    "only).",
    "tokens.note.hide_sp": "`<s>`, `</s>` and the prefix hidden; the rows are not renormalised: each sums to "
    "the weight it puts on the words shown (less than 1).",
    "tokens.note.renorm_sp": "`<s>`, `</s>` and the prefix hidden and every row renormalised to sum to 1 "
    "(each token's row divided by the weight it puts on the tokens shown, before pieces are averaged).",
}

ZH = {
    "tokens.merge": "把词片合并成词",
    "tokens.merge_help": "这个模型的分词器会把少见的词切成几个词片（`em ##bed ##ding ##s`）。合并后，每个词占一行"
    "和一列：**指向**一个词的注意力是它各个词片的**和**（一个查询放在整个词上的权重），**来自**一个词的注意力是它"
    "各个词片的**平均**（它们的平均分布）。原来和为 1 的行，合并后和仍为 1。",
    "tokens.special": "`[CLS]` 和 `[SEP]`",
    "tokens.special.show": "显示",
    "tokens.special.hide": "隐藏",
    "tokens.special.renorm": "隐藏，并对每行重新归一化",
    "tokens.special_help": "特殊 token `[CLS]` 和 `[SEP]` 常常拿走一个头的大部分权重。**隐藏**会去掉它们的行和列，"
    "其余权重保持不变：于是每行的和是它没有放在它们上面的那部分权重（小于 1）。**隐藏，并对每行重新归一化**还会把每行"
    "除以这部分权重，使每行的和重新为 1（只看词与词之间的注意力）。",
    "tokens.note.merged": "词片已合并成词：指向一个词的注意力 = 它各个词片的和，来自一个词的注意力 = 它各个词片的平均。",
    "tokens.note.hide": "`[CLS]` 和 `[SEP]` 已隐藏；各行没有重新归一化：每行的和是它放在所显示的词上的权重（小于 1）。",
    "tokens.note.renorm": "`[CLS]` 和 `[SEP]` 已隐藏，每行都重新归一化为和为 1（在对词片取平均之前，把每个 token 的行"
    "除以它放在所显示的 token 上的权重）。",
    "tokens.merge_help_sp": "这个模型的分词器（SentencePiece）用 `▁` 标出一个词开头的词片，后面不带 `▁` 的词片接着"
    "这个词（`▁To` `ken` `izer` `s` → `▁Tokenizers`）。合并后，每个词占一行和一列：**指向**一个词的注意力是它各个词片的**和**，"
    "**来自**一个词的注意力是它各个词片的**平均**。原来和为 1 的行，合并后和仍为 1。中文不用空格分词，SentencePiece "
    "在一个分句里不会放 `▁`（`▁我` `喜欢` `吃` `苹果` 会成为一个“词”）：所以每个中文（或日文、泰文）词片和每个标点"
    "都单独成为一个单位；单独的 `▁` 并入它后面的词片。",
    "tokens.special_sp": "`<s>`、`</s>` 和前缀",
    "tokens.special_help_sp": "特殊 token `<s>` 和 `</s>` 常常拿走一个头的大部分权重。模型在每段文本前读到的前缀"
    "（e5 的 `query:`，即 token `▁que` `ry` `:`；这是前缀里的一个词，不是注意力里的查询）也不是你的文本，所以和它们"
    "一起隐藏。**隐藏**会去掉它们的行和列，"
    "其余权重保持不变：于是每行的和是它没有放在它们上面的那部分权重（小于 1）。**隐藏，并对每行重新归一化**还会把每行"
    "除以这部分权重，使每行的和重新为 1（只看你的词与词之间的注意力）。",
    "tokens.note.hide_sp": "`<s>`、`</s>` 和前缀已隐藏；各行没有重新归一化：每行的和是它放在所显示的词上的权重（小于 1）。",
    "tokens.note.renorm_sp": "`<s>`、`</s>` 和前缀已隐藏，每行都重新归一化为和为 1（在对词片取平均之前，把每个 token 的行"
    "除以它放在所显示的 token 上的权重）。",
}
