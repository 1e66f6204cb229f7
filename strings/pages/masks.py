"""Masks page: padding and causal masks of a real padded batch, and the causal mask switched off."""

EN = {
    "masks.title": "Masks",
    "masks.intro": "Attention may not look everywhere. A **mask** marks, for each query (row), the keys (columns) "
    "it must not see: their scores are set to −∞ before the softmax, so their weights come out exactly 0 "
    "and every row still sums to 1. Two masks are at work: the **padding mask** (sentences of different "
    "lengths share a batch, so the shorter one is filled up with `<pad>` tokens that nobody should look at) "
    "and the decoder's **causal mask** (a position may not look at later positions).",
    # 1. a padded batch
    "masks.batch.header": "1 · Two sentences in one padded batch",
    "masks.batch.explain": "The sentence from the sidebar (A) and a second one (B) run through the model "
    "together, as in training. The shorter one is filled up with `<pad>` up to the longer one's length. "
    "Everything below comes from the model's own code: the padding masks from `model.padding_mask(ids)`, the "
    "query × key masks from `build_mask`, the function every attention layer calls, and the weights from "
    "`run_with_cache` on this padded batch.",
    "masks.other": "Second sentence (B)",
    "masks.other_help": "Pick one with a different number of tokens than the sidebar's sentence: then one of "
    "the two needs padding.",
    "masks.other_empty": "Type a second sentence to build the batch.",
    "masks.sentence_a": "Sentence A",
    "masks.sentence_b": "Sentence B",
    "masks.output": "{name}: {text} → {output}",
    "masks.same_length": "Both sentences have the same number of tokens on the {side} side, so there is no "
    "padding there. Change the second sentence to see some.",
    "masks.side.source": "encoder (input)",
    "masks.side.target": "decoder (output so far)",
    "masks.ids_header": "The padded batch, position by position",
    "masks.ids_caption": "Padding mask = `model.padding_mask(ids)`: True exactly where the id is the padding "
    "id ({pad_id}). Encoder: {src_len} positions; decoder: {tgt_len} positions.",
    "masks.col.position": "position",
    "masks.col.token": "{name}: token",
    "masks.col.id": "{name}: id",
    "masks.col.pad": "{name}: padding",
    "masks.causal_header": "The causal mask",
    "masks.causal_title": "Causal mask of the decoder ({n} positions)",
    "masks.causal_caption": "`build_mask(None, {n}, {n}, causal=True)`: True strictly above the diagonal. The "
    "output token at position q may look at positions 0…q (itself and earlier), never at a later one. It is "
    "the same for every sentence; only its size depends on the length.",
    "masks.axis_query_position": "query position",
    "masks.axis_key_position": "key position",
    "masks.kind_header": "The mask of {kind}, per sentence",
    "masks.kind_title": "{name}: mask of {kind}",
    "masks.kind_caption.encoder": "Encoder self-attention: only the padding mask, applied to the keys (columns). "
    "Every source token may look at every real source token.",
    "masks.kind_caption.decoder": "Decoder self-attention: the causal mask OR the padding mask of the keys. "
    "A grey cell is masked if either of the two masks it.",
    "masks.kind_caption.cross": "Cross-attention: the padding mask of the source keys (columns). There is no "
    "causal mask here: the whole source is known from the start.",
    "masks.pad_rows": "Rows of `<pad>` queries are computed like every row, but their result is never used "
    "(the loss and the output ignore them), so nobody masks them.",
    "masks.pattern_header": "What −∞ does after the softmax",
    "masks.pattern_title": "{name}: recorded weights, {kind}, layer {layer}, head {head}",
    "masks.pattern_caption": "These are the weights the model recorded (`hook_pattern`) on the padded batch. "
    "Every grey cell holds exactly 0 (largest weight in a masked cell: {masked_max}), because e^(−∞) = 0; "
    "the right-hand column prints each row's sum: the largest distance from 1 is {worst} (float32 rounding).",
    "masks.kinds_choice": "The attention kind, layer and head are the sidebar's.",
    # 2. demonstration: the causal mask off
    "masks.demo.header": "2 · Demonstration: the decoder without its causal mask",
    "masks.demo.label": "**This is a demonstration, not how the model works.** The model was trained with its "
    "causal mask and always runs with it. Here the mask is switched off for one teacher-forced pass over the "
    "model's own output (all positions at once, as in training), to show what the mask prevents.",
    "masks.demo.switch": "Switch the decoder's causal mask off (demonstration)",
    "masks.demo.switch_help": "Runs the teacher-forced pass over the model's own output again with "
    "`CausalMask(\"off\")` in the decoder's self-attention of every layer. The model itself is not changed: "
    "the normal analysis is the same before and after.",
    "masks.demo.greedy": "During step-by-step greedy decoding there is no future to see: at step t the decoder "
    "has only produced positions 0…t, so the mask hides nothing there. The mask matters when all positions are "
    "computed at once — in training, with teacher forcing — where the next token is already in the input and "
    "must stay hidden.",
    "masks.demo.no_output": "The model's output is empty, so there is no teacher-forced pass to show.",
    "masks.demo.which": "Decoder self-attention, layer {layer}, head {head} (the sidebar's layer and head).",
    "masks.demo.with_title": "With the causal mask (the model as it is)",
    "masks.demo.without_title": "Without the causal mask (demonstration)",
    "masks.demo.off_hint": "Switch the mask off above to see the same head without it, side by side.",
    "masks.demo.future_caption": "The red frame is the future: keys after the query. With the mask every "
    "weight there is 0. Without it, row q puts the weight printed at its right end on later tokens — in "
    "layer {layer}, head {head} up to {most} (row {row}).",
    "masks.demo.predictions_header": "How the next-token predictions change",
    "masks.demo.summary": "Without the mask the top-1 prediction changes at {changed} of {total} positions. "
    "The model's own next token gets a mean probability of {p_with} with the mask and {p_without} "
    "without it.",
    "masks.demo.explain": "Without the mask, position q can read token q+1 — the very token it has to predict. "
    "This model never learned to use that, so its predictions just change. A model *trained* without the mask "
    "would learn to copy the next token from the input: a perfect training score, and useless for generating "
    "text, because then the future does not exist yet.",
    "masks.col.reads": "reads",
    "masks.col.own": "own next token",
    "masks.col.top_with": "top-1 with mask",
    "masks.col.top_without": "top-1 without mask",
    "masks.col.p_with": "p(own) with mask",
    "masks.col.p_without": "p(own) without mask",
    "masks.col.changed": "top-1 changed",
    # a decoder-only language model: one sequence per sentence, right- and left-padded
    "masks.side.sequence": "prompt + continuation",
    "masks.lm.decoded_alone": "Each prompt is continued greedily on its own (this app's greedy decoder "
    "takes prompts of one length only); then both sequences, prompt + continuation, run as one padded batch.",
    "masks.lm.ids_caption": "A language model reads one sequence: the prompt and its continuation. The batch "
    "holds {n} positions; the padding is id {pad_id} (`{pad_token}`), and the padding column is by position "
    "(after or before each sequence).",
    "masks.lm.pad_is_eos": "Not by id: this padding id is also the model's end-of-text id, which a chat "
    "prompt holds between turns.",
    "masks.lm.right": "Right-padded (the padding after each sequence, as in training)",
    "masks.lm.left": "Left-padded (the padding first, as batched generation pads prompts)",
    "masks.kind_caption.lm_no_padding": "Decoder self-attention of this model: the causal mask only. Its "
    "config has `mask_padding=False` (converted language models do: their padding id is their end-of-text "
    "id), so `attention_padding(ids)` gives `None` and no key is hidden because of its id. With right padding "
    "that costs nothing: every padding position comes after the real tokens, and the causal mask already "
    "hides later positions from them.",
    "masks.kind_caption.no_padding": "This model was trained without the padding mask (`mask_padding=False`): "
    "its attention hides no padding key, so every query also weighs the `<pad>` keys; only a causal mask, "
    "where there is one, is drawn.",
    "masks.lm.right_equal": "Each real row equals the same sequence run alone, without padding: the largest "
    "difference of any weight, every layer and head, is {a} for A and {b} for B (float rounding).",
    "masks.lm.left_header": "Left padding: what the padding mask is for",
    "masks.lm.left_explain": "To generate for several prompts at once, prompts are padded on the left, so "
    "that every row's next token comes at the same, last position. Now the padding comes *before* the real "
    "tokens, and the causal mask lets every real token see it: only a padding mask keeps real tokens off "
    "the padding. Below: the padded sentence of the same batch, left-padded, as this model runs it and with "
    "the padding mask added (−∞ at the padding keys of every layer's scores, which is what `build_mask` does "
    "with a padding mask).",
    "masks.lm.left_title.as_run": "{name}, left-padded, as the model runs it (layer {layer}, head {head})",
    "masks.lm.left_title.masked": "{name}, left-padded, with the padding mask (layer {layer}, head {head})",
    "masks.lm.left_caption": "{name}, as the model runs it: a real token puts up to {weight} of its weight on "
    "padding keys (in some layer and head), and its weights differ from the sentence run alone by up to "
    "{as_run}. With the padding mask the difference is {masked}.",
    "masks.lm.left_model_masks": "This model masks padding itself (`mask_padding=True`), so both runs are "
    "the same.",
    "masks.lm.left_model_no_mask": "This model does not mask padding by itself (`mask_padding=False`): "
    "batched generation has to pass the padding mask (an attention mask) along, or the real tokens attend "
    "to the padding.",
    "masks.lm.left_rope": "Its positions are rotary (RoPE): a score depends only on how far apart two tokens "
    "are, so shifting a sequence by its padding changes nothing but rounding.",
    "masks.lm.left_absolute": "Its positions are absolute: left padding also moves every real token to a "
    "later position, so even with the padding mask the weights differ unless the positions are shifted "
    "back too (batched generation passes position ids for that).",
    "masks.demo.lm": "For a language model this is further still from how it works: it was trained only with "
    "its causal mask, and it generates one token after another, so there never is a future to look at. "
    "Without the mask every position, the prompt's too, reads the tokens after it.",
    "masks.table_caption": "One row per position of the teacher-forced pass: the token the decoder reads there, "
    "the model's own next token (from its output), and each pass's most likely next token.",
    # sliding windows (Gemma 3: local and global layers; Phi-3: every layer)
    "masks.kind_window": "In layer {layer} this mask also holds the layer's **sliding window**: a query "
    "sees only its last {window} keys, itself included (`build_mask(..., window={window})`).",
    "masks.window.header": "The sliding window: local and global layers",
    "masks.window.explain": "Besides the causal mask, some layers of this model look only at a **sliding "
    "window**: a query sees its last *w* keys, itself included, and every key further back is −∞ "
    "(`build_mask(..., window=w)`, with each layer's own window). Such layers are called *local*; the others "
    "(*global*) see the whole causal past. A local layer's cost grows with the window, not with the whole "
    "input.",
    "masks.window.layers": "Local layers (window of {window} keys): {local}. Global layers (the whole "
    "causal past): {global_}.",
    "masks.window.every_layer": "Every layer of this model is local, with a window of {window} keys (its "
    "config's `sliding_window`).",
    "masks.window.none": "none",
    "masks.window.local_title": "Local layer {layer}: window of {window} keys",
    "masks.window.global_title": "Global layer {layer}: causal mask only",
    "masks.window.caption": "Over the sidebar's sequence ({n} positions). The model's recorded weights are "
    "exactly 0 in every grey cell of each layer's mask (see the pattern above for the sidebar's layer).",
    "masks.window.short": "The sequence has {n} positions, not more than the window ({window}): here the "
    "window hides nothing yet. Type a longer sentence to see it cut.",
}

