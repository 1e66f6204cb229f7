"""Text shared by every page: navigation, the sidebar, notes about the input, attention kinds."""

from model.network.kinds import ATTENTION_KINDS

EN = {
    "app.about": "Attention Lens: every head, every tensor shape, in the browser.",
    # navigation sections and page titles (keys: app_support.pages)
    "menu.first_visit": "New here? Type a sentence in the box on the left, or pick another model above it; "
    "the menu at the top groups the pages by the question they answer.",
    "section.attention": "Attention",
    "section.decoding": "Decode & compare",
    "section.probe": "Probing",
    "section.how": "How it works",
    "section.hood": "Under the hood",
    "page.single.title": "Single head",
    "page.heads.title": "All heads",
    "page.focus.title": "Token focus",
    "page.aggregates.title": "Mean & rollout",
    "page.decoding.title": "Step-by-step decoding",
    "page.compare.title": "Compare two sentences",
    "page.stats.title": "Head statistics",
    "page.model.title": "The model",
    "page.positional.title": "Positional encoding",
    "page.worked.title": "Attention by hand",
    "page.masks.title": "Masks",
    "page.families.title": "Three families, one sentence",
    "page.architecture.title": "Architecture & shapes",
    "page.cost.title": "Cost vs length",
    "page.pitfalls.title": "Pitfall lab",
    # sidebar
    "sidebar.language": "Language · 语言",
    "sidebar.controls": "Controls",
    "sidebar.model": "Model",
    "sidebar.model_help": "`default` translates Chinese ↔ English; the others are tiny didactic models "
    "whose attention is easy to read.",
    "sidebar.no_models": "No models found in `assets/models/`. Train one, e.g. "
    "`python -m model train --preset reverse --ship`, then reload this page.",
    "sidebar.cannot_load": "Cannot load model {name}: {error}",
    "sidebar.model_missing": "The link names the model {name}, which this session does not have (an upload "
    "lives only in the session it was made in): showing {shown} instead.",
    "sidebar.input": "Input sentence",
    "sidebar.input_help": "Press Enter to run. The model reads at most {max_len} tokens; longer input is cut "
    "(you will be told).",
    "sidebar.use_example": "Use the example sentence",
    "sidebar.direction": "Translation direction",
    "direction.auto": "auto-detect",
    "direction.codes": "{a} → {b}",
    "direction.zh->en": "中文 → English",
    "direction.en->zh": "English → 中文",
    "sidebar.form": "The prompt",
    "sidebar.new_tokens": "New tokens to write",
    "sidebar.new_tokens_help": "A language model rarely ends by itself soon: it writes at most this many tokens "
    "(0 to {most}), each one more decoding step and one more row on the pages. At 0 it writes nothing: the "
    "prompt alone is read, in one pass.",
    "analysis.no_output": "New tokens to write is 0: the model read the prompt alone and wrote nothing, so "
    "this page, which shows the output, has nothing to show.",
    "analysis.write_output": "Write {n} new tokens",
    "sidebar.new_tokens_translation": "Most output tokens",
    "sidebar.new_tokens_until_end": "until the end token",
    "sidebar.new_tokens_translation_help": "A translation ends by itself when the model writes its end token: "
    "left empty, the output is decoded until then (or until the model's {limit} positions are full). A number "
    "(0 to {most}) stops it after at most that many tokens, e.g. to follow the first steps of a long sentence. "
    "At 0 nothing is written: the encoder reads the source and the decoder its start token alone.",
    "analysis.no_output_translation": "Most output tokens is 0: the encoder read the source and the decoder "
    "its start token alone, so this page, which shows the output, has nothing to show.",
    "analysis.translate_to_end": "Translate to the end token",
    "direction.raw": "continued as typed",
    "direction.chat": "answered in chat form",
    "sidebar.form_help": "A chat model can read the text as typed and continue it, or read it as a user's "
    "message in its chat template and answer it (the template's tokens are part of the input then).",
    "sidebar.no_chat_form": "This model's file carries a chat template that gives no chat form ({reason}): "
    "its prompts are read as typed.",
    "sidebar.attention": "Attention",
    "sidebar.layer": "Layer",
    "sidebar.head": "Head",
    "sidebar.layer_option": "layer {i}",
    "sidebar.head_option": "head {i}",
    "sidebar.present": "Presentation mode",
    "sidebar.present_help": "Bigger text for projectors; the controls fold away.",
    "sidebar.link": ":material/link: The address bar always holds a link to exactly this view — copy it to share.",
    # notes about the input
    "note.clipped": "{what} in the link had {cut_from:,} characters; text boxes take at most {limit:,}, "
    "so it was cut to its first {limit:,}.",
    "note.clipped.sentence": "The sentence",
    "note.clipped.sentence_a": "Sentence A",
    "note.clipped.sentence_b": "Sentence B",
    "io.input": "Input, as the model reads it",
    "io.input_whole": "The whole input ({chars} characters)",
    "io.output": "Model output",
    "io.output_translation": "Model output (translation)",
    "io.empty_output": "(empty output)",
    "page.needs_decoder": "**{model}** is encoder-only: it has no decoder and writes no output text, so this "
    "page, which follows the decoder's output, has nothing to show. The attention pages (single head, all "
    "heads, token focus, mean & rollout, compare, head statistics) and the pages under the hood work on it.",
    "page.not_for_language_models": "**{model}** is a decoder-only language model. This page is drawn for "
    "encoder–decoder models so far (its version for language models comes with the generation pages); "
    "single head, all heads, token focus, mean & rollout, compare and head statistics work on it.",
    "io.tokens": "Tokens in → out",
    "analysis.empty": "The input is empty. Type a sentence in the sidebar (or press “Use the example sentence”).",
    "analysis.running": "Running the model …",
    "analysis.progress.decode": "Writing the model's output …",
    "analysis.progress.read": "Recording every layer's attention …",
    "analysis.took": "This analysis of {tokens} tokens took {seconds} s; the pages now draw from it at once.",
    "analysis.loading": "Loading the model …",
    # common words inside figure titles written by pages
    "common.layer_head": "layer {layer} · head {head}",
}
EN.update({f"kind.{k.name}.label": k.label for k in ATTENTION_KINDS})
EN.update({f"kind.{k.name}.help": k.help for k in ATTENTION_KINDS})

