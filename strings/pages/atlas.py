"""Head atlas page: every head's statistics over the test split, role labels, similarity map, and the
sentences where a head fires."""

EN = {
    "page.atlas.title": "Head atlas",
    "atlas.intro": "One sentence shows what a head does on that sentence. The **atlas** runs the model over "
    "a whole held-out dataset (sentences it never saw in training) and averages every attention row of every "
    "head: how spread out it is, how far it looks, how much it rests on the end token and punctuation, "
    "whether it looks at the previous, the same or the next position — and, on the didactic tasks, where we "
    "know the right answer, whether it looks at the source letter the output letter comes from. Each sentence "
    "is run as the other pages run yours: greedy decoding, then one pass over the model's own output.",
    "atlas.data": "Data",
    "atlas.data_help": "The held-out test split, or a corpus atlas computed with `python -m model atlas --corpus "
    "FILE` (here, or on other machines: a run folder copied into `runs/atlas/<model>/`) for this model's weights.",
    "atlas.data.held_out": "held-out test split",
    "atlas.corpus_dataset": "Dataset: the corpus **{name}**: **{n}** of its **{total}** prompts (seed {seed}), "
    "each read once by the model (not continued).",
    "atlas.corpus_how": "Computed with `python -m model atlas --corpus` on {engine}: {workers} workers, "
    "{processes} processes on {hosts} machine(s), {shards} shards of {size} prompts, in {seconds} s; "
    "corpus file sha256 {sha}….",
    "atlas.engine.local": "one process",
    "atlas.engine.pool": "a local process pool",
    "atlas.engine.ray": "Ray",
    "atlas.sample": "Sentences from the test split",
    "atlas.sample_help": "Evenly spaced over the held-out test split; each picked pair is used in both "
    "directions (Chinese → English and English → Chinese). More sentences take longer.",
    "atlas.dataset_prompts": "Dataset: **{n}** held-out prompts ({what}), each continued by the model with **{new}** tokens of its own; every head is read over prompt + continuation.",
    "atlas.prompts.induction": "test sequences of letters, each followed by the first half of its repeat",
    "atlas.prompts.sentences": "sentences of the Tatoeba test split, Chinese and English alternating",
    "atlas.dataset_words": "Dataset: all **{n}** words of the held-out test split.",
    "atlas.dataset_sentences": "Dataset: **{n}** of the **{total}** sentences of the held-out test split, "
    "evenly spaced, both directions.",
    "atlas.exact": "The model's output equals the right answer on **{right}** of the {n} words.",
    "atlas.no_split": "This model comes without a held-out test split, so there is no dataset to build an "
    "atlas from. Pick one of the project's own models in the sidebar.",
    "atlas.compute": "Compute the atlas ({n} sentences)",
    "atlas.compute_help": "Runs the model over these sentences with a progress bar; the result is saved on disk "
    "(`runs/atlas/`) and read from there on the next visit, until the model's weights change.",
    "atlas.compute_hint": "The atlas of this model and these sentences is not on disk yet. It is computed once, "
    "then read back from disk (`python -m model atlas --model NAME` computes it ahead of time).",
    "atlas.progress": "Running the model over the test split: {done} of {total} sentences",
    "atlas.computed": "Computed now in {seconds} s and saved in `runs/atlas/` for this model's weights.",
    "atlas.from_disk": "Read from `runs/atlas/` (computed in {seconds} s for this model's current weights).",
    # head map
    "atlas.map_header": "The heads at a glance",
    "atlas.color_by": "Colour by",
    "atlas.color_by_help": "Which figure colours the map. Each cell prints the head's roles.",
    "atlas.map_caption": "{kind}, every layer and head (the sidebar picks the attention kind). Click a head "
    "to see below where it fires.",
    # roles
    "atlas.roles_header": "Role labels and their thresholds",
    "atlas.roles_explain": "A head earns a role when its figure over the whole dataset reaches the threshold "
    "below; a head may earn several roles, or none. The thresholds are fixed in advance (`RoleThresholds` in "
    "`model/lab/atlas.py`), not tuned to a model.",
    "atlas.role.previous": "previous token",
    "atlas.role.next": "next token",
    "atlas.role.self": "self",
    "atlas.role.alignment": "alignment",
    "atlas.role.sink": "sink",
    "atlas.role.first": "first token",
    "atlas.role.broad": "broad",
    "atlas.rule.previous": "mean weight on the previous position (key q − 1)",
    "atlas.rule.next": "mean weight on the next position (key q + 1)",
    "atlas.rule.self": "mean weight on its own position (key q)",
    "atlas.rule.alignment": "mean weight on the source letter(s) the output letter comes from "
    "(didactic tasks, cross-attention)",
    "atlas.rule.sink": "mean weight on the end/start tokens the model adds and on punctuation",
    "atlas.rule.first": "mean weight on the sequence's first token, whatever it is (language models' attention sink)",
    "atlas.rule.broad": "mean entropy divided by log(number of keys the row may see): near 1 = spread evenly",
    "atlas.col.role": "role",
    "atlas.col.rule": "figure",
    "atlas.col.threshold": "threshold (≥)",
    "atlas.col.heads": "heads with it ({kind})",
    # head table
    "atlas.table_header": "Every head of {kind}",
    "atlas.table_caption": "Means over every real query row of the dataset ({rows} rows per head). Click a "
    "row to open that head in the single-head page on the sidebar's sentence.",
    "atlas.cross_note": "In cross-attention the query is an output position and the key a source position, "
    "so the positional figures (distance, self, previous, next) are not computed there.",
    "atlas.no_truth": "Translation has no known right alignment, so there is no alignment figure for this "
    "model: alignment is measured on the didactic models (reverse, copy, sort), where the answer is known.",
    "atlas.truth": "Ground truth on this task: {rule}",
    "atlas.truth.reverse": "output letter i comes from source letter n − 1 − i (an anti-diagonal).",
    "atlas.truth.copy": "output letter i comes from source letter i (the diagonal).",
    "atlas.truth.sort": "each output letter comes from where that letter stands in the source (the sorting "
    "permutation; a repeated letter may be taken from any of its places).",
    "atlas.col.layer": "layer",
    "atlas.col.head": "head",
    "atlas.col.roles": "roles",
    "atlas.col.roles_help": "Each role with the head's figure and the threshold it reached.",
    "atlas.col.n_rows": "rows",
    "atlas.col.n_rows_help": "Query rows averaged over.",
    "atlas.stat.entropy": "entropy",
    "atlas.stat.entropy_norm": "relative entropy",
    "atlas.stat.max_weight": "max weight",
    "atlas.stat.mean_distance": "distance",
    "atlas.stat.diagonal": "self",
    "atlas.stat.previous": "previous",
    "atlas.stat.next": "next",
    "atlas.stat.special_share": "on end/start tokens",
    "atlas.stat.punct_share": "on punctuation",
    "atlas.stat.sink_share": "sink share",
    "atlas.stat.first_share": "on the first token",
    "atlas.stat.alignment": "alignment",
    "atlas.help.entropy": "Mean entropy of the attention rows, in nats (0 = all weight on one key).",
    "atlas.help.entropy_norm": "Entropy / log(number of keys the row may see), 0 to 1.",
    "atlas.help.max_weight": "Mean of each row's largest weight, 0 to 1.",
    "atlas.help.mean_distance": "Mean of Σ weight × |query position − key position|, in positions.",
    "atlas.help.diagonal": "Mean weight on the query's own position.",
    "atlas.help.previous": "Mean weight on the position just before the query.",
    "atlas.help.next": "Mean weight on the position just after the query.",
    "atlas.help.special_share": "Mean weight on tokens the model adds: the end token of the source, the "
    "start or language tag of the output.",
    "atlas.help.punct_share": "Mean weight on punctuation tokens.",
    "atlas.help.sink_share": "End/start tokens plus punctuation: where heads park attention they do not need.",
    "atlas.help.first_share": "Mean weight on the first token of the sequence. Language models park most of the attention a head does not need there (the attention sink), whether or not it is a special token.",
    "atlas.help.alignment": "Mean weight on the right source letter(s) of the output letter the row predicts.",
    # similarity
    "atlas.similar_header": "Which heads attend alike",
    "atlas.similar_caption": "For two heads, the Jensen-Shannon divergence of their attention rows, averaged "
    "over the same {rows} rows of the dataset, shown as 1 − JS / log 2 (1 = identical on every row). Heads are "
    "ordered by average-linkage clustering of the divergence, so groups of alike heads form blocks on the "
    "diagonal.",
    # where does it fire
    "atlas.fire_header": "Where does layer {layer}, head {head} fire?",
    "atlas.fire_explain": "The sentences of the dataset on which this head's attention is most concentrated "
    "(highest mean over its rows of the largest weight). Each link opens the sentence in the single-head page "
    "at this head (in a new tab); clicking a row opens it here.",
    "atlas.col.rank": "rank",
    "atlas.col.max_weight": "max weight",
    "atlas.col.max_weight_help": "This head's mean over the sentence's rows of the largest weight.",
    "atlas.col.sentence": "sentence",
    "atlas.col.output": "model's output",
    "atlas.col.link": "single head",
    "atlas.col.link_help": "Opens this sentence in the single-head page, at this head, in a new tab.",
    "atlas.link_text": "open",
    "atlas.fire_caption": "The head is the sidebar's (or the one clicked in the map above); the whole dataset's "
    "mean for it is {mean}.",
}

