"""A GGUF file (llama.cpp's one-file format) of a Llama, Qwen2, Qwen3, Gemma 3 or Phi-3 decoder,
converted into our own ``Transformer``: every hook, the scores, the shape trace and the interventions
then work on it as on the models we train.

The file is read by :mod:`.gguf_file`, which checks everything its header claims before anything is
allocated. Llama's query and key rows are used as stored: llama.cpp's converter already put them in
the (even, odd) pairs our RoPE rotates. The other families keep Hugging Face's rotate-half rows
(llama.cpp rotates them in halves), so they get the permutation a Hugging Face folder gets
(hf_decoder.py), QK-norm weights too. Qwen3 and Gemma 3 state their head width
(``attention.key_length``); Gemma's norms are stored with llama.cpp's +1 already added, which is what
our norm holds; Phi-3's q, k and v come fused in ``attn_qkv`` and its gate and up in ``ffn_up``, and its
longrope factors in ``rope_factors_short`` / ``rope_factors_long``.
The tokenizer (byte-level BPE, or SentencePiece for Gemma and Phi-3) and the chat template come from
the file's metadata.

Dequantizing a file takes seconds (SmolLM2-135M: ~3 s to float32), so the result is kept as float32
safetensors in the project's cache folder (``ATTENTION_LENS_CACHE``, default ``.cache/`` beside
app.py, ignored by git), named by the file's SHA-256: a later load reads that file alone. Float32,
because float16 would round the dequantized weights: patterns 1e-3 and logits 3e-2 away from
transformers' own reading of the same file (measured), where float32 matches it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from ...core.files import atomic_write, file_digest
from ...data.lm_task import ContinueTask, PieceTokenizer
from ...network.config import SIZE_LIMITS, ConfigError, ModelConfig
from ..budget import check_budget, within_budget
from ..bundle import Bundle, safetensors_header
from ..problems import CheckpointError
from .gguf_file import GGUFError, GGUFFile
from .hf_decoder import EXAMPLE, rope_permutation
from .own import all_finite, expected_shapes, model_from_state

ARCHITECTURES = ("llama", "qwen2", "qwen3", "gemma3", "phi3")
#: Families llama.cpp rotates in halves (i, i + d/2), as Hugging Face does ("NEOX" RoPE): their q and k
#: rows (and per-head QK-norm weights) get the permutation a Hugging Face folder gets. Only Llama's
#: converter reorders the rows into the adjacent pairs our RoPE rotates.
ROTATE_HALF = ("qwen2", "qwen3", "gemma3", "phi3")
#: Part of every cache file's name: a change to the conversion makes old cache files unused.
CONVERSION = "f32-v2"
CACHE_DIR = Path(os.environ.get("ATTENTION_LENS_CACHE", Path(__file__).resolve().parents[3] / ".cache"))

#: Our parameter (in block 0) -> the GGUF tensor (in blk.0), for the attention and feed-forward.
_PER_BLOCK = {"self_attn.W_q": "attn_q", "self_attn.W_k": "attn_k", "self_attn.W_v": "attn_v",
              "self_attn.W_o": "attn_output", "mlp.W_gate": "ffn_gate", "mlp.W_in": "ffn_up",
              "mlp.W_out": "ffn_down", "norm1": "attn_norm", "norm2": "ffn_norm",
              "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
              "post_norm1": "post_attention_norm", "post_norm2": "post_ffw_norm"}
#: Phi-3's fused tensors: q, k and v rows [Q | K | V] in attn_qkv; gate and up rows [gate | up] in ffn_up.
_PHI3_FUSED = {"self_attn.W_q": "attn_qkv", "self_attn.W_k": "attn_qkv", "self_attn.W_v": "attn_qkv",
               "mlp.W_gate": "ffn_up", "mlp.W_in": "ffn_up"}
#: llama.cpp scores Gemma 3 27B's queries by d_model / heads (its one model of 62 layers), the others
#: by the head width.
_GEMMA3_27B_LAYERS = 62


def _head_dim(g: GGUFFile, arch: str, d_model: int, heads: int) -> int:
    """Each head's width: ``{arch}.attention.key_length`` (Qwen3-0.6B: 128 on 1,024 / 16), else
    d_model / heads; value_length, where stated, must be the same."""
    if heads < 1:
        raise GGUFError(f"{g.path}: {arch}.attention.head_count must be at least 1 (got {heads})")
    key = g._typed(f"{arch}.attention.key_length", int, d_model // heads if d_model % heads == 0 else 0)
    value = g._typed(f"{arch}.attention.value_length", int, key)
    if key < 1 or value != key:
        raise GGUFError(f"{g.path}: not supported: heads of key width {key} and value width {value} (without "
                        "key_length, embedding_length must divide by head_count)")
    return key


def _gemma3_layers(g: GGUFFile, n_layers: int) -> str:
    """Local ("l") and global ("g") layers: ``gemma3.attention.sliding_window_pattern`` (every N-th
    layer global, or one flag per layer: true = local), else every sixth global, as llama.cpp does."""
    pattern = g.metadata.get("gemma3.attention.sliding_window_pattern", 6)
    if isinstance(pattern, list):
        if len(pattern) != n_layers or not all(isinstance(x, bool) for x in pattern):
            raise GGUFError(f"{g.path}: gemma3.attention.sliding_window_pattern must hold one flag per layer")
        return "".join("l" if x else "g" for x in pattern)
    if not isinstance(pattern, int) or isinstance(pattern, bool) or pattern < 1:
        raise GGUFError(f"{g.path}: gemma3.attention.sliding_window_pattern is {pattern!r}, not a count >= 1")
    return "".join("g" if (i + 1) % pattern == 0 else "l" for i in range(n_layers))


def _family_style(g: GGUFFile, arch: str, d_model: int, heads: int, head_dim: int, n_layers: int) -> dict:
    """What Qwen3, Gemma 3 and Phi-3 add to Llama's style, from the metadata."""
    if arch == "qwen3":
        return dict(qk_norm="head")
    if arch == "gemma3":
        window = g._typed("gemma3.attention.sliding_window", int)
        scaling = g.metadata.get("gemma3.rope.scaling.type", "none")
        if scaling not in ("none", "linear"):
            raise GGUFError(f"{g.path}: not supported: RoPE scaling {str(scaling)[:40]!r} (only linear)")
        factor = g._typed("gemma3.rope.scaling.factor", float, 1.0) if scaling == "linear" else 1.0
        cap = g._typed("gemma3.final_logit_softcapping", float, 0.0)
        divisor = d_model / heads if n_layers == _GEMMA3_27B_LAYERS else head_dim
        if window < 1 or not factor > 0 or cap < 0:
            raise GGUFError(f"{g.path}: gemma3's sliding_window ({window}), RoPE factor ({factor}) or "
                            f"final_logit_softcapping ({cap}) is out of range")
        return dict(activation="gelu_tanh", qk_norm="head", branch_norm="both", score_divisor=divisor ** 0.5,
                    sliding_window=window, layer_pattern=_gemma3_layers(g, n_layers),
                    rope_local_theta=10_000.0, rope_linear_factor=factor, scale_embeddings=True,
                    embed_scale=float(d_model) ** 0.5, logit_softcap=cap)
    if arch == "phi3":
        window = g._typed("phi3.attention.sliding_window", int, 0)
        rope_dims = g._typed("phi3.rope.dimension_count", int, head_dim)
        if window < 0 or not 0 < rope_dims <= head_dim or rope_dims % 2:
            raise GGUFError(f"{g.path}: phi3's sliding_window ({window}) or rope.dimension_count "
                            f"({rope_dims}) is out of range")
        return dict(sliding_window=window, rotary_fraction=rope_dims / head_dim, **_longrope(g, rope_dims))
    return {}


