"""All heads page."""

EN = {
    "heads.title": "All heads at a glance",
    "heads.intro": "Every head of every layer, side by side: one small heatmap per head (rows: queries, "
    "columns: keys), layers top to bottom, heads left to right. Heads specialise: look for "
    "**diagonals** (a token attends to itself), **off-diagonals** (the previous or next token), "
    "**vertical stripes** (everyone looks at one token, often the end token) and **blurry** heads "
    "that average over the sentence. **Click a tile** to open that head.",
    "heads.figure_title": "{kind}: all {n_layers} × {n_heads} heads",
    "heads.caption": "Tile rows are layers L0–L{last_layer}, tile columns heads H0–H{last_head}. "
    "Each tile is {n_queries} queries × {n_keys} keys. Colours use one fixed 0–1 scale, "
    "so tiles can be compared. To open a head, click the middle of its tile (the hover label says "
    "“click to open”), or drag a box over it with the box-select tool of the chart's toolbar.",
    "heads.pick": "Or pick a head",
    "heads.layer_page": "Layers shown",
    "heads.layer_page_help": "{shown} of the model's {n_layers} layers at a time, so the figure stays light; "
    "every head of a layer is shown, and a click still opens the head.",
    "heads.open": "Open this head →",
    "heads.pooling": "Computing the {n} heads' patterns one layer at a time and pooling them into tiles "
    "(once per sentence)…",
}

ZH = {
    "heads.title": "所有注意力头一览",
    "heads.intro": "每一层的每一个注意力头并排摆在一起：每个头一张小热力图，行是**查询**（query），"
    "列是**键**（key）；层从上到下排，头从左到右排。不同的头各有分工，留意这几种模式："
    "**对角线**（token 关注它自己）、**对角线旁的斜线**（关注前一个或后一个 token）、"
    "**竖条纹**（所有 token 都看同一个 token，常常是结束 token），以及把注意力平均摊到整句上的**模糊**的头。"
    "**点击一个小图**即可打开那个头。",
    "heads.figure_title": "{kind}：全部 {n_layers} × {n_heads} 个注意力头",
    "heads.caption": "小图的行是层 L0–L{last_layer}，列是头 H0–H{last_head}。"
    "每个小图是 {n_queries} 个查询 × {n_keys} 个键。所有小图共用一个固定的 0–1 色标，便于相互比较。"
    "要打开一个头，就点击它小图的中间（鼠标悬停时会提示可以点击打开），"
    "或者用图表工具栏里的框选工具在它上面拖出一个方框。",
    "heads.pick": "或者直接选一个注意力头",
    "heads.layer_page": "显示的层",
    "heads.layer_page_help": "每次显示模型 {n_layers} 层中的 {shown} 层，让图保持轻巧；每一层的所有注意力头都会显示，"
    "点击仍然可以打开那个头。",
    "heads.open": "打开这个注意力头 →",
    "heads.pooling": "正在逐层计算 {n} 个注意力头的模式，并把它们汇聚成小图（每个句子只算一次）……",
}
