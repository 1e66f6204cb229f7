"""Comparing two sentences (viz.compare): the same head side by side, a token's row difference."""

from __future__ import annotations

EN: dict[str, str] = {
    # the sentences' names compare.sentence_a / _b are the page's too: strings/pages/compare.py
    "compare.title": "Attention in two sentences (same head, same colour scale)",
    "compare.pooled_side": "{name}: {pooled}",
    "rowdiff.attends_to": "{name}: <b>{token}</b> attends to",
    "rowdiff.change": "change {b} − {a} on keys in both",
    "rowdiff.title": "How the attention of <b>{token}</b> changes between the sentences",
}

ZH: dict[str, str] = {
    # the sentences' names compare.sentence_a / _b are the page's too: strings/pages/compare.py
    "compare.title": "两个句子中的注意力（同一个头，同一色标）",
    "compare.pooled_side": "{name}：{pooled}",
    "rowdiff.attends_to": "{name}：<b>{token}</b> 的注意力分布",
    "rowdiff.change": "变化 {b} − {a}（只看两句共有的键）",
    "rowdiff.title": "<b>{token}</b> 的注意力在两个句子之间如何变化",
}
