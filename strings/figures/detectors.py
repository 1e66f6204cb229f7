"""Head detectors (viz.detectors): one role's score of every head."""

from __future__ import annotations

EN: dict[str, str] = {
    "detectors.map_title": "{stat} of every head ({mark}: at or above the threshold {threshold})",
}

ZH: dict[str, str] = {
    "detectors.map_title": "每个注意力头的{stat}（{mark}：达到或超过阈值 {threshold}）",
}
