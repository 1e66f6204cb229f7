"""A GGUF file (llama.cpp's one-file format) of a Llama- or Qwen2-architecture decoder, converted into
our own ``Transformer``: every hook, the scores, the shape trace and the interventions then work on
it as on the models we train.

The file is read by :mod:`.gguf_file`, which checks everything its header claims before anything is
allocated. Its query and key rows are used as stored: llama.cpp's converter already put them in the
(even, odd) pairs our RoPE rotates, where a Hugging Face folder needs a permutation (hf_decoder.py).
The tokenizer and the chat template come from the file's metadata.

Dequantizing a file takes seconds (SmolLM2-135M: ~3 s to float32), so the result is kept as float32
safetensors in the project's cache folder (``ATTENTION_LENS_CACHE``, default ``.cache/`` beside
app.py, ignored by git), named by the file's SHA-256: a later load reads that file alone. Float32,
because float16 would round the dequantized weights: patterns 1e-3 and logits 3e-2 away from
transformers' own reading of the same file (measured), where float32 matches it.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from ...core.files import atomic_write, file_digest
from ...data.lm_task import ContinueTask, PieceTokenizer
from ...network.config import SIZE_LIMITS, ConfigError, ModelConfig
from ...network.transformer import Transformer
from ..budget import check_budget, within_budget
from ..bundle import Bundle, safetensors_header
from ..problems import CheckpointError
from .gguf_file import GGUFError, GGUFFile
from .hf_decoder import EXAMPLE
from .own import expected_shapes

ARCHITECTURES = ("llama", "qwen2")
#: Part of every cache file's name: a change to the conversion makes old cache files unused.
CONVERSION = "f32-v1"
CACHE_DIR = Path(os.environ.get("ATTENTION_LENS_CACHE", Path(__file__).resolve().parents[3] / ".cache"))

#: Our parameter (in block 0) -> the GGUF tensor (in blk.0), for the attention and feed-forward.
_PER_BLOCK = {"self_attn.W_q": "attn_q", "self_attn.W_k": "attn_k", "self_attn.W_v": "attn_v",
              "self_attn.W_o": "attn_output", "mlp.W_gate": "ffn_gate", "mlp.W_in": "ffn_up",
              "mlp.W_out": "ffn_down", "norm1": "attn_norm", "norm2": "ffn_norm"}


def gguf_config(g: GGUFFile) -> tuple[ModelConfig, list[str]]:
    """Our ModelConfig for the decoder the file describes, and notes (a clamped context)."""
    figures = g.figures()
    if figures.architecture not in ARCHITECTURES:
        raise GGUFError(f"{g.path}: architecture {figures.architecture!r} is not one of "
                        f"{list(ARCHITECTURES)}")
    heads = figures.head_count
    rope_dims = g.metadata.get(f"{figures.architecture}.rope.dimension_count")
    if heads < 1 or figures.embedding_length % heads or (
            rope_dims is not None and rope_dims != figures.embedding_length // heads):
        raise GGUFError(f"{g.path}: not supported: heads of width other than embedding_length / head_count")
    notes, context = [], figures.context_length
    if context > SIZE_LIMITS["max_len"]:
        notes.append(f"context {context} clamped to {SIZE_LIMITS['max_len']} positions")
        context = SIZE_LIMITS["max_len"]
    if "tokenizer.ggml.tokens" not in g.metadata:
        raise GGUFError(f"{g.path}: the file holds no tokenizer (no tokenizer.ggml.* metadata); only a GGUF "
                        "that carries its tokenizer can be read")
    pad = g.special_token_ids().get("padding", g.special_token_ids().get("eos", 0))
    try:
        cfg = ModelConfig(
            vocab_size=figures.vocab_size, d_model=figures.embedding_length, n_heads=heads,
            n_kv_heads=figures.head_count_kv, d_ff=figures.feed_forward_length, n_enc_layers=0,
            n_dec_layers=figures.block_count, decoder_only=True, dropout=0.0, norm_first=True,
            max_len=context, pad_id=pad, scale_embeddings=False, mask_padding=False,  # as hf_decoder.py
            norm="rmsnorm", norm_eps=figures.norm_epsilon, activation="silu", gated_ffn=True,
            pos_encoding="rope", rope_theta=figures.rope_freq_base, qkv_bias="blk.0.attn_q.bias" in g.tensors,
            out_bias=False, ffn_bias=False, tie_embeddings="output.weight" not in g.tensors)
    except (ConfigError, TypeError, ValueError) as e:
        raise GGUFError(f"{g.path}: {e}") from e
    return cfg, notes


def tensor_names(cfg: ModelConfig) -> dict[str, str]:
    """Our parameter name -> the GGUF tensor name, for every parameter of the network."""
    names = {"token_embed.weight": "token_embd.weight", "decoder.final_norm.weight": "output_norm.weight",
             "unembed.weight": "output.weight"}
    expected = expected_shapes(cfg)
    for ours in expected:
        if ours.startswith("decoder.blocks."):
            i, rest = ours.removeprefix("decoder.blocks.").split(".", 1)
            module, param = rest.rsplit(".", 1)
            names[ours] = f"blk.{i}.{_PER_BLOCK[module]}.{param}"
    return {k: v for k, v in names.items() if k in expected}


def _check_tensors(g: GGUFFile, cfg: ModelConfig, names: dict[str, str]) -> None:
    """Every tensor the network needs is in the file with its shape; nothing is read."""
    expected = expected_shapes(cfg)
    missing = sorted(t for t in names.values() if t not in g.tensors)
    wrong = sorted(f"{t} {list(g.tensors[t].shape)} (expected {list(expected[o])})" for o, t in names.items()
                   if t in g.tensors and g.tensors[t].shape != expected[o])
    if missing or wrong:
        raise GGUFError(f"{g.path} does not match its own metadata: missing {missing[:5]}, "
                        f"wrong shapes {wrong[:5]}")


def _state(g: GGUFFile, cfg: ModelConfig, names: dict[str, str]) -> dict[str, torch.Tensor]:
    """Our float32 state dict, from the cache of this file when there is one, else dequantized (and
    the cache written)."""
    cached = CACHE_DIR / "gguf" / f"{file_digest(g.path)}-{CONVERSION}.safetensors"
    expected = expected_shapes(cfg)
    if cached.is_file():
        try:
            header = safetensors_header(cached)
            if header == {k: (shape, "F32") for k, shape in expected.items()}:
                return load_file(str(cached))
        except (CheckpointError, SafetensorError, OSError, ValueError):
            pass  # a cache file that is not ours to trust: convert again and replace it
    state = {}
    for ours, theirs in names.items():
        t = torch.from_numpy(g.tensor(theirs))
        if not torch.isfinite(t).all():
            raise GGUFError(f"{g.path}: tensor {theirs} holds NaN or infinite values")
        state[ours] = t
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, save(state))
    except OSError:
        pass  # a read-only cache folder only costs the next load its seconds
    return state


def load_gguf(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    """Convert the GGUF file at ``path`` into a Bundle of our own Transformer."""
    path = Path(path)
    with GGUFFile(path) as g:
        cfg, notes = gguf_config(g)
        limit = check_budget(cfg, path)
        names = tensor_names(cfg)
        _check_tensors(g, cfg, names)
        specials = g.special_token_ids()
        tokenizer = PieceTokenizer(g.tokenizer(), specials.get("bos"), specials.get("eos"), cfg.pad_id)
        if tokenizer.vocab_size > cfg.vocab_size:
            raise GGUFError(f"{path}: the tokenizer has {tokenizer.vocab_size} tokens for a vocabulary of "
                            f"{cfg.vocab_size}")
        add_bos = g.metadata.get("tokenizer.ggml.add_bos_token") is True
        template = g.chat_template
        state = _state(g, cfg, names)
        meta = {k: v for k, v in sorted(g.metadata.items())
                if k.startswith("general.") and isinstance(v, str | int | float | bool)}
    if cfg.tie_embeddings:  # one tensor under both names, as the model holds it
        state["unembed.weight"] = state["token_embed.weight"]
    model = Transformer(cfg)
    model.load_state_dict(state, strict=True)
    model.eval()
    task = ContinueTask(tokenizer, example or EXAMPLE, add_bos=add_bos, chat_template=template)
    info = {"source": "gguf", "notes": notes, "gguf": meta, "chat_template": template}
    return within_budget(Bundle(name=name or path.stem, model=model, task=task, directory=path.parent,
                                info=info), limit)


class GGUFFormat:
    """A ``.gguf`` file. It has no config.json, so no folder's config is claimed: a path ending in
    ``.gguf`` (or a folder holding one such file) is given to it directly."""

    name = "gguf"

    def claims(self, config: dict) -> bool:
        return False

    def read_config(self, path: Path) -> ModelConfig:
        with GGUFFile(path) as g:
            return gguf_config(g)[0]

    def check(self, path: Path) -> None:
        with GGUFFile(path) as g:
            cfg, _ = gguf_config(g)
            _check_tensors(g, cfg, tensor_names(cfg))

    def load(self, path: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_gguf(path, name=name, example=example)


GGUF = GGUFFormat()