_LONGROPE_TENSORS = ("rope_factors_short.weight", "rope_factors_long.weight")


def _longrope(g: GGUFFile, rope_dims: int) -> dict:
    """Phi-3's longrope as llama.cpp's converter stores it: the short and long factors as two tensors of
    one value per rotated pair, ``phi3.rope.scaling.original_context_length`` (where the factors switch)
    and ``.attn_factor`` (else sqrt(1 + ln(context / original) / ln(original)), as transformers derives
    it). The factors switch by the sequence's length, as transformers does (llama.cpp picks them once,
    by the context size it runs with). {} for plain RoPE."""
    present = [n for n in _LONGROPE_TENSORS if n in g.tensors]
    if not present:
        return {}
    if len(present) == 1:
        raise GGUFError(f"{g.path}: Phi-3's longrope needs both rope_factors_short and rope_factors_long "
                        f"(only {present[0]})")
    factors = []
    for name in _LONGROPE_TENSORS:
        if g.tensors[name].shape != (rope_dims // 2,):  # checked before anything is read
            raise GGUFError(f"{g.path}: {name} has shape {list(g.tensors[name].shape)}, not one factor per "
                            f"rotated pair [{rope_dims // 2}]")
        values = g.tensor(name)
        if not (values > 0).all() or not np.isfinite(values).all():
            raise GGUFError(f"{g.path}: {name} must hold finite factors > 0")
        factors.append(tuple(float(x) for x in values))
    original = g._typed("phi3.rope.scaling.original_context_length", int)
    context = g._typed("phi3.context_length", int)
    if original < 2:
        raise GGUFError(f"{g.path}: phi3.rope.scaling.original_context_length must be >= 2 (got {original})")
    scale = context / original
    derived = 1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(original))
    attention = g._typed("phi3.rope.scaling.attn_factor", float, derived)
    if not 0 < attention < float("inf"):
        raise GGUFError(f"{g.path}: phi3.rope.scaling.attn_factor must be > 0 (got {attention})")
    return dict(rope_short_factors=factors[0], rope_long_factors=factors[1], rope_switch_len=original,
                rope_attention_factor=attention)


