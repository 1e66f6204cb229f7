"""Model vs model (viz.versus): how far each head moved, and two heads side by side."""

from __future__ import annotations

EN: dict[str, str] = {
    "versus.value.same": "JS distance to the same head",
    "versus.value.nearest": "JS distance to the nearest head",
    "versus.map_title.same": "How far each head moved: distance to the head at the same place in {model} "
    "(cells name the nearest head of {model})",
    "versus.map_title.nearest": "Distance of each head to its nearest head in {model} (named in the cell)",
    "versus.hover_nearest": "nearest in {model}: {head}",
    "versus.head_title": "{model} · head {head}",
    "versus.pair_subtitle": "Jensen-Shannon distance between the two heads (mean over rows): {value}",
}

ZH: dict[str, str] = {
    "versus.value.same": "与同一位置的头的 JS 距离",
    "versus.value.nearest": "与最近的头的 JS 距离",
    "versus.map_title.same": "每个注意力头移动了多远：与 {model} 中同一位置的头的距离（格子里写着 {model} 中最近的头）",
    "versus.map_title.nearest": "每个注意力头与 {model} 中最近的头的距离（格子里写着是哪个头）",
    "versus.hover_nearest": "{model} 中最近的头：{head}",
    "versus.head_title": "{model} · 头 {head}",
    "versus.pair_subtitle": "两个头之间的 Jensen-Shannon 距离（对各行取平均）：{value}",
}
