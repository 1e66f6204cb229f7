"""Hugging Face decoder-only language models (``model_type`` gpt2, llama, qwen2, mistral, qwen3, olmo2,
gpt_neox, gemma3_text, phi3), converted into our own ``Transformer`` (``decoder_only``), so every hook,
the raw and masked scores, the shape trace and the interventions work on them unchanged.

Only config.json, model.safetensors (never pickles) and tokenizer.json are read; every tensor's
name, shape and dtype is checked from the safetensors header before anything is allocated.

Two layouts differ from ours. GPT-2 stores its projections as ``Conv1D`` ([in, out], transposed)
with q, k and v in one ``c_attn``. Llama-style models rotate (i, i + d_head/2) pairs ("rotate
half") where our ``apply_rope`` rotates (2i, 2i+1) pairs: their q and k rows are permuted per head
(:func:`rope_permutation`), which leaves every score q . k, and so every pattern, unchanged.
QK-norm weights (Qwen3, OLMo 2) are permuted alike. GPT-NeoX fuses q, k and v in one
``query_key_value`` laid out per head ([head, (q, k, v), d_head] rows) and rotates only the first
``rotary_pct`` of each head's dims: the permutation applies within that slice. Phi-3 fuses q, k and
v in one ``qkv_proj`` laid out [Q | K | V] (whole projections, not per head) and gate and up in one
``gate_up_proj`` ([gate | up]). Gemma's RMSNorms scale by (1 + weight): ours hold 1 + their weight.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from ...data.lm_task import ContinueTask, PieceTokenizer
from ...network.config import SIZE_LIMITS, ConfigError, ModelConfig
from ..budget import check_budget, within_budget
from ..bundle import FLOAT_DTYPES, MAX_JSON_BYTES, Bundle, read_json, safetensors_header
from ..problems import CheckpointError
from .own import all_finite, expected_shapes, model_from_state

MODEL_TYPES = ("gpt2", "llama", "qwen2", "mistral", "qwen3", "olmo2", "gpt_neox", "gemma3_text", "phi3")
#: Llama's layout of names, with extras: QK-norm (qwen3: per head, olmo2: whole projections).
LLAMA_LIKE = ("llama", "qwen2", "mistral", "qwen3", "olmo2", "gemma3_text", "phi3")
#: The prompt a decoder-only model of the user's starts with (their config.json holds none).
EXAMPLE = "The capital of France is"


class DecoderFormatError(CheckpointError):
    """A decoder-only folder we cannot convert; the message names the file and why."""


def _int(hf: dict, key: str, default=None):
    value = hf.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _rope_theta(hf: dict, where: Path, allowed: tuple[str, ...] = ("default",)) -> float:
    """RoPE base from config.json: ``rope_theta``, or (newer transformers) ``rope_parameters``;
    ``allowed``: the RoPE types read (Phi-3 adds longrope, read by :func:`_longrope`)."""
    found = {key: hf[key] for key in ("rope_parameters", "rope_scaling") if hf.get(key)}
    for key, value in found.items():
        if not isinstance(value, dict):
            raise DecoderFormatError(f"{where}: {key} must be an object")
        # Both are read: a default rope_parameters beside a yarn rope_scaling was loaded as plain RoPE.
        kind = value.get("rope_type", value.get("type", "default"))
        if kind not in allowed:
            only = "plain RoPE" + (" or longrope" if "longrope" in allowed else "")
            raise DecoderFormatError(f"{where}: not supported: RoPE scaling {str(kind)[:40]!r} in {key} "
                                     f"(only {only})")
    params = found.get("rope_parameters") or found.get("rope_scaling") or {}
    theta = params.get("rope_theta", hf.get("rope_theta", hf.get("rotary_emb_base", 10000.0)))
    return float(theta) if isinstance(theta, int | float) and not isinstance(theta, bool) else 10000.0


def _rotary_fraction(hf: dict, where: Path) -> float:
    """GPT-NeoX's share of each head's dims that RoPE rotates: ``rotary_pct`` (Pythia's config.json)
    or ``partial_rotary_factor`` (newer transformers, in rope_parameters); their default 0.25."""
    params = hf.get("rope_parameters") if isinstance(hf.get("rope_parameters"), dict) else {}
    value = params.get("partial_rotary_factor", hf.get("rotary_pct", hf.get("partial_rotary_factor", 0.25)))
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise DecoderFormatError(f"{where}: rotary_pct must be a number (got {str(value)[:40]!r})")
    return float(value)


_NEOX_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
                     "relu": "relu"}


def _neox_config(hf: dict, where: Path) -> tuple[dict, dict, int]:
    """(sizes, style, context) of a GPT-NeoX / Pythia config.json."""
    d_model, heads = hf["hidden_size"], hf["num_attention_heads"]
    act = hf.get("hidden_act", "gelu")
    if act not in _NEOX_ACTIVATIONS:
        raise DecoderFormatError(f"{where}: not supported: hidden_act {str(act)[:40]!r}")
    sizes = dict(d_model=d_model, n_heads=heads, n_kv_heads=None, d_ff=hf["intermediate_size"],
                 n_dec_layers=hf["num_hidden_layers"])
    bias = hf.get("attention_bias", True) is not False
    style = dict(norm="layernorm", norm_eps=float(hf.get("layer_norm_eps", 1e-5)),
                 activation=_NEOX_ACTIVATIONS[act], pos_encoding="rope", rope_theta=_rope_theta(hf, where),
                 rotary_fraction=_rotary_fraction(hf, where), qkv_bias=bias, out_bias=bias, ffn_bias=True,
                 parallel_residual=hf.get("use_parallel_residual", True) is not False,
                 tie_embeddings=bool(hf.get("tie_word_embeddings", False)))
    return sizes, style, _int(hf, "max_position_embeddings", 2048)


_GEMMA_ACTIVATIONS = {"gelu_pytorch_tanh": "gelu_tanh", "gelu_new": "gelu_tanh", "gelu": "gelu"}
_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _number(hf: dict, key: str, where: Path, default=None):
    value = hf.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise DecoderFormatError(f"{where}: {key} must be a number (got {str(value)[:40]!r})")
    return value


def _gemma_layers(hf: dict, n_layers, where: Path) -> str:
    """Gemma 3's local ("l") and global ("g") layers: ``layer_types``, or (older configs)
    ``sliding_window_pattern``: every pattern-th layer global."""
    types = hf.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != n_layers:
            raise DecoderFormatError(f"{where}: layer_types must list one type per layer ({n_layers})")
        letters = {"sliding_attention": "l", "full_attention": "g"}
        bad = [t for t in types if t not in letters]
        if bad:
            raise DecoderFormatError(f"{where}: not supported: layer type {str(bad[0])[:40]!r} (only "
                                     "sliding_attention and full_attention)")
        return "".join(letters[t] for t in types)
    every = hf.get("sliding_window_pattern", hf.get("_sliding_window_pattern", 6))
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise DecoderFormatError(f"{where}: sliding_window_pattern must be an integer >= 1 (got {every!r})")
    return "".join("g" if (i + 1) % every == 0 else "l" for i in range(n_layers))


def _gemma_rope(hf: dict, where: Path) -> tuple[float, float, float]:
    """(global base, local base, global linear factor) of a Gemma 3 config.json: transformers 5's
    ``rope_parameters`` per layer type, or ``rope_theta``, ``rope_local_base_freq`` and ``rope_scaling``."""
    params = hf.get("rope_parameters")
    if isinstance(params, dict) and ("full_attention" in params or "sliding_attention" in params):
        full, local = params.get("full_attention") or {}, params.get("sliding_attention") or {}
    else:
        full = dict(params or {}) if isinstance(params, dict) else {}
        if isinstance(hf.get("rope_scaling"), dict):
            full.update(hf["rope_scaling"])
        full.setdefault("rope_theta", hf.get("rope_theta", 1_000_000.0))
        local = {"rope_type": "default", "rope_theta": hf.get("rope_local_base_freq", 10_000.0)}
    for name, part in (("full_attention", full), ("sliding_attention", local)):
        if not isinstance(part, dict):
            raise DecoderFormatError(f"{where}: the RoPE parameters of {name} must be an object")
        kind = part.get("rope_type", part.get("type", "default"))
        allowed = ("default", "linear") if name == "full_attention" else ("default",)
        if kind not in allowed:
            raise DecoderFormatError(f"{where}: not supported: RoPE scaling {str(kind)[:40]!r} on {name} "
                                     f"layers (only {' or '.join(allowed)})")
    linear = full.get("rope_type", full.get("type")) == "linear"
    factor = _number(full, "factor", where, 1.0) if linear else 1.0
    theta, local_theta = _number(full, "rope_theta", where, 1e6), _number(local, "rope_theta", where, 1e4)
    if not factor > 0:
        raise DecoderFormatError(f"{where}: the linear RoPE factor must be > 0 (got {factor})")
    return float(theta), float(local_theta), float(factor)


def _gemma_config(hf: dict, where: Path) -> tuple[dict, dict, int, list[str]]:
    """(sizes, style, context, notes) of a Gemma 3 text config.json (``gemma3_text``)."""
    d_model, heads, n_layers = hf["hidden_size"], hf["num_attention_heads"], hf["num_hidden_layers"]
    head_dim = hf.get("head_dim", 256)
    if not isinstance(head_dim, int) or isinstance(head_dim, bool):
        raise DecoderFormatError(f"{where}: head_dim must be an integer (got {str(head_dim)[:40]!r})")
    act = hf.get("hidden_activation", hf.get("hidden_act", "gelu_pytorch_tanh"))
    if act not in _GEMMA_ACTIVATIONS:
        raise DecoderFormatError(f"{where}: not supported: hidden_activation {str(act)[:40]!r}")
    if hf.get("use_bidirectional_attention"):
        raise DecoderFormatError(f"{where}: not supported: use_bidirectional_attention (decoders are causal)")
    scalar = _number(hf, "query_pre_attn_scalar", where, 256)
    if not scalar > 0:
        raise DecoderFormatError(f"{where}: query_pre_attn_scalar must be > 0 (got {scalar})")
    window = hf.get("sliding_window", 4096)
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        got = str(window)[:40]
        raise DecoderFormatError(f"{where}: sliding_window must be an integer >= 1 (got {got!r})")
    pattern = _gemma_layers(hf, n_layers, where)
    theta, local_theta, factor = _gemma_rope(hf, where)
    cap = _number(hf, "final_logit_softcapping", where)
    if cap is not None and not cap > 0:
        raise DecoderFormatError(f"{where}: final_logit_softcapping must be > 0 or null (got {cap})")
    notes = []
    if hf.get("attn_logit_softcapping") is not None:  # read by transformers, applied by none of its paths
        notes.append("attn_logit_softcapping is not applied (transformers' Gemma 3 attention does not "
                     "either)")
    # The embedding scale sqrt(d_model) in the weights' dtype, as Gemma computes it (bfloat16: 55.5 for 3,072)
    dtype = _DTYPES.get(str(hf.get("dtype") or hf.get("torch_dtype") or "float32"), torch.float32)
    scale = float(torch.tensor(float(d_model) ** 0.5 if isinstance(d_model, int) else 1.0).to(dtype))
    bias = bool(hf.get("attention_bias"))
    sizes = dict(d_model=d_model, n_heads=heads, n_kv_heads=_int(hf, "num_key_value_heads"),
                 d_ff=hf["intermediate_size"], n_dec_layers=n_layers, head_dim=head_dim)
    style = dict(norm="rmsnorm", norm_eps=float(_number(hf, "rms_norm_eps", where, 1e-6)),
                 activation=_GEMMA_ACTIVATIONS[act], gated_ffn=True, pos_encoding="rope", rope_theta=theta,
                 rope_local_theta=local_theta, rope_linear_factor=factor, qkv_bias=bias, out_bias=bias,
                 ffn_bias=False, qk_norm="head", branch_norm="both", score_divisor=float(scalar) ** 0.5,
                 sliding_window=window, layer_pattern=pattern, scale_embeddings=True, embed_scale=scale,
                 logit_softcap=float(cap or 0.0),
                 tie_embeddings=hf.get("tie_word_embeddings", True) is not False)
    return sizes, style, _int(hf, "max_position_embeddings", 131072), notes


def _phi3_sizes(hf: dict, where: Path) -> dict:
    """Phi-3's options beyond Llama's: a sliding window on every layer (``sliding_window``, null: none)
    and partial rotary (``partial_rotary_factor``, in rope_parameters with newer transformers)."""
    window = hf.get("sliding_window")
    if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 1):
        got = str(window)[:40]
        raise DecoderFormatError(f"{where}: sliding_window must be an integer >= 1 or null (got {got!r})")
    params = hf.get("rope_parameters") if isinstance(hf.get("rope_parameters"), dict) else {}
    fraction = params.get("partial_rotary_factor", hf.get("partial_rotary_factor", 1.0))
    if not isinstance(fraction, int | float) or isinstance(fraction, bool):
        got = str(fraction)[:40]
        raise DecoderFormatError(f"{where}: partial_rotary_factor must be a number (got {got!r})")
    return dict(sliding_window=window or 0, rotary_fraction=float(fraction))


#: RoPE types Phi-3 reads as longrope ("su" and "yarn": older Phi-3 configs, renamed by transformers)
_PHI3_ROPE = ("default", "longrope", "su", "yarn")


def _factors(params: dict, key: str, pairs: int, where: Path) -> tuple[float, ...]:
    value = params.get(key)
    if not isinstance(value, list) or len(value) != pairs or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and 0 < x < float("inf") for x in value):
        got = f"{len(value)} values" if isinstance(value, list) else str(value)[:40]
        raise DecoderFormatError(f"{where}: longrope's {key} must list {pairs} numbers > 0, one per rotated "
                                 f"pair (got {got})")
    return tuple(float(x) for x in value)


def _longrope(hf: dict, where: Path, rotary_dims: int) -> dict:
    """Phi-3's longrope options (none for plain RoPE): short_factor and long_factor, one per rotated
    pair; the switch at original_max_position_embeddings; the attention factor, given or
    sqrt(1 + ln(factor) / ln(original)) with factor max_position_embeddings / original (1 when <= 1)."""
    params = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    if not isinstance(params, dict) or params.get("rope_type", params.get("type", "default")) == "default":
        return {}
    pairs = rotary_dims // 2
    short = _factors(params, "short_factor", pairs, where)
    long = _factors(params, "long_factor", pairs, where)
    original = params.get("original_max_position_embeddings", hf.get("original_max_position_embeddings"))
    if not isinstance(original, int) or isinstance(original, bool) or original < 2:
        raise DecoderFormatError(f"{where}: longrope needs original_max_position_embeddings, an integer >= 2 "
                                 f"(got {str(original)[:40]!r})")
    factor = _number(params, "factor", where)
    if factor is None:
        factor = _number(hf, "max_position_embeddings", where, original) / original
    scale = _number(params, "attention_factor", where)
    if scale is None:
        scale = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    if not 0 < scale < float("inf"):
        raise DecoderFormatError(f"{where}: longrope's attention_factor must be > 0 (got {scale})")
    return dict(rope_short_factors=short, rope_long_factors=long, rope_switch_len=original,
                rope_attention_factor=float(scale))


def decoder_config(hf: dict, where: Path) -> tuple[ModelConfig, list[str]]:
    """Our ModelConfig for a decoder-only config.json, and notes (a clamped context, ...)."""
    kind = hf.get("model_type")
    if kind not in MODEL_TYPES:
        raise DecoderFormatError(f"{where}: model_type {kind!r} is not one of {list(MODEL_TYPES)}")
    notes: list[str] = []
    gpt2 = kind == "gpt2"
    try:
        if gpt2:
            d_model = hf["n_embd"]
            sizes = dict(d_model=d_model, n_heads=hf["n_head"], n_kv_heads=None,
                         d_ff=_int(hf, "n_inner") or 4 * d_model, n_dec_layers=hf["n_layer"])
            context = _int(hf, "n_positions", 1024)
            act = hf.get("activation_function", "gelu_new")
            if act not in ("gelu_new", "gelu_pytorch_tanh"):
                raise DecoderFormatError(f"{where}: not supported: activation_function {act!r}")
            if not hf.get("scale_attn_weights", True) or hf.get("scale_attn_by_inverse_layer_idx"):
                raise DecoderFormatError(f"{where}: not supported: GPT-2 attention scaling options")
        elif kind == "gpt_neox":
            sizes, neox_style, context = _neox_config(hf, where)
        elif kind == "gemma3_text":
            sizes, gemma_style, context, gemma_notes = _gemma_config(hf, where)
            notes += gemma_notes
        else:
            d_model, heads = hf["hidden_size"], hf["num_attention_heads"]
            head_dim = hf.get("head_dim")
            if head_dim is not None and (not isinstance(head_dim, int) or isinstance(head_dim, bool)):
                got = str(head_dim)[:40]
                raise DecoderFormatError(f"{where}: head_dim must be an integer (got {got!r})")
            act = hf.get("hidden_act", "silu")
            if act != "silu":
                raise DecoderFormatError(f"{where}: not supported: hidden_act {str(act)[:40]!r}")
            sizes = dict(d_model=d_model, n_heads=heads, n_kv_heads=_int(hf, "num_key_value_heads"),
                         d_ff=hf["intermediate_size"], n_dec_layers=hf["num_hidden_layers"])
            # A head width of its own (Qwen3-0.6B: 16 x 128 on 1,024) only where it differs, so the
            # configs of the models read before keep head_dim None.
            if head_dim is not None and (not isinstance(heads, int) or head_dim * heads != d_model):
                sizes["head_dim"] = head_dim
            context = _int(hf, "max_position_embeddings", 2048)
            window = _int(hf, "sliding_window")
            if kind == "phi3":
                sizes.update(_phi3_sizes(hf, where))
            elif window and (kind == "mistral" or hf.get("use_sliding_window")) and window < context:
                notes.append(f"sliding window {window}: sequences are limited to it")
                context = window
            if kind in ("llama", "qwen3", "olmo2") and hf.get("mlp_bias"):
                raise DecoderFormatError(f"{where}: not supported: mlp_bias")
            if kind in ("llama", "olmo2", "phi3") and hf.get("attention_bias"):
                raise DecoderFormatError(f"{where}: not supported: attention_bias")
        if context > SIZE_LIMITS["max_len"]:
            notes.append(f"context {context} clamped to {SIZE_LIMITS['max_len']} positions")
            context = SIZE_LIMITS["max_len"]
        pad = _int(hf, "pad_token_id", _int(hf, "eos_token_id", 0))
        # Their padding id is often the end-of-text id, which a chat prompt holds between turns: no
        # key is masked by its id (a batch is right-padded, and causal attention never sees past it).
        common = dict(vocab_size=hf["vocab_size"], n_enc_layers=0, decoder_only=True, dropout=0.0,
                      norm_first=True, max_len=context, pad_id=pad, scale_embeddings=False,
                      mask_padding=False)
        if gpt2:
            style = dict(norm="layernorm", norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),
                         activation="gelu_tanh", pos_encoding="learned", tie_embeddings=True)
        elif kind == "gpt_neox":
            style = neox_style
        elif kind == "gemma3_text":
            style = gemma_style
            common.pop("scale_embeddings")
        else:
            qkv = kind == "qwen2" or bool(hf.get("attention_bias"))
            out = kind == "qwen3" and bool(hf.get("attention_bias"))  # Qwen3's bias covers o_proj too
            theta = _rope_theta(hf, where, _PHI3_ROPE if kind == "phi3" else ("default",))
            style = dict(norm="rmsnorm", norm_eps=float(hf.get("rms_norm_eps", 1e-6)), activation="silu",
                         gated_ffn=True, pos_encoding="rope", rope_theta=theta, qkv_bias=qkv,
                         out_bias=out, ffn_bias=False, tie_embeddings=bool(hf.get("tie_word_embeddings")))
            if kind == "qwen3":
                style["qk_norm"] = "head"
            elif kind == "olmo2":
                style.update(qk_norm="full", branch_norm="after")
            elif kind == "phi3":
                even = d_model // heads if isinstance(heads, int) and heads > 0 else 0
                width = sizes.get("head_dim") or even
                style.update(_longrope(hf, where, int(width * sizes["rotary_fraction"])))
        return ModelConfig(**sizes, **common, **style), notes
    except KeyError as e:
        raise DecoderFormatError(f"{where} has no {e.args[0]!r}") from e
    except (ConfigError, TypeError, ValueError) as e:
        raise DecoderFormatError(f"{where}: {e}") from e


def rope_permutation(d_head: int, rotary_dims: int | None = None) -> torch.Tensor:
    """Row order taking one head's rotate-half layout to ours: our row 2i is their i, 2i+1 is i + r/2,
    r being the rotated dims (all of d_head, or GPT-NeoX's first rotary_pct); the rest stay in place."""
    r = d_head if rotary_dims is None else rotary_dims
    half = r // 2
    pairs = torch.stack([torch.arange(half), torch.arange(half) + half], dim=1).flatten()  # [r]
    return torch.cat([pairs, torch.arange(r, d_head)])  # [d_head]


def _name_map(cfg: ModelConfig, kind: str) -> dict[str, str]:
    """Our parameter name -> their tensor name (without a "transformer." / "model." / "gpt_neox." prefix)."""
    if kind == "gpt2":
        names = {"token_embed.weight": "wte.weight", "decoder.embed.positions.table": "wpe.weight"}
        per_layer = {"norm1": "ln_1", "norm2": "ln_2", "self_attn.W_o": "attn.c_proj",
                     "mlp.W_in": "mlp.c_fc", "mlp.W_out": "mlp.c_proj"}
        final, layers, fused = "ln_f", "h", "attn.c_attn"
    elif kind == "gpt_neox":
        names = {"token_embed.weight": "embed_in.weight"}
        per_layer = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm",
                     "self_attn.W_o": "attention.dense", "mlp.W_in": "mlp.dense_h_to_4h",
                     "mlp.W_out": "mlp.dense_4h_to_h"}
        final, layers, fused = "final_layer_norm", "layers", "attention.query_key_value"
    else:
        names = {"token_embed.weight": "embed_tokens.weight"}
        if kind == "gemma3_text":  # four norms a layer: before and after attention, before and after the MLP
            per_layer_extra = {"post_norm1": "post_attention_layernorm",
                               "post_norm2": "post_feedforward_layernorm"}
        norms = ("post_attention_layernorm", "post_feedforward_layernorm") if kind == "olmo2" else (
            "input_layernorm", "post_attention_layernorm")  # OLMo 2: its norms follow the sublayers
        per_layer = {"norm1": norms[0], "norm2": norms[1],
                     "self_attn.W_q": "self_attn.q_proj", "self_attn.W_k": "self_attn.k_proj",
                     "self_attn.W_v": "self_attn.v_proj", "self_attn.W_o": "self_attn.o_proj",
                     "self_attn.q_norm": "self_attn.q_norm", "self_attn.k_norm": "self_attn.k_norm",
                     "mlp.W_gate": "mlp.gate_proj", "mlp.W_in": "mlp.up_proj", "mlp.W_out": "mlp.down_proj"}
        final, layers, fused = "norm", "layers", None
        if kind == "gemma3_text":
            per_layer.update(norm2="pre_feedforward_layernorm", **per_layer_extra)
        elif kind == "phi3":  # q, k, v in one qkv_proj, gate and up in one gate_up_proj: read in _convert
            per_layer.update({f"self_attn.W_{x}": "self_attn.qkv_proj" for x in "qkv"})
            per_layer.update({"mlp.W_gate": "mlp.gate_up_proj", "mlp.W_in": "mlp.gate_up_proj"})
    expected = expected_shapes(cfg)
    for ours in expected:
        if ours.startswith("decoder.final_norm."):
            names[ours] = f"{final}.{ours.rsplit('.', 1)[1]}"
        elif ours.startswith("decoder.blocks."):
            i, rest = ours.split(".", 3)[2:]
            module, p = rest.rsplit(".", 1)
            if module in per_layer:
                names[ours] = f"{layers}.{i}.{per_layer[module]}.{p}"
            elif fused:  # q, k, v: parts of one fused projection, read in _convert
                names[ours] = f"{layers}.{i}.{fused}.{p}"
    if "unembed.weight" in expected:
        names["unembed.weight"] = "embed_out.weight" if kind == "gpt_neox" else "lm_head.weight"
    return names


_PREFIXES = ("transformer.", "model.", "gpt_neox.")
_OUTPUT_NAMES = ("lm_head.weight", "embed_out.weight")


def _check_weights(weights: Path, cfg: ModelConfig, kind: str) -> tuple[dict, dict[str, str]]:
    """The header (names without prefix -> (shape, dtype, stored name)) after checking it against
    ``cfg``; nothing is read but the header."""
    raw = safetensors_header(weights, DecoderFormatError)
    header = {}
    for k, (shape, dtype) in raw.items():
        short = k
        if k not in _OUTPUT_NAMES:
            for prefix in _PREFIXES:
                short = short.removeprefix(prefix)
        header[short] = (shape, dtype, k)
    mapping = _name_map(cfg, kind)
    expected = expected_shapes(cfg)
    assert set(mapping) == set(expected), "the name map must cover every parameter of the network"
    want: dict[str, tuple[int, ...]] = {}
    for ours, theirs in mapping.items():
        shape = expected[ours]
        if ".attn.c_attn." in theirs or ".attention.query_key_value." in theirs:
            # GPT-2: Conv1D [in, 3 * out]; GPT-NeoX: Linear [3 * out, in] (q, k and v the same width)
            if len(shape) == 1:
                shape = (3 * shape[0],)
            else:
                shape = (shape[1], 3 * shape[0]) if kind == "gpt2" else (3 * shape[0], shape[1])
        elif theirs.endswith(".self_attn.qkv_proj.weight"):  # Phi-3: [Q | K | V] rows
            shape = (cfg.d_head * (cfg.n_heads + 2 * cfg.kv_heads), shape[1])
        elif theirs.endswith(".mlp.gate_up_proj.weight"):  # Phi-3: [gate | up] rows
            shape = (2 * shape[0], shape[1])
        elif kind == "gpt2" and len(shape) == 2 and ".blocks." in ours:
            shape = shape[::-1]  # Conv1D stores [in, out]
        want[theirs] = shape
    missing = sorted(t for t in want if t not in header)
    wrong = sorted(f"{t} {list(header[t][0])} (expected {list(s)})" for t, s in want.items()
                   if t in header and header[t][0] != s)
    ignored = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq", ".attention.bias",
               ".attention.masked_bias")
    unexpected = sorted(k for k in header if k not in want and not k.endswith(ignored)
                        and not (k in _OUTPUT_NAMES and cfg.tie_embeddings))
    if missing or wrong or unexpected:
        raise DecoderFormatError(f"{weights} does not match config.json: missing {missing[:5]}, "
                                 f"wrong shapes {wrong[:5]}, unexpected {unexpected[:5]}")
    bad = sorted(t for t in want if header[t][1] not in FLOAT_DTYPES)
    if bad:
        raise DecoderFormatError(f"{weights}: tensors {bad[:5]} are not float32/float16/bfloat16")
    return header, mapping


