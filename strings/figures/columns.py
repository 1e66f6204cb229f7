"""Display names and meanings of viz's table columns (viz.column_labels, viz.column_help):
what the pages show today."""

from __future__ import annotations

EN: dict[str, str] = {
    # column names of display tables (viz.column_labels): what the pages show today
    "col.head_stats.layer": "layer",
    "col.head_stats.head": "head",
    "col.head_stats.entropy": "entropy",
    "col.head_stats.entropy_norm": "entropy norm",
    "col.head_stats.max_weight": "max weight",
    "col.head_stats.mean_distance": "mean distance",
    "col.head_stats.first_token": "first token",
    "col.head_stats.special_tokens": "special tokens",
    "col.head_stats.sinks": "sinks",
    "col.head_stats.diagonal": "diagonal",
    "col.head_stats.previous_token": "previous token",
    "col.head_stats.n_rows": "rows",
    "col.rank_heads_by_change.rank": "rank",
    "col.rank_heads_by_change.layer": "layer",
    "col.rank_heads_by_change.head": "head",
    "col.rank_heads_by_change.js_divergence": "change (JS, nats)",
    "col.rank_heads_by_change.n_queries": "rows",
    "col.shape_trace_table.step": "step",
    "col.shape_trace_table.name": "name",
    "col.shape_trace_table.op": "op",
    "col.shape_trace_table.hook": "hook",
    "col.shape_trace_table.input shapes": "input shapes",
    "col.shape_trace_table.input symbols": "input symbols",
    "col.shape_trace_table.output shape": "output shape",
    "col.shape_trace_table.output symbol": "output symbol",
    # column meanings (viz.column_help; head_stats(...).attrs["units"])
    "help.head_stats.layer": "layer index (0-based)",
    "help.head_stats.head": "head index (0-based)",
    "help.head_stats.entropy": "mean entropy of the attention rows [nats]",
    "help.head_stats.entropy_norm": (
        "mean entropy / log(number of attendable keys) [0..1]; rows with one key skipped"
    ),
    "help.head_stats.max_weight": "mean over rows of the largest weight [0..1]",
    "help.head_stats.mean_distance": "mean over rows of sum_k w_k·|q−k| [positions]",
    "help.head_stats.first_token": "mean weight on key position 0 [0..1]",
    "help.head_stats.special_tokens": (
        "mean total weight on special keys [0..1] (NaN if no special mask given)"
    ),
    "help.head_stats.sinks": (
        "mean total weight on attention sinks: special keys and punctuation [0..1] (NaN if not given)"
    ),
    "help.head_stats.diagonal": "mean weight on key k = q (rows with q < n_keys) [0..1]",
    "help.head_stats.previous_token": "mean weight on key k = q−1 (rows 1 ≤ q ≤ n_keys) [0..1]",
    "help.head_stats.n_rows": "number of valid query rows averaged over",
    "help.rank_heads_by_change.rank": "1 = the head whose attention changes most",
    "help.rank_heads_by_change.js_divergence": (
        "Jensen-Shannon divergence between the token's attention over the shared keys "
        "in A and in B: 0 = identical, log 2 ≈ 0.69 = completely different."
    ),
    "help.rank_heads_by_change.n_queries": "query rows averaged",
    "help.shape_trace_table.hook": "where a hook can read this step's output (— = none)",
}

ZH: dict[str, str] = {
    "col.head_stats.layer": "层",
    "col.head_stats.head": "头",
    "col.head_stats.entropy": "熵",
    "col.head_stats.entropy_norm": "归一化熵",
    "col.head_stats.max_weight": "最大权重",
    "col.head_stats.mean_distance": "平均距离",
    "col.head_stats.first_token": "第一个 token",
    "col.head_stats.special_tokens": "特殊 token",
    "col.head_stats.sinks": "汇聚点",
    "col.head_stats.diagonal": "对角线",
    "col.head_stats.previous_token": "前一个 token",
    "col.head_stats.n_rows": "行数",
    "col.rank_heads_by_change.rank": "排名",
    "col.rank_heads_by_change.layer": "层",
    "col.rank_heads_by_change.head": "头",
    "col.rank_heads_by_change.js_divergence": "变化（JS 散度，nats）",
    "col.rank_heads_by_change.n_queries": "行数",
    "col.shape_trace_table.step": "步骤",
    "col.shape_trace_table.name": "名称",
    "col.shape_trace_table.op": "运算",
    "col.shape_trace_table.hook": "钩子（hook）",
    "col.shape_trace_table.input shapes": "输入形状",
    "col.shape_trace_table.input symbols": "输入符号",
    "col.shape_trace_table.output shape": "输出形状",
    "col.shape_trace_table.output symbol": "输出符号",
    "help.head_stats.layer": "层的序号（从 0 开始）",
    "help.head_stats.head": "头的序号（从 0 开始）",
    "help.head_stats.entropy": "注意力各行的熵的平均值 [nats]",
    "help.head_stats.entropy_norm": (
        "各行的熵除以其最大可能值（可关注的键的个数取对数）后的平均 [0..1]；只有一个键的行不计入"
    ),
    "help.head_stats.max_weight": "各行最大权重的平均 [0..1]",
    "help.head_stats.mean_distance": "各行 Σ_k w_k·|q−k| 的平均 [位置数]",
    "help.head_stats.first_token": "落在键位置 0 上的权重的平均 [0..1]",
    "help.head_stats.special_tokens": (
        "落在特殊键上的权重总和的平均 [0..1]（没有给出特殊 token 的掩码时为空）"
    ),
    "help.head_stats.sinks": (
        "落在注意力汇聚点（attention sink）上的权重总和的平均：特殊键和标点 [0..1]（没有给出时为空）"
    ),
    "help.head_stats.diagonal": "落在键 k = q 上的权重的平均（只算 q < n_keys 的行）[0..1]",
    "help.head_stats.previous_token": "落在键 k = q−1 上的权重的平均（只算 1 ≤ q ≤ n_keys 的行）[0..1]",
    "help.head_stats.n_rows": "参与平均的有效查询行数",
    "help.rank_heads_by_change.rank": "1 = 注意力变化最大的头",
    "help.rank_heads_by_change.js_divergence": (
        "这个 token 在 A 和 B 中对两句共有的键的注意力之间的 Jensen-Shannon 散度："
        "0 = 完全相同，最大约 0.69 = 完全不同。"
    ),
    "help.rank_heads_by_change.n_queries": "参与平均的查询行数",
    "help.shape_trace_table.hook": "可以在哪个钩子（hook）读到这一步的输出（— = 没有）",
}
