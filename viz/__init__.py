"""Attention Lens figures: pure functions from numpy arrays and token lists to plotly figures,
pandas tables and numpy statistics. No torch, no streamlit.

Array conventions: one layer's pattern is ``[head, query, key]``, all layers
``[layer, head, query, key]``; masks are boolean with True = masked; pre-softmax scores use
``-inf`` where masked.
"""

from viz.aggregate import attention_rollout, attention_rollout_figure, mean_over_heads, mean_over_heads_figure
from viz.architecture import (
    SPLIT_MERGE,
    architecture_figure,
    architecture_layout,
    architecture_shapes,
    split_merge_figure,
    split_merge_stages,
)
from viz.clicks import CLICK_TRACE_NAME
from viz.columns import column_help, column_labels
from viz.compare import (
    RowDiff,
    align_tokens,
    compare_heatmaps,
    pick_shared_token,
    rank_heads_by_change,
    row_diff_figure,
    shared_token_row_diff,
    shared_tokens,
)
from viz.cost import (
    QuadraticFit,
    cost_figure,
    doubling_ratios,
    doubling_table,
    fit_quadratic,
    memory_table,
    model_table,
    score_memory_bytes,
)
from viz.decoding import cross_attention_step, topk_bar
from viz.focus import attention_arcs, token_focus_grid, token_focus_values
from viz.grid import GridLayout, all_heads_grid, grid_cell_to_head, grid_layout_from_figure, tile_heads
from viz.heatmap import attention_heatmap, hidden_cells
from viz.masks import (
    future_weight,
    mask_matrix,
    pattern_with_future,
    pattern_with_row_sums,
    row_sums,
    token_probability_bars,
)
from viz.pitfalls import encoder_cosine_bars, entropy_bars, training_curves
from viz.positional import (
    DistanceProfile,
    embedding_norm_bars,
    pe_cosine_similarity,
    pe_dimension_curves,
    pe_heatmap,
    pe_similarity_by_distance,
    rope_frequency_bars,
    rope_score_heatmap,
    shift_error_curve,
    shift_matrix_heatmap,
    similarity_by_distance,
)
from viz.shapes import format_shape, parameter_breakdown_chart, shape_trace_table
from viz.stats import (
    HEAD_STATS_COLUMNS,
    cosine_similarity_matrix,
    entropy,
    flatten_heads,
    head_divergence,
    head_similarity,
    head_stats,
    js_divergence,
)
from viz.stats_figures import head_similarity_heatmap, head_stats_bar, head_stats_scatter
from viz.tokens import escape_text, token_labels
from viz.typed_arrays import decode_plotly_array
from viz.worked import (
    WorkedRow,
    kv_head_of,
    position_labels,
    products_figure,
    shown_dimensions,
    steps_table,
    vector_table,
    weighted_sum_table,
    weights_figure,
    work_row,
)

__all__ = [
    "SPLIT_MERGE",
    "architecture_figure",
    "architecture_layout",
    "architecture_shapes",
    "split_merge_figure",
    "split_merge_stages",
    "QuadraticFit",
    "cost_figure",
    "doubling_ratios",
    "doubling_table",
    "fit_quadratic",
    "memory_table",
    "model_table",
    "score_memory_bytes",
    "CLICK_TRACE_NAME",
    "decode_plotly_array",
    "HEAD_STATS_COLUMNS",
    "GridLayout",
    "RowDiff",
    "align_tokens",
    "pick_shared_token",
    "all_heads_grid",
    "attention_arcs",
    "attention_heatmap",
    "attention_rollout",
    "attention_rollout_figure",
    "compare_heatmaps",
    "column_help",
    "column_labels",
    "cosine_similarity_matrix",
    "cross_attention_step",
    "entropy",
    "entropy_bars",
    "training_curves",
    "encoder_cosine_bars",
    "escape_text",
    "flatten_heads",
    "future_weight",
    "format_shape",
    "grid_cell_to_head",
    "grid_layout_from_figure",
    "head_divergence",
    "head_similarity",
    "head_similarity_heatmap",
    "head_stats",
    "head_stats_bar",
    "head_stats_scatter",
    "hidden_cells",
    "js_divergence",
    "mask_matrix",
    "mean_over_heads",
    "mean_over_heads_figure",
    "parameter_breakdown_chart",
    "pe_cosine_similarity",
    "pe_dimension_curves",
    "pattern_with_future",
    "pattern_with_row_sums",
    "pe_heatmap",
    "DistanceProfile",
    "embedding_norm_bars",
    "pe_similarity_by_distance",
    "rope_frequency_bars",
    "rope_score_heatmap",
    "shift_error_curve",
    "shift_matrix_heatmap",
    "similarity_by_distance",
    "rank_heads_by_change",
    "row_diff_figure",
    "row_sums",
    "shape_trace_table",
    "shared_token_row_diff",
    "shared_tokens",
    "tile_heads",
    "token_focus_grid",
    "token_focus_values",
    "token_labels",
    "token_probability_bars",
    "topk_bar",
    "WorkedRow",
    "kv_head_of",
    "position_labels",
    "products_figure",
    "shown_dimensions",
    "steps_table",
    "vector_table",
    "weighted_sum_table",
    "weights_figure",
    "work_row",
]
