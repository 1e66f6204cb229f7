"""Head ablation page: switch heads off, re-decode, rank every head; and the menu section it opens."""

EN = {
    "section.intervene": "Intervene",
    "page.ablation.title": "Head ablation",
    "ablation.intro": "Attention weights show where a head looks, not what it does for the output. Here you switch "
    "heads **off** and watch the output: the model is re-run with the chosen heads' outputs removed (the weights "
    "stay untouched) and decodes again. Then every head is removed alone, in turn, and ranked by how much that "
    "changes the output.",
    "ablation.intro_lm": "Attention weights show where a head looks, not what it does for the continuation. Here "
    "you switch heads **off** and watch the continuation: the model is re-run with the chosen heads' outputs "
    "removed (the weights stay untouched) and continues the prompt again. Then every head is removed alone, in "
    "turn, and ranked by how much that changes the continuation.",
    "ablation.new_tokens": "New tokens on this page",
    "ablation.new_tokens_help": "How far the prompt is continued here (by default at most {default}, whatever the "
    "sidebar says): every head removed alone means one pass over prompt + continuation per layer, so the cost "
    "grows with each token.",
    "ablation.lm_bound": "Bound: the continuation has at most **{n}** new tokens on this page, and ranking all "
    "{heads} heads reads those tokens only. Raise it above for a longer view, at the cost of time.",
    "ablation.continuation_intact": "Continuation of the intact model",
    "ablation.continuation_ablated": "Continuation with {n} head(s) switched off (continued again)",
    "ablation.rank.progress": "Removing each of the {n} heads alone …",
    "ablation.head_label": "{kind} · layer {layer} · head {head}",
    "ablation.bad_heads": "The link names heads this model does not have; they were left out: {parts}",
    "ablation.add_sidebar": "Add {name}",
    "ablation.add_group": "Add all heads of {kind}, layer {layer}",
    "ablation.clear": "Remove none",
    "ablation.heads": "Heads to switch off",
    "ablation.heads_help": "Any attention kind, layer and head, several at once. The choice is kept in the link.",
    "ablation.mode": "How a head is switched off",
    "ablation.mode.zero": "zero (its output set to 0)",
    "ablation.mode.mean": "mean (its output replaced by its mean over positions)",
    "ablation.mode_help": "The head's output z (its weighted sum of values, before the output projection W_o). "
    "Zero removes it; mean keeps its average contribution and removes only what differs from position to "
    "position.",
    "ablation.effect.header": "1 · What removing them does",
    "ablation.none": "Pick one or more heads above (or click a head in the ranking below) to switch them off.",
    "ablation.output_intact": "Output of the intact model",
    "ablation.output_ablated": "Output with {n} head(s) switched off (decoded again)",
    "ablation.summary": "Teacher-forced on the intact output, the next-token distribution changes by a mean KL "
    "divergence of **{kl}** nats per step, and the log-probability of the intact output changes by **{delta}**. "
    "{verdict}",
    "ablation.same_output": "The re-decoded output is the same.",
    "ablation.new_output": "The re-decoded output is different.",
    "ablation.exact_match": "Exact match on the first {n} test words of this task (decoded again): intact "
    "**{intact}**, with these heads switched off **{ablated}**.",
    "ablation.kl_title": "How much each step's next-token distribution changed",
    "ablation.kl_name": "KL (nats)",
    "ablation.intact": "intact",
    "ablation.ablated": "heads switched off",
    "ablation.p_title": "Probability of the intact output's token at each step",
    "ablation.p_name": "probability",
    "ablation.col.step": "step",
    "ablation.col.token": "token (intact output)",
    "ablation.col.kl": "KL (nats)",
    "ablation.col.p_intact": "p intact",
    "ablation.col.p_ablated": "p switched off",
    "ablation.col.top_intact": "top 5 intact",
    "ablation.col.top_ablated": "top 5 switched off",
    "ablation.col.rank": "rank",
    "ablation.col.head": "head",
    "ablation.col.delta": "Δ log-probability",
    "ablation.table_caption": "Each step reads the intact output so far (teacher forcing), so the steps stay "
    "comparable even where the re-decoded output differs. KL = KL(intact ‖ switched off).",
    "ablation.later.header": "Attention of later layers",
    "ablation.later.no_output": "The intact output is empty: there is no decoding step to compare.",
    "ablation.later.explain": "Switching a head off changes what later layers receive, so their attention moves "
    "too. Each cell is the change of one head's attention (total variation, averaged over its rows: 0 = the same "
    "weights, 1 = entirely different), teacher-forced on the intact output. Heads that run before the switched-off "
    "ones show 0. Framed: the heads switched off.",
    "ablation.later.matrix_title": "Change of attention: {kind}",
    "ablation.later.change_name": "change",
    "ablation.later.intact_title": "Intact: {kind}, layer {layer}, head {head}",
    "ablation.later.ablated_title": "Switched off: {kind}, layer {layer}, head {head}",
    "ablation.later.caption": "The sidebar's head, intact and with the chosen heads switched off. A head that is "
    "itself switched off still computes its weights; only its output is removed.",
    "ablation.rank.header": "2 · Which head matters? Every head removed alone",
    "ablation.rank.explain": "Each head is switched off alone ({mode}); the intact output is teacher-forced and "
    "the cell gives the mean KL divergence per step between the intact and the changed next-token distribution.",
    "ablation.rank.matrix_title": "Effect of removing each head: {kind}",
    "ablation.rank.click": "Click a cell to switch that head off alone above (it also becomes the sidebar's head).",
    "ablation.rank.measured": "Measured on this sentence: the head whose removal changes the output most is "
    "**{head}** (mean KL {kl} nats); {small} of the {n} heads change it by less than 0.01 nats. One sentence is "
    "one sentence: the ranking can differ on another, and a task shared by several heads survives the removal "
    "of any one of them (try a whole layer above).",
}

