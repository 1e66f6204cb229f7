"""Head statistics page. Column and statistic names are figure words (strings/figures/columns.py, stats.py)."""

EN = {
    "stats.intro": "Numbers that summarise each head for this sentence. **Entropy** is low for a focused head "
    "(one key takes all the weight) and high for a head that spreads its attention. **Mean "
    "distance** is how far (in positions) a head looks. **Diagonal / previous token** show "
    "positional heads. **Special tokens** is the weight parked on tokens like `<eos>` — a common "
    "“no-op” for heads with nothing to do. Select a row (or click a dot) to open that head.",
    "stats.table_title": "{kind}: one row per head",
    "stats.layer_help": "0-based layer index",
    "stats.head_help": "0-based head index",
    "stats.table_caption": "Click a column header to sort. Entropies are in nats (natural log).",
    "stats.x": "x axis",
    "stats.y": "y axis",
    "stats.scatter_caption": "One dot per head, coloured by layer. Click a dot to open the head.",
    "stats.bar": "Statistic per head",
    "stats.similar_title": "Which heads behave alike?",
    "stats.similar_caption": "Similarity = 1 − Jensen-Shannon divergence / log 2 between two heads' attention rows, "
    "averaged over the queries: 1 means the two heads attend identically on this sentence, 0 means they never "
    "look at the same keys. Blocks of similar heads are redundant for this input.",
    "stats.similar_sampled": "Every pair of the {heads} heads is compared ({pairs} pairs). This input has {n} query "
    "rows: the similarity averages the same {rows} evenly spaced ones for every head (each row compared over every "
    "key), which keeps the comparison fast; it estimates the mean over all rows. The table and the charts above use "
    "every row of every head. Heads are computed one block of rows of one layer at a time, never all at once.",
    "stats.similar_every_row": "Every pair of the {heads} heads is compared ({pairs} pairs), over all {n} query rows.",
}

ZH = {
    "stats.intro": "用几个数字概括每个注意力头在这个句子上的行为。**熵**（entropy）：注意力集中的头熵低"
    "（一个键拿走全部权重），注意力分散的头熵高。**平均距离**：一个头平均看向多远（以位置数计）。"
    "**对角线 / 前一个 token**：用来找出按位置工作的头。**特殊 token**：落在 `<eos>` 这类 token 上的权重——"
    "无事可做的头常把注意力停放在这里，相当于空操作（no-op）。选中一行（或点击一个点）即可打开那个头。",
    "stats.table_title": "{kind}：每个注意力头一行",
    "stats.layer_help": "层的序号（从 0 开始）",
    "stats.head_help": "头的序号（从 0 开始）",
    "stats.table_caption": "点击列标题可以排序。熵的单位是 nats（自然对数）。",
    "stats.x": "横轴",
    "stats.y": "纵轴",
    "stats.scatter_caption": "每个点是一个注意力头，颜色表示它所在的层。点击一个点即可打开这个头。",
    "stats.bar": "逐个头比较的统计量",
    "stats.similar_title": "哪些注意力头的行为相似？",
    "stats.similar_caption": "相似度 = 1 − 两个头的注意力行之间的 Jensen-Shannon 散度 / `log 2`，再对所有查询"
    "（query）取平均：1 表示这两个头在这个句子上的注意力完全相同，0 表示它们从不看向相同的键（key）。"
    "成块出现的相似头，对这个输入来说是冗余的。",
    "stats.similar_sampled": "{heads} 个注意力头两两都做了比较（共 {pairs} 对）。这个输入有 {n} 个查询行："
    "相似度对每个头都只取同样的 {rows} 个均匀分布的行求平均（每一行仍比较全部的键），这样比较起来很快；"
    "它是对全部行平均值的估计。上面的表格和图表用的是每个头的每一行。注意力头每次只算一层中的一块行，"
    "从不一次算出全部。",
    "stats.similar_every_row": "{heads} 个注意力头两两都做了比较（共 {pairs} 对），用的是全部 {n} 个查询行。",
}
