"""Pitfall lab: classic bugs switched on in the loaded model, and the dimensions lab."""

EN = {
    "pitfalls.title": "Pitfall lab",
    "pitfalls.intro": "Every Transformer tutorial has a few places where one wrong character breaks the model: a "
    "missing scale, a softmax over the wrong axis, a mask the wrong way round. Here each of these bugs is "
    "switched on for real, and you see what it does to the numbers. The model's weights are never touched: "
    "a fault is a setting the forward pass reads, and it is switched off again right after the run.",
    # 0. models trained with the bug
    "pitfalls.trained.header": "0 · Trained with the bug",
    "pitfalls.trained.explain": "The sections below switch a fault on in a model that was trained correctly. "
    "Here each bug was there **during training**: nine small models learned to reverse a word with the same "
    "data, steps and seed, each with exactly one line of the code changed. Pick one and compare it with the "
    "correct model.",
    "pitfalls.trained.pick": "Model trained with a bug",
    "pitfalls.trained.pick_help": "Each is a real model trained for 600 steps on the reverse task; only the "
    "line shown below differs from the correct model.",
    "pitfalls.trained.fault_line": "The one line that differs from the correct model:",
    "pitfalls.trained.em_correct": "Correct model: test exact match",
    "pitfalls.trained.em_variant": "With the bug: test exact match",
    "pitfalls.trained.em_caption": "Share of the 500 test words reversed without a single wrong letter "
    "(stored in each model's metrics.json when it was trained).",
    "pitfalls.trained.verdict.lr-postln-nowarmup": "The learning rate is high from the first step, with "
    "post-LN and no warmup: the loss falls once, then stalls at about 3.3 after two steps and never recovers. "
    "The model learned nothing.",
    "pitfalls.trained.verdict.no-scaling": "No visible effect here: with `d_head` = 16 the missing factor "
    "1/√d_head is only 1/4, too small to saturate the softmax of such a small model. With wider heads it "
    "matters much more.",
    "pitfalls.trained.verdict.no-padding-mask": "Barely shows: the training batches are bucketed by length, "
    "so they hold little padding for the model to attend to by mistake.",
    "pitfalls.trained.verdict.no-clipping": "A small drop. Read it with care: this variant also has a "
    "shorter warmup (10 steps instead of 50), so the drop is not due to the clipping alone.",
    "pitfalls.trained.verdict.no-positional-encoding": "The encoder sees a bag of letters: without the "
    "positional encoding it cannot tell which letter came first, so it cannot reverse the word.",
    "pitfalls.trained.verdict.one-head": "No effect: one head of width 64 is enough for this task; "
    "the four heads of the correct model are not needed here.",
    "pitfalls.trained.verdict.no-residual": "Without the residual connections the signal and the gradient "
    "must pass through every layer: the loss stays at about 2.75 and the model learns nothing.",
    "pitfalls.trained.verdict.no-causal-mask": "The training loss falls to 0.65 while the validation loss "
    "stays at about 4.9: without the causal mask the decoder learned to copy the next letter from the "
    "target it is given — the future it cannot see when it writes on its own.",
    "pitfalls.trained.curves_caption": "Loss and gradient norm of every optimiser step, both models on the same "
    "axes. A gap in a line is a step whose value was not finite.",
    "pitfalls.trained.word": "Both models read {word}. Cross-attention, layer {layer}, head {head}:",
    "pitfalls.trained.word_default": "(The sidebar's model is not a letter model, so both read a fixed word.)",
    "pitfalls.trained.map": "{model}: layer {layer}, head {head}",
    "pitfalls.trained.output": "{model} writes: {output}",
    "pitfalls.trained.head_clamped": "This model has only {n} head per layer: its head {head} is shown.",
    "pitfalls.trained.no_metrics": "not stored",
    # 1. faults on the loaded model
    "pitfalls.faults.header": "1 · Switch a fault on in the loaded model",
    "pitfalls.faults.explain": "Pick a fault. Where it changes attention, the sidebar's sentence, attention "
    "kind, layer and head are shown twice: intact on the left, with the fault on the right.",
    "pitfalls.fault.pick": "Fault",
    "pitfalls.fault.pick_help": "Each fault runs the same sentence again; nothing of it stays in the model.",
    "pitfalls.fault.scaling": "No scaling by 1/√d_head",
    "pitfalls.fault.axis": "Softmax over the wrong axis",
    "pitfalls.fault.causal": "Causal mask reversed or missing",
    "pitfalls.fault.masked_row": "A fully masked row",
    "pitfalls.fault.position": "Positional encoding not added",
    "pitfalls.fault.truncation": "Input longer than max_len",
    "pitfalls.not_applicable": "This model cannot show this fault (it has no such part to break).",
    "pitfalls.no_output": "The model's output is empty, so there is no decoder pass to show. Pick the "
    "encoder self-attention in the sidebar, or another sentence.",
    "pitfalls.map.intact": "Intact: {kind}, layer {layer}, head {head}",
    "pitfalls.map.broken": "With the fault: {kind}, layer {layer}, head {head}",
    "pitfalls.map.teacher_forced": "Both maps come from one teacher-forced pass over the intact model's own "
    "output, so they have the same rows and columns. The row sums are printed at the right end of each row.",
    "pitfalls.output.intact": "Intact model writes: {output}",
    "pitfalls.output.broken": "With the fault it writes: {output}",
    "pitfalls.scaling.explain": "The scores Q·Kᵀ are no longer divided by √d_head. Their spread grows with "
    "d_head, so the softmax sees much larger differences and **saturates**: almost all the weight goes to one "
    "key, and the gradients of the other keys nearly vanish. During training that makes learning slow and "
    "unstable.",
    "pitfalls.scaling.bars_title": "Mean attention entropy per head: {kind}, layer {layer}",
    "pitfalls.scaling.caption": "Entropy measures how spread out a row is (0 = all weight on one key). Mean "
    "over the heads: {mean_with} nats with the scaling, {mean_without} nats without. Without the scaling the "
    "head shown above puts on average {top} of each row's weight on its largest key.",
    "pitfalls.axis.explain": "The softmax runs over the queries (dim=-2) instead of the keys (dim=-1). Now "
    "each **column** sums to 1, and a row — the weights one query gives its keys — sums to anything. Every "
    "query's output becomes a sum of values with the wrong total weight.",
    "pitfalls.axis.sums": "With the fault, the row sums are {rows}; the column sums are {cols}.",
    "pitfalls.causal.pick": "The mask",
    "pitfalls.causal.reversed": "reversed (hides the past)",
    "pitfalls.causal.off": "missing (nothing hidden)",
    "pitfalls.causal.explain": "Decoder self-attention, in a teacher-forced pass over the model's own output "
    "(all positions at once, as in training). The causal mask must hide each position's future. Reversed, "
    "it hides the past instead; missing, it hides nothing — and in training the model would simply copy the "
    "next token from its input.",
    "pitfalls.causal.caption_reversed": "The red frame is the future. With the reversed mask a row may look "
    "only at itself and later positions: the largest weight on the future is {future}, the largest weight on "
    "the past {past}.",
    "pitfalls.causal.caption_off": "The red frame is the future. Without the mask the largest weight a row "
    "puts on later positions is {future}.",
    "pitfalls.masked_row.explain": "Masking sets a score to −∞ so that e^(−∞) = 0. But when **every** score "
    "of a row is −∞ (a query that may look at nothing, e.g. a padding row under a padding mask), the softmax "
    "computes 0 / 0. Here is the result of a real `torch.softmax` call on such a row:",
    "pitfalls.masked_row.partly": "Row 0: two keys masked",
    "pitfalls.masked_row.fully": "Row 1: every key masked",
    "pitfalls.masked_row.col.key": "key",
    "pitfalls.masked_row.col.scores": "score",
    "pitfalls.masked_row.col.torch": "torch.softmax",
    "pitfalls.masked_row.col.model": "masked_softmax (this app)",
    "pitfalls.masked_row.spread": "And the NaN does not stay there: multiplied with the values (`weights @ V`), "
    "row 0 gives {partly}, row 1 gives {fully}. One NaN in the forward pass makes the loss NaN, and after one "
    "backward pass every weight is NaN.",
    "pitfalls.masked_row.why": "Real code avoids it: this app's `masked_softmax` replaces −∞ by the lowest "
    "finite float before the softmax and sets masked cells to exactly 0 afterwards, so a fully masked row "
    "is all 0. Other code adds a large negative number instead of −∞, or makes sure no row is fully masked.",
    "pitfalls.position.explain": "Attention itself does not know about order: without the positional "
    "encoding the encoder sees a **set** of tokens. Test: shuffle the sentence's words (characters for "
    "Chinese and the letter models) and compare each token's encoder output in the original sentence with "
    "the same token's output in the shuffled one.",
    "pitfalls.position.seed": "Shuffle number",
    "pitfalls.position.seed_help": "The same number always gives the same shuffle (it is kept in the link).",
    "pitfalls.position.reroll": "Shuffle again",
    "pitfalls.position.original": "Original: {tokens}",
    "pitfalls.position.shuffled": "Shuffled: {tokens}",
    "pitfalls.position.same_order": "The sentence has only one word, so shuffling cannot change it.",
    "pitfalls.position.cosine_caption": "With the positional encoding a token's encoder output depends on "
    "where it stands (lowest cosine similarity: {low}). Without it, every token gets the same output wherever "
    "it stands: the cosine is 1 up to float rounding (largest distance from 1: {gap}).",
    "pitfalls.position.col.input": "input",
    "pitfalls.position.col.with": "output with positional encoding",
    "pitfalls.position.col.without": "output without positional encoding",
    "pitfalls.position.row.original": "original",
    "pitfalls.position.row.shuffled": "shuffled",
    "pitfalls.position.conclusion": "Without the positional encoding the encoder gives the shuffled sentence "
    "the same outputs as the original, only in another order — and cross-attention cannot tell the "
    "difference, so both sentences give the same translation.",
    "pitfalls.truncation.explain": "A model reads at most `max_len` positions. What happens to a longer input? "
    "Here the sidebar's sentence is repeated until it is too long for this model.",
    "pitfalls.truncation.input": "The input has {n} tokens; this model reads at most {max_len} positions "
    "(the last one is `<eos>`):",
    "pitfalls.truncation.kept": "What the model reads ({n} tokens): {tokens}",
    "pitfalls.truncation.dropped": "What it drops ({n} tokens): {tokens}",
    "pitfalls.truncation.output": "Output: {output}",
    "pitfalls.truncation.caption": "This app says so (the warning above). Much code cuts silently: the output "
    "then looks complete, yet the end of the input was never read.",
    # 2. dimensions
    "pitfalls.dims.header": "2 · Dimensions lab",
    "pitfalls.dims.explain": "A tiny random model (one encoder and one decoder layer, a vocabulary of {vocab}) "
    "runs a batch of {batch} sentences of {length} tokens. Change the width and the number of heads, or the "
    "order of the axes, and see the shapes of every step — or the exact error the code raises.",
    "pitfalls.dims.d_model_help": "Width of the model (of every token vector); each head gets d_model / heads of it.",
    "pitfalls.dims.heads": "Attention heads",
    "pitfalls.dims.order": "Order of the axes",
    "pitfalls.dims.order.batch_first": "batch first: [batch, position] (correct)",
    "pitfalls.dims.order.seq_first": "sequence first: [position, batch] fed as if it were [batch, position]",
    "pitfalls.dims.order.merge_wrong": "heads merged in the wrong order",
    "pitfalls.dims.raised": "Building the model raised this exception:",
    "pitfalls.dims.config_caption": "The check sits in `ModelConfig`: every head must get the same width, so "
    "d_model must be a multiple of the number of heads.",
    "pitfalls.dims.seq_first": "**No error.** The ids were given as {shape}, so the model reads "
    "batch = {shape} and mixes tokens of the two sentences into one \"sentence\". Its logits, put back in "
    "order, differ from the correct ones by up to {gap}. Shapes alone do not catch this bug: look at the `B` "
    "and `L_src` below.",
    "pitfalls.dims.merge_raised": "Transposing [batch, head, position, d_head] back and calling `.view` without "
    "`.contiguous()` raised:",
    "pitfalls.dims.merge_no_error": "Transposing and calling `.view` without `.contiguous()` raised nothing "
    "here.",
    "pitfalls.dims.merge_silent": "Calling `.view` **without** the transpose raises nothing: the shape is "
    "right ({shape}), but positions and heads are mixed. On the real tensors of encoder layer 0 the merged "
    "heads differ from the correct ones by up to {gap}, and after W_o by up to {out_gap}.",
    "pitfalls.dims.merge_one_head": "With one head there is nothing to mix: the wrong order gives exactly the "
    "right result. Pick two or more heads to see the bug.",
    "pitfalls.dims.symbols": "In this pass: ",
    "pitfalls.dims.trace_caption": "{n} steps of the forward pass, recorded from the tensors that flowed.",
}