def _convert(f, header: dict, mapping: dict[str, str], cfg: ModelConfig, kind: str) -> dict:
    """Our state dict from the open safetensors file ``f`` (names and shapes already checked)."""
    d, dh = cfg.d_model, cfg.d_head
    perm = rope_permutation(dh, cfg.rotary_dims)
    state = {}
    for ours, theirs in mapping.items():
        mapped = f.get_tensor(header[theirs][2])  # a view of the file's mapping (safetensors maps it)
        t = mapped.to(torch.float32)
        if not all_finite(t):
            raise DecoderFormatError(f"tensor {theirs} holds NaN or infinite values")
        which = "qkv".index(ours.split(".")[-2][-1]) if ".W_q." in ours or ".W_k." in ours or (
            ".W_v." in ours) else None
        if kind == "gpt2" and ".attn.c_attn." in theirs:
            t = t[..., which * d : (which + 1) * d]
        elif ".attention.query_key_value." in theirs:
            # rows laid out [head, (q, k, v), d_head]: this projection's rows of every head
            t = t.reshape(cfg.n_heads, 3, dh, *t.shape[1:])[:, which].reshape(cfg.n_heads * dh, *t.shape[1:])
        elif theirs.endswith(".self_attn.qkv_proj.weight"):  # Phi-3: rows [Q | K | V], not per head
            q_rows, kv_rows = cfg.n_heads * dh, cfg.kv_heads * dh
            start = (0, q_rows, q_rows + kv_rows)[which]
            t = t[start : start + (q_rows if which == 0 else kv_rows)]
        elif theirs.endswith(".mlp.gate_up_proj.weight"):  # Phi-3: rows [gate | up] (Phi3MLP's chunk(2))
            t = t[: cfg.d_ff] if ours.endswith("W_gate.weight") else t[cfg.d_ff :]
        if kind == "gpt2" and t.dim() == 2 and ".blocks." in ours:
            t = t.T  # Conv1D [in, out] -> Linear [out, in]
        if t.shape[0] > cfg.max_len and ours == "decoder.embed.positions.table":
            t = t[: cfg.max_len]  # a clamped context keeps its first positions
        rotated = ".W_q." in ours or ".W_k." in ours or ".q_norm." in ours or ".k_norm." in ours
        if kind != "gpt2" and rotated:  # rotate-half -> pairs, head by head (a per-head norm: its d_head)
            heads = t.shape[0] // dh
            t = t.reshape(heads, dh, *t.shape[1:])[:, perm].reshape(t.shape)
        if kind == "gemma3_text" and "norm" in ours.rsplit(".", 2)[-2]:
            t = t + 1.0  # Gemma's RMSNorm scales by (1 + weight): ours by the weight, so it holds 1 + theirs
        t = t.contiguous()
        if t.untyped_storage().data_ptr() == mapped.untyped_storage().data_ptr():
            t = t.clone()  # the model owns its weights: a file changed or cut later changes nothing
        state[ours] = t
    if cfg.tie_embeddings:  # one tensor under both names, as the model holds it
        state["unembed.weight"] = state["token_embed.weight"]
    return state


