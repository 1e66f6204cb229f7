"""Shapes and parameters (viz.shapes): the shape trace's scalar, the parameter breakdown."""

from __future__ import annotations

EN: dict[str, str] = {
    "shape.scalar": "scalar",
    "params.count": "{count} parameters",
    "params.share_of_all": "{share} of all",
    "params.bar_title": "Parameters per module (total {total})",
    "params.treemap_title": "Where the {total} parameters live",
}

ZH: dict[str, str] = {
    "shape.scalar": "标量",
    "params.count": "{count} 个参数",
    "params.share_of_all": "占全部的 {share}",
    "params.bar_title": "每个模块的参数量（共 {total} 个）",
    "params.treemap_title": "这 {total} 个参数分布在哪里",
}
