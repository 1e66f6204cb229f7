"""Head atlas (viz.atlas): every head's statistic over a dataset, heads by similarity."""

from __future__ import annotations

EN: dict[str, str] = {
    "atlas.map_title": "{stat} of every head over the dataset (each cell names the head's roles)",
    "atlas.hover_roles": "roles: {roles}",
    "atlas.similarity_title": "Heads by similarity over the dataset (1 − Jensen-Shannon / log 2), "
    "ordered by clustering",
}

ZH: dict[str, str] = {
    "atlas.map_title": "每个注意力头在整个数据集上的{stat}（格子里写着这个头的角色）",
    "atlas.hover_roles": "角色：{roles}",
    "atlas.similarity_title": "注意力头在整个数据集上的相似度（1 − 归一化的 Jensen-Shannon 散度），"
    "按聚类排序",
}
