"""One token across the model (viz.focus): where it looks, who looks at it, attention as lines."""

from __future__ import annotations

EN: dict[str, str] = {
    "focus.title_from": "Where does <b>{token}</b> look? Max weight per head (cell text: most-attended key)",
    "focus.title_to": "Who looks at <b>{token}</b>? Max weight per head (cell text: most-attending query)",
    "focus.title_pair": "Weight from <b>{src}</b> to <b>{dst}</b> in every head",
    "arcs.title_all": "Attention as lines: query (left) → key (right); thicker = more weight",
    "arcs.title_token": "What <b>{token}</b> attends to (thicker line = more weight)",
    "arcs.drawn": "{shown} of the {total} links with weight ≥ {min_weight} drawn (weaker ones dropped)",
    "arcs.rule_top_k": "at most the {k} strongest per query",
    "arcs.rule_cap": "at most {cap} in all",
}

ZH: dict[str, str] = {
    "focus.title_from": "<b>{token}</b> 在看哪里？每个头的最大权重（格中文字：它最关注的键）",
    "focus.title_to": "谁在看 <b>{token}</b>？每个头的最大权重（格中文字：最关注它的查询）",
    "focus.title_pair": "每个头里从 <b>{src}</b> 到 <b>{dst}</b> 的权重",
    "arcs.title_all": "用连线表示注意力：查询（左）→ 键（右）；线越粗，权重越大",
    "arcs.title_token": "<b>{token}</b> 关注哪些 token（线越粗，权重越大）",
    "arcs.drawn": "权重 ≥ {min_weight} 的连线共 {total} 条，画出其中 {shown} 条（较弱的已略去）",
    "arcs.rule_top_k": "每个查询最多画最强的 {k} 条",
    "arcs.rule_cap": "总共最多画 {cap} 条",
}
