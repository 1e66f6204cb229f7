"""A model's anatomy from its config alone, for the architecture and model pages: the weights of one
attention and feed-forward layer, one block's parameters part by part with the formula each follows,
the whole model's, and how a block wires its norms and residual adds. No torch: the tests hold every
count and every module name to the loaded modules."""

from __future__ import annotations


def layer_weights(cfg) -> dict[str, object]:
    """The weight count of one attention layer and one feed-forward layer (matrices only, no biases or
    norms), with the formula each follows for this config: shared key/value heads (GQA, MQA) make K and V
    narrower, a gated feed-forward (SwiGLU, GeGLU) has three matrices instead of two."""
    d, qkv = cfg.d_model, cfg.n_heads * cfg.d_head
    kv = cfg.kv_heads * cfg.d_head
    shared = cfg.kv_heads != cfg.n_heads or qkv != d
    return {
        "attn": 2 * d * qkv + 2 * d * kv,
        "attn_formula": "2·d_model·h·d_head + 2·d_model·h_kv·d_head" if shared else "4·d_model²",
        "ffn": (3 if cfg.gated_ffn else 2) * d * cfg.d_ff,
        "ffn_formula": ("3" if cfg.gated_ffn else "2") + "·d_model·d_ff",
    }


def _norm(cfg, width: str, value: int) -> tuple[str, int]:
    """One norm over ``width``: RMSNorm a weight, LayerNorm a weight and a bias."""
    return (width, value) if cfg.norm == "rmsnorm" else (f"2·{width}", 2 * value)


def _times(n: int, formula: str) -> str:
    return formula if n == 1 else f"{n}·{formula}" if "+" not in formula else f"{n}·({formula})"


def _attention_parts(cfg) -> list[tuple[str, str, int]]:
    """(part, formula, count) of one attention module: its matrices, biases and QK-norm."""
    d, h, kv, dh = cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.d_head
    weights = layer_weights(cfg)
    parts = [("attn", weights["attn_formula"], weights["attn"])]
    bias, formula = 0, []
    if cfg.qkv_bias:
        bias += h * dh + 2 * kv * dh
        formula.append("h·d_head + 2·h_kv·d_head")
    if cfg.out_bias:
        bias += d
        formula.append("d_model")
    if bias:
        parts.append(("attn_bias", " + ".join(formula), bias))
    if cfg.qk_norm == "head":  # one norm of d_head for q and one for k, shared by the heads
        width, value = _norm(cfg, "d_head", dh)
        parts.append(("qk_norm", f"2·{width}" if "·" not in width else f"2·({width})", 2 * value))
    elif cfg.qk_norm == "full":  # over the whole projections (OLMo 2)
        width, value = _norm(cfg, "(h + h_kv)·d_head", (h + kv) * dh)
        parts.append(("qk_norm", width, value))
    return parts


def block_parameters(cfg, stack: str = "decoder") -> list[tuple[str, str, int]]:
    """(part, formula, count) of one block of ``stack`` from the config alone: attention (matrices,
    biases, QK-norm), cross-attention (an encoder–decoder's decoder), the feed-forward network and the
    block's norms (two, three with cross-attention, each doubled where a norm also follows the branch:
    Gemma 3). The tests hold the counts to the modules' own parameters."""
    d, ff = cfg.d_model, cfg.d_ff
    parts = _attention_parts(cfg)
    cross = stack == "decoder" and not cfg.decoder_only
    if cross:
        one = sum(value for _, _, value in parts)
        parts.append(("cross", " + ".join(formula for _, formula, _ in parts), one))
    weights = layer_weights(cfg)
    parts.append(("ffn", weights["ffn_formula"], weights["ffn"]))
    if cfg.ffn_bias:
        gated = 2 if cfg.gated_ffn else 1
        parts.append(("ffn_bias", f"{_times(gated, 'd_ff')} + d_model", gated * ff + d))
    n_norms = (3 if cross else 2) * (2 if cfg.norm_first and cfg.branch_norm == "both" else 1)
    width, value = _norm(cfg, "d_model", d)
    parts.append(("norms", _times(n_norms, width), n_norms * value))
    return parts