ZH = {
    "masks.title": "掩码",
    "masks.intro": "注意力并不是哪里都能看。**掩码**（mask）为每个查询（一行）标出它不能看的键（列）："
    "这些位置的分数在 softmax 之前被设为 −∞，所以它们的权重正好是 0，而每一行的权重加起来仍然是 1。"
    "这里有两种掩码在起作用：**填充掩码**（padding mask）——长短不一的句子放进同一个批次时，"
    "较短的句子要用 `<pad>` token 补齐，谁都不应该去看这些补上的位置；以及解码器的**因果掩码**（causal mask）"
    "——一个位置不能看它后面的位置。",
    "masks.batch.header": "1 · 把两个句子填充成一个批次",
    "masks.batch.explain": "侧边栏里的句子（A）和另一个句子（B）像训练时那样一起送进模型。"
    "较短的句子用 `<pad>` 补齐到较长句子的长度。下面的一切都来自模型自己的代码："
    "填充掩码来自 `model.padding_mask(ids)`，查询 × 键的掩码来自每个注意力层都会调用的函数 `build_mask`，"
    "权重则来自在这个填充后的批次上运行的 `run_with_cache`。",
    "masks.other": "第二个句子（B）",
    "masks.other_help": "选一个 token 数和侧边栏句子不同的句子：这样两句中就有一句需要填充。",
    "masks.other_empty": "请输入第二个句子，才能组成批次。",
    "masks.sentence_a": "句子 A",
    "masks.sentence_b": "句子 B",
    "masks.output": "{name}：{text} → {output}",
    "masks.same_length": "两个句子在{side}一侧的 token 数相同，所以那里没有填充。换一个第二句就能看到填充。",
    "masks.side.source": "编码器（输入）",
    "masks.side.target": "解码器（已有的输出）",
    "masks.ids_header": "填充后的批次，逐个位置来看",
    "masks.ids_caption": "填充掩码 = `model.padding_mask(ids)`：恰好在编号等于填充编号（{pad_id}）的位置上为 "
    "`True`。编码器：{src_len} 个位置；解码器：{tgt_len} 个位置。",
    "masks.col.position": "位置",
    "masks.col.token": "{name}：token",
    "masks.col.id": "{name}：编号",
    "masks.col.pad": "{name}：是否填充",
    "masks.causal_header": "因果掩码",
    "masks.causal_title": "解码器的因果掩码（{n} 个位置）",
    "masks.causal_caption": "`build_mask(None, {n}, {n}, causal=True)`：对角线以上（不含对角线）为 `True`。"
    "位置 q 上的输出 token 可以看位置 0…q（它自己和前面的位置），绝不能看后面的位置。"
    "每个句子的因果掩码都一样，只有大小取决于长度。",
    "masks.axis_query_position": "查询的位置",
    "masks.axis_key_position": "键的位置",
    "masks.kind_header": "{kind}的掩码，逐句来看",
    "masks.kind_title": "{name}：{kind}的掩码",
    "masks.kind_caption.encoder": "编码器自注意力：只有填充掩码，作用在键（列）上。每个源 token 都可以看所有真实的源 token。",
    "masks.kind_caption.decoder": "解码器自注意力：因果掩码与键的填充掩码取“或”。两种掩码中只要有一种遮住某个格子，"
    "这个格子就是灰色。",
    "masks.kind_caption.cross": "交叉注意力：只有源一侧键（列）的填充掩码。这里没有因果掩码：整个源句子从一开始就是已知的。",
    "masks.pad_rows": "`<pad>` 作为查询的那些行也和其他行一样被计算，但结果从来不会被用到（损失和输出都忽略它们），"
    "所以没有掩码去遮它们。",
    "masks.pattern_header": "softmax 之后 −∞ 变成了什么",
    "masks.pattern_title": "{name}：记录到的权重，{kind}，第 {layer} 层，头 {head}",
    "masks.pattern_caption": "这些是模型在填充后的批次上记录到的权重（`hook_pattern`）。"
    "每个灰色格子里都正好是 0（被掩码遮住的格子中最大的权重：{masked_max}），因为 e^(−∞) = 0；"
    "右侧一列是每一行的和：与 1 的最大差距为 {worst}（`float32` 的舍入误差）。",
    "masks.kinds_choice": "注意力的种类、层和头都取自侧边栏。",
    "masks.demo.header": "2 · 演示：去掉因果掩码的解码器",
    "masks.demo.label": "**这只是一个演示，并不是模型的实际工作方式。**模型训练时带着因果掩码，运行时也一直带着它。"
    "这里只是在对模型自己的输出做一次教师强制的前向计算时（所有位置同时计算，和训练时一样）把掩码关掉，"
    "让大家看看掩码防止了什么。",
    "masks.demo.switch": "关掉解码器的因果掩码（演示）",
    "masks.demo.switch_help": "用 `CausalMask(\"off\")` 把每一层解码器自注意力的掩码关掉，"
    "在模型自己的输出上重新做一次教师强制的前向计算。模型本身不会被改动：正常的分析结果前后完全一样。",
    "masks.demo.greedy": "在逐步进行的贪心解码中，根本没有未来可看：第 t 步时解码器只生成了位置 0…t，"
    "所以掩码在那里什么也没遮住。只有在所有位置同时计算时——也就是训练时用教师强制的时候——"
    "下一个 token 已经在输入里了，这时掩码才必须把它藏起来。",
    "masks.demo.no_output": "模型的输出是空的，所以没有可以展示的教师强制计算。",
    "masks.demo.which": "解码器自注意力，第 {layer} 层，头 {head}（取自侧边栏的层和头）。",
    "masks.demo.with_title": "有因果掩码（模型原本的样子）",
    "masks.demo.without_title": "没有因果掩码（演示）",
    "masks.demo.off_hint": "在上面关掉掩码，就能把同一个头去掉掩码后的样子并排对比。",
    "masks.demo.future_caption": "红框里是未来：位于查询之后的键。有掩码时，那里的权重全是 0。"
    "没有掩码时，第 q 行会把右侧标出的那部分权重放在后面的 token 上——第 {layer} 层、头 {head} "
    "中最多达到 {most}（第 {row} 行）。",
    "masks.demo.predictions_header": "下一个 token 的预测怎样变化",
    "masks.demo.summary": "去掉掩码后，{total} 个位置中有 {changed} 个位置的第一候选变了。"
    "模型自己输出的下一个 token 的平均概率，有掩码时是 {p_with}，没有掩码时是 {p_without}。",
    "masks.demo.explain": "没有掩码时，位置 q 能读到第 q+1 个 token——正是它要预测的那个。"
    "这个模型从来没有学过怎样利用这一点，所以它的预测只是变了。一个在*训练*时就不带掩码的模型，"
    "会学会直接从输入里抄下一个 token：训练成绩完美，生成文本时却毫无用处，因为那时未来还不存在。",
    "masks.col.reads": "读入的 token",
    "masks.col.own": "自己的下一个 token",
    "masks.col.top_with": "有掩码时的第一候选",
    "masks.col.top_without": "无掩码时的第一候选",
    "masks.col.p_with": "有掩码时自己 token 的概率",
    "masks.col.p_without": "无掩码时自己 token 的概率",
    "masks.col.changed": "第一候选是否改变",
    "masks.side.sequence": "提示 + 续写",
    "masks.lm.decoded_alone": "每个提示各自用贪心解码续写（本应用的贪心解码器只接受长度相同的提示）；"
    "然后两个序列（提示 + 续写）作为一个填充后的批次一起运行。",
    "masks.lm.ids_caption": "语言模型读的是一个序列：提示和它的续写。这个批次有 {n} 个位置；"
    "填充编号为 {pad_id}（`{pad_token}`），“是否填充”一列按位置（每个序列之后或之前）来定。",
    "masks.lm.pad_is_eos": "而不是按编号：这个填充编号同时也是模型的文本结束编号，对话格式的提示在轮次之间也含有它。",
    "masks.lm.right": "右侧填充（填充在每个序列之后，和训练时一样）",
    "masks.lm.left": "左侧填充（填充在前面，批量生成时就这样填充提示）",
    "masks.kind_caption.lm_no_padding": "这个模型的解码器自注意力：只有因果掩码。它的配置里 `mask_padding=False`"
    "（转换来的语言模型都是这样：它们的填充编号就是文本结束编号），所以 `attention_padding(ids)` 返回 `None`，"
    "没有哪个键因为编号而被遮住。右侧填充时这没有任何代价：所有填充位置都在真实 token 之后，"
    "而因果掩码本来就不让它们看后面的位置。",
    "masks.kind_caption.no_padding": "这个模型训练时没有用填充掩码（`mask_padding=False`）："
    "它的注意力不遮住任何填充键，所以每个查询也会给 `<pad>` 键分配权重；图中只画出因果掩码（如果有的话）。",
    "masks.lm.right_equal": "每一行真实的权重都等于同一个序列不加填充单独运行的结果："
    "所有层和头中任何一个权重的最大差距，A 为 {a}，B 为 {b}（浮点舍入误差）。",
    "masks.lm.left_header": "左侧填充：填充掩码有什么用",
    "masks.lm.left_explain": "为了同时给几个提示生成续写，提示在左侧填充，这样每一行的下一个 token "
    "都出现在同一个位置，也就是最后一个位置。这时填充位于真实 token *之前*，因果掩码允许每个真实 token 看到它们："
    "只有填充掩码才能让真实 token 不去看填充。下面是同一批次中被填充的那个句子改为左侧填充后的样子："
    "一次按模型自己的方式运行，一次加上填充掩码（在每一层分数中填充键的位置放上 −∞，"
    "这正是 `build_mask` 在有填充掩码时所做的）。",
    "masks.lm.left_title.as_run": "{name}，左侧填充，按模型自己的方式运行（第 {layer} 层，头 {head}）",
    "masks.lm.left_title.masked": "{name}，左侧填充，加上填充掩码（第 {layer} 层，头 {head}）",
    "masks.lm.left_caption": "{name}按模型自己的方式运行时：一个真实 token 最多把 {weight} 的权重放在填充键上"
    "（在某一层某个头中），它的权重与该句子单独运行时的最大差距为 {as_run}。加上填充掩码后，差距为 {masked}。",
    "masks.lm.left_model_masks": "这个模型自己就用填充掩码遮住填充（`mask_padding=True`），所以两次运行结果相同。",
    "masks.lm.left_model_no_mask": "这个模型自己不会遮住填充（`mask_padding=False`）：批量生成时必须把填充掩码"
    "（注意力掩码）一起传进去，否则真实 token 会去关注填充。",
    "masks.lm.left_rope": "它的位置编码是旋转位置编码（RoPE）：分数只取决于两个 token 相隔多远，"
    "所以把序列整体向后移动几个填充位置，除了舍入误差之外什么也不会改变。",
    "masks.lm.left_absolute": "它的位置编码是绝对位置：左侧填充还会把每个真实 token 移到更靠后的位置，"
    "所以即使有填充掩码，权重也会不同，除非把位置也移回来（批量生成时为此会传入位置编号）。",
    "masks.demo.lm": "对语言模型来说，这离它的实际工作方式更远：它只在带因果掩码的情况下训练过，"
    "而且它是一个 token 接一个 token 地生成的，所以根本不存在可以看的未来。"
    "去掉掩码后，每个位置（包括提示中的位置）都会读到它后面的 token。",
    "masks.table_caption": "教师强制计算中的每个位置占一行：解码器在那里读入的 token、模型自己输出的下一个 token，"
    "以及两次计算各自最可能的下一个 token。",
    "masks.kind_window": "第 {layer} 层的这个掩码还包含该层的**滑动窗口**：一个查询只能看最后 {window} 个键（包括它自己）"
    "（`build_mask(..., window={window})`）。",
    "masks.window.header": "滑动窗口：局部层和全局层",
    "masks.window.explain": "除了因果掩码，这个模型的某些层只看一个**滑动窗口**：一个查询只能看它最后 *w* 个键"
    "（包括它自己），更早的键都是 −∞（`build_mask(..., window=w)`，每一层用它自己的窗口）。这样的层叫作*局部层*；"
    "其余的层（*全局层*）可以看到全部过去的位置。局部层的计算量随窗口大小增长，而不是随整个输入的长度增长。",
    "masks.window.layers": "局部层（窗口为 {window} 个键）：{local}。全局层（看全部过去的位置）：{global_}。",
    "masks.window.every_layer": "这个模型的每一层都是局部层，窗口为 {window} 个键（配置中的 `sliding_window`）。",
    "masks.window.none": "无",
    "masks.window.local_title": "局部层 {layer}：{window} 个键的窗口",
    "masks.window.global_title": "全局层 {layer}：只有因果掩码",
    "masks.window.caption": "在侧边栏的序列上（{n} 个位置）。在每一层掩码的每个灰色格子里，模型记录到的权重都正好是 0"
    "（侧边栏所选层的权重见上面的注意力图）。",
    "masks.window.short": "这个序列只有 {n} 个位置，不超过窗口（{window}）：这里窗口还什么都没有遮住。"
    "输入一个更长的句子就能看到它截断的效果。",
}
