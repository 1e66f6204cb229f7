"""Architecture page: the encoder–decoder diagram of the loaded model, and the multi-head split and merge."""

EN = {
    "architecture.title": "Architecture and shape flow",
    "architecture.intro": "The whole network of the loaded model, drawn from its config: the embeddings and the "
    "positional encoding, one encoder block and one decoder block (each repeated N times), their sub-layers, "
    "where the normalisation sits, where cross-attention reads its keys and values, and the output "
    "projection. Every box carries the **real shape of its output** for the sentence in the sidebar, read "
    "from the shape trace of this very pass.",
    "architecture.config": "{n_enc} encoder blocks · {n_dec} decoder blocks · {h} heads of width d_head = "
    "{d_head} · d_model = {d_model} · d_ff = {d_ff} · {norm} · {pos} · {tied}",
    "architecture.norm.pre": "Pre-LN",
    "architecture.norm.post": "Post-LN (as in the paper)",
    "architecture.norm.after": "a norm after each branch (OLMo 2)",
    "architecture.norm.both": "a norm before and after each branch (Gemma 3)",
    "architecture.norm.parallel": "attention and FFN in parallel (GPT-NeoX)",
    "architecture.pos.sinusoidal": "sinusoidal positional encoding",
    "architecture.pos.learned": "learned positional encoding",
    "architecture.pos.rope": "rotary position embeddings (RoPE) inside attention",
    "architecture.pos.relative": "a relative position bias on the attention scores (T5)",
    "architecture.pos.none": "no positional encoding",
    "architecture.tied.yes": "output projection tied to the embedding",
    "architecture.tied.no": "output projection with its own matrix",
    "architecture.reading.pre": "**Where the norm sits (Pre-LN).** Each sub-layer reads a normalised copy of "
    "the residual stream: `x + f(norm(x))`. The norm sits inside the residual branch, so the stream itself "
    "is never normalised inside a block; that is why each stack ends with one **final norm**.",
    "architecture.reading.post": "**Where the norm sits (Post-LN).** Each sub-layer adds its output to the "
    "residual stream and the sum is normalised: `norm(x + f(x))`, as in the original paper. The stream "
    "leaves every block normalised, so no final norm is needed.",
    "architecture.intro_lm": "The whole network of the loaded language model, drawn from its config: the "
    "token embedding (and the positional encoding, where it has one), one decoder block repeated N times "
    "with its masked self-attention and feed-forward sub-layers, where the normalisation sits, and the output "
    "projection to the vocabulary. There is no encoder and no cross-attention: the prompt and what the model "
    "has written so far are one sequence. Every box carries the **real shape of its output** for the prompt "
    "in the sidebar and its continuation, read from the shape trace of this very pass.",
    "architecture.config_lm": "{n_dec} decoder blocks (decoder-only: no encoder, no cross-attention) · {h} heads "
    "of width d_head = {d_head} · d_model = {d_model} · d_ff = {d_ff} · {norm} · {pos} · {tied}",
    "architecture.reading.decoder_only": "**Decoder-only.** Each position's masked self-attention sees only "
    "itself and the positions before it, so one pass gives a next-token guess at every position; writing "
    "appends the chosen token and runs again (with the keys and values of earlier positions kept).",
    "architecture.reading.cross": "**Cross-attention** takes its queries from the decoder and its keys and "
    "values from the encoder output (the purple arrow): every decoder block reads the same encoder output.",
    "architecture.reading.rope": "**RoPE**: this model has no positional-encoding box. Positions enter inside "
    "self-attention, where q and k are rotated by their position before the dot product.",
    "architecture.reading.tied": "**Output projection**: it turns each decoder position into one score per "
    "token of the vocabulary (the logits, last axis V = {vocab}). {tied}",
    "architecture.reading.tied_yes": "It is **tied** to the embedding: the same matrix, transposed.",
    "architecture.reading.tied_no": "It has **its own matrix**, separate from the embedding.",
    "architecture.shapes_note": "Shapes are (B, L, width): B = {B} sentence, L = the number of positions. Every "
    "block of a stack has the same shapes, so one block is drawn; the final norm keeps the shape of its "
    "input.",
    "architecture.one_pass": "These are the shapes of the pass over the prompt (L = {L}). The model read it "
    "once, keeping each layer's keys and values, then wrote the {new} new tokens one at a time: each step "
    "feeds one token, so its shapes are (B, 1, width), and its attention reads the cached keys.",
    "architecture.links": "Each box names the page that shows it:",
    "architecture.split.header": "Multi-head split and merge",
    "architecture.split.text": "The attention chosen in the sidebar ({kind}, layer {layer}) splits its "
    "d_model = {d_model} wide vectors into h = {h} heads of d_head = {d_head} numbers, lets every head "
    "compute its own {lq} × {lk} scores, and joins the heads again: h · d_head = {h} × {d_head} = "
    "{merged}, then W_o. Every shape below is read from the shape trace of this pass.",
    "architecture.split.gqa": "This model shares key/value heads: K and V have {kv} heads, each shared by "
    "{group} query heads before the scores are computed. The query path drawn here has all h = {h} heads.",
    "architecture.split.rope": "RoPE rotates q and k after the split; the rotation keeps their shape.",
    "architecture.col.stage": "Stage",
    "architecture.col.shape": "Real shape",
    "architecture.col.symbol": "Symbolic shape",
    "architecture.col.step": "Trace step",
    # the stages of the split and merge, in the table; the figure (viz) draws the same names, but calls the
    # input just "input x" (architecture.split_input, strings/figures/architecture.py)
    "architecture.stage.input": "input x (queries)",
    "architecture.stage.split": "split into heads",
    "architecture.stage.heads_first": "heads first",
    "architecture.stage.scores": "scores Q Kᵀ",
    "architecture.stage.weighted": "weights · V",
    "architecture.stage.positions_first": "positions first",
    "architecture.stage.merge": "heads merged",
    "architecture.stage.project": "after W_o",
    "architecture.missing": "The shape trace of this pass has no step {op} for this attention layer.",
    # one block as the model wires it (parallel residual, norms after or on both sides, QK-norm)
    "architecture.block.header": "One block, as this model wires it",
    "architecture.block.intro": "Every {stack} block of this model runs these lines, with its own weights "
    "(the names are the modules' own):",
    "architecture.block.stack.encoder": "encoder",
    "architecture.block.stack.decoder": "decoder",
    "architecture.block.how.pre": "**Pre-LN**: each branch reads a normalised copy of the stream; the stream "
    "itself is never normalised inside the block.",
    "architecture.block.how.post": "**Post-LN** (as in the 2017 paper): the stream is normalised after each "
    "residual add.",
    "architecture.block.how.after": "**Norms after each branch** (OLMo 2): a branch reads the stream as it is, "
    "and its output is normalised before it is added back.",
    "architecture.block.how.both": "**Four norms per block** (Gemma 3): a norm before each branch *and* one "
    "after it (`post_norm1`, `post_norm2`), before the residual add.",
    "architecture.block.how.parallel": "**Parallel residual** (GPT-NeoX / Pythia): attention and the FFN both "
    "read the same input, each through its own norm, and both outputs are added to it at once: one residual "
    "add per block instead of two, and the FFN never sees this layer's attention output.",
    "architecture.block.qk.head": "**QK-norm**: inside attention, each head's q and k go through their own "
    "norm (`q_norm`, `k_norm`, over d_head = {d_head}) before RoPE; the hooks `hook_q_normed` and "
    "`hook_k_normed` hold them.",
    "architecture.block.qk.full": "**QK-norm over the whole projection**: inside attention, q and k are "
    "normalised over all {width} numbers of a position (`q_norm`, `k_norm`) before they are split into heads "
    "and rotated; the hooks `hook_q_normed` and `hook_k_normed` hold them.",
    "architecture.block.params": "One {stack} block holds **{total}** parameters: {formula}.",
}