def gguf_config(g: GGUFFile) -> tuple[ModelConfig, list[str]]:
    """Our ModelConfig for the decoder the file describes, and notes (a clamped context)."""
    figures = g.figures()
    arch = figures.architecture
    if arch not in ARCHITECTURES:
        raise GGUFError(f"{g.path}: architecture {arch!r} is not one of {list(ARCHITECTURES)}")
    heads, d_model = figures.head_count, figures.embedding_length
    head_dim = _head_dim(g, arch, d_model, heads)
    rope_dims = g.metadata.get(f"{arch}.rope.dimension_count")
    if arch != "phi3" and rope_dims is not None and rope_dims != head_dim:
        raise GGUFError(f"{g.path}: not supported: RoPE on {rope_dims} of each head's {head_dim} dimensions")
    notes, context = [], figures.context_length
    if context > SIZE_LIMITS["max_len"]:
        notes.append(f"context {context} clamped to {SIZE_LIMITS['max_len']} positions")
        context = SIZE_LIMITS["max_len"]
    if "tokenizer.ggml.tokens" not in g.metadata:
        raise GGUFError(f"{g.path}: the file holds no tokenizer (no tokenizer.ggml.* metadata); only a GGUF "
                        "that carries its tokenizer can be read")
    pad = g.special_token_ids().get("padding", g.special_token_ids().get("eos", 0))
    style = dict(norm="rmsnorm", norm_eps=figures.norm_epsilon, activation="silu", gated_ffn=True,
                 pos_encoding="rope", rope_theta=figures.rope_freq_base,
                 qkv_bias="blk.0.attn_q.bias" in g.tensors,
                 out_bias=False, ffn_bias=False, tie_embeddings="output.weight" not in g.tensors,
                 scale_embeddings=False)
    style.update(_family_style(g, arch, d_model, heads, head_dim, figures.block_count))
    sizes = dict(head_dim=head_dim) if heads * head_dim != d_model else {}
    try:
        cfg = ModelConfig(
            vocab_size=figures.vocab_size, d_model=d_model, n_heads=heads,
            n_kv_heads=figures.head_count_kv, d_ff=figures.feed_forward_length, n_enc_layers=0,
            n_dec_layers=figures.block_count, decoder_only=True, dropout=0.0, norm_first=True,
            max_len=context, pad_id=pad, mask_padding=False, **sizes, **style)  # as hf_decoder.py
    except (ConfigError, TypeError, ValueError) as e:
        raise GGUFError(f"{g.path}: {e}") from e
    return cfg, notes


