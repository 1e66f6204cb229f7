"""Hugging Face T5 and Flan-T5 folders (``model_type`` "t5", v1.0 and v1.1), converted into our own
encoder-decoder ``Transformer``.

What T5 needs beyond our own translation models is config options: no positions on the embeddings but a
relative position bias on every self-attention's scores (``pos_encoding`` "relative": learned buckets,
bidirectional in the encoder, causal in the decoder, the table held by each stack's first layer), no
1/sqrt(d_head) (``score_divisor`` 1), RMSNorm (T5's norm has no mean and no bias) before each sublayer and
after each stack, no biases anywhere, a ReLU feed-forward (v1.0) or a gated GELU one (v1.1 / Flan-T5:
``gelu_new``, gate ``wi_0``, up ``wi_1``), and heads of their own width (``d_kv``: Flan-T5-small has 6 x 64
on 512). With a tied embedding (v1.0) the output projection is the embedding and the decoder's last state
is scaled by d_model^-0.5 first; v1.1 has its own ``lm_head.weight`` and no scaling.

The tokenizer is tokenizer.json when the folder has one, else ``spiece.model`` (model/data/t5_tokens.py).
The task prefixes of ``task_specific_params`` ("translate English to German: ") are the directions: the
prefix is put before the text and cut with it, so its pieces are the source's first tokens. The decoder
starts from ``<pad>`` (``decoder_start_token_id``), which its self-attention must not hide.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...data.seq2seq_task import Frame
from ...data.t5_tokens import T5FileTokenizer, T5SpmTokenizer
from ...network.config import ConfigError, ModelConfig
from ..bundle import MAX_JSON_BYTES, Bundle
from .seq2seq import (
    Mapped,
    Seq2SeqFormatError,
    budget,
    check_mapped,
    decoder_start,
    read_config,
    read_mapped,
    refuse_pickles,
    seq2seq_bundle,
    whole,
)

MODEL_TYPES = ("t5",)
#: feed_forward_proj -> (our activation, gated)
FEED_FORWARD = {"relu": ("relu", False), "gated-gelu": ("gelu_tanh", True), "gelu": ("gelu", False),
                "gated-relu": ("relu", True), "gated-silu": ("silu", True)}
EXAMPLE = "The house is wonderful."
#: The longest input and output a T5 reads when its config.json names no ``n_positions`` (flan-t5's say 512):
#: relative positions set no limit, but a decoder that never writes </s> decodes up to here.
MAX_LEN = 512
#: "translate English to German: " -> ("English", "German")
_TRANSLATE = re.compile(r"translate (\w+) to (\w+): $")
_LANGUAGES = {"English": "en", "German": "de", "French": "fr", "Romanian": "ro", "Chinese": "zh",
              "Spanish": "es", "Italian": "it", "Japanese": "ja", "Russian": "ru"}


def t5_config(hf: dict, where: Path) -> ModelConfig:
    if hf.get("model_type") not in MODEL_TYPES:
        raise Seq2SeqFormatError(f"{where}: model_type {hf.get('model_type')!r} is not 't5'")
    proj = hf.get("feed_forward_proj", "relu")
    if proj not in FEED_FORWARD:
        raise Seq2SeqFormatError(f"{where}: not supported: feed_forward_proj {str(proj)[:40]!r}")
    if hf.get("is_decoder") or hf.get("is_encoder_decoder") is False:
        raise Seq2SeqFormatError(f"{where}: not supported: a T5 stack alone (is_decoder, is_encoder_decoder)")
    activation, gated = FEED_FORWARD[proj]
    sizes = {}
    for key, default in (("vocab_size", None), ("d_model", None), ("d_kv", None), ("d_ff", None),
                         ("num_layers", None), ("num_heads", None), ("relative_attention_num_buckets", 32),
                         ("relative_attention_max_distance", 128)):
        sizes[key] = whole(hf, key, where, default)
        if sizes[key] is None:
            raise Seq2SeqFormatError(f"{where} has no {key!r}")
    dec_layers = whole(hf, "num_decoder_layers", where, sizes["num_layers"])
    max_len = whole(hf, "n_positions", where, MAX_LEN)
    eps = hf.get("layer_norm_epsilon", 1e-6)
    tied = hf.get("tie_word_embeddings", True) is not False
    try:
        return ModelConfig(
            vocab_size=sizes["vocab_size"], d_model=sizes["d_model"], n_heads=sizes["num_heads"],
            head_dim=sizes["d_kv"], d_ff=sizes["d_ff"], n_enc_layers=sizes["num_layers"],
            n_dec_layers=dec_layers, dropout=0.0, norm_first=True, norm="rmsnorm", norm_eps=eps,
            activation=activation, gated_ffn=gated,
            pos_encoding="relative", relative_buckets=sizes["relative_attention_num_buckets"],
            relative_max_distance=sizes["relative_attention_max_distance"], max_len=max_len,
            tie_embeddings=tied, output_scale=sizes["d_model"] ** -0.5 if tied else 1.0,
            pad_id=whole(hf, "pad_token_id", where, 0), scale_embeddings=False, score_divisor=1.0,
            qkv_bias=False, out_bias=False, ffn_bias=False, mask_target_padding=False)
    except (ConfigError, TypeError, ValueError) as e:
        raise Seq2SeqFormatError(f"{where}: {e}") from e


def t5_name_map(cfg: ModelConfig) -> Mapped:
    """Our parameter name -> (their name, the shape theirs must have; None: ours)."""
    names: Mapped = {"token_embed.weight": ("shared.weight", None)}
    if not cfg.tie_embeddings:
        names["unembed.weight"] = ("lm_head.weight", None)
    ffn = {"mlp.W_gate": "DenseReluDense.wi_0", "mlp.W_in": "DenseReluDense.wi_1"} if cfg.gated_ffn else \
        {"mlp.W_in": "DenseReluDense.wi"}
    ffn["mlp.W_out"] = "DenseReluDense.wo"
    for stack, count, self_attn in (("encoder", cfg.n_enc_layers, "attn"), ("decoder", cfg.n_dec_layers,
                                                                            "self_attn")):
        names[f"{stack}.final_norm.weight"] = (f"{stack}.final_layer_norm.weight", None)
        names[f"{stack}.blocks.0.{self_attn}.rel_bias.weight"] = (
            f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight", None)
        for i in range(count):
            ours, theirs = f"{stack}.blocks.{i}", f"{stack}.block.{i}.layer"
            for w in "qkvo":
                names[f"{ours}.{self_attn}.W_{w}.weight"] = (f"{theirs}.0.SelfAttention.{w}.weight", None)
                if stack == "decoder":
                    cross = f"{theirs}.1.EncDecAttention.{w}.weight"
                    names[f"{ours}.cross_attn.W_{w}.weight"] = (cross, None)
            names[f"{ours}.norm1.weight"] = (f"{theirs}.0.layer_norm.weight", None)
            last = 2 if stack == "decoder" else 1
            if stack == "decoder":
                names[f"{ours}.norm2.weight"] = (f"{theirs}.1.layer_norm.weight", None)
            names[f"{ours}.norm{last + 1}.weight"] = (f"{theirs}.{last}.layer_norm.weight", None)
            for o, t in ffn.items():
                names[f"{ours}.{o}.weight"] = (f"{theirs}.{last}.{t}.weight", None)
    return names


def _ignored(cfg: ModelConfig):
    def ignored(name: str, shape: tuple) -> bool:
        if name in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            return shape == (cfg.vocab_size, cfg.d_model)
        return name == "lm_head.weight" and cfg.tie_embeddings and shape == (cfg.vocab_size, cfg.d_model)
    return ignored


def _tokenizer(folder: Path, cfg: ModelConfig):
    """tokenizer.json when there is one, else spiece.model."""
    json_file, spm_file = folder / "tokenizer.json", folder / "spiece.model"
    try:
        if json_file.is_file():
            if json_file.stat().st_size > MAX_JSON_BYTES:
                raise Seq2SeqFormatError(f"{json_file} is larger than {MAX_JSON_BYTES // 2**20} MiB; "
                                         "not reading it")
            tokenizer, read = T5FileTokenizer.load(json_file), json_file
        elif spm_file.is_file():
            tokenizer, read = T5SpmTokenizer.load(spm_file, cfg.vocab_size), spm_file
        else:
            raise Seq2SeqFormatError(f"{folder}: neither tokenizer.json nor spiece.model (T5's tokenizer) "
                                     "is there")
    except (ValueError, OSError) as e:
        raise Seq2SeqFormatError(str(e)[:300]) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise Seq2SeqFormatError(f"{read} has {tokenizer.vocab_size} tokens but config.json's vocab_size is "
                                 f"{cfg.vocab_size}")
    if tokenizer.pad_id != cfg.pad_id:
        raise Seq2SeqFormatError(f"{folder / 'config.json'}: pad_token_id {cfg.pad_id} is not the "
                                 f"tokenizer's <pad> {tokenizer.pad_id}")
    return tokenizer


def task_prefixes(hf: dict) -> dict[str, str]:
    """Directions from config.json's task_specific_params: "en->de" -> "translate English to German: "
    (a prefix naming languages we do not know keeps its words: "Klingon->German")."""
    params = hf.get("task_specific_params")
    found = {}
    if isinstance(params, dict):
        for key in sorted(params):
            prefix = params[key].get("prefix") if isinstance(params[key], dict) else None
            m = _TRANSLATE.fullmatch(prefix) if isinstance(prefix, str) and len(prefix) < 100 else None
            if m and str(key).startswith("translation"):
                a, b = (_LANGUAGES.get(x, x) for x in m.groups())
                found[f"{a}->{b}"] = prefix
    return found


def t5_frames(tokenizer, hf: dict, start: int) -> dict[str, Frame]:
    eos = (tokenizer.eos_id,)
    prefixes = task_prefixes(hf)
    if not prefixes:
        return {"": Frame((), eos, (start,))}
    return {d: Frame((), eos, (start,), text_prefix=p) for d, p in prefixes.items()}


def load_t5_folder(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    folder = Path(path)
    hf = read_config(folder)
    where = folder / "config.json"
    cfg = t5_config(hf, where)
    limit = budget(cfg, folder)
    tokenizer = _tokenizer(folder, cfg)
    eos = whole(hf, "eos_token_id", where, tokenizer.eos_id, cfg.vocab_size)
    if eos != tokenizer.eos_id:
        raise Seq2SeqFormatError(f"{where}: eos_token_id {eos} is not the tokenizer's </s> "
                                 f"{tokenizer.eos_id}")
    start = decoder_start(hf, where, cfg.vocab_size, cfg.pad_id)
    weights = refuse_pickles(folder)
    mapping = t5_name_map(cfg)
    stored = check_mapped(weights, cfg, mapping, _ignored(cfg))
    model = read_mapped(weights, cfg, mapping, stored)
    untied = "untied output projection (lm_head.weight), no d_model^-0.5 scaling"
    notes = [] if cfg.tie_embeddings else [untied]
    return seq2seq_bundle(folder, name, hf, cfg, model, tokenizer, t5_frames(tokenizer, hf, start),
                          example or EXAMPLE, "t5", notes, limit=limit)


class T5Format:
    """A Hugging Face T5 or Flan-T5 folder (config.json ``model_type`` "t5")."""

    name = "t5"
    what = ("T5 encoder–decoder", "T5 编码器–解码器")
    task = "translation"
    example = EXAMPLE
    # tokenizer.json or spiece.model: either will do, so none is required by name (the loader says when
    # neither is there)
    tokenizer_files = ()

    def claims(self, config: dict) -> bool:
        return config.get("model_type") in MODEL_TYPES

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        return t5_config(read_config(folder), folder / "config.json")

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        cfg = self.read_config(folder)
        check_mapped(refuse_pickles(folder), cfg, t5_name_map(cfg), _ignored(cfg))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_t5_folder(folder, name=name, example=example)


T5 = T5Format()
