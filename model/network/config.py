"""Configuration of the network and of a training run.

Dimension legend used in shape comments across model/:
    batch  - sentences in a batch            (B)
    pos    - token positions                 (L_src for the encoder, L_tgt for the decoder)
    head   - attention heads                 (h)
    d_head - width of one head               (cfg.head_dim; by default d_head = d_model / h)
    d_model, d_ff, vocab (V)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

NORMS = ("layernorm", "rmsnorm")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
#: "relative": no table on the embeddings; each self-attention adds a learned bias per head and bucketed
#: distance to its scores (T5, model/network/positional.py's RelativePositionBias).
POS_ENCODINGS = ("sinusoidal", "learned", "rope", "relative", "none")
#: How a sinusoidal table lays out its sines and cosines: interleaved (sin, cos, sin, cos, ...: the paper,
#: this project's models) or in two halves, every sine then every cosine (Marian,
#: model/store/formats/marian.py).
SINUSOID_LAYOUTS = ("interleaved", "halves")
#: Norms on the queries and keys before RoPE: none, per head over d_head (Qwen3, Gemma 3), or over the
#: whole projection before the head split (OLMo 2).
QK_NORMS = ("none", "head", "full")
#: Where a Pre-LN block's norms sit in each residual branch: before the sublayer (GPT-2, Llama), after
#: it, before the residual add (OLMo 2), or both (Gemma 3).
BRANCH_NORMS = ("before", "after", "both")
#: Squares (heads x query_pos x key_pos) from which an unhooked pass uses the fused kernel
#: (bench/bench_long_contexts.py measures both paths). Below it the explicit steps run, so a short
#: input's shape trace shows Q K^T, the scaling, the mask and the softmax one by one.
FUSED_FROM_CELLS = 2**20


#: Upper bounds for sizes read from a config file. Far above any model this app can show, but
#: low enough that a hostile config cannot make us allocate a huge network before its weights
#: are checked (the weights' header is compared with the config before anything is built).
SIZE_LIMITS = {
    "vocab_size": 1_000_000,
    "target_vocab_size": 1_000_000,
    "d_model": 8192,
    "n_heads": 256,
    "d_ff": 65536,
    "n_enc_layers": 64,
    "n_dec_layers": 64,
    "max_len": 8192,
    "token_types": 1024,
    "head_dim": 1024,
    "relative_buckets": 1024,
    "relative_max_distance": 1_000_000,
}


class ConfigError(ValueError):
    """A configuration that cannot describe a working network."""


def _type_problems(cfg) -> list[str]:
    """Type checks for values read from JSON, where 32.0, "no" or true can stand in for 32 or False."""
    problems = []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        expected = f.type if isinstance(f.type, str) else f.type.__name__
        if expected == "int" or (expected == "int | None" and value is not None):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif expected == "bool":
            ok = isinstance(value, bool)
        elif expected == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif expected == "str":
            ok = isinstance(value, str)
        else:
            ok = True
        if not ok:
            problems.append(f"{f.name} must be {expected} (got {value!r})")
    return problems


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 8000  # shared source/target vocabulary, special tokens included
    d_model: int = 256  # width of the residual stream
    n_heads: int = 8  # query heads per attention layer
    n_kv_heads: int | None = None  # key/value heads; None = n_heads (MHA), 1 = MQA, else GQA
    # Width of one head; None = d_model // n_heads (the paper). Qwen3-0.6B: 16 heads x 128 on 1,024;
    # then Q, K, V are n_heads * head_dim wide and W_o maps that width back to d_model.
    head_dim: int | None = None
    d_ff: int = 1024  # hidden width of the position-wise feed-forward network
    n_enc_layers: int = 3  # encoder blocks
    n_dec_layers: int = 3  # decoder blocks
    dropout: float = 0.1  # applied to attention weights, sublayer outputs and embeddings in training
    # True = Pre-LN (norm inside the residual branch); False = Post-LN as in the paper
    norm_first: bool = True
    norm: str = "layernorm"  # "layernorm" or "rmsnorm"
    activation: str = "relu"  # FFN non-linearity: "relu" (paper), "gelu", "gelu_tanh" (GPT-2), "silu"
    # "sinusoidal" (paper), "learned", "rope" (rotary, on q/k), "relative" (a bias on the scores) or "none"
    pos_encoding: str = "sinusoidal"
    max_len: int = 64  # longest sequence the model accepts, specials included
    tie_embeddings: bool = True  # one matrix for source, target embeddings and the output projection
    pad_id: int = 0  # token id that padding masks hide
    norm_eps: float = 1e-5  # epsilon of the normalisation layers
    # Faults on purpose (the "pitfall" models); the defaults are the correct network, so a config.json
    # written before these fields existed loads unchanged.
    scale_scores: bool = True  # divide attention scores by sqrt(d_head); False = raw Q K^T into the softmax
    residual: bool = True  # x + sublayer(x); False = each sublayer's output replaces the stream (no skip)
    # False = the padding fault: no attention hides padding keys (training, evaluation and decoding
    # alike), and training counts padding targets in the loss.
    mask_padding: bool = True
    # False = the "cheating" decoder: its self-attention has no causal mask while the model is in
    # training mode (model.train()), so position i reads the very token it must predict. In eval mode
    # (inference, the shipped model) the causal mask is back, as greedy decoding never has the future.
    causal_in_training: bool = True
    # Options that pretrained BERT-style encoders need (model/store/formats/bert.py converts them); the
    # defaults are this project's own models, so older config.json files load unchanged.
    scale_embeddings: bool = True  # token embeddings * sqrt(d_model) (the paper); BERT does not scale
    embed_norm: bool = False  # a norm (cfg.norm, cfg.norm_eps) on the summed embeddings, before block 0
    # token-type ("segment") embeddings in the table; > 0 adds type 0's vector at every position (one
    # sentence per input); 0 = no such table
    token_types: int = 0
    # No decoder and no output projection: forward(src) returns the encoder output [batch, pos, d_model]
    # and the task only encodes. Needs n_dec_layers = 0 (a decoder with 0 blocks is still a decoder).
    encoder_only: bool = False
    # Options that pretrained decoder-only LMs need (model/store/formats/hf_decoder.py converts GPT-2,
    # Llama, Qwen2, Mistral); the defaults are this project's own models.
    # No encoder and no cross-attention: forward(ids) runs the decoder's causal self-attention over
    # ids [batch, pos] and returns logits [batch, pos, vocab]. Needs n_enc_layers = 0.
    decoder_only: bool = False
    # Gated feed-forward (SwiGLU with activation "silu"): W_out(act(W_gate(x)) * W_in(x)).
    gated_ffn: bool = False
    rope_theta: float = 10000.0  # RoPE base: pair i turns by pos * rope_theta^(-2i/d_head)
    qkv_bias: bool = True  # biases on the query/key/value projections (Llama: none; Qwen2: these only)
    out_bias: bool = True  # bias on the attention output projection W_o
    ffn_bias: bool = True  # biases on the feed-forward projections
    # Further architectures (model/store/formats/hf_decoder.py: Qwen3, OLMo 2, GPT-NeoX / Pythia).
    qk_norm: str = "none"  # QK_NORMS: a norm (cfg.norm) on q and k before RoPE; "none" = no such norm
    branch_norm: str = "before"  # BRANCH_NORMS, Pre-LN only (norm_first)
    # True = attention and FFN in parallel, each from its own norm of the same input (GPT-NeoX, GPT-J):
    # x + attn(norm1(x)) + ffn(norm2(x)). Needs a block without cross-attention.
    parallel_residual: bool = False
    # RoPE on the first int(d_head * rotary_fraction) dims of each head only (Pythia: 0.25); the rest pass
    rotary_fraction: float = 1.0
    # Gemma 3 and Phi-3 (model/store/formats/hf_decoder.py). Local attention: on a local layer of the
    # decoder, query i sees keys i - sliding_window + 1 .. i only (itself included, as transformers'
    # sliding_window_overlay: kv > q - window); 0 = no window anywhere.
    sliding_window: int = 0
    # One letter per decoder layer: "l" local (the sliding window), "g" global (the whole causal past);
    # "" = every layer local when sliding_window > 0 (Phi-3, Mistral-style), else every layer global.
    layer_pattern: str = ""
    # scores = Q K^T / score_divisor; None = sqrt(d_head) (Gemma 3: sqrt(query_pre_attn_scalar)).
    score_divisor: float | None = None
    rope_local_theta: float | None = None  # RoPE base on local layers (Gemma 3: 10,000); None = rope_theta
    rope_linear_factor: float = 1.0  # global layers' RoPE positions divided by it (linear RoPE scaling)
    # Phi-3's longrope: the frequency of rotated pair i divided by its own factor, the short ones while
    # the whole sequence has at most rope_switch_len positions (original_max_position_embeddings), the
    # long ones beyond it; cos and sin both times rope_attention_factor. () = plain RoPE.
    rope_short_factors: tuple[float, ...] = ()
    rope_long_factors: tuple[float, ...] = ()
    rope_switch_len: int = 0
    rope_attention_factor: float = 1.0
    # token embeddings * embed_scale (with scale_embeddings); None = sqrt(d_model). Gemma computes
    # sqrt(d_model) in the embedding's dtype (bfloat16: 55.5 for sqrt(3072) = 55.43).
    embed_scale: float | None = None
    logit_softcap: float = 0.0  # > 0: logits = tanh(logits / c) * c (Gemma's final_logit_softcapping)
    # Hugging Face encoder-decoders (model/store/formats/seq2seq.py: Marian, BART, mBART).
    sinusoid_layout: str = "interleaved"  # SINUSOID_LAYOUTS: where sines and cosines sit in the table
    logits_bias: bool = False  # a bias added to every logit (final_logits_bias), on the output projection
    # False: the decoder's self-attention hides no key for being the padding id (Marian starts decoding
    # from it); its causal mask already hides a right-padded batch's padding. Source padding is still
    # hidden (cfg.mask_padding).
    mask_target_padding: bool = True
    # Relative position bias (pos_encoding "relative", T5): distances key - query sorted into this many
    # buckets (exact up to a quarter of them when bidirectional, then logarithmic up to the max distance,
    # beyond it the last bucket); the encoder's buckets are bidirectional, the decoder's causal ones see
    # only the past. One table [buckets, head] per stack, held by its first layer and read by all.
    relative_buckets: int = 32
    relative_max_distance: int = 128
    # The decoder's last hidden state times this before the output projection (T5 with a tied
    # embedding: d_model^-0.5); 1.0 = none.
    output_scale: float = 1.0
    # The decoder's own vocabulary (Marian with separate source and target vocabularies): its token table
    # and the output projection get this many rows, the encoder keeps vocab_size. None = one vocabulary
    # and one table for both sides (every model of this project, and every other family).
    target_vocab_size: int | None = None

    def __post_init__(self) -> None:
        problems = _type_problems(self)
        if problems:  # wrong types make the checks below meaningless
            raise ConfigError("invalid ModelConfig: " + "; ".join(problems))
        for name in ("vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1 (got {getattr(self, name)})")
        for name in ("n_enc_layers", "n_dec_layers", "token_types"):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0 (got {getattr(self, name)})")
        if self.head_dim is not None and self.head_dim < 1:
            problems.append(f"head_dim must be >= 1 (got {self.head_dim})")
        for name, limit in SIZE_LIMITS.items():
            if getattr(self, name) is not None and getattr(self, name) > limit:
                problems.append(f"{name} must be <= {limit} (got {getattr(self, name)})")
        if self.n_kv_heads is not None and self.n_kv_heads > SIZE_LIMITS["n_heads"]:
            problems.append(f"n_kv_heads must be <= {SIZE_LIMITS['n_heads']} (got {self.n_kv_heads})")
        if self.head_dim is None and self.n_heads >= 1 and self.d_model % self.n_heads:
            problems.append(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}) "
                "so every head gets the same width"
            )
        kv = self.kv_heads
        if kv < 1 or (self.n_heads >= 1 and self.n_heads % kv):
            problems.append(
                f"n_kv_heads ({self.n_kv_heads}) must be >= 1 and divide n_heads ({self.n_heads}): "
                "each key/value head serves a whole group of query heads"
            )
        if self.encoder_only and self.n_dec_layers:
            problems.append(f"encoder_only needs n_dec_layers = 0 (got {self.n_dec_layers})")
        if self.decoder_only and (self.n_enc_layers or self.encoder_only):
            problems.append(
                f"decoder_only needs n_enc_layers = 0 and encoder_only = False (got {self.n_enc_layers}, "
                f"{self.encoder_only})"
            )
        if not self.rope_theta > 1.0:
            problems.append(f"rope_theta must be > 1 (got {self.rope_theta})")
        even_split = self.n_heads >= 1 and self.d_model % self.n_heads == 0
        if self.pos_encoding == "rope" and (self.head_dim or even_split):
            if self.d_head % 2:
                problems.append(f"rope needs an even d_head (got {self.d_head})")
        if not 0.0 < self.rotary_fraction <= 1.0:
            problems.append(f"rotary_fraction must be above 0 and at most 1 (got {self.rotary_fraction})")
        elif self.pos_encoding == "rope" and self.rotary_fraction < 1.0 and self.rotary_dims % 2:
            problems.append(f"rope needs an even number of rotated dims (d_head {self.d_head} x "
                            f"rotary_fraction {self.rotary_fraction} = {self.rotary_dims})")
        elif self.pos_encoding == "rope" and self.rotary_fraction < 1.0 and self.rotary_dims < 2:
            problems.append(f"rotary_fraction {self.rotary_fraction} leaves no pair of d_head {self.d_head} "
                            "to rotate")
        if self.qk_norm not in QK_NORMS:
            problems.append(f"qk_norm must be one of {QK_NORMS} (got {self.qk_norm!r})")
        if self.branch_norm not in BRANCH_NORMS:
            problems.append(f"branch_norm must be one of {BRANCH_NORMS} (got {self.branch_norm!r})")
        elif self.branch_norm != "before" and not self.norm_first:
            problems.append(f"branch_norm {self.branch_norm!r} needs norm_first (a Pre-LN block)")
        if self.parallel_residual and not (self.decoder_only or self.encoder_only):
            problems.append("parallel_residual needs a block without cross-attention (decoder_only or "
                            "encoder_only)")
        if self.parallel_residual and (not self.norm_first or self.branch_norm != "before"):
            problems.append("parallel_residual needs norm_first and branch_norm 'before'")
        problems += self._window_problems()
        if not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must be in [0, 1) (got {self.dropout})")
        if self.norm not in NORMS:
            problems.append(f"norm must be one of {NORMS} (got {self.norm!r})")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation must be one of {ACTIVATIONS} (got {self.activation!r})")
        if self.sinusoid_layout not in SINUSOID_LAYOUTS:
            problems.append(f"sinusoid_layout must be one of {SINUSOID_LAYOUTS} "
                            f"(got {self.sinusoid_layout!r})")
        elif self.sinusoid_layout == "halves" and self.d_model % 2:
            problems.append(f"sinusoid_layout 'halves' needs an even d_model (got {self.d_model})")
        if self.pos_encoding not in POS_ENCODINGS:
            problems.append(f"pos_encoding must be one of {POS_ENCODINGS} (got {self.pos_encoding!r})")
        if not 0 <= self.pad_id < max(self.vocab_size, 1):
            problems.append(f"pad_id ({self.pad_id}) must be a token id below vocab_size ({self.vocab_size})")
        problems += self._target_vocab_problems()
        if problems:
            raise ConfigError("invalid ModelConfig: " + "; ".join(problems))

    def _target_vocab_problems(self) -> list[str]:
        n = self.target_vocab_size
        if n is None:
            return []
        problems = []
        if n < 1:
            problems.append(f"target_vocab_size must be >= 1 (got {n})")
        if self.encoder_only or self.decoder_only:
            problems.append("target_vocab_size needs an encoder and a decoder (a second vocabulary is the "
                            "decoder's)")
        if n >= 1 and not 0 <= self.pad_id < n:
            # the decoder's table has a row for the padding id too (Marian starts decoding from it)
            problems.append(f"pad_id ({self.pad_id}) must be a token id below target_vocab_size ({n})")
        return problems

    @property
    def output_vocab_size(self) -> int:
        """Rows of the decoder's token table and of the logits: target_vocab_size, else vocab_size."""
        return self.vocab_size if self.target_vocab_size is None else self.target_vocab_size

    def _window_problems(self) -> list[str]:
        problems = []
        if self.sliding_window < 0:
            problems.append(f"sliding_window must be >= 0 (got {self.sliding_window})")
        if self.layer_pattern:
            if set(self.layer_pattern) - set("lg"):
                problems.append(f"layer_pattern must hold only 'l' (local) and 'g' (global) (got "
                                f"{self.layer_pattern[:40]!r})")
            elif len(self.layer_pattern) != self.n_dec_layers:
                problems.append(f"layer_pattern needs one letter per decoder layer ({self.n_dec_layers}, got "
                                f"{len(self.layer_pattern)})")
            elif "l" in self.layer_pattern and self.sliding_window < 1:
                problems.append("layer_pattern names local layers but sliding_window is 0")
        for name in ("score_divisor", "embed_scale", "rope_local_theta"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                problems.append(f"{name} must be a number or None (got {value!r})")
            elif value is not None and not value > (1.0 if name == "rope_local_theta" else 0.0):
                problems.append(f"{name} must be > {1 if name == 'rope_local_theta' else 0} (got {value})")
        if not self.rope_linear_factor > 0:
            problems.append(f"rope_linear_factor must be > 0 (got {self.rope_linear_factor})")
        problems += self._longrope_problems()
        if self.pos_encoding == "relative":
            if self.relative_buckets < 4:
                problems.append(f"relative_buckets must be >= 4 (got {self.relative_buckets})")
            elif self.relative_max_distance <= self.relative_buckets // 4:
                problems.append(f"relative_max_distance ({self.relative_max_distance}) must be above a "
                                f"quarter of relative_buckets ({self.relative_buckets})")
        if not self.output_scale > 0:
            problems.append(f"output_scale must be > 0 (got {self.output_scale})")
        if not self.logit_softcap >= 0:
            problems.append(f"logit_softcap must be >= 0 (got {self.logit_softcap})")
        return problems

    def _longrope_problems(self) -> list[str]:
        """The longrope factors: both or neither, one positive number per rotated pair, a switch length."""
        for name in ("rope_short_factors", "rope_long_factors"):  # JSON gives lists: kept as tuples
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        short, long = self.rope_short_factors, self.rope_long_factors
        if not isinstance(short, tuple) or not isinstance(long, tuple):
            return ["rope_short_factors and rope_long_factors must be lists of numbers"]
        if not short and not long:
            alone = self.rope_attention_factor != 1.0
            return ["rope_attention_factor needs longrope factors"] if alone else []
        problems = []
        pairs = self.rotary_dims // 2
        for name, factors in (("rope_short_factors", short), ("rope_long_factors", long)):
            if len(factors) != pairs:
                problems.append(f"{name} must hold one factor per rotated pair ({pairs}, got {len(factors)})")
            elif not all(isinstance(x, int | float) and not isinstance(x, bool) and x > 0 and x < float("inf")
                         for x in factors):
                problems.append(f"{name} must be finite numbers > 0")
        if self.rope_switch_len < 1:
            problems.append(f"rope_switch_len must be >= 1 with longrope factors (got "
                            f"{self.rope_switch_len})")
        if not 0 < self.rope_attention_factor < float("inf"):
            problems.append(f"rope_attention_factor must be > 0 (got {self.rope_attention_factor})")
        if self.pos_encoding != "rope":
            problems.append("longrope factors need pos_encoding 'rope'")
        return problems

    @property
    def longrope(self) -> bool:
        return bool(self.rope_short_factors)

    def rope_factors_for(self, length: int) -> tuple[tuple[float, ...], str]:
        """(per-pair factors, "short" or "long") of a pass over a sequence of ``length`` positions, as
        transformers picks them: long once the sequence passes rope_switch_len. ((), "") without longrope."""
        if not self.longrope:
            return (), ""
        if length > self.rope_switch_len:
            return self.rope_long_factors, "long"
        return self.rope_short_factors, "short"

    def layer_window(self, layer: int) -> int:
        """The sliding window of decoder layer ``layer`` (0: global, the whole causal past)."""
        if not self.sliding_window:
            return 0
        local = not self.layer_pattern or self.layer_pattern[layer] == "l"
        return self.sliding_window if local else 0

    def layer_rope(self, layer: int) -> tuple[float, float]:
        """(RoPE base, linear scaling factor) of decoder layer ``layer``: a local layer's own base
        (rope_local_theta) unscaled, a global one's rope_theta and rope_linear_factor."""
        if self.layer_window(layer) and self.layer_pattern:
            return (self.rope_local_theta or self.rope_theta), 1.0
        return self.rope_theta, self.rope_linear_factor

    @property
    def kv_heads(self) -> int:
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def d_head(self) -> int:
        """Width of one head: head_dim, or d_model // n_heads when the config names none."""
        if self.head_dim is not None:
            return self.head_dim
        return self.d_model // self.n_heads if self.n_heads >= 1 else 0

    @property
    def rotary_dims(self) -> int:
        """Dims of each head that RoPE rotates: all of d_head, or its first rotary_fraction."""
        return self.d_head if self.rotary_fraction >= 1.0 else int(self.d_head * self.rotary_fraction)

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON holds it (RoPE factor tuples as lists): saved and read, it compares equal."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"a model config must be a JSON object, not {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown ModelConfig fields: {unknown}")
        return cls(**data)


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 1e-3  # peak learning rate of AdamW
    weight_decay: float = 0.01  # AdamW decoupled weight decay
    betas: tuple[float, float] = (0.9, 0.98)  # AdamW betas (paper: 0.9, 0.98)
    warmup_steps: int = 200  # linear warmup from 0 to lr
    max_steps: int = 1000  # optimiser steps in the run; the schedule decays to min_lr_ratio*lr at the end
    min_lr_ratio: float = 0.05  # floor of the cosine decay, as a fraction of lr
    batch_tokens: int = 2048  # target tokens (source + target) per batch; batches are length-bucketed
    max_batch_size: int = 256  # cap on sentences per batch
    # clip the global gradient norm to this; None = no clipping at all (clip_grad_norm_ is not called)
    grad_clip: float | None = 1.0
    label_smoothing: float = 0.1  # as in the paper
    seed: int = 0  # seeds python, torch and the batch order
    log_every: int = 10  # steps between progress callbacks
    eval_every: int = 200  # steps between validation passes (0 = never)
    save_every: int = 500  # steps between checkpoints (0 = only at the end)
    num_threads: int = 0  # torch CPU threads; 0 = leave torch's default

    def __post_init__(self) -> None:
        if self.grad_clip is not None and not self.grad_clip > 0:
            # clip_grad_norm_(max_norm=0) zeroes every gradient: a run that silently never learns.
            raise ConfigError(f"grad_clip must be > 0, or None for no clipping (got {self.grad_clip!r})")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        data = dict(data)
        if "betas" in data:
            data["betas"] = tuple(data["betas"])
        return cls(**data)
