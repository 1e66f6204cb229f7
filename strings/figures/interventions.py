"""Intervene and explain (viz.interventions): head ablation, activation patching, attribution."""

from __future__ import annotations

EN: dict[str, str] = {
    "interventions.axis_step": "decoding step: token",
    "interventions.axis_output_step": "output step: token",
    "interventions.axis_share": "share of the total (absolute values)",
    "interventions.hover_step_source": "step {step} · source {source}",
}

ZH: dict[str, str] = {
    "interventions.axis_step": "解码步骤：token",
    "interventions.axis_output_step": "输出步骤：token",
    "interventions.axis_share": "占总量的比例（取绝对值）",
    "interventions.hover_step_source": "步骤 {step} · 源 {source}",
}
