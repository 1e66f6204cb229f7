"""Positional encoding page."""

EN = {
    "positional.intro": "A Transformer sees a *set* of tokens; word order has to be added. The 2017 paper adds a "
    "**sinusoidal** vector to each token's embedding: dimension pair *(2i, 2i+1)* is a sine and "
    "cosine whose wavelength grows with *i*, so fast dimensions tell neighbours apart and slow "
    "ones give the coarse position.",
    "positional.setting": "pos_encoding = `{value}`. {note}",
    "positional.kind.sinusoidal": "This model uses exactly this table.",
    "positional.kind.learned": "This model learns its own position table; at its own size (positions = max_len, "
    "d_model = its width) the page shows that learned table, otherwise the sinusoidal one for reference.",
    "positional.kind.rope": "This model uses rotary embeddings (RoPE) on queries and keys; the sinusoidal table is "
    "shown for reference — RoPE rotates with the same frequencies.",
    "positional.kind.none": "This model uses no positional encoding; the sinusoidal table is shown for reference.",
    "positional.kind.relative": "This model (T5) adds no table to its embeddings: each self-attention adds a learned "
    "**relative position bias** to its scores (shown below the reference tables); the sinusoidal table is shown for "
    "reference.",
    "positional.relative.header": "This model's relative position bias",
    "positional.relative.intro": "A fourth way of giving attention positions, after sinusoidal, learned and RoPE: "
    "nothing is added to the embeddings; instead every score q · k gets a number that depends only on the "
    "distance between key and query, one learned number per head and **bucket** of distances. Near distances "
    "have a bucket each, farther ones share ever wider buckets up to {far} positions, beyond which all "
    "distances are one bucket ({buckets} buckets). The first layer of each stack holds the table; every layer "
    "of that stack adds the same bias. T5 also divides no score by √d_head.",
    "positional.relative.caption": "Each line is one head: the bias it adds to a score against the distance "
    "key − query (negative: the key is earlier). The encoder's bias sees both directions; the decoder's only the "
    "past (later keys are masked). Flat steps are distances that share a bucket. Pattern views of this model "
    "include the bias; the worked example shows it as a column of its own.",
    "positional.norms.no_pos_relative": "This model adds no positional vector at its input (its relative "
    "position bias works inside attention, above), so only the token embedding is shown (multiplied by {scale}).",
    "positional.positions": "Positions",
    "positional.learned_shown": "Showing this model's learned table.",
    "positional.cosine_caption": "Each position is most similar to itself. How the similarity changes with distance is measured "
    "below.",
    "positional.dims": "Dimensions to plot",
    "positional.curves_caption": "Low dimensions oscillate fast, high dimensions slowly.",
    "positional.no_dims": "Pick at least one dimension.",
    "positional.past_max_len": "The shaded rows (from position {max_len} on) lie past this model's max_len: "
    "it never reads them. The table itself goes on to {n} positions.",
    "positional.distance.header": "Are nearby positions more alike?",
    "positional.distance.falls": "For the table above, the mean similarity falls from 1 at distance 0 to {end} at "
    "distance {last}.",
    "positional.distance.monotone": "It never rises on the way: for this table, nearer always means more alike.",
    "positional.distance.not_monotone": "It is **not** monotone: it rises again at {count} of the {total} "
    "distances, first at distance {first} ({a} → {b}); the largest rise is {rise}. Nearer is more alike only "
    "on the whole, not step by step.",
    "positional.distance.band_flat": "The min–max band is at most {spread} wide (rounding), i.e. flat: every pair at the "
    "same distance is exactly as similar, wherever it stands.",
    "positional.distance.band_wide": "The min–max band is up to {spread} wide: pairs at the same distance can "
    "differ, so the similarity is not a function of the distance alone.",
    "positional.shift.header": "Relative positions: moving k steps is a rotation",
    "positional.shift.intro": "In the sinusoidal table, each pair of dimensions *(2i, 2i+1)* is a point "
    "`(sin pω, cos pω)` on a circle, with frequency ω = 1 / 10000^(2i/d_model). Moving *k* positions turns "
    "that point by the angle kω, whatever *p* is. So PE(p + k) = M_k · PE(p), with M_k block diagonal: "
    "one 2×2 rotation matrix per frequency pair, and no dependence on *p*. A layer can therefore read "
    "\"k steps further\" with one fixed linear map. Computed here from the formula (float64), at the "
    "size chosen above.",
    "positional.shift.k": "Offset k",
    "positional.shift.matrix_cut": "Showing the first {shown} of {d} dimensions; the rest of the diagonal "
    "continues with slower rotations.",
    "positional.shift.error": "Largest absolute error of M_{k} · PE(p) against PE(p + {k}) over all {n} "
    "positions and {d} dimensions: **{err}** — rounding error of float64, so the identity holds exactly.",
    "positional.rope.header": "This model's rotary embeddings (RoPE)",
    "positional.rope.intro": "RoPE adds nothing to the embeddings. Inside attention it turns each pair of a "
    "query's and a key's dimensions (d_head = {d_head}) by an angle proportional to the position, pair *i* "
    "at its own frequency (left). A query at position m and a key at position n then score q · k through "
    "the angle difference only: the score depends on the offset m − n, not on where the two stand (right: "
    "one fixed random q and k, rotated with the model's own functions).",
    "positional.rope.diagonals": "Along every diagonal (fixed m − n) the score varies by at most **{spread}** "
    "(float32 rounding): it depends on the offset only.",
    "positional.rope.past": "Rows and columns past the dashed lines lie beyond max_len = {max_len}: the "
    "rotation is defined there, but the model never saw those positions in training.",
    "positional.learned_note": "A learned table has no formula: nothing forces the rotation property below on "
    "it. The similarity figure above shows this model's own table ({max_len} positions × {d_model} "
    "dimensions) when positions and d_model are set to the model's size.",
    "positional.norms.header": "On your sentence: the word and its position",
    "positional.norms.no_pos": "This model adds no positional vector at the encoder's input (RoPE works inside "
    "attention), so only the token embedding × √d_model = {scale} is shown.",
    "positional.norms.no_pos_lm": "This model adds no positional vector at its input (RoPE works inside "
    "attention), so only the token embedding is shown (multiplied by {scale}).",
    "positional.norms.no_pos_none_lm": "This model adds no positional vector at all, so only the token embedding "
    "(multiplied by {scale}) is shown: apart from the causal mask, it cannot tell word order.",
    "positional.norms.no_pos_none": "This model adds no positional vector at all, so only the token embedding × "
    "√d_model = {scale} is shown: apart from the decoder's causal mask, it cannot tell word order.",
    "positional.norms.ratio": "For this sentence the positional encoding's norm is on average **{mean}** times "
    "the scaled token embedding's (from {lo} to {hi} over the {n} tokens).",
    "positional.norms.below": "At every token the word is the longer of the two: the encoding does not swamp it.",
    "positional.norms.above": "At every token the encoding is the longer one: it could swamp the word.",
    "positional.norms.mixed": "At some tokens the encoding is the longer one.",
    "positional.norms.why": "Why the scaling: the token embedding is multiplied by √d_model = {scale} before "
    "the encoding is added. Unscaled, the word vectors of this sentence would be about {word} long, next to "
    "a positional vector of about {pe}: the position would drown the word. Both bars come from the hooks "
    "`encoder.embed.hook_embed` and `encoder.embed.hook_pos_embed`.",
    # partial rotary (Pythia, Phi-3) and each layer's own base (Gemma 3)
    "positional.rope.longrope_header": "Longrope: the frequencies depend on the sequence's length",
    "positional.rope.longrope": "This model (Phi-3's *longrope*) divides each pair's frequency by a factor of "
    "its own: the **short** factors while the whole sequence has at most {switch} positions (its "
    "original_max_position_embeddings), the **long** factors beyond that, for every position at once. cos and "
    "sin are also multiplied by {scale}, so every q · k is {squared} times larger. When decoding passes "
    "{switch} positions, the keys computed with the short factors are dropped and the whole sequence is "
    "computed again with the long ones, as transformers does.",
    "positional.rope.longrope_short": "longrope: short factors (sequence {n} ≤ {switch})",
    "positional.rope.longrope_long": "longrope: long factors (sequence {n} > {switch})",
    "positional.rope.longrope_none": "longrope: short factors up to {switch} positions, long ones beyond (no "
    "sentence yet: the figures below use the short ones).",
    "positional.rope.longrope_factors": "Short factors: {short}{more} · long factors: {long}{more}. The figures "
    "below use the factors of this sentence.",
    "positional.rope.partial_header": "Partial rotary: only part of each head turns",
    "positional.rope.partial": "This model turns only the **first {r} of the {d_head} dimensions** of each "
    "head ({share:.0%}), in {pairs} pairs; dimensions {r}…{end} pass through RoPE **unchanged**. Their share of "
    "q · k is the same wherever the two tokens stand: only the turned part carries position. The figures "
    "below turn exactly those {r} dimensions, as the model's attention does.",
    "positional.rope.bases_header": "Two RoPE bases: local and global layers",
    "positional.rope.bases": "Each layer turns q and k with its own base: the **local** layers (sliding window "
    "of {window} keys: {local}) with base {local_base}, the **global** layers ({global_}) with base "
    "{global_base}{scaling}. A larger base turns the slow pairs even slower, so a global layer can still "
    "tell apart positions far away; a local layer never sees further back than its window.",
    "positional.rope.bases_scaling": ", and linear scaling ÷ {factor} (every angle divided by {factor}, as if "
    "positions were {factor} times closer)",
    "positional.rope.bases_title": "{which}: base {base}{scaling}",
    "positional.rope.bases_which.local": "Local layers",
    "positional.rope.bases_which.global": "Global layers",
    "positional.rope.bases_title_scaling": ", ÷ {factor}",
    "positional.rope.bases_caption": "The same pairs, turned per position step: at a pair where the bars "
    "differ, the two kinds of layer read distance at different scales.",
}

