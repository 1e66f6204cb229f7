"""Head detectors page: a score per role for every head, on seeded probes, on the user's text and over a
corpus."""

EN = {
    "detectors.no_probe": "No probe can be written from this model's vocabulary: too few of its tokens read back as themselves when decoded and encoded again, so its heads are not scored.",
    "page.detectors.title": "Head detectors",
    "detectors.intro": "What is each head **for**? Four roles that are easy to measure from attention alone, "
    "and one from the head's output, are scored for every head. Each score has a definition and a threshold "
    "(a rule of thumb, not a law); the map shows one role, every head at once. Click a head to open it on "
    "the input it was scored on.",
    "detectors.role": "Role",
    "detectors.role_help": "The role whose score colours the map (in the link as `role`).",
    "detectors.role.previous": "previous token",
    "detectors.role.first": "first token (sink)",
    "detectors.role.duplicate": "duplicate token",
    "detectors.role.induction": "induction",
    "detectors.role.copying": "copying (logit effect)",
    "detectors.def.previous": "Mean attention weight from each position *i* ≥ 1 on position *i* − 1.",
    "detectors.def.first": "Mean attention weight from each position *i* ≥ 1 on position 0 (the start token "
    "where the model reads one, else the first token). Heads that park their attention there act as a "
    "*sink*.",
    "detectors.def.duplicate": "For each position whose token already occurred earlier: the total weight "
    "on those earlier copies of the same token; averaged over such positions.",
    "detectors.def.induction": "On a repeated sequence: from a token of the second copy, the weight on the "
    "token that **followed** its earlier copy (the token that comes next). Averaged over the second copy's "
    "tokens that have a next token.",
    "detectors.def.copying": "At the same positions: the head's **direct effect on the logit** of the token "
    "that comes next. The head's output there (its weighted values times its slice of W_O) is sent through "
    "the final norm with that position's scale held fixed (a linear approximation), then onto that token's "
    "row of the output embedding minus the mean row, so a shift of every logit does not count. In logits "
    "(nats); above 0 the head raises the token. Not the full vocabulary × vocabulary OV matrix: one token, "
    "one position at a time.",
    "detectors.threshold": "Threshold: **{threshold}** ({mark} on the map). Heads at or above it: {heads}.",
    "detectors.none_above": "none",
    "detectors.seed": "Probe seed",
    "detectors.seed_help": "The probes are random tokens drawn with this seed (in the link as `probe`); "
    "another seed draws other tokens.",
    "detectors.probe_header": "On the probes",
    "detectors.probe_explain": "**{n} probes**, each **{k} random tokens of the model's vocabulary written "
    "twice**{bos}; the tokens are drawn so that the text reads back as exactly these tokens. Every role is "
    "scored on them, averaged over the probes.",
    "detectors.bos": ", after the start token the model reads first",
    "detectors.probe_tokens": "The first probe, as the model reads it:",
    "detectors.kind": "Scored: **{kind}**.",
    "detectors.encdec": "This encoder-decoder model's decoder reads its own output, which a probe cannot "
    "choose: its encoder self-attention is scored; the decoder and cross-attention are not.",
    "detectors.copying_none.no_unembed": "No copying score: this model's self-attention is an encoder's, "
    "whose output reaches no output embedding (no next-token logits to raise).",
    "detectors.copying_none.post_norm": "No copying score: the model normalises after each layer, so a "
    "head's output has no direct path to the logits.",
    "detectors.computed": "{heads} heads scored in {seconds} s.",
    "detectors.map_caption": "Click a head to open it on the single-head page with the first probe as "
    "input; the table below links each listed head too.",
    "detectors.top_header": "Best heads: {role}",
    "detectors.col.layer": "layer",
    "detectors.col.head": "head",
    "detectors.col.score": "score",
    "detectors.col.above": "at threshold",
    "detectors.col.open": "open",
    "detectors.open": "open on the single-head page",
    "detectors.text_header": "On your text",
    "detectors.text_explain": "Previous-token, first-token and duplicate-token scores need no repeated "
    "sequence, so they are also measured on the sidebar's text ({n} tokens, as the model reads it; a "
    "language model's continuation is not included).",
    "detectors.text_needs_probe": "The {role} score needs a sequence written twice: it is measured on the "
    "probes only. Choose previous token, first token or duplicate token to see it on your text or a corpus.",
    "detectors.text_no_dup": "No token of your text occurs twice, so the duplicate-token score is undefined "
    "(empty cells).",
    "detectors.text_caption": "Click a head to open it on your text.",
    "detectors.data": "Data",
    "detectors.data_help": "The sidebar's text, or a corpus whose detectors were computed with `python -m model "
    "atlas --corpus FILE` (here, or on other machines: a run folder copied into `runs/atlas/<model>/`) for this "
    "model's weights.",
    "detectors.data.text": "your text",
    "detectors.corpus_header": "Over a corpus",
    "detectors.corpus_explain": "The corpus **{name}**: **{n}** of its **{total}** prompts (seed {seed}), each "
    "read once by the model (not continued). The previous-token, first-token and duplicate-token scores are "
    "averaged over every position of every prompt.",
    "detectors.corpus_how": "Computed with `python -m model atlas --corpus` on {engine}: {workers} workers, "
    "{processes} processes on {hosts} machine(s), {shards} shards of {size} prompts, in {seconds} s; corpus "
    "file sha256 {sha}….",
    "detectors.engine.local": "one process",
    "detectors.engine.pool": "a local process pool",
    "detectors.engine.ray": "Ray",
    "detectors.corpus_no_dup": "No token of the corpus's prompts occurs twice within a prompt, so the "
    "duplicate-token score is undefined (empty cells).",
    "detectors.corpus_caption": "Click a head to open it on the corpus prompt where its attention is most "
    "peaked (the head atlas's top example).",
    "detectors.no_self": "This model has no self-attention to score.",
}

