"""What the pages on the shipped letter-reversal models (training scrubber, architecture variants) share with
the pitfall lab: the word they fall back on when the sidebar's text is not the model's, the attention kind
they draw, and the sidebar's head clamped to such a model's decoder."""

from __future__ import annotations

from model.lab.pitfalls import TRAINED_WORD
from model.lab.training import KIND
from model.network.config import ModelConfig

__all__ = ["KIND", "TRAINED_WORD", "clamp_head"]


def clamp_head(cfg: ModelConfig, layer: int, head: int) -> tuple[int, int]:
    """The sidebar's layer and head, clamped to what this model's decoder has."""
    return max(0, min(int(layer), cfg.n_dec_layers - 1)), max(0, min(int(head), cfg.n_heads - 1))
