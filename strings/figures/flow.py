"""Figure words of the information-flow page and of the weight × ‖value‖ option."""

EN = {
    "flow.by_weight": "by weight",
    "flow.by_norm": "by weight × ‖value‖",
    "flow.mean_share": "mean share over the query rows",
}

ZH = {
    "flow.by_weight": "按权重",
    "flow.by_norm": "按权重 × ‖值‖",
    "flow.mean_share": "在各查询行上的平均份额",
}
