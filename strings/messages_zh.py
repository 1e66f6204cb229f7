"""Chinese wording of the messages model/ makes (codes and placeholders as in model.core.messages.ENGLISH)."""

MESSAGES_ZH: dict[str, str] = {
    "input_truncated": (
        "输入有 {tokens} 个 token；模型最多读取 {max_len} 个（含结束 token），"
        "所以只保留了前 {kept} 个 token（已截断）。"
    ),
    "unknown_characters": "有 {count} 个字符不在这个模型的词表里，显示为 <unk>：{shown}",
    "input_lowercased": "这个模型只认识小写字母，输入已转为小写。",
    "input_script_converted": "繁体字已转换为简体字——模型是用简体训练的。",
    "target_script_converted": "目标文本中的繁体字已转换为简体字。",
    "target_unknown_characters": "目标文本里有模型不认识的字符，显示为 <unk>：{shown}",
    "target_cut": "目标文本已截断到模型的上限：{max_len} 个 token。",
    "output_max_length": "输出达到了最大长度（{max_len} 个 token），仍没有生成结束 token。",
    "output_max_new": "输出写到 {max_new} 个新 token 后停止：这是本次运行写出的上限。",
    "two_passes": (
        "在这个修改下，解码时缓存的键和值与对整段文本做一次前向计算得到的不同，"
        "所以模型先解码，再把提示和输出重新读一遍（两次前向计算，而不是一次）。"
    ),
    "rope_factors_short": "RoPE 因子：短因子（这个输入有 {n} 个位置，不超过 {switch}：未到 `longrope` 的切换点）。",
    "rope_factors_long": (
        "RoPE 因子：长因子（这个输入有 {n} 个位置，超过 {switch}）：每个位置，包括最前面的，都用 `longrope` 的长因子旋转。"
    ),
    "rope_factors_switched": (
        "RoPE 因子：长因子（提示加输出共 {n} 个位置，超过 {switch}）。输出的前几个 token 是在序列还短时用短因子选出的；"
        "序列一超过 {switch} 个位置，整段序列就用长因子重新计算（和 `transformers` 一样），"
        "这里显示的每个概率和注意力都来自那次计算，前面 token 的也是。"
    ),
    "budget_clamped": (
        "在这台服务器上，一次分析最多占用 {budget_mib} MiB 内存，所以这个模型在这里最多读取 {max_len} 个 token："
        "它的配置允许 {config_max_len} 个，那样一次分析要占用 {full_mib:,} MiB。"
    ),
    "empty_input": "输入为空。请输入一个句子，查看模型的注意力。",
    "invalid_utf8": "输入不是有效的 UTF-8 文本（含有无法解码的字节）。",
    "unknown_direction": "未知的翻译方向 {direction!r}；可选：{choices}。",
    "empty_target": "目标文本为空。",
    "input_truncated_pieces": (
        "输入有 {tokens} 个词片（word piece）；模型最多读取 {max_len} 个 token（含开始和结束 token），"
        "所以只保留了前 {kept} 个词片（已截断）。"
    ),
    "beyond_trained_length": (
        "输入有 {tokens} 个 token；模型最多读取 {max_len} 个，但它训练时的输入最多只有 {trained} 个 token，"
        "超出部分的表现未经充分检验。"
    ),
    "unknown_words": "有 {count} 个词不在这个模型的词表里，显示为 `[UNK]`：{shown}",
    "input_uncased": "这个模型不区分大小写：它读取的是转为小写、去掉重音符号后的输入。",
    "no_decoder": "这个模型只有编码器（encoder-only）：没有解码器，所以不生成输出文本。",
    "input_prefixed": (
        "e5 训练时读的文本前面都有前缀“{prefix}”，所以它读的是加上这个前缀的输入："
        "开始 token 之后的前 {tokens} 个 token 是前缀，不是你的文本。"
    ),
}
