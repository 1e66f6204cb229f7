"""The positional-encoding lab's numbers from a loaded model."""

from __future__ import annotations

import numpy as np

from ..network.positional import sinusoidal_table
from ..store.bundle import Bundle


def position_table(bundle: Bundle, n_pos: int, d_model: int) -> tuple[np.ndarray, bool]:
    """(table [pos, d_model], whether it is the model's own) for the positional-encoding lab.

    The model's own learned table when the model learns its positions and the size asked for is
    the model's; otherwise the sinusoidal table of the 2017 paper at that size.
    """
    cfg = bundle.cfg
    if cfg.pos_encoding == "learned" and (n_pos, d_model) == (cfg.max_len, cfg.d_model):
        positions = getattr(bundle.model.encoder.embed, "positions", None)
        if positions is not None and hasattr(positions, "table"):
            return positions.table.detach().float().numpy(), True
    own = cfg.pos_encoding == "sinusoidal" and d_model == cfg.d_model
    return sinusoidal_table(int(n_pos), int(d_model)).numpy().astype(np.float32), own