ZH = {
    "pitfalls.title": "踩坑实验室",
    "pitfalls.intro": "每份 `Transformer` 教程里都有几处地方，只要写错一个字符，模型就坏了：漏掉缩放、softmax "
    "用错了轴、掩码方向反了。这里把这些错误一个个真的打开，让你看到它们对数字的影响。模型的权重始终不变："
    "故障只是前向传播读取的一个设置，运行结束后立刻恢复。",
    "pitfalls.trained.header": "0 · 带着错误训练出来的模型",
    "pitfalls.trained.explain": "下面几节是在一个训练正确的模型里临时打开故障。这里则不同，每个错误在**训练时**就存在："
    "九个小模型用相同的数据、步数和随机种子学习把一个单词倒过来写，每个只改动了代码中的一行。选一个，和正确的模型比较。",
    "pitfalls.trained.pick": "带着错误训练的模型",
    "pitfalls.trained.pick_help": "每个都是在倒序任务上真实训练了 600 步的模型；与正确的模型相比，只有下面显示的那一行不同。",
    "pitfalls.trained.fault_line": "与正确的模型唯一不同的一行代码：",
    "pitfalls.trained.em_correct": "正确的模型：测试集完全匹配率",
    "pitfalls.trained.em_variant": "带着错误：测试集完全匹配率",
    "pitfalls.trained.em_caption": "500 个测试单词中，倒序后一个字母都不错的比例（训练时保存在每个模型的 "
    "`metrics.json` 里）。",
    "pitfalls.trained.verdict.lr-postln-nowarmup": "学习率从第一步起就很高，用的是后置归一化（Post-LN），又没有预热："
    "损失下降一次之后，从第二步起就停在 3.3 左右，再也降不下来。模型什么也没学到。",
    "pitfalls.trained.verdict.no-scaling": "这里看不出影响：`d_head` = 16 时，缺少的缩放因子 1/√d_head 只是 1/4，"
    "不足以让这么小的模型的 softmax 饱和。注意力头更宽时，缩放就重要得多。",
    "pitfalls.trained.verdict.no-padding-mask": "几乎看不出来：训练批次按长度分组，里面的填充很少，"
    "模型没有多少机会错误地关注填充位置。",
    "pitfalls.trained.verdict.no-clipping": "略有下降，但要小心解读：这个模型的预热也更短（10 步而不是 50 步），"
    "所以下降不能全部归因于没有梯度裁剪。",
    "pitfalls.trained.verdict.no-positional-encoding": "编码器看到的只是一袋字母：没有位置编码，"
    "它分不清哪个字母在前，因此无法把单词倒过来。",
    "pitfalls.trained.verdict.one-head": "没有影响：一个宽 64 的注意力头就足以完成这个任务，"
    "正确模型的四个注意力头在这里并不需要。",
    "pitfalls.trained.verdict.no-residual": "没有残差连接，信号和梯度都必须穿过每一层："
    "损失一直停在 2.75 左右，模型什么也没学到。",
    "pitfalls.trained.verdict.no-causal-mask": "训练损失降到 0.65，验证损失却一直在 4.9 左右：没有因果掩码，"
    "解码器学会了从给它的目标里抄下一个字母——也就是它自己生成时看不到的未来。",
    "pitfalls.trained.curves_caption": "每个优化步的损失和梯度范数，两个模型画在同一组坐标轴上。线上的缺口表示该步的数值不是有限数。",
    "pitfalls.trained.word": "两个模型读的都是 {word}。交叉注意力，第 {layer} 层，头 {head}：",
    "pitfalls.trained.word_default": "（侧边栏的模型不是字母模型，所以两个模型读的是一个固定的单词。）",
    "pitfalls.trained.map": "{model}：第 {layer} 层，头 {head}",
    "pitfalls.trained.output": "{model} 输出：{output}",
    "pitfalls.trained.head_clamped": "这个模型每层只有 {n} 个注意力头：显示的是它的头 {head}。",
    "pitfalls.trained.no_metrics": "未保存",
    "pitfalls.faults.header": "1 · 在已加载的模型里打开一个故障",
    "pitfalls.faults.explain": "选一个故障。凡是影响注意力的故障，侧边栏选中的句子、注意力类型、层和头都会显示两次："
    "左边是正常的，右边是带故障的。",
    "pitfalls.fault.pick": "故障",
    "pitfalls.fault.pick_help": "每个故障都会把同一个句子重新运行一遍，模型本身不会留下任何改动。",
    "pitfalls.fault.scaling": "没有除以 √d_head 的缩放",
    "pitfalls.fault.axis": "softmax 用错了轴",
    "pitfalls.fault.causal": "因果掩码反了或缺失",
    "pitfalls.fault.masked_row": "整行都被掩码遮住",
    "pitfalls.fault.position": "没有加位置编码",
    "pitfalls.fault.truncation": "输入超过 max_len",
    "pitfalls.not_applicable": "这个模型无法演示这个故障（它没有可以弄坏的这一部分）。",
    "pitfalls.no_output": "模型的输出为空，因此没有解码器的计算可以展示。请在侧边栏选择编码器自注意力，或换一个句子。",
    "pitfalls.map.intact": "正常：{kind}，第 {layer} 层，头 {head}",
    "pitfalls.map.broken": "带故障：{kind}，第 {layer} 层，头 {head}",
    "pitfalls.map.teacher_forced": "两张图都来自同一次教师强制计算，输入是正常模型自己的输出，所以行和列完全相同。"
    "每行右端印着这一行的和。",
    "pitfalls.output.intact": "正常模型的输出：{output}",
    "pitfalls.output.broken": "带故障时的输出：{output}",
    "pitfalls.scaling.explain": "分数 Q·Kᵀ 不再除以 √d_head。分数的离散程度随 d_head 增大，softmax 看到的差距大得多，"
    "于是**饱和**：几乎全部权重都落在一个键上，其余键的梯度几乎消失。训练时这会让学习又慢又不稳定。",
    "pitfalls.scaling.bars_title": "每个注意力头的平均注意力熵：{kind}，第 {layer} 层",
    "pitfalls.scaling.caption": "熵衡量一行权重有多分散（0 表示全部权重都在一个键上）。所有头的平均值：有缩放时为 "
    "{mean_with} nats，没有缩放时为 {mean_without} nats。没有缩放时，上面那个头平均把每行 {top} 的权重放在最大的那个键上。",
    "pitfalls.axis.explain": "softmax 沿查询轴（`dim=-2`）计算，而不是沿键轴（`dim=-1`）。于是每一**列**的和为 1，"
    "而每一行——一个查询分给各个键的权重——的和可以是任意值。每个查询的输出就成了总权重不对的值向量之和。",
    "pitfalls.axis.sums": "带故障时，各行的和为 {rows}；各列的和为 {cols}。",
    "pitfalls.causal.pick": "掩码",
    "pitfalls.causal.reversed": "反了（遮住过去）",
    "pitfalls.causal.off": "缺失（什么都不遮）",
    "pitfalls.causal.explain": "解码器自注意力，在模型自己的输出上做一次教师强制计算（所有位置一起算，和训练时一样）。"
    "因果掩码应当遮住每个位置的未来。反了，它遮住的是过去；缺失，则什么都不遮——训练时模型就会直接从输入里抄下一个 token。",
    "pitfalls.causal.caption_reversed": "红框是未来。掩码反了以后，每一行只能看自己和后面的位置：放在未来上的最大权重是 "
    "{future}，放在过去上的最大权重是 {past}。",
    "pitfalls.causal.caption_off": "红框是未来。没有掩码时，一行放在后面位置上的最大权重是 {future}。",
    "pitfalls.masked_row.explain": "掩码把分数设为 −∞，这样 e^(−∞) = 0。可是当一行的**所有**分数都是 −∞ 时"
    "（一个什么都不许看的查询，比如填充掩码下的填充行），softmax 算的是 0 / 0。下面是对这样一行真正调用 "
    "`torch.softmax` 的结果：",
    "pitfalls.masked_row.partly": "第 0 行：掩码遮住两个键",
    "pitfalls.masked_row.fully": "第 1 行：所有键都被掩码遮住",
    "pitfalls.masked_row.col.key": "键",
    "pitfalls.masked_row.col.scores": "分数",
    "pitfalls.masked_row.col.torch": "torch.softmax",
    "pitfalls.masked_row.col.model": "masked_softmax（本应用）",
    "pitfalls.masked_row.spread": "而且 `NaN` 不会停在那里：乘以值向量（`weights @ V`）后，第 0 行得到 {partly}，"
    "第 1 行得到 {fully}。前向传播里出现一个 `NaN`，损失就是 `NaN`；再做一次反向传播，所有权重都变成 `NaN`。",
    "pitfalls.masked_row.why": "真实的代码会避开它：本应用的 `masked_softmax` 在 softmax 之前把 −∞ 换成最小的有限浮点数，"
    "之后再把被掩码遮住的格子精确地设为 0，所以整行被遮住时结果全是 0。也有代码用一个很大的负数代替 −∞，"
    "或者保证没有哪一行被完全遮住。",
    "pitfalls.position.explain": "注意力本身不知道顺序：没有位置编码，编码器看到的只是一**组** token。试验：把句子里的词打乱"
    "（中文和字母模型按字打乱），比较每个 token 在原句中和在打乱后的句子中的编码器输出。",
    "pitfalls.position.seed": "打乱编号",
    "pitfalls.position.seed_help": "同一个编号总是得到同样的打乱结果（它保存在链接里）。",
    "pitfalls.position.reroll": "重新打乱",
    "pitfalls.position.original": "原句：{tokens}",
    "pitfalls.position.shuffled": "打乱后：{tokens}",
    "pitfalls.position.same_order": "这个句子只有一个词，打乱也不会改变它。",
    "pitfalls.position.cosine_caption": "有位置编码时，一个 token 的编码器输出取决于它所在的位置（最低的余弦相似度："
    "{low}）。没有位置编码时，每个 token 无论在哪里输出都一样：余弦相似度在浮点舍入误差内等于 1（与 1 的最大差距：{gap}）。",
    "pitfalls.position.col.input": "输入",
    "pitfalls.position.col.with": "加位置编码时的输出",
    "pitfalls.position.col.without": "不加位置编码时的输出",
    "pitfalls.position.row.original": "原句",
    "pitfalls.position.row.shuffled": "打乱后",
    "pitfalls.position.conclusion": "没有位置编码时，编码器给打乱后的句子的输出和原句完全一样，只是顺序不同——"
    "交叉注意力分辨不出两者，所以两个句子得到同样的译文。",
    "pitfalls.truncation.explain": "模型最多读取 `max_len` 个位置。更长的输入会怎样？这里把侧边栏的句子重复多次，"
    "直到它对这个模型来说太长。",
    "pitfalls.truncation.input": "输入有 {n} 个 token；这个模型最多读取 {max_len} 个位置（最后一个是 `<eos>`）：",
    "pitfalls.truncation.kept": "模型读到的部分（{n} 个 token）：{tokens}",
    "pitfalls.truncation.dropped": "被丢掉的部分（{n} 个 token）：{tokens}",
    "pitfalls.truncation.output": "输出：{output}",
    "pitfalls.truncation.caption": "本应用会明确提示（见上面的警告）。很多代码却悄悄截断：输出看起来完整，"
    "其实输入的结尾根本没被读到。",
    "pitfalls.dims.header": "2 · 维度实验",
    "pitfalls.dims.explain": "一个随机初始化的小模型（一层编码器、一层解码器，词表大小为 {vocab}）处理一个批次："
    "{batch} 个句子，每句 {length} 个 token。改变宽度、头数或轴的顺序，就能看到每一步的形状——或者代码抛出的确切错误。",
    "pitfalls.dims.d_model_help": "模型的宽度（每个 token 向量的维数）；每个头分到其中的 d_model / 头数。",
    "pitfalls.dims.heads": "注意力头数",
    "pitfalls.dims.order": "轴的顺序",
    "pitfalls.dims.order.batch_first": "批次在前：[批次, 位置]（正确）",
    "pitfalls.dims.order.seq_first": "序列在前：把 [位置, 批次] 当作 [批次, 位置] 输入",
    "pitfalls.dims.order.merge_wrong": "合并各头时顺序错误",
    "pitfalls.dims.raised": "构建模型时抛出了这个异常：",
    "pitfalls.dims.config_caption": "这项检查在 `ModelConfig` 里：每个头必须分到同样的宽度，所以 d_model "
    "必须是头数的整数倍。",
    "pitfalls.dims.seq_first": "**没有报错。** token 编号以 {shape} 的形状传入，模型把它读成 批次 × 长度 = {shape}，"
    "把两个句子的 token 混成了一个“句子”。把它输出的 `logits` 按原顺序放回后，与正确结果最多相差 {gap}。"
    "只看形状抓不住这种错误：请看下面的 `B` 和 `L_src`。",
    "pitfalls.dims.merge_raised": "把 [批次, 头, 位置, d_head] 转置回来后，不调用 `.contiguous()` 就直接 `.view`，"
    "抛出了：",
    "pitfalls.dims.merge_no_error": "转置后不调用 `.contiguous()` 就 `.view`，这里没有报错。",
    "pitfalls.dims.merge_silent": "**不转置**直接 `.view` 则不会报错：形状是对的（{shape}），但位置和头被混在了一起。"
    "在编码器第 0 层的真实张量上，合并后的结果与正确结果最多相差 {gap}，经过 W_o 之后最多相差 {out_gap}。",
    "pitfalls.dims.merge_one_head": "只有一个头时没有什么可以混：错误的顺序给出的结果和正确的一模一样。"
    "选两个或更多的头才能看到这个错误。",
    "pitfalls.dims.symbols": "这次计算中：",
    "pitfalls.dims.trace_caption": "前向传播的 {n} 个步骤，从实际流过的张量记录下来。",
}