def tensor_names(cfg: ModelConfig, arch: str = "llama") -> dict[str, str]:
    """Our parameter name -> the GGUF tensor name, for every parameter of the network (Phi-3: several
    of ours read parts of one fused tensor)."""
    names = {"token_embed.weight": "token_embd.weight", "decoder.final_norm.weight": "output_norm.weight",
             "unembed.weight": "output.weight"}
    per_block = {**_PER_BLOCK, **_PHI3_FUSED} if arch == "phi3" else _PER_BLOCK
    expected = expected_shapes(cfg)
    for ours in expected:
        if ours.startswith("decoder.blocks."):
            i, rest = ours.removeprefix("decoder.blocks.").split(".", 1)
            module, param = rest.rsplit(".", 1)
            names[ours] = f"blk.{i}.{per_block[module]}.{param}"
    return {k: v for k, v in names.items() if k in expected}


def _stored_shapes(cfg: ModelConfig, names: dict[str, str], fused: bool) -> dict[str, tuple[int, ...]]:
    """GGUF tensor name -> the shape it must have (a fused tensor: all its parts' rows)."""
    expected = expected_shapes(cfg)
    stored: dict[str, tuple[int, ...]] = {}
    for ours, theirs in names.items():
        shape = expected[ours]
        if theirs.endswith(".attn_qkv.weight"):
            shape = (cfg.d_head * (cfg.n_heads + 2 * cfg.kv_heads), shape[1])
        elif fused and ".ffn_up." in theirs:
            shape = (2 * shape[0], shape[1])
        stored[theirs] = shape
    return stored


def _check_tensors(g: GGUFFile, cfg: ModelConfig, names: dict[str, str], arch: str) -> None:
    """Every tensor the network needs is in the file with its shape; nothing is read."""
    stored = _stored_shapes(cfg, names, fused=arch == "phi3")
    missing = sorted(t for t in stored if t not in g.tensors)
    wrong = sorted(f"{t} {list(g.tensors[t].shape)} (expected {list(s)})" for t, s in stored.items()
                   if t in g.tensors and g.tensors[t].shape != s)
    if missing or wrong:
        raise GGUFError(f"{g.path} does not match its own metadata: missing {missing[:5]}, "
                        f"wrong shapes {wrong[:5]}")


def _part(t: torch.Tensor, ours: str, theirs: str, cfg: ModelConfig, fused: bool) -> torch.Tensor:
    """Our parameter's rows of a GGUF tensor: a slice of a fused one (Phi-3), the whole tensor else."""
    if theirs.endswith(".attn_qkv.weight"):
        q_rows, kv_rows = cfg.n_heads * cfg.d_head, cfg.kv_heads * cfg.d_head
        which = "qkv".index(ours.split(".")[-2][-1])
        start = (0, q_rows, q_rows + kv_rows)[which]
        return t[start : start + (q_rows if which == 0 else kv_rows)]
    if fused and ".ffn_up." in theirs:
        return t[: cfg.d_ff] if ours.endswith("W_gate.weight") else t[cfg.d_ff :]
    return t


