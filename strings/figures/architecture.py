"""Architecture (viz.architecture): the encoder–decoder diagram and the multi-head split
and merge."""

from __future__ import annotations

EN: dict[str, str] = {
    "architecture.diagram_title.encoder_decoder": "Encoder–decoder architecture",
    "architecture.diagram_title.encoder_only": "Encoder-only architecture",
    "architecture.diagram_title.decoder_only": "Decoder-only architecture",
    "architecture.pre_ln": "Pre-LN: a norm before each sub-layer, and a final norm",
    "architecture.post_ln": "Post-LN: a norm after each residual add",
    "architecture.norm_style.after": "A norm after each branch (OLMo 2); the boxes show the Pre-LN order, the "
    "block below draws this one",
    "architecture.norm_style.both": "Norms before and after each branch (Gemma 3); the boxes show the Pre-LN "
    "order, the block below draws this one",
    "architecture.norm_style.parallel": "Attention and FFN in parallel (GPT-NeoX); the boxes show them one after "
    "the other, the block below draws this one",
    "architecture.block.encoder": "encoder block",
    "architecture.block.decoder": "decoder block",
    "architecture.embedding": "Token embedding × √d_model",
    "architecture.add_pos.sinusoidal": "+ sinusoidal positional encoding",
    "architecture.add_pos.learned": "+ learned positional encoding",
    "architecture.norm": "{norm}",
    "architecture.final_norm": "Final {norm}",
    "architecture.add": "Add (residual)",
    "architecture.self_attention": "Multi-head self-attention",
    "architecture.masked_self_attention": "Masked multi-head self-attention",
    "architecture.cross_attention": "Multi-head cross-attention",
    "architecture.ffn": "Feed-forward network",
    "architecture.memory": "Encoder output (memory)",
    "architecture.output_tied": "Output projection → logits · tied to the embedding",
    "architecture.output_untied": "Output projection → logits · its own matrix",
    "architecture.kv_from_encoder": "K, V from the encoder output",
    "architecture.residual_legend": "blue line = residual path",
    "architecture.split_title": "Multi-head split and merge, with this pass's shapes",
    "architecture.split_input": "input x",
    # the other stages' names (architecture.stage.*) are the page's too: strings/pages/architecture.py
    "architecture.op.view": "view",
    "architecture.op.transpose": "transpose",
    "architecture.op.qk": "Q Kᵀ / √d_head, softmax",
    "architecture.op.av": "· V",
    "architecture.op.wo": "× W_o",
}

ZH: dict[str, str] = {
    "architecture.diagram_title.encoder_decoder": "编码器–解码器架构",
    "architecture.diagram_title.encoder_only": "只含编码器的架构",
    "architecture.diagram_title.decoder_only": "只含解码器的架构",
    "architecture.pre_ln": "Pre-LN：每个子层之前先归一化，最后再归一化一次",
    "architecture.post_ln": "Post-LN：每次残差连接相加之后归一化",
    "architecture.norm_style.after": "每个分支之后归一化（OLMo 2）；方框按 Pre-LN 的顺序画，下面的单个块画出了它真实的连法",
    "architecture.norm_style.both": "每个分支之前和之后都归一化（Gemma 3）；方框按 Pre-LN 的顺序画，下面的单个块画出了它真实的连法",
    "architecture.norm_style.parallel": "注意力与前馈网络并行（GPT-NeoX）；方框把它们画成先后两步，下面的单个块画出了它真实的连法",
    "architecture.block.encoder": "编码器块",
    "architecture.block.decoder": "解码器块",
    "architecture.embedding": "token 嵌入 × √d_model",
    "architecture.add_pos.sinusoidal": "+ 正弦位置编码",
    "architecture.add_pos.learned": "+ 可学习的位置编码",
    "architecture.norm": "归一化（{norm}）",
    "architecture.final_norm": "最终归一化（{norm}）",
    "architecture.add": "相加（残差连接）",
    "architecture.self_attention": "多头自注意力",
    "architecture.masked_self_attention": "带掩码的多头自注意力",
    "architecture.cross_attention": "多头交叉注意力",
    "architecture.ffn": "前馈网络",
    "architecture.memory": "编码器输出（memory）",
    "architecture.output_tied": "输出投影 → 词表分数（logits）· 与嵌入共用一个矩阵",
    "architecture.output_untied": "输出投影 → 词表分数（logits）· 有自己的矩阵",
    "architecture.kv_from_encoder": "K、V 来自编码器输出",
    "architecture.residual_legend": "蓝线 = 残差连接",
    "architecture.split_title": "多头拆分与合并：本次前向传播的形状",
    "architecture.split_input": "输入 x",
    # the other stages' names (architecture.stage.*) are the page's too: strings/pages/architecture.py
    "architecture.op.view": "重排形状（view）",
    "architecture.op.transpose": "转置（transpose）",
    "architecture.op.qk": "Q Kᵀ / √d_head，softmax",
    "architecture.op.av": "· V",
    "architecture.op.wo": "× W_o",
}
