"""Step-by-step decoding page."""

EN = {
    "decoding.intro": "The decoder writes the output **one token at a time**. At each step it reads what it "
    "has written so far with **masked self-attention** and looks back at the source sentence with "
    "**cross-attention**; then it scores every token of its vocabulary and a decoding strategy picks one: "
    "**greedy decoding** takes the most likely token, **beam search** keeps several partial outputs and "
    "returns the most likely whole one, **sampling** draws at random (choose in the sidebar). Move the "
    "slider to replay the steps of the chosen output. At the bottom, **teacher forcing**: the decoder reads "
    "a reference you type, as in training.",
    "decoding.intro_lm": "A language model **writes one token at a time**: at each step it reads the prompt and "
    "everything it has written so far with **masked self-attention** (no source sentence, no cross-attention), "
    "scores every token of its vocabulary, and a decoding strategy picks one: **greedy**, **beam search** or "
    "**sampling** (choose in the sidebar). Move the slider to replay the steps. At the bottom, **teacher "
    "forcing**: the model reads a continuation you type.",
    "decoding.lm_title": "Step {step}: every head's attention row over the prompt and what it has written",
    "decoding.lm_caption": "One row per layer · head. Each row is a distribution over the tokens read so far "
    "(the prompt, then the output up to this step): where that head looks while this token is chosen.",
    "decoding.lm_rows_caption": "The selected head's masked self-attention row at this step: the keys after "
    "it lie in the future and cannot be seen.",
    "decoding.slider": "Decoding step",
    "decoding.slider_help": "Step t produces output token t.",
    "decoding.step_read": "**Step {step}** — the decoder has read {tokens}  \nand chooses **{token}**",
    "decoding.step_prob": " (probability {p:.1%}).",
    "decoding.strategy_now": "Decoding: {strategy}. The attention below is that of the output it chose.",
    "decoding.teacher_forced": "Teacher-forced: the output is the given target, not the model's own choice.",
    "decoding.cross_title": "Step {step}: cross-attention of every head",
    "decoding.cross_caption": "One row per decoder layer · head. Each row is a distribution over the source tokens: "
    "where that head looks in the source while this output token is chosen.",
    "decoding.topk_title": "Step {step}: most likely next tokens",
    "decoding.topk_caption": "The model's own probabilities for the next token (temperature 1, nothing cut); "
    "greedy decoding takes the top one.",
    "decoding.cross_row_title": "Cross-attention row, layer {layer} · head {head}",
    "decoding.self_row_title": "Self-attention row, layer {layer} · head {head}",
    "decoding.rows_caption": "Left: the selected head's cross-attention row at this step. Right: the same head's "
    "masked self-attention row — grey keys lie in the future and cannot be seen.",
    "decoding.greedy_hint": "Greedy decoding has nothing more to show: at each step it took the top bar above. "
    "Choose **beam search** or **sampling** in the sidebar to see the hypotheses a beam keeps and prunes, "
    "or the distribution each sampled token is drawn from.",
    # beam search
    "decoding.beam.header": "Beam search, step by step",
    "decoding.beam.explain": "The beam holds at most {width} partial outputs (hypotheses). At each step every "
    "hypothesis is extended by every token of the vocabulary; the {width} extensions with the highest "
    "cumulative log-probability stay, the others are **pruned**. An extension ending in `<eos>` is "
    "**finished** and leaves the beam, which shrinks by one. The search stops when the beam is empty or no "
    "live hypothesis can still beat the best finished one; the output is the finished hypothesis with the "
    "best score (log-probability ÷ length^α). Here {n} hypotheses finished. The red line is the output.",
    "decoding.beam.vs_transformers": "Hugging Face `transformers`' `generate(num_beams=...)` searches otherwise: a "
    "finished hypothesis is set aside and the beam is refilled, so it stays full until the end. This beam "
    "shrinks instead, so on a Marian, BART or T5 model the two may give different outputs for the same width.",
    "decoding.beam.table": "**Step {step}**: the best extensions of the live hypotheses, and the nearest misses.",
    "decoding.beam.no_step": "The search ended before step {step} (it ran {n} steps).",
    "decoding.beam.best": "The output's cumulative log-probability is {logp:.3f}; its score is {score:.3f} over "
    "{n} tokens.",
    "decoding.beam.col.rank": "rank",
    "decoding.beam.col.hypothesis": "hypothesis extended",
    "decoding.beam.col.token": "+ token",
    "decoding.beam.col.logp": "cumulative log p",
    "decoding.beam.col.score": "score",
    "decoding.beam.col.status": "what became of it",
    "decoding.beam.status.kept": "kept",
    "decoding.beam.status.finished": "finished (eos)",
    "decoding.beam.status.cut": "cut at max length",
    "decoding.beam.status.pruned": "pruned",
    # sampling
    "decoding.sample.header": "Sampling, step by step",
    "decoding.sample.explain": "At each step the scores are divided by the temperature, turned into "
    "probabilities, cut to the top-k most likely tokens and then to the fewest whose probabilities reach "
    "top-p, and renormalised; one token is drawn from what is left. The seed fixes the draws, so this link "
    "always shows the same sample.",
    "decoding.sample.title": "Step {step}: the distribution sampled from ({n} tokens left)",
    "decoding.sample.caption": "Drew **{token}**: probability {p:.1%} in the distribution sampled from, {raw:.1%} "
    "under the model. {n} of the {vocab} tokens of the vocabulary could be drawn at this step.",
    "decoding.sample.no_step": "The sample ended before step {step}.",
    # teacher forcing
    "decoding.tf.header": "Teacher forcing beside free running",
    "decoding.tf.explain": "Above, the decoder reads its **own** earlier tokens (free running). In training it "
    "reads the **reference** instead (teacher forcing): every position predicts the next reference token "
    "whatever it would have written itself, and the loss is taken at every position at once. Type a "
    "reference to see that loss per token and where the model's own choice would differ.",
    "decoding.tf.reference": "Reference output",
    "decoding.tf.reference_help": "The correct output for the sidebar's sentence (e.g. a translation). It is "
    "part of the link.",
    "decoding.tf.empty": "Type a reference output to compare.",
    "decoding.tf.mean_smoothed": "Training loss, mean (label smoothing ε = {eps})",
    "decoding.tf.mean_nll": "Cross-entropy, mean (no label smoothing)",
    "decoding.tf.n_differ": "Positions where the model would choose another token",
    "decoding.tf.smoothing": "Two losses per token. **Cross-entropy** −log p(reference token) has no label "
    "smoothing (what the validation loss reports). The **training loss** includes the label smoothing the "
    "model was trained with, ε = {eps}: (1 − ε)·(−log p) + ε·(mean of −log p over the vocabulary); its mean "
    "over the tokens is exactly what the training loop computes for this pair.",
    "decoding.tf.no_smoothing": "This model was trained without label smoothing (ε = {eps}), so both losses "
    "are the cross-entropy −log p(reference token).",
    "decoding.tf.col.token": "reference token",
    "decoding.tf.col.p": "p(reference)",
    "decoding.tf.col.nll": "cross-entropy",
    "decoding.tf.col.smoothed": "training loss",
    "decoding.tf.col.model": "model's choice",
    "decoding.tf.col.model_p": "p(model's choice)",
    "decoding.tf.col.differs": "differs",
    "decoding.tf.side_by_side": "Free running ({strategy}): **{free}**  \nTeacher-forced reference: **{reference}**",
}