def model_parameters(cfg) -> list[tuple[str, str, int]]:
    """(part, formula, count) of the whole model from the config alone, every stack's blocks included
    (tied embedding matrices counted once): what the modules hold, the tests check."""
    d, vocab = cfg.d_model, cfg.vocab_size
    stacks = [s for s, n in (("encoder", cfg.n_enc_layers), ("decoder", cfg.n_dec_layers))
              if not (s == "encoder" and cfg.decoder_only) and not (s == "decoder" and cfg.encoder_only)]
    n_stacks = len(stacks)
    parts = [("embed", "V·d_model", vocab * d)]
    if cfg.target_vocab_size is not None:  # separate vocabularies: the decoder's own table
        parts.append(("target_embed", "V_tgt·d_model", cfg.target_vocab_size * d))
    if cfg.pos_encoding == "learned":
        parts.append(("positions", _times(n_stacks, "max_len·d_model"), n_stacks * cfg.max_len * d))
    if cfg.pos_encoding == "relative":  # T5: one [buckets, h] table per stack, in its first layer
        count = n_stacks * cfg.relative_buckets * cfg.n_heads
        parts.append(("rel_bias", _times(n_stacks, "buckets·h"), count))
    if cfg.token_types:
        parts.append(("token_types", _times(n_stacks, "types·d_model"), n_stacks * cfg.token_types * d))
    width, value = _norm(cfg, "d_model", d)
    if cfg.embed_norm:
        parts.append(("embed_norm", _times(n_stacks, width), n_stacks * value))
    for stack in stacks:
        layers = cfg.n_enc_layers if stack == "encoder" else cfg.n_dec_layers
        block = block_parameters(cfg, stack)
        per_block = sum(v for _, _, v in block)
        parts.append((stack, f"{layers} × {per_block:,}", layers * per_block))
    if cfg.norm_first:
        parts.append(("final_norm", _times(n_stacks, width), n_stacks * value))
    if not cfg.encoder_only and not cfg.tie_embeddings:
        out = "V" if cfg.target_vocab_size is None else "V_tgt"
        parts.append(("unembed", f"{out}·d_model", cfg.output_vocab_size * d))
    if not cfg.encoder_only and cfg.logits_bias:  # Marian's and BART's final_logits_bias: one per logit
        parts.append(("logits_bias", "V" if cfg.target_vocab_size is None else "V_tgt",
                      cfg.output_vocab_size))
    return parts


def block_wiring(cfg, stack: str = "decoder") -> tuple[str, list[str]]:
    """(how, code lines) of one block of ``stack``: how its norms and residual adds are wired ("pre",
    "post", "after": OLMo 2, "both": Gemma 3, "parallel": GPT-NeoX / Pythia) and the block as lines of
    pseudo-code naming its modules as the model does (norm1, post_norm1, ...; the tests check the names)."""
    attend = "SelfAttn" if stack == "encoder" else "MaskedSelfAttn"
    branches = [attend] + (["CrossAttn"] if stack == "decoder" and not cfg.decoder_only else []) + ["FFN"]
    if cfg.parallel_residual:
        return "parallel", [f"x = x + {branches[0]}(norm1(x)) + FFN(norm2(x))"]
    if not cfg.norm_first:
        how = "post"
    else:
        how = {"before": "pre", "after": "after", "both": "both"}[cfg.branch_norm]
    lines = []
    for i, branch in enumerate(branches, start=1):
        f = f"{branch}(x)" if branch != "CrossAttn" else "CrossAttn(x, memory)"
        inner = f.replace("(x", f"(norm{i}(x)", 1)
        lines.append({"pre": f"x = x + {inner}", "post": f"x = norm{i}(x + {f})",
                      "after": f"x = x + norm{i}({f})", "both": f"x = x + post_norm{i}({inner})"}[how])
    if not cfg.residual:  # the pitfall model trained without skip connections
        lines = [line.replace("x = x + ", "x = ").replace("(x + ", "(") for line in lines]
    return how, lines
