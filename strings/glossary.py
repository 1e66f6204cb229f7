"""One Chinese term per concept: the words the Chinese interface uses for technical terms.

The tests check every table entry against this list: where the English text names a concept,
the Chinese text must use the term given here, and never one of the ``avoid`` synonyms (so a
learner never meets two names for one thing). Chinese NLP writing keeps a few words in English
(token, softmax, logits); those are listed with themselves as the term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    en: str  # English term, matched as whole words, case-insensitive
    zh: str  # the one Chinese term the interface uses
    avoid: tuple[str, ...] = ()  # synonyms that must not appear in Chinese text
    en_pattern: str = ""  # regex for the English term when its forms vary ("" = the term itself)

    def matches_en(self, english: str) -> bool:
        pattern = self.en_pattern or r"\b" + re.escape(self.en) + r"\b"
        return re.search(pattern, english, flags=re.IGNORECASE) is not None


TERMS: tuple[Term, ...] = (
    Term("attention head", "注意力头", ("注意头", "关注头"), r"\battention heads?\b"),
    Term("multi-head attention", "多头注意力", ("多头关注",)),
    Term("self-attention", "自注意力", ("自关注",), r"\bself-attention\b"),
    Term("cross-attention", "交叉注意力", ("互注意力", "跨注意力", "交叉关注"), r"\bcross-attention\b"),
    Term("attention", "注意力", ("关注度", "注意机制")),
    Term("query", "查询", ("询问向量", "问询"), r"\bquer(y|ies)\b"),
    Term("key", "键", ("关键字", "钥匙"), r"\bkeys?\b"),
    Term("value", "值", ("数值向量",), r"\bvalue vectors?\b|\bvalues?\b(?= vector)"),
    Term("positional encoding", "位置编码", ("位置嵌入编码", "位置码"), r"\bpositional encodings?\b"),
    Term("mask", "掩码", ("遮罩", "蒙版", "屏蔽码"), r"\bmask(s|ed|ing)?\b"),
    Term("residual connection", "残差连接", ("残留连接", "跳跃连接"), r"\bresidual\b"),
    Term("layer normalization", "层归一化", ("层标准化", "层正规化"),
         r"\blayer ?norm(alization|alisation)?\b"),
    Term("greedy decoding", "贪心解码", ("贪婪解码", "贪心搜索"), r"\bgreedy\b"),
    Term("encoder", "编码器", ("编码端",), r"\bencoders?\b"),
    Term("decoder", "解码器", ("解码端",), r"\bdecoders?\b"),
    Term("token", "token", ("词元", "令牌", "标记符"), r"\btokens?\b"),
    Term("embedding", "嵌入", ("词向量嵌入", "内嵌"), r"\bembeddings?\b"),
    Term("heatmap", "热力图", ("热图", "热度图"), r"\bheatmaps?\b"),
    Term("entropy", "熵", ("信息熵值",)),
    Term("rollout", "注意力展开", ("注意力滚动", "展开注意力"), r"\brollout\b"),
    Term("feed-forward network", "前馈网络", ("前向网络", "前馈层网络"), r"\bfeed-forward\b|\bFFN\b"),
    Term("layer", "层", ("层级",), r"\blayers?\b"),
    Term("head", "头", (), r"\bheads?\b"),
    Term("softmax", "softmax", ("软最大值", "柔性最大值")),
    Term("shape trace", "形状追踪", ("形状跟踪", "形状轨迹"), r"\bshape trace\b"),
    Term("parameter", "参数", ("参量",), r"\bparameters?\b"),
    Term("teacher forcing", "教师强制", ("老师强制", "教师强迫"), r"\bteacher[- ]forc(ed|ing)\b"),
    Term("beam search", "束搜索", ("集束搜索", "波束搜索"), r"\bbeam\b"),
    Term("sampling", "采样", ("抽样",), r"\bsampl(e|ed|ing)\b"),
    Term("source", "源", ("来源句",), r"\bsource\b"),
    Term("target", "目标", ("靶",), r"\btarget\b"),
    Term("vocabulary", "词表", ("词汇表", "字典"), r"\bvocabular(y|ies)\b"),
)
