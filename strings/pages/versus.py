"""Model vs model page."""

EN = {
    "page.versus.title": "Model vs model",
    "versus.intro": "Two models that share a tokenizer read the same sentence. Every head of the sidebar's model "
    "(**A**) is matched with the head of model **B** whose attention pattern is nearest, by the Jensen-Shannon "
    "distance between the two heads' rows on the same tokens (0: the same weights, 1: no overlap), averaged "
    "over the query rows.",
    "versus.other": "Model B",
    "versus.other_help": "Any model whose tokenizer has the same vocabulary as A's (the same token at every id): "
    "a pitfall model and the correct one, two variants, your checkpoint and the shipped one.",
    "versus.no_other": "There is no other model to compare with.",
    "versus.refuse.size": "{a} and {b} do not share a tokenizer: their vocabularies have {n_a} and {n_b} "
    "tokens, so the same sentence becomes different tokens and their heads look at different things.",
    "versus.refuse.token": "{a} and {b} do not share a tokenizer: id {id} is `{tok_a}` in one and `{tok_b}` in "
    "the other, so the same sentence becomes different tokens and their heads look at different things.",
    "versus.refuse.special": "{a} and {b} do not share a tokenizer: their padding, start or end tokens have "
    "different ids, so the same sentence becomes different tokens and their heads look at different things.",
    "versus.refuse.no_kind": "{b} has no {kind}: pick an attention kind both models have in the sidebar.",
    "versus.refuse.tokens": "{a} and {b} read this sentence as different tokens (their tasks prepare it "
    "differently), so their heads cannot be compared position by position.",
    "versus.output_of": "Output of {model}",
    "versus.greedy": "Both outputs are greedy. On the decoder side both models are compared on the same tokens: "
    "A's output.",
    "versus.teacher_forced": "{b} wrote another output, so it read {a}'s output instead (teacher-forced) for "
    "the comparison.",
    "versus.cut": "Compared on the first {n} decoder positions, which both models read alike; the last {cut} "
    "differ and are left out (a decoder row depends on no later position, so the compared rows are exact).",
    "versus.map_header": "How far each head moved · {kind}",
    "versus.map_explain": "Left: the distance of each head of A to the head at the same layer and position in B "
    "(only when the two models have as many layers and heads). Right: the distance to its nearest head of B, "
    "named in the cell. Click a cell to open that head of A next to its nearest head of B.",
    "versus.shapes_differ": "{a} has {shape_a} (layers × heads) and {b} has {shape_b}: no head sits at the "
    "same place, so each head is matched with its nearest head only.",
    "versus.map_caption": "Dark = moved far. A head whose nearest head sits elsewhere was learned at another "
    "place; a head far from every head of B has no counterpart there.",
    "versus.pair_header": "Two heads side by side",
    "versus.head_a": "Head of {model}",
    "versus.head_b": "Head of {model}",
    "versus.head_b_help": "Starts at the nearest head of B; pick any other to compare.",
    "versus.is_nearest": "{head} is the nearest head of B to this head.",
    "versus.table_header": "Every head of A and its match in B",
    "versus.col.head_a": "head of A",
    "versus.col.nearest": "nearest head of B",
    "versus.col.nearest_distance": "distance (nearest)",
    "versus.col.same_layer": "nearest in B's layer at the same depth",
    "versus.col.same_layer_distance": "distance (same depth)",
    "versus.col.same_position": "distance to B's head at the same place",
    "versus.table_caption": "The same depth is the same layer when both models have as many layers, else the "
    "layer at the same fraction of the depth.",
}

ZH = {
    "page.versus.title": "模型对比",
    "versus.intro": "两个共用分词器的模型读同一个句子。侧栏所选模型（**A**）的每个注意力头，都与模型 **B** 中"
    "注意力模式最接近的头配对：按两个头在同样的 token 上各行之间的 Jensen-Shannon 距离（0：权重完全相同，1：毫无重叠），"
    "再对各查询行取平均。",
    "versus.other": "模型 B",
    "versus.other_help": "任何分词器词表与 A 相同（每个编号对应同一个 token）的模型：陷阱模型与正确的模型、两个变体、"
    "你的检查点与随附的模型。",
    "versus.no_other": "没有别的模型可以对比。",
    "versus.refuse.size": "{a} 与 {b} 不共用分词器：它们的词表分别有 {n_a} 和 {n_b} 个 token，同一个句子会变成不同的 token，"
    "它们的注意力头看的不是同样的东西。",
    "versus.refuse.token": "{a} 与 {b} 不共用分词器：编号 {id} 在一个里是 `{tok_a}`，在另一个里是 `{tok_b}`，"
    "同一个句子会变成不同的 token，它们的注意力头看的不是同样的东西。",
    "versus.refuse.special": "{a} 与 {b} 不共用分词器：它们的填充、开始或结束 token 编号不同，同一个句子会变成不同的 token，"
    "它们的注意力头看的不是同样的东西。",
    "versus.refuse.no_kind": "{b} 没有{kind}：请在侧栏选一种两个模型都有的注意力。",
    "versus.refuse.tokens": "{a} 与 {b} 把这个句子读成不同的 token（它们的任务对句子的处理不同），"
    "所以它们的注意力头无法逐个位置对比。",
    "versus.output_of": "{model} 的输出",
    "versus.greedy": "两个输出都是贪心解码。在解码器一侧，两个模型在同样的 token 上对比：A 的输出。",
    "versus.teacher_forced": "{b} 写出了另一个输出，所以对比时它改读 {a} 的输出（教师强制）。",
    "versus.cut": "只在两个模型读得一样的前 {n} 个解码器位置上对比；最后 {cut} 个不同，不计入"
    "（解码器的一行不依赖后面的位置，所以对比的各行是精确的）。",
    "versus.map_header": "每个注意力头移动了多远 · {kind}",
    "versus.map_explain": "左：A 的每个头与 B 中同一层、同一位置的头的距离（仅当两个模型的层数和头数相同）。"
    "右：与 B 中最近的头的距离，格子里写着是哪个头。点击一个格子，就把 A 的这个头与 B 中最近的头并排打开。",
    "versus.shapes_differ": "{a} 有 {shape_a}（层 × 头），{b} 有 {shape_b}：没有处在同一位置的头，"
    "所以每个头只与最近的头配对。",
    "versus.map_caption": "颜色越深，移动越远。最近的头在别处，说明这个头在另一个位置学成；"
    "与 B 的每个头都很远，说明 B 里没有与它对应的头。",
    "versus.pair_header": "两个注意力头并排",
    "versus.head_a": "{model} 的注意力头",
    "versus.head_b": "{model} 的注意力头",
    "versus.head_b_help": "起初是 B 中最近的头；也可以选任何别的头来对比。",
    "versus.is_nearest": "{head} 是 B 中与这个头最近的头。",
    "versus.table_header": "A 的每个注意力头及其在 B 中的配对",
    "versus.col.head_a": "A 的头",
    "versus.col.nearest": "B 中最近的头",
    "versus.col.nearest_distance": "距离（最近）",
    "versus.col.same_layer": "B 中同一深度那一层里最近的头",
    "versus.col.same_layer_distance": "距离（同一深度）",
    "versus.col.same_position": "与 B 中同一位置的头的距离",
    "versus.table_caption": "两个模型层数相同时，同一深度就是同一层；否则是深度比例相同的那一层。",
}