def _state(g: GGUFFile, cfg: ModelConfig, names: dict[str, str], arch: str) -> dict[str, torch.Tensor]:
    """Our float32 state dict, from the cache of this file when there is one, else dequantized (and
    the cache written)."""
    cached = CACHE_DIR / "gguf" / f"{file_digest(g.path)}-{CONVERSION}.safetensors"
    expected = expected_shapes(cfg)
    if cached.is_file():
        try:
            header = safetensors_header(cached)
            if header == {k: (shape, "F32") for k, shape in expected.items()}:
                # copies the model owns (load_file's tensors are views of the file's mapping)
                return {k: v.clone() for k, v in load_file(str(cached)).items()}
        except (CheckpointError, SafetensorError, OSError, ValueError):
            pass  # a cache file that is not ours to trust: convert again and replace it
    state, read = {}, {}
    perm = rope_permutation(cfg.d_head, cfg.rotary_dims)
    fused = arch == "phi3"
    for ours, theirs in names.items():
        if theirs not in read:
            read[theirs] = torch.from_numpy(g.tensor(theirs))
            if not all_finite(read[theirs]):
                raise GGUFError(f"{g.path}: tensor {theirs} holds NaN or infinite values")
        t = _part(read[theirs], ours, theirs, cfg, fused)
        rotated = any(f".{x}." in ours for x in ("W_q", "W_k", "q_norm", "k_norm"))
        if arch in ROTATE_HALF and rotated:  # rotate-half -> pairs, head by head
            t = t.reshape(t.shape[0] // cfg.d_head, cfg.d_head, *t.shape[1:])[:, perm].reshape(t.shape)
        state[ours] = t.contiguous()
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
        arch = g.figures().architecture
        names = tensor_names(cfg, arch)
        _check_tensors(g, cfg, names, arch)
        specials = g.special_token_ids()
        tokenizer = PieceTokenizer(g.tokenizer(), specials.get("bos"), specials.get("eos"), cfg.pad_id)
        if tokenizer.vocab_size > cfg.vocab_size:
            raise GGUFError(f"{path}: the tokenizer has {tokenizer.vocab_size} tokens for a vocabulary of "
                            f"{cfg.vocab_size}")
        add_bos = g.adds_bos
        template = g.chat_template
        state = _state(g, cfg, names, arch)
        meta = {k: v for k, v in sorted(g.metadata.items())
                if k.startswith("general.") and isinstance(v, str | int | float | bool)}
    if cfg.tie_embeddings:  # one tensor under both names, as the model holds it
        state["unembed.weight"] = state["token_embed.weight"]
    model = model_from_state(cfg, state)
    task = ContinueTask(tokenizer, example or EXAMPLE, add_bos=add_bos, chat_template=template)
    info = {"source": "gguf", "notes": notes, "gguf": meta, "chat_template": template}
    return within_budget(Bundle(name=name or path.stem, model=model, task=task, directory=path.parent,
                                info=info), limit)


class GGUFFormat:
    """A ``.gguf`` file. It has no config.json, so no folder's config is claimed: a path ending in
    ``.gguf`` (or a folder holding one such file) is given to it directly."""

    name = "gguf"
    what = ("GGUF language model", "GGUF 语言模型")
    task = "continue"
    example = EXAMPLE

    def claims(self, config: dict) -> bool:
        return False

    def read_config(self, path: Path) -> ModelConfig:
        with GGUFFile(path) as g:
            return gguf_config(g)[0]

    def check(self, path: Path) -> None:
        with GGUFFile(path) as g:
            cfg, _ = gguf_config(g)
            arch = g.figures().architecture
            _check_tensors(g, cfg, tensor_names(cfg, arch), arch)

    def load(self, path: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_gguf(path, name=name, example=example)


GGUF = GGUFFormat()
