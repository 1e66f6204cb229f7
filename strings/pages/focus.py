"""Token focus page."""

EN = {
    "focus.intro": "Follow **one token** through the whole model. *Where does it look?* treats the token as a "
    "query and shows, for every head, how strongly it attends and to which token. *Who looks at it?* "
    "treats it as a key and shows which token pays it the most attention. On the right, the "
    "selected head (sidebar) drawn as lines: thicker = more weight.",
    "focus.side.from": "Where does it look? (token as query)",
    "focus.side.to": "Who looks at it? (token as key)",
    "focus.question": "Question",
    "focus.token": "Token",
    "focus.token_help": "Tokens of the sequence the question is about: source tokens for encoder self-attention, "
    "output tokens for decoder self-attention; for cross-attention, queries are output tokens and "
    "keys are source tokens.",
    "focus.grid_title.from": "Where does “{token}” look?",
    "focus.grid_title.to": "Who looks at “{token}”?",
    "focus.grid_caption": "One cell per head: colour = the strongest weight, text = the partner token. "
    "A row of dark cells on the same partner means many heads agree.",
    "focus.arcs_title": "Layer {layer} · head {head} as lines",
    "focus.arcs_caption": "Queries on the left, keys on the right; a line's width and darkness grow with the weight. "
    "Lines under 0.01 are hidden.",
}

ZH = {
    "focus.intro": "跟着**一个 token** 走遍整个模型。*它在看哪里？* 把这个 token 当作**查询**（query），"
    "对每个注意力头显示它的注意力有多集中、落在哪个 token 上。*谁在看它？* 把它当作**键**（key），"
    "显示哪个 token 给它的注意力最多。右侧把侧边栏里选中的头画成连线：线越粗，权重越大。",
    "focus.side.from": "它在看哪里？（token 作为查询）",
    "focus.side.to": "谁在看它？（token 作为键）",
    "focus.question": "问题",
    "focus.token": "token",
    "focus.token_help": "问题所针对的那个序列里的 token：编码器自注意力用源 token，解码器自注意力用输出 token；"
    "交叉注意力里，查询是输出 token，键是源 token。",
    "focus.grid_title.from": "“{token}”在看哪里？",
    "focus.grid_title.to": "谁在看“{token}”？",
    "focus.grid_caption": "每个注意力头一个格子：颜色 = 最大的权重，文字 = 与之对应的那个 token。"
    "同一行里一串深色格子都指向同一个 token，说明许多头的看法一致。",
    "focus.arcs_title": "第 {layer} 层 · 头 {head}，画成连线",
    "focus.arcs_caption": "左边是查询，右边是键；权重越大，线越粗、颜色越深。权重低于 0.01 的线不画出来。",
}