ZH = {
    "positional.intro": "模型（Transformer）看到的只是一个 token 的*集合*，本身不分先后，词序必须另外加进去。"
    "2017 年的原始论文给每个 token 的**嵌入**（embedding）加上一个**正弦**（sinusoidal）向量："
    "第 *(2i, 2i+1)* 对维度是一组正弦和余弦，波长随 *i* 增大。变化快的维度能区分相邻的位置，"
    "变化慢的维度给出大致的位置。",
    "positional.setting": "pos_encoding = `{value}`。{note}",
    "positional.kind.sinusoidal": "这个模型用的正是这张表。",
    "positional.kind.learned": "这个模型自己学习位置表：尺寸与模型一致时（位置数 = max_len，d_model = 模型宽度），"
    "页面显示它学到的表；否则显示正弦表作为参考。",
    "positional.kind.rope": "这个模型在查询和键上使用旋转位置嵌入（RoPE）；这里显示正弦表作为参考——"
    "RoPE 的旋转用的是同样的频率。",
    "positional.kind.none": "这个模型不使用位置编码；这里显示正弦表作为参考。",
    "positional.kind.relative": "这个模型（T5）不往嵌入上加位置表：每个自注意力在分数上加一个学到的"
    "**相对位置偏置**（见下方参考表之后）；这里显示正弦表作为参考。",
    "positional.relative.header": "这个模型的相对位置偏置",
    "positional.relative.intro": "继正弦、学习式和旋转位置嵌入之后，给注意力位置信息的第四种方式：嵌入上什么也不加，"
    "而是每个分数 q · k 再加上一个只取决于键与查询之间距离的数，每个头、每个距离**桶**各学一个数。"
    "近的距离各占一个桶，远的距离共用越来越宽的桶，直到 {far} 个位置；更远的距离都在同一个桶里"
    "（共 {buckets} 个桶）。每个栈的第一层持有这张表，这个栈的每一层都加同样的偏置。T5 也不把分数除以 √d_head。",
    "positional.relative.caption": "每条线是一个头：它在分数上加的偏置随距离（键 − 查询，负数表示键在前）的变化。"
    "编码器的偏置看前后两个方向，解码器的只看过去（后面的键被掩码遮住）。平的台阶是共用一个桶的距离。"
    "这个模型的注意力图都包含这个偏置；手算示例把它单独列成一列。",
    "positional.norms.no_pos_relative": "这个模型在输入处不加位置向量（它的相对位置偏置在注意力内部起作用，见上文），"
    "所以这里只显示 token 嵌入（乘以 {scale}）。",
    "positional.positions": "位置数",
    "positional.learned_shown": "显示的是这个模型学到的位置表。",
    "positional.cosine_caption": "每个位置与自己最相似；相似度随距离如何变化，见下方的测量。",
    "positional.dims": "要画出的维度",
    "positional.curves_caption": "低维度振荡得快，高维度振荡得慢。",
    "positional.no_dims": "请至少选择一个维度。",
    "positional.past_max_len": "带阴影的行（从位置 {max_len} 起）超出了这个模型的 max_len，模型从来不会读到它们；"
    "表本身一直延续到 {n} 个位置。",
    "positional.distance.header": "相邻的位置更相似吗？",
    "positional.distance.falls": "对于上面这张表，平均相似度从距离 0 时的 1 下降到距离 {last} 时的 {end}。",
    "positional.distance.monotone": "途中从不回升：对这张表来说，越近就越相似。",
    "positional.distance.not_monotone": "它**并不**单调：在 {total} 个距离中有 {count} 处又回升，第一次在距离 {first}"
    "（{a} → {b}），最大回升为 {rise}。“越近越相似”只是总体趋势，并非每一步都成立。",
    "positional.distance.band_flat": "最小–最大范围的宽度至多为 {spread}（舍入误差），几乎是一条线：距离相同的任意两个位置，"
    "不论在哪里，相似度都完全一样。",
    "positional.distance.band_wide": "最小–最大范围的宽度可达 {spread}：距离相同的位置对相似度可能不同，"
    "所以相似度并不只由距离决定。",
    "positional.shift.header": "相对位置：移动 k 步就是一次旋转",
    "positional.shift.intro": "在正弦位置编码表中，每对维度 *(2i, 2i+1)* 是圆上的一个点 `(sin pω, cos pω)`，"
    "频率 ω = 1 / 10000^(2i/d_model)。向后移动 *k* 个位置，就是把这个点转过 kω 的角度，与 *p* 无关。"
    "因此 P(p + k) = M_k · P(p)（P 表示位置编码），其中 M_k 是分块对角矩阵：每个频率对应一个 2×2 的旋转矩阵，"
    "而且与 *p* 无关。于是模型的一层只需一个固定的线性变换，就能读出“往后 k 步”的位置。"
    "这里按公式以双精度（float64）计算，尺寸取上面所选的值。",
    "positional.shift.k": "偏移量 k",
    "positional.shift.matrix_cut": "只显示 {d} 个维度中的前 {shown} 个；对角线上其余的块以更慢的速度旋转。",
    "positional.shift.error": "在全部 {n} 个位置、{d} 个维度上，M_{k} · P(p) 与 P(p + {k}) 之差的最大绝对值为 "
    "**{err}**——这只是双精度的舍入误差，等式严格成立。",
    "positional.rope.header": "这个模型的旋转位置嵌入（RoPE）",
    "positional.rope.intro": "旋转位置嵌入不往嵌入上加任何东西。它在注意力内部，把查询和键的每对维度"
    "（d_head = {d_head}）按与位置成正比的角度旋转，第 *i* 对有自己的频率（左图）。于是位置 m 的查询和位置 n 的键"
    "算出的 q · k 只取决于两者的角度差：分数只与偏移量 m − n 有关，与它们各自站在哪里无关"
    "（右图：一个固定的随机 q 和 k，用模型自己的函数旋转）。",
    "positional.rope.diagonals": "沿每条对角线（m − n 固定），分数的变化至多为 **{spread}**（单精度舍入误差）："
    "它只取决于偏移量。",
    "positional.rope.past": "虚线之外的行和列超出了 max_len = {max_len}：旋转在那里照样有定义，"
    "但模型训练时从未见过这些位置。",
    "positional.learned_note": "学到的位置表没有公式，下面的旋转性质对它并不成立。把位置数和 d_model "
    "设为模型自己的尺寸（{max_len} 个位置 × {d_model} 维）时，上面的相似度图显示的就是这个模型自己的表。",
    "positional.norms.header": "在你的句子上：词本身与它的位置",
    "positional.norms.no_pos": "这个模型在编码器的输入处不加位置向量（旋转位置嵌入在注意力内部起作用），"
    "所以这里只显示 token 嵌入 × √d_model = {scale}。",
    "positional.norms.no_pos_lm": "这个模型在输入处不加位置向量（旋转位置嵌入在注意力内部起作用），"
    "所以这里只显示 token 嵌入（乘以 {scale}）。",
    "positional.norms.no_pos_none_lm": "这个模型完全不加位置向量，所以这里只显示 token 嵌入（乘以 {scale}）："
    "除了因果掩码之外，它分不清词序。",
    "positional.norms.no_pos_none": "这个模型完全不加位置向量，所以这里只显示 token 嵌入 × √d_model = {scale}："
    "除了解码器的因果掩码之外，它分不清词序。",
    "positional.norms.ratio": "对这个句子，位置编码的范数平均是缩放后 token 嵌入范数的 **{mean}** 倍"
    "（在 {n} 个 token 上从 {lo} 到 {hi}）。",
    "positional.norms.below": "每个 token 上都是词向量更长：位置编码没有盖过词本身。",
    "positional.norms.above": "每个 token 上都是位置编码更长：它可能盖过词本身。",
    "positional.norms.mixed": "在部分 token 上位置编码更长。",
    "positional.norms.why": "为什么要缩放：token 嵌入先乘以 √d_model = {scale}，再加上位置编码。"
    "如果不缩放，这个句子的词向量长度只有约 {word}，而位置向量约为 {pe}：位置会淹没词本身。"
    "两组柱子都来自编码器输入处的钩子 `encoder.embed.hook_embed` 和 `encoder.embed.hook_pos_embed`。",
    "positional.rope.longrope_header": "`longrope`：频率取决于序列的长度",
    "positional.rope.longrope": "这个模型（`Phi-3` 的 `longrope`）把每一对维度的频率除以它自己的因子："
    "整个序列不超过 {switch} 个位置（它的 original_max_position_embeddings）时用**短**因子，超过时对所有位置"
    "一起改用**长**因子。`cos` 和 `sin` 还都乘以 {scale}，所以每个 q · k 放大 {squared} 倍。解码超过 {switch} 个"
    "位置时，用短因子算出的键会被丢弃，整个序列用长因子重新计算，和 `transformers` 的做法一样。",
    "positional.rope.longrope_short": "`longrope`：短因子（序列 {n} ≤ {switch}）",
    "positional.rope.longrope_long": "`longrope`：长因子（序列 {n} > {switch}）",
    "positional.rope.longrope_none": "`longrope`：不超过 {switch} 个位置用短因子，超过用长因子"
    "（还没有句子：下面的图用短因子）。",
    "positional.rope.longrope_factors": "短因子：{short}{more} · 长因子：{long}{more}。"
    "下面的图用这个句子的因子。",
    "positional.rope.partial_header": "部分旋转（partial rotary）：每个头只有一部分会旋转",
    "positional.rope.partial": "这个模型只旋转每个头 {d_head} 个维度中的**前 {r} 个**（{share:.0%}），共 {pairs} 对；"
    "维度 {r}…{end} 经过旋转位置嵌入时**保持不变**。它们对 q · k 的贡献不管两个 token 在哪里都一样："
    "只有旋转的那部分带有位置信息。下面的图和模型的注意力一样，只旋转这 {r} 个维度。",
    "positional.rope.bases_header": "两个旋转位置嵌入基数：局部层和全局层",
    "positional.rope.bases": "每一层用自己的基数旋转 q 和 k：**局部层**（滑动窗口为 {window} 个键：{local}）"
    "的基数为 {local_base}，**全局层**（{global_}）的基数为 {global_base}{scaling}。基数越大，慢的那几对转得越慢，"
    "所以全局层仍能分辨相距很远的位置；局部层则永远看不到比窗口更远的地方。",
    "positional.rope.bases_scaling": "，并做线性缩放 ÷ {factor}（每个角度都除以 {factor}，就好像位置之间近了 {factor} 倍）",
    "positional.rope.bases_title": "{which}：基数 {base}{scaling}",
    "positional.rope.bases_which.local": "局部层",
    "positional.rope.bases_which.global": "全局层",
    "positional.rope.bases_title_scaling": "，÷ {factor}",
    "positional.rope.bases_caption": "同样的维度对，每前进一个位置转过的角度：在两组柱子不同的那些对上，两种层用不同的尺度读取距离。",
}