ZH = {
    "decoding.intro": "解码器**一次一个 token** 地写出输出。每一步，它先用**掩码自注意力**（masked self-attention）"
    "读取自己已经写出的内容，再用**交叉注意力**（cross-attention）回看源句子；然后给词表（vocabulary）里的每个 "
    "token 打分，再由解码方式挑出一个：**贪心解码**（greedy decoding）取最可能的 token，**束搜索**（beam search）"
    "同时保留几个未写完的输出、返回整体最可能的那个，**采样**（sampling）则随机抽取（在侧边栏选择）。拖动滑块即可"
    "一步步回放所选输出的每一步。页面底部是**教师强制**（teacher forcing）：像训练时那样，解码器读入你输入的参考输出。",
    "decoding.intro_lm": "语言模型**一次写出一个 token**：每一步，它用**掩码自注意力**读取提示文本和自己已经写出的"
    "全部内容（没有源句子，也没有交叉注意力），给词表里的每个 token 打分，再由解码方式挑出一个：**贪心解码**、"
    "**束搜索**或**采样**（在侧边栏选择）。拖动滑块即可一步步回放。页面底部是**教师强制**：模型读入你输入的续写。",
    "decoding.lm_title": "第 {step} 步：每个注意力头在提示文本和已写内容上的注意力行",
    "decoding.lm_caption": "每个“层 · 头”占一行。每一行是已读 token（先是提示文本，再是到这一步为止的输出）上的一个"
    "分布：选出这个 token 时，那个头看向哪里。",
    "decoding.lm_rows_caption": "所选注意力头在这一步的掩码自注意力行：它之后的键位于未来，还看不到。",
    "decoding.slider": "解码步",
    "decoding.slider_help": "第 t 步产生第 t 个输出 token。",
    "decoding.step_read": "**第 {step} 步**——解码器已经读入 {tokens}  \n并选择了 **{token}**",
    "decoding.step_prob": "（概率 {p:.1%}）。",
    "decoding.strategy_now": "解码方式：{strategy}。下面的注意力来自它选出的输出。",
    "decoding.teacher_forced": "教师强制（teacher forcing）：输出是给定的目标序列，而不是模型自己的选择。",
    "decoding.cross_title": "第 {step} 步：每个注意力头的交叉注意力",
    "decoding.cross_caption": "解码器的每个“层 · 头”占一行。每一行是源 token 上的一个分布："
    "在选出这个输出 token 时，那个头在源句子里看向哪里。",
    "decoding.topk_title": "第 {step} 步：最可能的下一个 token",
    "decoding.topk_caption": "模型自己给出的下一个 token 的概率（温度 1，不截取）；贪心解码取概率最高的那个。",
    "decoding.cross_row_title": "交叉注意力的一行，第 {layer} 层 · 头 {head}",
    "decoding.self_row_title": "自注意力的一行，第 {layer} 层 · 头 {head}",
    "decoding.rows_caption": "左：所选注意力头在这一步的交叉注意力行。右：同一个头的掩码自注意力行——"
    "灰色的键位于未来，还看不到。",
    "decoding.greedy_hint": "贪心解码没有更多可展示的了：每一步它都取上面最高的那一条。在侧边栏选择**束搜索**或"
    "**采样**，就能看到束保留和剪掉了哪些假设，或者每个采样 token 是从什么分布中抽出来的。",
    # 束搜索
    "decoding.beam.header": "束搜索，一步一步",
    "decoding.beam.explain": "束搜索的束里最多保留 {width} 个未写完的输出（假设）。每一步，每个假设都用词表里的每个 token "
    "延长一次；累计对数概率最高的 {width} 个延长留下，其余的被**剪掉**。以 `<eos>` 结尾的延长就**结束**了，"
    "离开束，束随之缩小一个。当束变空，或者没有哪个还活着的假设能超过已结束的最好假设时，搜索停止；输出是得分"
    "（对数概率 ÷ 长度^α）最高的已结束假设。这里共有 {n} 个假设结束。红线就是最终输出。",
    "decoding.beam.vs_transformers": "抱抱脸（Hugging Face）`transformers` 的 `generate(num_beams=...)` 的搜索方式不同："
    "已结束的假设被放到一边，束会被补满，一直保持满员到最后。这里的束搜索则让束缩小，所以在 `Marian`、`BART` 或 `T5` "
    "模型上，同样的束宽，两者的输出可能不同。",
    "decoding.beam.table": "**第 {step} 步**：各个活着的假设的最佳延长，以及差一点入选的那些。",
    "decoding.beam.no_step": "搜索在第 {step} 步之前就结束了（共 {n} 步）。",
    "decoding.beam.best": "输出的累计对数概率是 {logp:.3f}；按 {n} 个 token 计，得分为 {score:.3f}。",
    "decoding.beam.col.rank": "名次",
    "decoding.beam.col.hypothesis": "被延长的假设",
    "decoding.beam.col.token": "+ token",
    "decoding.beam.col.logp": "累计 log p",
    "decoding.beam.col.score": "得分",
    "decoding.beam.col.status": "结果",
    "decoding.beam.status.kept": "留下",
    "decoding.beam.status.finished": "已结束（eos）",
    "decoding.beam.status.cut": "在最大长度处截断",
    "decoding.beam.status.pruned": "被剪掉",
    # 采样
    "decoding.sample.header": "采样，一步一步",
    "decoding.sample.explain": "每一步先把分数除以温度，变成概率，只留最可能的前 k 个（top-k），再只留概率之和达到 "
    "p 的最少几个（top-p），重新归一化；然后从剩下的里面抽取一个 token。随机种子固定了每次抽取，所以这个链接总是显示"
    "同一个采样结果。",
    "decoding.sample.title": "第 {step} 步：实际采样所用的分布（剩下 {n} 个 token）",
    "decoding.sample.caption": "抽中了 **{token}**：在采样所用的分布中概率为 {p:.1%}，在模型原本的分布中为 {raw:.1%}。"
    "这一步词表中的 {vocab} 个 token 里有 {n} 个可能被抽到。",
    "decoding.sample.no_step": "采样在第 {step} 步之前就结束了。",
    # 教师强制
    "decoding.tf.header": "教师强制与自由生成并排对照",
    "decoding.tf.explain": "上面，解码器读入的是它**自己**先前写出的 token（自由生成）。训练时它读入的却是**参考输出**"
    "（教师强制）：无论自己会写什么，每个位置都去预测参考输出的下一个 token，所有位置的损失一次算出。输入一个参考"
    "输出，就能看到每个 token 上的损失，以及模型自己的选择会在哪里不同。",
    "decoding.tf.reference": "参考输出",
    "decoding.tf.reference_help": "侧边栏句子的正确输出（例如一个译文）。它也会写进链接。",
    "decoding.tf.empty": "输入一个参考输出来对照。",
    "decoding.tf.mean_smoothed": "训练损失，平均值（标签平滑 ε = {eps}）",
    "decoding.tf.mean_nll": "交叉熵，平均值（不含标签平滑）",
    "decoding.tf.n_differ": "模型会选另一个 token 的位置",
    "decoding.tf.smoothing": "每个 token 有两种损失。**交叉熵** −log p(参考 token) 不含标签平滑（验证损失报告的就是它）。"
    "**训练损失**含有模型训练时用的标签平滑 ε = {eps}：(1 − ε)·(−log p) + ε·(−log p 在整个词表上的平均)；"
    "它在各 token 上的平均值，正是训练循环对这一对句子算出的损失。",
    "decoding.tf.no_smoothing": "这个模型训练时没有用标签平滑（ε = {eps}），所以两种损失都是交叉熵 −log p(参考 token)。",
    "decoding.tf.col.token": "参考 token",
    "decoding.tf.col.p": "p(参考)",
    "decoding.tf.col.nll": "交叉熵",
    "decoding.tf.col.smoothed": "训练损失",
    "decoding.tf.col.model": "模型的选择",
    "decoding.tf.col.model_p": "p(模型的选择)",
    "decoding.tf.col.differs": "不同",
    "decoding.tf.side_by_side": "自由生成（{strategy}）：**{free}**  \n教师强制的参考输出：**{reference}**",
}