ZH = {
    "page.atlas.title": "注意力头图谱",
    "atlas.intro": "一个句子只能说明注意力头在这个句子上做了什么。**图谱**让模型跑完整个留出数据集（训练时从没见过的句子），"
    "再对每个注意力头的每一行注意力取平均：分布有多分散、看得有多远、有多少权重落在结束 token 和标点上、"
    "是否看前一个、同一个或后一个位置——在教学任务上，正确答案是已知的，还能看它是否看向输出字母所来自的那个源字母。"
    "每个句子的运行方式和其他页面处理你输入的句子一样：先贪心解码，再在模型自己的输出上跑一遍。",
    "atlas.data": "数据",
    "atlas.data_help": "留出的测试集，或用 `python -m model atlas --corpus FILE` 为这个模型当前的权重算好的语料图谱"
    "（在本机算，或在别的机器上算好后把运行文件夹复制到 `runs/atlas/<model>/`）。",
    "atlas.data.held_out": "留出的测试集",
    "atlas.corpus_dataset": "数据集：语料 **{name}** 中的 **{n}** 条（共 **{total}** 条，种子 {seed}），模型每条只读一遍（不续写）。",
    "atlas.corpus_how": "由 `python -m model atlas --corpus` 在{engine}上算出：{workers} 个工作进程，{hosts} 台机器上共 "
    "{processes} 个进程，{shards} 个分片、每片 {size} 条，用时 {seconds} 秒；语料文件的哈希值 {sha}…。",
    "atlas.engine.local": "单个进程",
    "atlas.engine.pool": "本机进程池",
    "atlas.engine.ray": " `Ray` ",
    "atlas.sample": "测试集里的句子数",
    "atlas.sample_help": "在留出的测试集上均匀选取；选中的每一对句子两个方向都用（中文 → 英文、英文 → 中文）。句子越多，算得越久。",
    "atlas.dataset_prompts": "数据集：**{n}** 个留出的提示（{what}），模型各自续写 **{new}** 个 token；每个头都在提示加续写上读取。",
    "atlas.prompts.induction": "字母的测试序列，每个后面跟着它重复的前一半",
    "atlas.prompts.sentences": "Tatoeba 测试集的句子，中文和英文交替",
    "atlas.dataset_words": "数据集：留出测试集的全部 **{n}** 个单词。",
    "atlas.dataset_sentences": "数据集：留出测试集 **{total}** 个句子中均匀选取的 **{n}** 个，两个方向都有。",
    "atlas.exact": "在 {n} 个单词中，模型的输出有 **{right}** 个与正确答案完全一致。",
    "atlas.no_split": "这个模型没有留出的测试集，所以没有可以用来构建图谱的数据集。请在侧边栏中选择本项目自己训练的模型。",
    "atlas.compute": "计算图谱（{n} 个句子）",
    "atlas.compute_help": "让模型跑完这批句子，并显示进度条；结果保存在磁盘上（`runs/atlas/`），下次直接读取，"
    "直到模型的权重改变为止。",
    "atlas.compute_hint": "磁盘上还没有这个模型和这批句子的图谱。它只计算一次，之后从磁盘读取"
    "（`python -m model atlas --model NAME` 可以提前算好）。",
    "atlas.progress": "模型正在跑测试集：{done} / {total} 个句子",
    "atlas.computed": "刚刚计算完成，用时 {seconds} 秒，已按这个模型的权重保存在 `runs/atlas/` 中。",
    "atlas.from_disk": "从 `runs/atlas/` 读取（针对这个模型当前的权重，当时用时 {seconds} 秒）。",
    "atlas.map_header": "所有注意力头一览",
    "atlas.color_by": "颜色表示",
    "atlas.color_by_help": "用哪个数值给图着色。每个格子里写着这个头的角色。",
    "atlas.map_caption": "{kind}，每一层的每一个头（注意力类型由侧边栏选择）。点击一个头，下面会显示它在哪些句子上最集中。",
    "atlas.roles_header": "角色标签及其阈值",
    "atlas.roles_explain": "一个头在整个数据集上的数值达到下面的阈值，就获得对应的角色；一个头可以有多个角色，"
    "也可以一个都没有。阈值是事先定好的（`model/lab/atlas.py` 中的 `RoleThresholds`），没有针对某个模型调整。",
    "atlas.role.previous": "前一个 token",
    "atlas.role.next": "后一个 token",
    "atlas.role.self": "自身",
    "atlas.role.alignment": "对齐",
    "atlas.role.sink": "汇点",
    "atlas.role.first": "首个 token",
    "atlas.role.broad": "广泛",
    "atlas.rule.previous": "落在前一个位置（键 q − 1）上的平均权重",
    "atlas.rule.next": "落在后一个位置（键 q + 1）上的平均权重",
    "atlas.rule.self": "落在自身位置（键 q）上的平均权重",
    "atlas.rule.alignment": "落在输出字母所来自的源字母上的平均权重（教学任务，交叉注意力）",
    "atlas.rule.sink": "落在模型添加的结束/开始 token 和标点上的平均权重",
    "atlas.rule.first": "落在序列第一个 token 上的平均权重，无论它是什么（语言模型的注意力汇点）",
    "atlas.rule.broad": "平均熵除以（这一行能看到的键的个数）的自然对数：接近 1 = 均匀分散",
    "atlas.col.role": "角色",
    "atlas.col.rule": "数值",
    "atlas.col.threshold": "阈值（≥）",
    "atlas.col.heads": "具有该角色的头（{kind}）",
    "atlas.table_header": "{kind}的每一个头",
    "atlas.table_caption": "对数据集中每一个真实的查询行取平均（每个头 {rows} 行）。点击一行，会在单个注意力头页面中"
    "用侧边栏的句子打开那个头。",
    "atlas.cross_note": "在交叉注意力中，查询是输出的位置，键是源的位置，所以这里不计算位置类的数值（距离、自身、前一个、后一个）。",
    "atlas.no_truth": "翻译没有已知的正确对齐，所以这个模型没有对齐数值：对齐是在教学模型（reverse、copy、sort）上测量的，"
    "那里的答案是已知的。",
    "atlas.truth": "这个任务的标准答案：{rule}",
    "atlas.truth.reverse": "第 i 个输出字母来自第 n − 1 − i 个源字母（一条反对角线）。",
    "atlas.truth.copy": "第 i 个输出字母来自第 i 个源字母（对角线）。",
    "atlas.truth.sort": "每个输出字母来自这个字母在源中所在的位置（排序的置换；重复的字母可以取自它出现的任何位置）。",
    "atlas.col.layer": "层",
    "atlas.col.head": "头",
    "atlas.col.roles": "角色",
    "atlas.col.roles_help": "每个角色后面是这个头的数值和它达到的阈值。",
    "atlas.col.n_rows": "行数",
    "atlas.col.n_rows_help": "参与平均的查询行数。",
    "atlas.stat.entropy": "熵",
    "atlas.stat.entropy_norm": "归一化熵",
    "atlas.stat.max_weight": "最大权重",
    "atlas.stat.mean_distance": "距离",
    "atlas.stat.diagonal": "自身",
    "atlas.stat.previous": "前一个",
    "atlas.stat.next": "后一个",
    "atlas.stat.special_share": "结束/开始 token 上",
    "atlas.stat.punct_share": "标点上",
    "atlas.stat.sink_share": "汇点占比",
    "atlas.stat.first_share": "第一个 token 上",
    "atlas.stat.alignment": "对齐",
    "atlas.help.entropy": "注意力行的平均熵，单位 nats（0 = 全部权重落在一个键上）。",
    "atlas.help.entropy_norm": "熵除以（这一行能看到的键的个数）的自然对数，在 0 到 1 之间。",
    "atlas.help.max_weight": "每一行最大权重的平均值，在 0 到 1 之间。",
    "atlas.help.mean_distance": "Σ 权重 × |查询位置 − 键位置| 的平均值，单位是位置。",
    "atlas.help.diagonal": "落在查询自身位置上的平均权重。",
    "atlas.help.previous": "落在查询前一个位置上的平均权重。",
    "atlas.help.next": "落在查询后一个位置上的平均权重。",
    "atlas.help.special_share": "落在模型添加的 token 上的平均权重：源的结束 token，输出的开始 token 或语言标记。",
    "atlas.help.punct_share": "落在标点 token 上的平均权重。",
    "atlas.help.sink_share": "结束/开始 token 加上标点：注意力头把用不上的注意力停放在这里。",
    "atlas.help.first_share": "落在序列第一个 token 上的平均权重。语言模型把注意力头用不上的注意力大多停放在这里（注意力汇点），无论它是不是特殊 token。",
    "atlas.help.alignment": "这一行要预测的输出字母，落在其正确源字母上的平均权重。",
    "atlas.similar_header": "哪些注意力头的关注方式相似",
    "atlas.similar_caption": "两个头的注意力行之间的 Jensen-Shannon 散度，在数据集中同样的 {rows} 行上取平均，"
    "显示为 1 − JS 除以 2 的自然对数（1 = 每一行都完全相同）。头按散度的平均连接聚类排序，所以相似的头会在对角线上形成方块。",
    "atlas.fire_header": "第 {layer} 层第 {head} 个头在哪里最集中？",
    "atlas.fire_explain": "数据集中这个头的注意力最集中的句子（各行最大权重的平均值最高）。每个链接都会在单个注意力头页面中"
    "以这个头打开该句子（新标签页）；点击一行则在当前标签页打开。",
    "atlas.col.rank": "名次",
    "atlas.col.max_weight": "最大权重",
    "atlas.col.max_weight_help": "这个头在该句子各行上最大权重的平均值。",
    "atlas.col.sentence": "句子",
    "atlas.col.output": "模型的输出",
    "atlas.col.link": "单个注意力头",
    "atlas.col.link_help": "在新标签页的单个注意力头页面中，以这个头打开该句子。",
    "atlas.link_text": "打开",
    "atlas.fire_caption": "这个头是侧边栏选中的（或在上面的图中点击的）；它在整个数据集上的平均值是 {mean}。",
}
