"""Activation patching page: one head or block's residual stream from sentence A into sentence B."""

EN = {
    "page.patching.title": "Activation patching",
    "compare.patch_link": "Patch A into B (activation patching)",
    "patching.intro": "Which part of the model carries the difference between two sentences? Run sentence **B**, but "
    "at one place take the activation that sentence **A** produced there — one head's output, or the residual "
    "stream after one block — and see how far B's output moves, and whether it moves toward A's. The weights "
    "are never changed; only that activation is swapped, at positions that can be paired between the sentences.",
    "patching.intro_lm": "Two prompts that differ in one fact: A (clean) and B (corrupted). Run B with one head's "
    "output (or the residual stream after one block) taken from A, continue it again, and see how far B's answer "
    "moves toward A's. Then every head, and the residual stream at every block and position, is patched alone "
    "and ranked by how much of A's answer it brings back.",
    "patching.prompt_a": "Prompt A, clean (the activation comes from here)",
    "patching.prompt_a_help": "The prompt whose activation is copied. It must have as many tokens as B: positions "
    "are paired one to one.",
    "patching.prompt_b": "Prompt B, corrupted (the run that is patched)",
    "patching.prompt_b_help": "The prompt that is run again with A's activation, then continued.",
    "patching.lm.unequal": "The prompts must have equal token counts to be paired position by position: A has "
    "{len_a} tokens, B has {len_b}. Change a word so that both have the same count.",
    "patching.lm.position": "Prompt positions patched",
    "patching.lm.position_help": "Every prompt position at once, or one position alone (a head's output there, or "
    "the residual stream there). The continuation is always computed live.",
    "patching.lm.all_positions": "every position of the prompt",
    "patching.lm.aligned": "**{n}** of the prompt's {total} positions of B take A's activation (position i from "
    "position i); the continuation's positions are computed live.",
    "patching.lm.bound": "Bound: A and B are continued by at most {n} new tokens on this page (the sidebar's "
    "setting, at most {most} here); the rankings below read the prompts alone.",
    "patching.continuation_a": "Continuation of A",
    "patching.continuation_b": "Continuation of B",
    "patching.continuation_patched": "Continuation of B, patched (continued again)",
    "patching.lm.answer": "First answer tokens: A **{a}**, B **{b}**. Logit difference logit({a}) − logit({b}) at "
    "the end of the prompt: A {ld_a}, B {ld_b}, B patched {ld_p}; share of A's answer recovered **{recovered}** "
    "(1 = as much as A, 0 = unmoved).",
    "patching.lm.rank.header_head": "2 · Every head patched alone",
    "patching.lm.rank.header_position": "2 · The residual stream at every block and position",
    "patching.lm.rank.explain_head": "Each head's output over the whole prompt is taken from A, alone ({sites} "
    "runs of B's prompt, batched); each cell is the share of the logit difference recovered at the end of the "
    "prompt.",
    "patching.lm.rank.explain_position": "The residual stream after each block at one prompt position is taken "
    "from A, alone ({sites} runs of B's prompt, batched); each cell is the share of the logit difference "
    "recovered at the end of the prompt. Where the answer is carried shows as a path from the differing tokens "
    "to the last position.",
    "patching.lm.rank.progress": "Patching every site alone …",
    "patching.lm.rank.matrix_title_head": "Share of A's answer recovered, per head",
    "patching.lm.rank.matrix_title_position": "Share of A's answer recovered, per block and position",
    "patching.lm.rank.click": "Click a cell to patch it alone above (a head also becomes the sidebar's head).",
    "patching.lm.recovered": "recovered",
    "patching.lm.position_axis": "position in the prompt (B's token)",
    "patching.lm.same_answer": "A and B give the same first answer token: there is no logit difference to recover.",
    "patching.sentence_a": "Sentence A (the activation comes from here)",
    "patching.sentence_b": "Sentence B (runs with A's activation)",
    "patching.sentence_a_help": "The compare page sends its two sentences here.",
    "patching.sentence_b_help": "Two sentences of the same length pair every position; otherwise pick a token both "
    "have.",
    "patching.empty": "Type sentence {which}.",
    "patching.input_error": "Sentence {which} cannot be read by the model: {error}",
    "patching.token": "Shared token to pair positions by",
    "patching.token_help": "Used where A and B have different lengths: B's k-th occurrence of this token takes A's "
    "k-th occurrence. Where they have the same length every position is paired with itself.",
    "patching.token_none": "(none)",
    "patching.site": "What to patch",
    "patching.site.head": "the output of {kind}, layer {layer}, head {head}",
    "patching.site.resid": "the residual stream after {stack} block {layer}",
    "patching.stack.encoder": "encoder",
    "patching.stack.decoder": "decoder",
    "patching.site_help": "The head (attention kind, layer, head) and the layer are the sidebar's. A head's output "
    "is its z (before the output projection W_o); the residual stream after a block is everything later blocks "
    "read.",
    "patching.align.header": "Which positions are paired",
    "patching.side.source": "source (encoder)",
    "patching.side.target": "decoder input (output so far)",
    "patching.aligned.same_length": "On the {side} side A and B have the same length: all {n} positions are paired, "
    "each with the same position.",
    "patching.aligned.token": "On the {side} side the shared token pairs {n} of B's {total} positions (bold); the "
    "others keep B's own activation.",
    "patching.unaligned.no_token": "On the {side} side A has {len_a} positions and B {len_b}: without a shared token "
    "no position can be paired, so nothing is patched there. Pick a token above.",
    "patching.unaligned.token_missing": "On the {side} side the token {token} is not in both sentences (A: "
    "{count_a}, B: {count_b} times), and the lengths differ ({len_a} vs {len_b}): no position is paired, nothing "
    "is patched there.",
    "patching.unaligned.token_count": "On the {side} side the token {token} occurs {count_a} times in A and "
    "{count_b} times in B: which occurrence goes with which cannot be told, so nothing is patched there.",
    "patching.align.steps": "Steps of B compared with steps of A (for \"toward A\" below):",
    "patching.effect.header": "1 · B with {site} taken from A",
    "patching.output_a": "Output of A",
    "patching.output_b": "Output of B",
    "patching.output_patched": "Output of B, patched (decoded again)",
    "patching.nothing_patched": "No position is paired on this side, so B ran unchanged: the numbers below are 0.",
    "patching.summary": "Teacher-forced on B's own output, B's next-token distribution moves by a mean KL divergence "
    "of **{kl}** nats per step. Share of the gap to A closed: **{toward}**. {verdict}",
    "patching.toward_none": "not measured (no step of B is paired with a step of A where the two disagree)",
    "patching.same_as_a": "The patched output equals A's output.",
    "patching.same_as_b": "The patched output is still B's output.",
    "patching.other_output": "The patched output is neither A's nor B's.",
    "patching.kl_title": "How far B's next-token distribution moved at each step",
    "patching.kl_name": "KL (nats)",
    "patching.b_intact": "B",
    "patching.b_patched": "B patched",
    "patching.p_title": "Probability of B's own token at each step",
    "patching.p_name": "probability",
    "patching.col.step": "step",
    "patching.col.token": "token (B's output)",
    "patching.col.kl": "KL (nats)",
    "patching.col.p_intact": "p in B",
    "patching.col.p_patched": "p patched",
    "patching.col.a_token": "A's token at the paired step",
    "patching.col.toward": "gap to A closed",
    "patching.col.rank": "rank",
    "patching.col.head": "head",
    "patching.col.aligned": "positions patched",
    "patching.table_caption": "KL = KL(B ‖ B patched). Gap to A closed = 1 − JS(A, B patched) / JS(A, B) at a step "
    "paired with a step of A: 1 = B now predicts exactly as A, 0 = no closer, below 0 = further away; blank where "
    "the steps are not paired or A and B already agree (JS below 0.05 nats). Each sentence reads its own output "
    "so far, so at later steps this mixes the patch with the different prefixes.",
    "patching.rank.header": "2 · Every head patched alone",
    "patching.rank.explain": "Each head's output is taken from A into B alone, at the paired positions of its own "
    "side (source for encoder heads, decoder input for the others). The cell is how far B moves (mean KL per step); "
    "the table also gives the share of the gap to A closed.",
    "patching.rank.matrix_title": "How far patching each head moves B: {kind}",
    "patching.rank.click": "Click a cell to patch that head above (it becomes the sidebar's head).",
    "patching.rank.unaligned": "No position is paired for: {kinds}. Those heads were not patched (0).",
}

