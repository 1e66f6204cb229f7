"""Positional encoding page."""

EN = {
    "positional.intro": "A Transformer sees a *set* of tokens; word order has to be added. The 2017 paper adds a "
    "**sinusoidal** vector to each token's embedding: dimension pair *(2i, 2i+1)* is a sine and "
    "cosine whose wavelength grows with *i*, so fast dimensions tell neighbours apart and slow "
    "ones give the coarse position.",
    "positional.setting": "pos_encoding = `{value}`. {note}",
    "positional.kind.sinusoidal": "This model uses exactly this table.",
    "positional.kind.learned": "This model learns its own position table; at its own size (positions = max_len, "
    "d_model = its width) the page shows that learned table, otherwise the sinusoidal one for reference.",
    "positional.kind.rope": "This model uses rotary embeddings (RoPE) on queries and keys; the sinusoidal table is "
    "shown for reference — RoPE rotates with the same frequencies.",
    "positional.kind.none": "This model uses no positional encoding; the sinusoidal table is shown for reference.",
    "positional.positions": "Positions",
    "positional.learned_shown": "Showing this model's learned table.",
    "positional.cosine_caption": "Each position is most similar to itself; similarity falls off with distance.",
    "positional.dims": "Dimensions to plot",
    "positional.curves_caption": "Low dimensions oscillate fast, high dimensions slowly.",
    "positional.no_dims": "Pick at least one dimension.",
}

ZH = {
    "positional.intro": "模型（Transformer）看到的只是一个 token 的*集合*，本身不分先后，词序必须另外加进去。"
    "2017 年的原始论文给每个 token 的**嵌入**（embedding）加上一个**正弦**（sinusoidal）向量："
    "第 *(2i, 2i+1)* 对维度是一组正弦和余弦，波长随 *i* 增大。变化快的维度能区分相邻的位置，"
    "变化慢的维度给出大致的位置。",
    "positional.setting": "pos_encoding = `{value}`。{note}",
    "positional.kind.sinusoidal": "这个模型用的正是这张表。",
    "positional.kind.learned": "这个模型自己学习位置表：尺寸与模型一致时（位置数 = max_len，d_model = 模型宽度），"
    "页面显示它学到的表；否则显示正弦表作为参考。",
    "positional.kind.rope": "这个模型在查询和键上使用旋转位置嵌入（RoPE）；这里显示正弦表作为参考——"
    "RoPE 的旋转用的是同样的频率。",
    "positional.kind.none": "这个模型不使用位置编码；这里显示正弦表作为参考。",
    "positional.positions": "位置数",
    "positional.learned_shown": "显示的是这个模型学到的位置表。",
    "positional.cosine_caption": "每个位置与自己最相似；距离越远，相似度越低。",
    "positional.dims": "要画出的维度",
    "positional.curves_caption": "低维度振荡得快，高维度振荡得慢。",
    "positional.no_dims": "请至少选择一个维度。",
}