ZH = {
    "section.intervene": "干预与解释",
    "page.ablation.title": "消融注意力头",
    "ablation.intro": "注意力权重显示一个注意力头看向哪里，但不说明它对输出做了什么。在这里你可以**关掉**一些头并观察输出："
    "模型在去掉所选头的输出后重新运行（权重保持不变）并重新解码。然后每个头依次被单独去掉，按它对输出的改变程度排序。",
    "ablation.intro_lm": "注意力权重显示一个注意力头看向哪里，但不说明它对续写做了什么。在这里你可以**关掉**一些头并观察续写："
    "模型在去掉所选头的输出后重新运行（权重保持不变）并重新续写提示。然后每个头依次被单独去掉，按它对续写的改变程度排序。",
    "ablation.new_tokens": "本页的新 token 数",
    "ablation.new_tokens_help": "在这里把提示续写多远（默认最多 {default} 个，不论侧边栏怎么设）：每个头单独去掉一次，"
    "就要在提示 + 续写上每层运行一遍，所以每多一个 token 就多一份开销。",
    "ablation.lm_bound": "上限：本页的续写最多 **{n}** 个新 token，给全部 {heads} 个头排序也只读这些 token。"
    "想看得更长可以在上面调高，但会更慢。",
    "ablation.continuation_intact": "完整模型的续写",
    "ablation.continuation_ablated": "关掉 {n} 个头后的续写（重新续写）",
    "ablation.rank.progress": "正在依次单独去掉 {n} 个头中的每一个 …",
    "ablation.head_label": "{kind} · 第 {layer} 层 · 头 {head}",
    "ablation.bad_heads": "链接中有这个模型没有的头，已忽略：{parts}",
    "ablation.add_sidebar": "加入 {name}",
    "ablation.add_group": "加入{kind}第 {layer} 层的所有头",
    "ablation.clear": "全部恢复",
    "ablation.heads": "要关掉的头",
    "ablation.heads_help": "任意注意力类型、层和头，可以同时选多个。所选内容保存在链接中。",
    "ablation.mode": "如何关掉一个头",
    "ablation.mode.zero": "置零（输出设为 0）",
    "ablation.mode.mean": "取平均（输出换成它在各位置上的平均）",
    "ablation.mode_help": "头的输出 z（对值向量的加权和，在输出投影 W_o 之前）。置零把它完全去掉；"
    "取平均保留它的平均贡献，只去掉随位置变化的部分。",
    "ablation.effect.header": "1 · 去掉这些头会怎样",
    "ablation.none": "在上面选一个或多个头（或在下面的排序中点击一个头）来关掉它们。",
    "ablation.output_intact": "完整模型的输出",
    "ablation.output_ablated": "关掉 {n} 个头后的输出（重新解码）",
    "ablation.summary": "在完整输出上用教师强制运行，每一步下一个 token 的分布平均变化了 **{kl}** 奈特（KL 散度），"
    "完整输出的对数概率变化了 **{delta}**。{verdict}",
    "ablation.same_output": "重新解码的输出相同。",
    "ablation.new_output": "重新解码的输出不同。",
    "ablation.exact_match": "在这个任务的前 {n} 个测试单词上的完全匹配率（重新解码）：完整模型 **{intact}**，"
    "关掉这些头后 **{ablated}**。",
    "ablation.kl_title": "每一步下一个 token 的分布改变了多少",
    "ablation.kl_name": "KL（奈特）",
    "ablation.intact": "完整模型",
    "ablation.ablated": "关掉这些头",
    "ablation.p_title": "每一步完整输出中那个 token 的概率",
    "ablation.p_name": "概率",
    "ablation.col.step": "步骤",
    "ablation.col.token": "token（完整输出）",
    "ablation.col.kl": "KL（奈特）",
    "ablation.col.p_intact": "完整模型的概率",
    "ablation.col.p_ablated": "关掉后的概率",
    "ablation.col.top_intact": "完整模型的前 5 名",
    "ablation.col.top_ablated": "关掉后的前 5 名",
    "ablation.col.rank": "名次",
    "ablation.col.head": "头",
    "ablation.col.delta": "对数概率的变化 Δ",
    "ablation.table_caption": "每一步都读取到目前为止的完整输出（教师强制），所以即使重新解码的输出不同，"
    "各步骤仍然可以比较。KL = KL(完整模型 ‖ 关掉后)。",
    "ablation.later.header": "后面各层的注意力",
    "ablation.later.no_output": "完整输出为空：没有可以比较的解码步骤。",
    "ablation.later.explain": "关掉一个头会改变后面各层收到的内容，所以它们的注意力也会移动。每个格子是一个头的注意力变化"
    "（总变差距离，对各行取平均：0 = 权重相同，1 = 完全不同），在完整输出上用教师强制计算。"
    "在被关掉的头之前运行的头显示 0。红框：被关掉的头。",
    "ablation.later.matrix_title": "注意力的变化：{kind}",
    "ablation.later.change_name": "变化",
    "ablation.later.intact_title": "完整模型：{kind}，第 {layer} 层，头 {head}",
    "ablation.later.ablated_title": "关掉后：{kind}，第 {layer} 层，头 {head}",
    "ablation.later.caption": "侧边栏选中的头，分别在完整模型中和关掉所选头之后。一个被关掉的头仍会计算它的权重，"
    "只是它的输出被去掉了。",
    "ablation.rank.header": "2 · 哪个头重要？每次单独去掉一个头",
    "ablation.rank.explain": "每个头被单独关掉（{mode}）；在完整输出上用教师强制运行，格子里是完整模型与改变后的"
    "下一个 token 分布之间每一步的平均 KL 散度。",
    "ablation.rank.matrix_title": "去掉每个头的影响：{kind}",
    "ablation.rank.click": "点击一个格子，就在上面单独关掉这个头（它也会成为侧边栏选中的头）。",
    "ablation.rank.measured": "在这个句子上测得：去掉后对输出改变最大的头是 **{head}**（平均 KL {kl} 奈特）；"
    "{n} 个头中有 {small} 个的改变小于 0.01 奈特。一个句子只是一个句子：换一个句子排序可能不同；"
    "由几个头共同完成的任务，去掉其中任何一个都还能完成（试试在上面关掉整整一层）。",
}
