import os

import pytest
import torch

# The cost page measures attention for up to 5 s when it opens; in tests (AppTest and the browser
# test's server, which inherits this) one second of measuring is enough to exercise it.
os.environ.setdefault("ATTENTION_LENS_COST_BUDGET", "1")

from model.network.config import ModelConfig
from model.network.transformer import Transformer

torch.set_num_threads(1)  # the test machine has two cores; keep one for the app under test


def tiny_config(**overrides) -> ModelConfig:
    base = dict(
        vocab_size=40, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2, n_dec_layers=2, dropout=0.0, max_len=16
    )
    base.update(overrides)
    return ModelConfig(**base)


@pytest.fixture
def tiny_model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


def padded_batch(vocab: int = 40, seed: int = 0):
    """src [2, 7] with the second sentence padded after 5 tokens; tgt [2, 6] with the first padded after 4."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, vocab, (2, 7), generator=g)
    src[1, 5:] = 0
    tgt = torch.randint(4, vocab, (2, 6), generator=g)
    tgt[0, 4:] = 0
    return src, tgt