ZH = {
    "page.patching.title": "激活修补",
    "compare.patch_link": "把 A 修补进 B（激活修补）",
    "patching.intro": "两个句子的差别由模型的哪一部分承载？运行句子 **B**，但在某一处换上句子 **A** 在那里产生的激活——"
    "一个头的输出，或某一块之后残差连接上的残差流——然后看 B 的输出移动了多远，是否移向 A 的输出。权重从不改变；"
    "只在两个句子之间能够配对的位置上替换这个激活。",
    "patching.intro_lm": "两个只差一个事实的提示：A（干净）和 B（被改动）。运行 B 时把一个头的输出（或某一块之后残差连接上的残差流）"
    "换成 A 的，重新续写，看 B 的答案向 A 的答案移动了多少。然后每个头、以及每一块每个位置上的残差流都被单独修补，"
    "按它找回多少 A 的答案排序。",
    "patching.prompt_a": "提示 A，干净（激活从这里取）",
    "patching.prompt_a_help": "激活被复制的那个提示。它的 token 数必须和 B 相同：位置一一配对。",
    "patching.prompt_b": "提示 B，被改动（被修补的那次运行）",
    "patching.prompt_b_help": "用 A 的激活重新运行、然后续写的那个提示。",
    "patching.lm.unequal": "两个提示的 token 数必须相同才能按位置一一配对：A 有 {len_a} 个 token，B 有 {len_b} 个。"
    "改一个词，让两者一样多。",
    "patching.lm.position": "被修补的提示位置",
    "patching.lm.position_help": "同时修补提示的每个位置，或只修补一个位置（那里的头输出或残差连接上的残差流）。续写部分总是实时计算。",
    "patching.lm.all_positions": "提示的每个位置",
    "patching.lm.aligned": "B 的提示 {total} 个位置中有 **{n}** 个取 A 的激活（位置 i 取自位置 i）；续写的位置实时计算。",
    "patching.lm.bound": "上限：本页 A 和 B 最多续写 {n} 个新 token（侧边栏的设置，这里最多 {most} 个）；下面的排序只读提示本身。",
    "patching.continuation_a": "A 的续写",
    "patching.continuation_b": "B 的续写",
    "patching.continuation_patched": "修补后 B 的续写（重新续写）",
    "patching.lm.answer": "答案的第一个 token：A 是 **{a}**，B 是 **{b}**。提示末尾两者分数（logits）之差 {a} − {b}："
    "A {ld_a}，B {ld_b}，修补后的 B {ld_p}；找回的 A 答案比例 **{recovered}**（1 = 和 A 一样，0 = 没有移动）。",
    "patching.lm.rank.header_head": "2 · 每个头单独修补",
    "patching.lm.rank.header_position": "2 · 每一块每个位置上的残差流（残差连接）",
    "patching.lm.rank.explain_head": "每个头在整个提示上的输出单独取自 A（B 的提示共运行 {sites} 次，成批计算）；"
    "每个格子是在提示末尾找回的分数（logits）之差的比例。",
    "patching.lm.rank.explain_position": "每一块之后、某一个提示位置上的残差流（残差连接）单独取自 A（B 的提示共运行 {sites} 次，成批计算）；"
    "每个格子是在提示末尾找回的分数（logits）之差的比例。答案从不同的 token 传到最后一个位置的路径会显现出来。",
    "patching.lm.rank.progress": "正在逐个单独修补每个位置 …",
    "patching.lm.rank.matrix_title_head": "每个头找回的 A 答案比例",
    "patching.lm.rank.matrix_title_position": "每一块每个位置找回的 A 答案比例",
    "patching.lm.rank.click": "点击一个格子，就在上面单独修补它（头也会成为侧边栏选中的头）。",
    "patching.lm.recovered": "找回比例",
    "patching.lm.position_axis": "提示中的位置（B 的 token）",
    "patching.lm.same_answer": "A 和 B 的第一个答案 token 相同：没有分数（logits）之差可以找回。",
    "patching.sentence_a": "句子 A（激活从这里取）",
    "patching.sentence_b": "句子 B（带着 A 的激活运行）",
    "patching.sentence_a_help": "对比页会把它的两个句子发送到这里。",
    "patching.sentence_b_help": "长度相同的两个句子每个位置都能配对；否则请选一个两个句子都有的 token。",
    "patching.empty": "请输入句子 {which}。",
    "patching.input_error": "模型无法读取句子 {which}：{error}",
    "patching.token": "用来配对位置的共同 token",
    "patching.token_help": "用于 A 和 B 长度不同的一侧：B 中这个 token 的第 k 次出现取 A 中的第 k 次出现。"
    "长度相同的一侧每个位置都与自己配对。",
    "patching.token_none": "（无）",
    "patching.site": "修补什么",
    "patching.site.head": "{kind}第 {layer} 层头 {head} 的输出",
    "patching.site.resid": "{stack}第 {layer} 层（块）之后的残差流（残差连接）",
    "patching.stack.encoder": "编码器",
    "patching.stack.decoder": "解码器",
    "patching.site_help": "头（注意力类型、层、头）和层取自侧边栏。一个头的输出是它的 z（在输出投影 W_o 之前）；"
    "一块之后的残差流（残差连接）是后面各块读取的全部内容。",
    "patching.align.header": "哪些位置被配对",
    "patching.side.source": "源（编码器）",
    "patching.side.target": "解码器输入（到目前为止的输出）",
    "patching.aligned.same_length": "在{side}一侧，A 和 B 长度相同：全部 {n} 个位置都与相同的位置配对。",
    "patching.aligned.token": "在{side}一侧，共同 token 配对了 B 的 {total} 个位置中的 {n} 个（粗体）；"
    "其余位置保留 B 自己的激活。",
    "patching.unaligned.no_token": "在{side}一侧，A 有 {len_a} 个位置，B 有 {len_b} 个：没有共同 token 就无法配对任何位置，"
    "所以那里不做修补。请在上面选一个 token。",
    "patching.unaligned.token_missing": "在{side}一侧，token {token} 并不同时出现在两个句子中（A：{count_a} 次，"
    "B：{count_b} 次），而且长度不同（{len_a} 对 {len_b}）：没有位置被配对，那里不做修补。",
    "patching.unaligned.token_count": "在{side}一侧，token {token} 在 A 中出现 {count_a} 次，在 B 中出现 {count_b} 次："
    "无法判断哪一次对应哪一次，所以那里不做修补。",
    "patching.align.steps": "B 的各步骤与 A 的各步骤的对应（用于下面的“移向 A”）：",
    "patching.effect.header": "1 · 从 A 取来{site}的 B",
    "patching.output_a": "A 的输出",
    "patching.output_b": "B 的输出",
    "patching.output_patched": "修补后 B 的输出（重新解码）",
    "patching.nothing_patched": "这一侧没有位置被配对，所以 B 没有任何改变：下面的数字都是 0。",
    "patching.summary": "在 B 自己的输出上用教师强制运行，B 的下一个 token 分布平均每步移动了 **{kl}** 奈特（KL 散度）。"
    "与 A 之间差距被缩小的比例：**{toward}**。{verdict}",
    "patching.toward_none": "未测量（B 没有哪一步与 A 中两者预测不同的步骤配对）",
    "patching.same_as_a": "修补后的输出等于 A 的输出。",
    "patching.same_as_b": "修补后的输出仍然是 B 的输出。",
    "patching.other_output": "修补后的输出既不是 A 的也不是 B 的。",
    "patching.kl_title": "每一步 B 的下一个 token 分布移动了多远",
    "patching.kl_name": "KL（奈特）",
    "patching.b_intact": "B",
    "patching.b_patched": "修补后的 B",
    "patching.p_title": "每一步 B 自己输出的 token 的概率",
    "patching.p_name": "概率",
    "patching.col.step": "步骤",
    "patching.col.token": "token（B 的输出）",
    "patching.col.kl": "KL（奈特）",
    "patching.col.p_intact": "B 中的概率",
    "patching.col.p_patched": "修补后的概率",
    "patching.col.a_token": "配对步骤上 A 的 token",
    "patching.col.toward": "缩小的差距",
    "patching.col.rank": "名次",
    "patching.col.head": "头",
    "patching.col.aligned": "修补的位置数",
    "patching.table_caption": "KL = KL(B ‖ 修补后的 B)。缩小的差距 = 1 − JS(A, 修补后的 B) / JS(A, B)，在与 A 的某一步配对的"
    "步骤上计算：1 = B 现在的预测与 A 完全相同，0 = 没有更接近，小于 0 = 更远；步骤没有配对或 A 和 B 本来就一致"
    "（JS 小于 0.05 奈特）时留空。每个句子读取的是自己到目前为止的输出，所以在后面的步骤中这个数混合了修补和不同前缀的影响。",
    "patching.rank.header": "2 · 每次单独修补一个头",
    "patching.rank.explain": "每个头的输出被单独从 A 取到 B，修补在它自己那一侧的配对位置上（编码器的头在源一侧，其他头在"
    "解码器输入一侧）。格子里是 B 移动了多远（每步的平均 KL）；表格还给出与 A 之间差距被缩小的比例。",
    "patching.rank.matrix_title": "修补每个头让 B 移动了多远：{kind}",
    "patching.rank.click": "点击一个格子，就在上面修补这个头（它会成为侧边栏选中的头）。",
    "patching.rank.unaligned": "以下类型没有任何配对的位置：{kinds}。这些头没有被修补（0）。",
}
