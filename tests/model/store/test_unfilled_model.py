"""The network built without a random start (model/store/formats/own.py): names and shapes only, nothing
allocated, and none of torch's compiler imported on the way."""

import subprocess
import sys
from pathlib import Path

import torch

from model.network.config import ModelConfig
from model.network.transformer import Transformer
from model.store.formats.own import expected_shapes, unfilled_model

ROOT = Path(__file__).resolve().parents[3]

LLAMA_LIKE = dict(vocab_size=40, d_model=16, n_heads=4, d_ff=24, n_enc_layers=0, n_dec_layers=2, max_len=16,
                  dropout=0.0, decoder_only=True, norm="rmsnorm", activation="silu", gated_ffn=True,
                  pos_encoding="rope", n_kv_heads=2, tie_embeddings=False)


def test_the_unfilled_model_has_every_tensor_of_a_built_one_on_the_meta_device():
    for cfg in (ModelConfig(**LLAMA_LIKE), ModelConfig(vocab_size=40, d_model=16, n_heads=4, d_ff=24,
                                                      n_enc_layers=2, n_dec_layers=2, max_len=16)):
        built = Transformer(cfg)
        unfilled = unfilled_model(cfg)
        theirs = {n: t.shape for n, t in built.state_dict().items()}
        ours = {n: t.shape for n, t in unfilled.state_dict().items()}
        assert ours == theirs
        assert all(t.is_meta for t in unfilled.parameters())
        assert expected_shapes(cfg)  # read from it


def test_reading_shapes_imports_no_compiler():
    """torch's meta path for a random start imports torch._dynamo (and sympy): ~1 s and ~800 modules."""
    code = ("import sys; from model.network.config import ModelConfig; "
            "from model.store.formats.own import expected_shapes; "
            f"expected_shapes(ModelConfig(**{LLAMA_LIKE!r})); "
            "print(sorted(m for m in ('torch._dynamo', 'sympy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_outside_the_block_a_random_start_still_happens():
    unfilled_model(ModelConfig(**LLAMA_LIKE))
    layer = torch.nn.Linear(8, 8)  # built after: torch's own random start, not left empty
    assert layer.weight.abs().sum() > 0
