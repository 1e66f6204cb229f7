"""Worked example page: one attention row computed by hand from the model's own q, k and v."""

EN = {
    "worked.title": "Worked example: attention by hand",
    "worked.intro": "The classroom exercise — compute one row of attention by hand — done on your sentence with "
    "this model's real numbers. Pick a **query** position (the token that looks) and a **key** position "
    "(a token it may look at). Every step below shows its numbers, and the last one checks them against "
    "what the model itself computed.",
    "worked.setting": "{kind} · layer {layer} · head {head} · d_head = {d_head} · "
    "{n_q} query positions × {n_k} key positions",
    "worked.rope": "This model uses rotary position embeddings (RoPE): q and k are rotated by their position "
    "before the dot product. The numbers below are the rotated vectors (`hook_rot_q`, `hook_rot_k`); "
    "the vectors before the rotation (`hook_q`, `hook_k`) are shown under them.",
    "worked.gqa": "This model shares key/value heads ({how}): its {n_heads} query heads use {n_kv_heads} "
    "key/value heads, each shared by {group} query heads. Query head {q_head} reads key/value head "
    "{kv_head} = {q_head} // {group}.",
    "worked.query": "Query position (the token that looks)",
    "worked.query_help": "The row of the attention pattern worked out below.",
    "worked.key": "Key position (spelled out dimension by dimension)",
    "worked.key_help": "Every key gets a score; step 2 spells out this key's dot product dimension by dimension.",
    # step 1
    "worked.step1": "1 · The query vector and the key vectors",
    "worked.step1_text": "Each token's vector entering this layer is multiplied by the head's weight matrices: "
    "**q** = x W_q for the query, **k** = x W_k and **v** = x W_v for every key. In head {head} each "
    "vector has d_head = {d_head} numbers{elided}.",
    "worked.elided": "; the tables show the first {edge} and the last {edge} dimensions (every dimension "
    "under “Full vectors”)",
    "worked.query_vector": "Query vector **q** of {q_tok}",
    "worked.key_vectors": "Key vectors **k** of every position (the chosen key is highlighted)",
    "worked.full": "Full vectors",
    "worked.before_rotation": "Before the rotation (`hook_q`, `hook_k`): the query vector and the key vectors",
    # step 2
    "worked.step2": "2 · One dot product, dimension by dimension",
    "worked.step2_text": "Multiply q and the k of {k_tok} dimension by dimension, then add the products: "
    "q · k = Σ q_i k_i = **{total}**. The model's `hook_raw_scores` holds **{model}** for this pair.",
    # step 3
    "worked.step3": "3 · From scores to attention weights",
    "worked.step3_text": "- **Dot products** (raw scores): q · k for every key, the same sum as in step 2 "
    "(`hook_raw_scores`).\n"
    "- **Scaling**: {scaling}\n"
    "- **Mask**: {mask_note}\n"
    "- **Softmax, step 1**: subtract the largest score ({top}) and take exp — the largest becomes "
    "e⁰ = 1, and nothing overflows.\n"
    "- **Softmax, step 2**: divide by their sum ({total}); the weights now add up to 1.",
    "worked.mask_none": "no key is masked for this query: every score stays finite.",
    "worked.mask_causal": "the decoder may not look ahead: the {n} later positions are set to −∞, so their "
    "weight becomes exactly 0.",
    "worked.mask_causal_last": "the decoder may not look ahead, but this query is the last position: nothing "
    "after it to mask.",
    "worked.steps_caption": "One row per key. −∞ marks a masked cell: exp(−∞) = 0.",
    "worked.key_masked": "The chosen key {k_tok} comes after the query, so it is masked: its dot product "
    "exists, but its weight is 0.",
    # step 4
    "worked.step4": "4 · Weighted sum of the value vectors",
    "worked.step4_text": "Each value vector **v** is multiplied by its weight and the results are added: "
    "z = Σ_j w_j v_j. This z (d_head = {d_head} numbers) is the head's output for {q_tok}; the layer "
    "then joins the outputs of all heads and multiplies them by W_o.",
    "worked.values_caption": "Value vectors **v** of every position",
    "worked.sum_caption": "Each row is weight × v; the last row adds them up (z).",
    # step 5
    "worked.step5": "5 · Check: the hand computation against the model",
    "worked.step5_text": "The numbers above were computed here with `numpy` in `float64` from the captured "
    "q, k and v. Below, the largest absolute difference over the row from what the model recorded "
    "in `float32`:",
    "worked.check_raw": "Dot products − `hook_raw_scores`",
    "worked.check_scores": "Score + bias − `hook_scores`",
    "worked.bias_text": "This model (T5) adds a **relative position bias** to every score before the mask: one "
    "learned number per head and bucket of the distance key − query (the *+ position bias* column, read from "
    "`hook_position_bias`). For key **{k_tok}** (distance {distance}) it adds **{bias}**. T5 divides by nothing "
    "(÷ 1): its weights were trained without √d_head.",
    "worked.check_pattern": "Weights − `hook_pattern`",
    "worked.check_z": "z − `hook_z`",
    "worked.check_ok": "The hand computation reproduces the model: the weights are row {q_pos} of "
    "`hook_pattern` and z is row {q_pos} of `hook_z`, up to `float32` rounding.",
    "worked.check_off": "The hand computation differs from the model by more than {tol}: this page and the "
    "model no longer compute the same thing.",
    "worked.scaling.sqrt": "divide by √d_head = √{d_head} = {scale}, so that the scores do not grow with "
    "the width of the head.",
    "worked.scaling.own": "divide by {scale}: this model's config sets its own divisor instead of "
    "√d_head = √{d_head} (Gemma 3: √query_pre_attn_scalar).",
    "worked.mask_window": "the decoder may not look ahead, and this layer is **local**: it sees only its last "
    "{window} keys, itself included. The {n} keys outside that window are set to −∞, so their weight "
    "becomes exactly 0.",
    # QK-norm (Qwen3, Gemma 3, OLMo 2)
    "worked.norm.header": "1b · QK-norm: q and k normalised before the rotation",
    "worked.norm.text_head": "This model normalises each head's q and k on their own ({kind} over the "
    "d_head = {d_head} numbers of the head) before RoPE, so that no score can grow without bound. By hand "
    "for this query: {formula}, with {spread_name} = **{spread}** and ε = {eps}.",
    "worked.norm.text_full": "This model normalises the **whole** q and k projections ({kind} over all "
    "{width} numbers of a position: every head side by side, as OLMo 2 does before splitting into heads) "
    "before RoPE. By hand for this query: {formula}, with {spread_name} = **{spread}** over the {width} "
    "numbers and ε = {eps}; the table shows the {d_head} of head {head}.",
    "worked.norm.row.x": "q · projection (`hook_q`)",
    "worked.norm.row.weight": "norm weight",
    "worked.norm.row.normed": "q · normed, by hand",
    "worked.norm.row.recorded": "q · `hook_q_normed`",
    "worked.norm.check": "Largest difference from the model's `hook_q_normed`: {q}; the key's "
    "`hook_k_normed`, worked out the same way: {k}.",
    "worked.norm.rms": "`rms(q)`",
    "worked.norm.std": "`std(q)`",
    # which dimensions RoPE turns
    "worked.rotate.header": "1c · RoPE: which dimensions turn",
    "worked.rotate.all": "RoPE turns all {d_head} dimensions of each head, in pairs (0, 1), (2, 3), …: "
    "pair i at position p by the angle p × {base}^(−2i/{d_head}){factor}.",
    "worked.rotate.partial": "**Partial rotary**: RoPE turns only the first {r} of the {d_head} dimensions "
    "of each head, in pairs (0, 1), (2, 3), … up to ({last_a}, {last_b}), pair i at position p by the "
    "angle p × {base}^(−2i/{r}){factor}. Dimensions {r}…{end} pass **unchanged**: they carry no position at "
    "all.",
    "worked.rotate.factor": " ÷ {factor} (linear RoPE scaling on this layer)",
    "worked.rotate.longrope_short": "longrope: short factors (sequence {n} ≤ {switch}): each pair's angle also "
    "÷ its own factor, and the turned pairs × {scale} (the attention factor)",
    "worked.rotate.longrope_long": "longrope: long factors (sequence {n} > {switch}): each pair's angle also "
    "÷ its own factor, and the turned pairs × {scale} (the attention factor)",
    "worked.rotate.pairs": "The pairs are this app's (even, odd) order: a Hugging Face checkpoint pairs "
    "dimension i with i + {half} (rotate-half); its q and k rows were interleaved when the model was read, "
    "so the scores are the same.",
    "worked.rotate.row.before": "q · before the rotation",
    "worked.rotate.row.after": "q · rotated, by hand",
    "worked.rotate.row.recorded": "q · `hook_rot_q`",
    "worked.rotate.check": "Query position {pos}, by hand against the model's `hook_rot_q`: largest "
    "difference {diff}; the unrotated dimensions are equal: {same}.",
    "worked.rotate.same_yes": "yes",
    "worked.rotate.same_no": "no",

    "worked.norm.formula.rmsnorm": "`q_normed = q / √(mean(q²) + ε) × weight`",
    "worked.norm.formula.layernorm": "`q_normed = (q − mean(q)) / √(var(q) + ε) × weight + bias`",
}