ZH = {
    "architecture.title": "架构与形状流动",
    "architecture.intro": "按当前模型的配置画出的整个网络：嵌入和位置编码，一个编码器块和一个解码器块（各重复 N 次）、"
    "它们的子层、归一化的位置、交叉注意力从哪里取键和值，以及输出投影。每个方框都标出侧边栏里这句话在本次前向传播中"
    "**真实的输出形状**，直接取自这次前向传播的形状追踪。",
    "architecture.config": "{n_enc} 个编码器块 · {n_dec} 个解码器块 · {h} 个注意力头，每个宽 d_head = {d_head} · "
    "d_model = {d_model} · d_ff = {d_ff} · {norm} · {pos} · {tied}",
    "architecture.norm.pre": "Pre-LN",
    "architecture.norm.post": "Post-LN（与原论文相同）",
    "architecture.norm.after": "每个分支之后归一化（OLMo 2）",
    "architecture.norm.both": "每个分支之前和之后都归一化（Gemma 3）",
    "architecture.norm.parallel": "注意力与前馈网络并行（GPT-NeoX）",
    "architecture.pos.sinusoidal": "正弦位置编码",
    "architecture.pos.learned": "可学习的位置编码",
    "architecture.pos.rope": "在注意力内部使用旋转位置嵌入（RoPE）",
    "architecture.pos.relative": "注意力分数上的相对位置偏置（T5）",
    "architecture.pos.none": "没有位置编码",
    "architecture.tied.yes": "输出投影与嵌入共用一个矩阵",
    "architecture.tied.no": "输出投影有自己的矩阵",
    "architecture.reading.pre": "**归一化的位置（Pre-LN）。** 每个子层读取残差流归一化之后的副本：`x + f(norm(x))`。"
    "归一化位于残差连接的分支里，所以块内的残差流本身从不被归一化；因此每个堆叠的最后还有一次**最终归一化**。",
    "architecture.reading.post": "**归一化的位置（Post-LN）。** 每个子层把输出加到残差流上，再对和做归一化："
    "`norm(x + f(x))`，与原论文相同。经过残差连接后，残差流离开每个块时都已归一化，所以不需要最终归一化。",
    "architecture.intro_lm": "按当前语言模型的配置画出的整个网络：token 嵌入（以及位置编码，如果有的话）、"
    "重复 N 次的一个解码器块及其掩码自注意力和前馈网络子层、归一化的位置，以及到词表的输出投影。它没有编码器，"
    "也没有交叉注意力：提示和模型已经写出的内容是同一个序列。每个方框都标出侧边栏里的提示及其续写在本次前向传播中"
    "**真实的输出形状**，直接取自这次前向传播的形状追踪。",
    "architecture.config_lm": "{n_dec} 个解码器块（只含解码器：没有编码器，也没有交叉注意力） · {h} 个注意力头，"
    "每个宽 d_head = {d_head} · d_model = {d_model} · d_ff = {d_ff} · {norm} · {pos} · {tied}",
    "architecture.reading.decoder_only": "**只含解码器。** 每个位置的掩码自注意力只能看到它自己和它之前的位置，"
    "所以一次前向传播就在每个位置给出一个下一个 token 的猜测；写作时把选中的 token 接到末尾，再运行一次"
    "（之前位置的键和值会保留下来）。",
    "architecture.reading.cross": "**交叉注意力**的查询来自解码器，键和值来自编码器输出（紫色箭头）："
    "每个解码器块读取的都是同一个编码器输出。",
    "architecture.reading.rope": "**RoPE**：这个模型没有位置编码方框。位置信息在自注意力内部加入："
    "点积之前，q 和 k 按各自的位置旋转。",
    "architecture.reading.tied": "**输出投影**：把解码器的每个位置变成词表里每个 token 的一个分数（logits）；"
    "最后一维 V = {vocab}。{tied}",
    "architecture.reading.tied_yes": "它与嵌入**共用**同一个矩阵（转置后使用）。",
    "architecture.reading.tied_no": "它有**自己的矩阵**，与嵌入分开。",
    "architecture.shapes_note": "形状写作 (B, L, 宽度)：B = {B} 个句子，L = 位置数。同一堆叠中的每个块形状都相同，"
    "所以只画一个块；最终归一化不改变输入的形状。",
    "architecture.one_pass": "这些是读取提示时那一次计算的形状（L = {L}）。模型只读一遍提示，保存每层的键和值，"
    "然后逐个写出 {new} 个新 token：每一步只输入一个 token，形状为 (B, 1, 宽度)，注意力读取缓存的键。",
    "architecture.links": "每个方框都注明了展示它的页面：",
    "architecture.split.header": "多头拆分与合并",
    "architecture.split.text": "侧边栏选中的注意力（{kind}，第 {layer} 层）把 d_model = {d_model} 维的向量拆成 "
    "h = {h} 个头，每个头 d_head = {d_head} 个数；每个头各自计算 {lq} × {lk} 的分数，然后再把各头合并："
    "h · d_head = {h} × {d_head} = {merged}，最后乘以 W_o。下面每个形状都取自本次前向传播的形状追踪。",
    "architecture.split.gqa": "这个模型共享键/值头：K 和 V 只有 {kv} 个头，计算分数之前每个头由 {group} 个查询头共用。"
    "这里画的是查询这一路，共有 h = {h} 个头。",
    "architecture.split.rope": "RoPE 在拆分之后旋转 q 和 k；旋转不改变它们的形状。",
    "architecture.col.stage": "阶段",
    "architecture.col.shape": "真实形状",
    "architecture.col.symbol": "符号形状",
    "architecture.col.step": "追踪步骤",
    "architecture.stage.input": "输入 x（查询）",
    "architecture.stage.split": "拆成多个头",
    "architecture.stage.heads_first": "头维度提前",
    "architecture.stage.scores": "分数 Q Kᵀ",
    "architecture.stage.weighted": "权重 · V",
    "architecture.stage.positions_first": "位置维度提前",
    "architecture.stage.merge": "合并各头",
    "architecture.stage.project": "经过 W_o",
    "architecture.missing": "本次前向传播的形状追踪里，这个注意力层没有步骤 {op}。",
    "architecture.block.header": "一个块：这个模型如何连接",
    "architecture.block.intro": "这个模型的每个{stack}块都按下面几行运行，各块用自己的权重（名称就是模块自己的名称）：",
    "architecture.block.stack.encoder": "编码器",
    "architecture.block.stack.decoder": "解码器",
    "architecture.block.how.pre": "**前置归一化（Pre-LN）**：每个分支读取残差流归一化后的副本；残差流本身在块内从不被归一化。",
    "architecture.block.how.post": "**后置归一化（Post-LN）**（与 2017 年的论文相同）：每次残差连接相加之后再对残差流做归一化。",
    "architecture.block.how.after": "**归一化放在每个分支之后**（`OLMo 2`）：分支直接读取残差流，它的输出先归一化，再加回残差流。",
    "architecture.block.how.both": "**每个块四个归一化**（`Gemma 3`）：每个分支之前有一个归一化，之后*还*有一个"
    "（`post_norm1`、`post_norm2`），然后才经残差连接加回。",
    "architecture.block.how.parallel": "**并行残差连接**（`GPT-NeoX` / `Pythia`）：注意力和前馈网络读取同一个输入，"
    "各自经过自己的归一化，两个输出同时加回去：每个块只有一次残差相加而不是两次，前馈网络也看不到本层注意力的输出。",
    "architecture.block.qk.head": "**QK 归一化（QK-norm）**：在注意力内部，每个头的 q 和 k 在 RoPE 之前各自经过一个归一化"
    "（`q_norm`、`k_norm`，在 d_head = {d_head} 个数上）；钩子 `hook_q_normed` 和 `hook_k_normed` 记录的就是它们。",
    "architecture.block.qk.full": "**在整个投影上做 QK 归一化（QK-norm）**：在注意力内部，q 和 k 在拆分成多个头并旋转之前，"
    "先在一个位置的全部 {width} 个数上归一化（`q_norm`、`k_norm`）；钩子 `hook_q_normed` 和 `hook_k_normed` 记录的就是它们。",
    "architecture.block.params": "一个{stack}块有 **{total}** 个参数：{formula}。",
}