ZH = {
    "app.about": "Attention Lens：每一个注意力头、每一个张量形状，都在浏览器里。",
    "menu.first_visit": "第一次来？在左边的输入框里输入一个句子，或者在它上面换一个模型；"
    "页面顶部的菜单按问题把各个页面分了组。",
    "section.attention": "注意力",
    "section.decoding": "解码与对比",
    "section.probe": "模型知道什么",
    "section.how": "原理演示",
    "section.hood": "模型内部",
    "page.single.title": "单个注意力头",
    "page.heads.title": "所有注意力头",
    "page.focus.title": "聚焦一个 token",
    "page.aggregates.title": "平均与注意力展开",
    "page.decoding.title": "逐步解码",
    "page.compare.title": "对比两个句子",
    "page.stats.title": "注意力头统计",
    "page.model.title": "模型本身",
    "page.positional.title": "位置编码",
    "page.worked.title": "手算注意力",
    "page.masks.title": "掩码",
    "page.families.title": "三种模型家族，同一个句子",
    "page.architecture.title": "架构与形状",
    "page.cost.title": "复杂度与长度",
    "page.pitfalls.title": "踩坑实验室",
    "sidebar.language": "Language · 语言",
    "sidebar.controls": "控制面板",
    "sidebar.model": "模型",
    "sidebar.model_help": "`default` 做中英互译；其余是很小的教学模型，它们的注意力一眼就能看懂。",
    "sidebar.no_models": "在 `assets/models/` 里没有找到模型。先训练一个，例如 "
    "`python -m model train --preset reverse --ship`，然后刷新本页。",
    "sidebar.cannot_load": "无法加载模型 {name}：{error}",
    "sidebar.model_missing": "链接里的模型 {name} 在本会话中不存在（上传的模型只存在于上传它的那个会话里），"
    "现在显示的是 {shown}。",
    "sidebar.input": "输入句子",
    "sidebar.input_help": "按回车运行。模型最多读取 {max_len} 个 token；更长的输入会被截断（页面会告诉你）。",
    "sidebar.use_example": "使用示例句子",
    "sidebar.direction": "翻译方向",
    "direction.auto": "自动识别",
    "direction.codes": "{a} → {b}",
    "direction.zh->en": "中文 → English",
    "direction.en->zh": "English → 中文",
    "sidebar.form": "提示文本",
    "sidebar.new_tokens": "要写出的新 token 数",
    "sidebar.new_tokens_help": "语言模型很少很快自己结束：它最多写出这么多个 token（0 到 {most}），"
    "每多一个就多一步解码，页面上也多一行。设为 0 时不写出任何 token：只读一遍提示。",
    "analysis.no_output": "要写出的新 token 数为 0：模型只读了提示，没有写出任何内容，所以这个展示输出的页面没有可显示的内容。",
    "analysis.write_output": "写出 {n} 个新 token",
    "sidebar.new_tokens_translation": "最多输出 token 数",
    "sidebar.new_tokens_until_end": "直到结束 token",
    "sidebar.new_tokens_translation_help": "翻译在模型写出结束 token 时自己结束：留空时一直解码到那里（或直到模型的 "
    "{limit} 个位置用完）。填一个数（0 到 {most}）则最多写出这么多个 token 就停止，例如用来跟踪长句翻译的前几步。"
    "设为 0 时不写出任何 token：编码器读源句，解码器只读它的起始 token。",
    "analysis.no_output_translation": "最多输出 token 数为 0：编码器读了源句，解码器只读了它的起始 token，所以这个展示输出的页面"
    "没有可显示的内容。",
    "analysis.translate_to_end": "翻译到结束 token",
    "direction.raw": "按原样续写",
    "direction.chat": "以对话形式回答",
    "sidebar.form_help": "对话模型可以把文本按原样读入并续写，也可以把它当作用户在对话模板里的一条消息来回答"
    "（这时模板的 token 也是输入的一部分）。",
    "sidebar.no_chat_form": "这个模型文件带有对话模板，但它给不出对话形式（{reason}）：提示按原样读入。",
    "sidebar.attention": "注意力类型",
    "sidebar.layer": "层",
    "sidebar.head": "注意力头",
    "sidebar.layer_option": "第 {i} 层",
    "sidebar.head_option": "头 {i}",
    "sidebar.present": "演示模式",
    "sidebar.present_help": "为投影仪放大文字；控制面板会收起。",
    "sidebar.link": ":material/link: 地址栏里始终是指向当前视图的链接——复制它即可分享。",
    "note.clipped": "链接中的{what}有 {cut_from:,} 个字符；输入框最多接受 {limit:,} 个，所以只保留了前 {limit:,} 个。",
    "note.clipped.sentence": "句子",
    "note.clipped.sentence_a": "句子 A",
    "note.clipped.sentence_b": "句子 B",
    "io.input": "输入（模型读到的样子）",
    "io.input_whole": "完整输入（{chars} 个字符）",
    "io.output": "模型输出",
    "io.output_translation": "模型输出（译文）",
    "io.empty_output": "（输出为空）",
    "page.needs_decoder": "**{model}** 只有编码器（encoder-only）：它没有解码器，也不生成输出文本，而这一页跟随的是解码器的输出，"
    "所以这里没有可以展示的内容。注意力相关的页面（单个注意力头、所有注意力头、聚焦一个 token、平均与注意力展开、对比两个句子、"
    "注意力头统计）和“模型内部”里的页面都可以用于它。",
    "page.not_for_language_models": "**{model}** 是只含解码器的语言模型。这一页目前只为编码器–解码器模型绘制"
    "（它的语言模型版本会随生成页面一起到来）；单个注意力头、所有注意力头、聚焦一个 token、平均与注意力展开、"
    "对比两个句子和注意力头统计都可以用于它。",
    "io.tokens": "token 数：输入 → 输出",
    "analysis.empty": "输入为空。请在侧边栏输入一个句子（或点击“使用示例句子”）。",
    "analysis.running": "模型运行中 …",
    "analysis.progress.decode": "模型正在生成输出 …",
    "analysis.progress.read": "正在记录每一层的注意力 …",
    "analysis.took": "这次对 {tokens} 个 token 的分析用了 {seconds} 秒；各页面现在可以直接取用它。",
    "analysis.loading": "正在加载模型 …",
    "common.layer_head": "第 {layer} 层 · 头 {head}",
    "kind.encoder.label": "编码器自注意力",
    "kind.decoder.label": "解码器掩码自注意力",
    "kind.cross.label": "交叉注意力（解码器 → 编码器）",
    "kind.encoder.help": "每个源 token（行）查看所有源 token（列）。",
    "kind.decoder.help": "每个输出 token（行）查看已经生成的输出（列）；未来的位置被掩码遮住。",
    "kind.cross.help": "每个输出 token（行）查看编码器产生的源 token（列）。",
}