ZH = {
    "worked.title": "手算注意力：一步一步的例子",
    "worked.intro": "课堂上的练习——亲手算出注意力的一行——这里直接用你输入的句子和这个模型的真实数值来做。"
    "选一个**查询**（query）位置（发出关注的 token）和一个**键**（key）位置（它可能关注的 token）。"
    "下面每一步都列出数字，最后一步把手算结果和模型自己算出的结果对照。",
    "worked.setting": "{kind} · 第 {layer} 层 · 头 {head} · d_head = {d_head} · "
    "{n_q} 个查询位置 × {n_k} 个键位置",
    "worked.rope": "这个模型使用旋转位置嵌入（RoPE）：做点积之前，q 和 k 要按各自的位置旋转。"
    "下面用的是旋转之后的向量（`hook_rot_q`、`hook_rot_k`）；旋转之前的向量（`hook_q`、`hook_k`）"
    "列在它们下面。",
    "worked.gqa": "这个模型让几个查询头共用一个键/值头（{how}）：{n_heads} 个查询头只用 {n_kv_heads} 个"
    "键/值头，每个键/值头由 {group} 个查询头共用。查询头 {q_head} 读取的是键/值头 "
    "{kv_head} = {q_head} // {group}。",
    "worked.query": "查询位置（发出关注的 token）",
    "worked.query_help": "下面要算的就是注意力模式中的这一行。",
    "worked.key": "键位置（逐维展开计算）",
    "worked.key_help": "每个键都会得到一个分数；第 2 步把这个键的点积逐维展开。",
    "worked.step1": "1 · 查询向量与键向量",
    "worked.step1_text": "进入这一层的每个 token 向量，都要乘以这个头的权重矩阵：查询得到 **q** = x W_q，"
    "每个键得到 **k** = x W_k 和 **v** = x W_v。在头 {head} 里，每个向量有 d_head = {d_head} 个数{elided}。",
    "worked.elided": "；表格只列出前 {edge} 维和后 {edge} 维（全部维度见“完整向量”）",
    "worked.query_vector": "{q_tok} 的查询向量 **q**",
    "worked.key_vectors": "每个位置的键向量 **k**（选中的键已高亮）",
    "worked.full": "完整向量",
    "worked.before_rotation": "旋转之前（`hook_q`、`hook_k`）：查询向量与键向量",
    "worked.step2": "2 · 逐维计算一个点积（dot product）",
    "worked.step2_text": "把 q 和 {k_tok} 的 k 逐维相乘，再把乘积加起来：q · k = Σ q_i k_i = **{total}**。"
    "模型的 `hook_raw_scores` 里这一对的值是 **{model}**。",
    "worked.step3": "3 · 从分数到注意力权重",
    "worked.step3_text": "- **点积**（原始分数）：q 与每个键的点积，求法和第 2 步一样（`hook_raw_scores`）。\n"
    "- **缩放**（scaling）：{scaling}\n"
    "- **掩码**（mask）：{mask_note}\n"
    "- **softmax 第一步**：减去最大的分数（{top}）再取指数——最大的一项变成 e⁰ = 1，也不会溢出。\n"
    "- **softmax 第二步**：除以它们的和（{total}）；这时权重加起来正好等于 1。",
    "worked.mask_none": "这个查询没有被掩码遮住的键：每个分数都是有限值。",
    "worked.mask_causal": "解码器不能看后面的内容：后面 {n} 个位置被设为 −∞，它们的权重因此正好是 0。",
    "worked.mask_causal_last": "解码器不能看后面的内容，但这个查询已经是最后一个位置，后面没有需要掩码的位置。",
    "worked.steps_caption": "每一行是一个键。−∞ 表示被掩码遮住的格子：e^(−∞) = 0。",
    "worked.key_masked": "选中的键 {k_tok} 在查询之后，所以被掩码遮住：它的点积照样能算，但权重是 0。",
    "worked.step4": "4 · 值向量（value vector）的加权求和",
    "worked.step4_text": "每个值向量 **v** 乘以自己的权重，再全部加起来：z = Σ_j w_j v_j。这个 z"
    "（d_head = {d_head} 个数）就是这个头对 {q_tok} 的输出；这一层随后把所有头的输出拼接起来，再乘以 W_o。",
    "worked.values_caption": "每个位置的值向量 **v**",
    "worked.sum_caption": "每一行是 权重 × v；最后一行把它们加起来，得到 z。",
    "worked.step5": "5 · 核对：手算结果与模型的结果",
    "worked.step5_text": "上面的数字是这里用 `numpy` 以 `float64` 从捕获的 q、k、v 重新算出来的。"
    "下面是它们与模型以 `float32` 记录下的结果之间、整行中绝对差的最大值：",
    "worked.check_raw": "点积 − `hook_raw_scores`",
    "worked.check_scores": "分数 + 偏置 − `hook_scores`",
    "worked.bias_text": "这个模型（T5）在掩码之前给每个分数加上一个**相对位置偏置**：每个头、每个距离桶"
    "（距离 = 键 − 查询）各学一个数（即 *+ 位置偏置* 一列，读自 `hook_position_bias`）。"
    "对键 **{k_tok}**（距离 {distance}），它加上 **{bias}**。T5 不做任何除法（÷ 1）：它的权重训练时就没有 √d_head。",
    "worked.check_pattern": "权重 − `hook_pattern`",
    "worked.check_z": "z − `hook_z`",
    "worked.check_ok": "手算结果与模型一致：权重就是 `hook_pattern` 的第 {q_pos} 行，z 就是 `hook_z` 的第 "
    "{q_pos} 行，差别只是 `float32` 的舍入误差。",
    "worked.check_off": "手算结果与模型相差超过 {tol}：这个页面和模型算的已经不是同一件事了。",
    "worked.scaling.sqrt": "除以 √d_head = √{d_head} = {scale}，这样分数不会随着头的宽度变大。",
    "worked.scaling.own": "除以 {scale}：这个模型的配置规定了自己的除数，而不是 √d_head = √{d_head}"
    "（`Gemma 3`：`√query_pre_attn_scalar`）。",
    "worked.mask_window": "解码器不能看后面的内容，而且这一层是**局部层**：它只能看最后 {window} 个键（包括它自己）。"
    "窗口之外的 {n} 个键被设为 −∞，它们的权重因此正好是 0。",
    "worked.norm.header": "1b · QK 归一化（QK-norm）：旋转之前先把 q 和 k 归一化",
    "worked.norm.text_head": "这个模型在 RoPE 之前把每个头的 q 和 k 各自归一化（在这个头的 d_head = {d_head} 个数上做 "
    "{kind}），这样分数就不会无限变大。这个查询的手算过程：{formula}，其中 {spread_name} = **{spread}**，ε = {eps}。",
    "worked.norm.text_full": "这个模型在 RoPE 之前把**整个** q 和 k 投影归一化（在一个位置的全部 {width} 个数上做 "
    "{kind}：所有头并排放在一起，`OLMo 2` 就是在拆分成多个头之前这样做的）。这个查询的手算过程：{formula}，"
    "其中 {spread_name} = **{spread}**（在 {width} 个数上计算），ε = {eps}；表格列出的是头 {head} 的 {d_head} 个数。",
    "worked.norm.row.x": "q · 投影（`hook_q`）",
    "worked.norm.row.weight": "归一化的权重",
    "worked.norm.row.normed": "q · 手算归一化",
    "worked.norm.row.recorded": "q · `hook_q_normed`",
    "worked.norm.check": "与模型的 `hook_q_normed` 的最大差：{q}；用同样方法算出的键与 `hook_k_normed` 的最大差：{k}。",
    "worked.norm.rms": "`rms(q)`",
    "worked.norm.std": "`std(q)`",
    "worked.rotate.header": "1c · RoPE：哪些维度会旋转",
    "worked.rotate.all": "RoPE 旋转每个头的全部 {d_head} 个维度，两两成对 (0, 1)、(2, 3)……："
    "第 i 对在位置 p 旋转的角度是 p × {base}^(−2i/{d_head}){factor}。",
    "worked.rotate.partial": "**部分旋转**（partial rotary）：RoPE 只旋转每个头 {d_head} 个维度中的前 {r} 个，"
    "两两成对 (0, 1)、(2, 3)……直到 ({last_a}, {last_b})，第 i 对在位置 p 旋转的角度是 p × {base}^(−2i/{r}){factor}。"
    "维度 {r}…{end} **原样通过**：它们完全不带位置信息。",
    "worked.rotate.factor": " ÷ {factor}（这一层的线性 RoPE 缩放）",
    "worked.rotate.longrope_short": "`longrope`：短因子（序列 {n} ≤ {switch}）：每一对的角度还要 ÷ 它自己的因子，"
    "旋转后的维度再 × {scale}（注意力因子）",
    "worked.rotate.longrope_long": "`longrope`：长因子（序列 {n} > {switch}）：每一对的角度还要 ÷ 它自己的因子，"
    "旋转后的维度再 × {scale}（注意力因子）",
    "worked.rotate.pairs": "这里的配对是本应用的（偶数, 奇数）顺序：`Hugging Face` 的检查点把维度 i 和 i + {half} 配对"
    "（rotate-half）；读入模型时已把它的 q 和 k 的行交错重排，所以分数完全相同。",
    "worked.rotate.row.before": "q · 旋转之前",
    "worked.rotate.row.after": "q · 手算旋转之后",
    "worked.rotate.row.recorded": "q · `hook_rot_q`",
    "worked.rotate.check": "查询位置 {pos}，手算结果与模型的 `hook_rot_q` 的最大差：{diff}；"
    "不旋转的维度是否完全相同：{same}。",
    "worked.rotate.same_yes": "是",
    "worked.rotate.same_no": "否",

    "worked.norm.formula.rmsnorm": "`q_normed = q / √(mean(q²) + ε) × weight`",
    "worked.norm.formula.layernorm": "`q_normed = (q − mean(q)) / √(var(q) + ε) × weight + bias`",
}