ZH = {
    "detectors.no_probe": "无法用这个模型的词表写出探针：解码后再编码仍得到自己的 token 太少，所以这里不给它的注意力头打分。",
    "page.detectors.title": "注意力头探测器",
    "detectors.intro": "每个注意力头是**做什么的**？这里为每个头计算几种角色的得分：四种只看注意力权重就能测量，"
    "一种看头的输出。每个得分都有定义和阈值（经验值，不是定律）；热力图一次显示所有头在一种角色上的得分。"
    "点击一个头，就能在计算得分所用的输入上打开它。",
    "detectors.role": "角色",
    "detectors.role_help": "热力图着色所用的角色（链接中的 `role`）。",
    "detectors.role.previous": "前一个 token",
    "detectors.role.first": "首个 token（汇聚点）",
    "detectors.role.duplicate": "重复 token",
    "detectors.role.induction": "归纳",
    "detectors.role.copying": "复制（对对数几率的作用）",
    "detectors.def.previous": "每个位置 *i* ≥ 1 分给位置 *i* − 1 的注意力权重的平均值。",
    "detectors.def.first": "每个位置 *i* ≥ 1 分给位置 0 的注意力权重的平均值（模型读起始 token 时位置 0 就是它，"
    "否则是第一个 token）。把注意力停放在那里的头起到*汇聚点*（sink）的作用。",
    "detectors.def.duplicate": "对每个此前已出现过的 token 所在的位置：它分给同一 token 之前各次出现的权重之和；"
    "再对这些位置取平均。",
    "detectors.def.induction": "在重复的序列上：从第二遍中的一个 token 出发，分给它第一次出现时**后面那个**token"
    "（也就是接下来该出现的 token）的权重。对第二遍中后面还有 token 的位置取平均。",
    "detectors.def.copying": "在同样的位置上：这个头对下一个 token 的对数几率的**直接作用**。把该位置上这个头的输出"
    "（加权后的值向量乘以它在 W_O 中的那一块）送过最终归一化层，并固定该位置的缩放系数（线性近似），"
    "再投影到输出嵌入中该 token 那一行减去所有行的平均（所有对数几率同时平移不算数）。单位是对数几率（nats）；"
    "大于 0 表示这个头提高了该 token 的对数几率。这不是完整的“词表 × 词表”值-输出矩阵：每次只看一个 token、一个位置。",
    "detectors.threshold": "阈值：**{threshold}**（热力图上标 {mark}）。达到或超过阈值的头：{heads}。",
    "detectors.none_above": "无",
    "detectors.seed": "探针随机种子",
    "detectors.seed_help": "探针是用这个种子抽取的随机 token（链接中的 `probe`）；换一个种子就抽到别的 token。",
    "detectors.probe_header": "在探针上",
    "detectors.probe_explain": "**{n} 条探针**，每条是**从模型词表中随机抽取的 {k} 个 token，写两遍**{bos}；"
    "抽取时保证文本重新分词后正好还是这些 token。所有角色都在探针上计算，并对各条探针取平均。",
    "detectors.bos": "，前面是模型先读的起始 token",
    "detectors.probe_tokens": "第一条探针（模型读到的样子）：",
    "detectors.kind": "计算对象：**{kind}**。",
    "detectors.encdec": "这个编码器-解码器模型的解码器读的是它自己的输出，探针无法指定："
    "这里计算的是编码器自注意力；解码器自注意力和交叉注意力不计算。",
    "detectors.copying_none.no_unembed": "没有复制得分：这个模型的自注意力属于编码器，其输出不经过输出嵌入"
    "（没有可以提高的下一个 token 的对数几率）。",
    "detectors.copying_none.post_norm": "没有复制得分：这个模型在每层之后做归一化，头的输出没有直达对数几率的路径。",
    "detectors.computed": "已为 {heads} 个头计算得分，用时 {seconds} 秒。",
    "detectors.map_caption": "点击一个头，以第一条探针为输入在单头页面上打开它；下表中列出的头也都有链接。",
    "detectors.top_header": "得分最高的头：{role}",
    "detectors.col.layer": "层",
    "detectors.col.head": "头",
    "detectors.col.score": "得分",
    "detectors.col.above": "达到阈值",
    "detectors.col.open": "打开",
    "detectors.open": "在单头页面上打开",
    "detectors.text_header": "在你的文本上",
    "detectors.text_explain": "前一个 token、首个 token 和重复 token 这三种得分不需要重复的序列，所以也在侧栏的文本上"
    "计算（{n} 个 token，即模型读到的样子；语言模型续写的部分不包括在内）。",
    "detectors.text_needs_probe": "{role}得分需要写两遍的序列：只在探针上计算。选择前一个 token、首个 token 或"
    "重复 token，就能看到你的文本或语料上的得分。",
    "detectors.text_no_dup": "你的文本中没有出现两次的 token，所以重复 token 得分没有定义（格子为空）。",
    "detectors.text_caption": "点击一个头，在你的文本上打开它。",
    "detectors.data": "数据",
    "detectors.data_help": "侧栏的文本，或用 `python -m model atlas --corpus FILE` 为这个模型当前的权重算好探测器得分的语料"
    "（在本机算，或在别的机器上算好后把运行文件夹复制到 `runs/atlas/<model>/`）。",
    "detectors.data.text": "你的文本",
    "detectors.corpus_header": "在语料上",
    "detectors.corpus_explain": "语料 **{name}** 中的 **{n}** 条提示（共 **{total}** 条，种子 {seed}），模型每条只读一遍（不续写）。"
    "前一个 token、首个 token 和重复 token 三种得分对所有提示的所有位置取平均。",
    "detectors.corpus_how": "由 `python -m model atlas --corpus` 在{engine}上算出：{workers} 个工作进程，{hosts} 台机器上共 "
    "{processes} 个进程，{shards} 个分片、每片 {size} 条，用时 {seconds} 秒；语料文件的哈希值 {sha}…。",
    "detectors.engine.local": "单个进程",
    "detectors.engine.pool": "本机进程池",
    "detectors.engine.ray": " `Ray` ",
    "detectors.corpus_no_dup": "语料的提示中没有哪个 token 在同一条提示里出现两次，所以重复 token 得分没有定义（格子为空）。",
    "detectors.corpus_caption": "点击一个头，在它注意力最集中的那条语料提示上打开它（即注意力头图谱的首个例子）。",
    "detectors.no_self": "这个模型没有可以计算的自注意力。",
}