def load_decoder_folder(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    """Convert the decoder-only folder at ``path`` into a Bundle of our own Transformer."""
    folder = Path(path)
    hf = read_json(folder / "config.json")
    if not isinstance(hf, dict):
        raise DecoderFormatError(f"{folder / 'config.json'} must hold a JSON object")
    cfg, notes = decoder_config(hf, folder / "config.json")
    limit = check_budget(cfg, folder / "config.json")
    kind = hf["model_type"]
    weights, tokenizer_file = folder / "model.safetensors", folder / "tokenizer.json"
    for needed in (weights, tokenizer_file):
        if not needed.is_file():
            raise DecoderFormatError(f"{needed} is missing")
    if tokenizer_file.stat().st_size > MAX_JSON_BYTES:
        limit = MAX_JSON_BYTES // 2**20
        raise DecoderFormatError(f"{tokenizer_file} is larger than {limit} MiB; not reading it")
    try:
        tokenizer = PieceTokenizer.load(tokenizer_file, _int(hf, "bos_token_id"), _int(hf, "eos_token_id"),
                                        cfg.pad_id)
    except (ValueError, OSError) as e:
        raise DecoderFormatError(str(e)) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise DecoderFormatError(f"{tokenizer_file} has {tokenizer.vocab_size} tokens but config.json's "
                                 f"vocab_size is {cfg.vocab_size}")
    header, mapping = _check_weights(weights, cfg, kind)
    try:
        with safe_open(str(weights), framework="pt") as f:
            state = _convert(f, header, mapping, cfg, kind)
    except DecoderFormatError as e:
        raise DecoderFormatError(f"{weights}: {e}") from e
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise DecoderFormatError(f"{weights} is not a readable safetensors file ({e})") from e
    model = model_from_state(cfg, state)
    info = {"source": f"huggingface-{hf['model_type']}", "notes": notes,
            "hf_config": {k: hf[k] for k in sorted(hf) if isinstance(hf[k], str | int | float | bool)}}
    # GPT-2 and GPT-NeoX read no BOS before the prompt (their tokenizers add none)
    task = ContinueTask(tokenizer, example or EXAMPLE, add_bos=kind not in ("gpt2", "gpt_neox"))
    bundle = Bundle(name=name or folder.name, model=model, task=task, directory=folder, info=info)
    return within_budget(bundle, limit)


class DecoderFormat:
    """A Hugging Face decoder-only folder (config.json ``model_type`` in :data:`MODEL_TYPES`)."""

    name = "hf_decoder"
    what = ("decoder-only language model", "只含解码器的语言模型")
    task = "continue"
    example = EXAMPLE

    def claims(self, config: dict) -> bool:
        model_type = config.get("model_type")
        return isinstance(model_type, str) and model_type.lower() in MODEL_TYPES

    def read_config(self, folder: Path) -> ModelConfig:
        hf = read_json(Path(folder) / "config.json")
        if not isinstance(hf, dict):
            raise DecoderFormatError(f"{Path(folder) / 'config.json'} must hold a JSON object")
        return decoder_config(hf, Path(folder) / "config.json")[0]

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        hf = read_json(folder / "config.json")
        _check_weights(folder / "model.safetensors", self.read_config(folder), hf.get("model_type"))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_decoder_folder(folder, name=name, example=example)


HF_DECODER = DecoderFormat()
