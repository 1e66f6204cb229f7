"""Hugging Face BART and mBART folders (``model_type`` "bart", "mbart"), converted into our own
encoder-decoder ``Transformer``; the layer layout and names are shared with Marian
(model/store/formats/marian.py).

BART: learned positions whose table starts 2 rows before position 0 (those rows are never read, so ours
starts at row 2), a LayerNorm on the summed embeddings (``layernorm_embedding``), Post-LN blocks, GELU,
``final_logits_bias`` on the output. mBART: the same with Pre-LN blocks and a last norm after each stack
(``layer_norm``). Tokenizers come from tokenizer.json: BART's byte-level BPE, mBART's SentencePiece with its
language codes (``en_XX``, ``zh_CN``): the source's code frames the source, the target's code is the
decoder's forced first token (model/data/seq2seq_task.py shows each layout).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch

from ...data.seq2seq_task import Frame
from ...data.tokenizers import FramedFileTokenizer
from ...network.config import ConfigError, ModelConfig
from ...network.transformer import Transformer
from ..bundle import Bundle
from .seq2seq import (
    Mapped,
    Seq2SeqFormatError,
    budget,
    check_mapped,
    decoder_start,
    json_tokenizer_file,
    read_config,
    read_mapped,
    refuse_pickles,
    seq2seq_bundle,
    tokenizer_config,
    whole,
)

MODEL_TYPES = ("bart", "mbart")
#: Rows of BART's position tables before position 0 (BartLearnedPositionalEmbedding's offset).
POSITION_OFFSET = 2
ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "swish": "silu", "silu": "silu", "gelu_new": "gelu_tanh"}
EXAMPLE = "The cat sat on the mat."
#: An mBART language code: two letters, "_", two capitals (en_XX, zh_CN).
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}_[A-Z]{2}")


def family_config(hf: dict, where: Path, **style) -> ModelConfig:
    """Our ModelConfig for the sizes every BART-family config.json names; ``style`` the family's own."""
    act = hf.get("activation_function", "gelu")
    if act not in ACTIVATIONS:
        raise Seq2SeqFormatError(f"{where}: not supported: activation_function {str(act)[:40]!r}")
    sizes = ("d_model", "encoder_attention_heads", "decoder_attention_heads", "encoder_ffn_dim",
             "decoder_ffn_dim", "encoder_layers", "decoder_layers", "vocab_size", "max_position_embeddings")
    try:
        values = {k: hf[k] for k in sizes}
    except KeyError as e:
        raise Seq2SeqFormatError(f"{where} has no {e.args[0]!r}") from e
    for key in ("heads", "ffn_dim"):
        enc, dec = values[f"encoder_{key.replace('heads', 'attention_heads')}"], \
            values[f"decoder_{key.replace('heads', 'attention_heads')}"]
        if enc != dec:
            raise Seq2SeqFormatError(f"{where}: not supported: encoder and decoder {key} differ "
                                     f"({enc}, {dec})")
    if hf.get("is_decoder"):
        raise Seq2SeqFormatError(f"{where}: not supported: is_decoder (a decoder alone)")
    d_model = values["d_model"]
    scale = bool(hf.get("scale_embedding", False))
    pad = whole(hf, "pad_token_id", where, 1)
    try:
        return ModelConfig(
            vocab_size=values["vocab_size"], d_model=d_model, n_heads=values["encoder_attention_heads"],
            d_ff=values["encoder_ffn_dim"], n_enc_layers=values["encoder_layers"],
            n_dec_layers=values["decoder_layers"], dropout=0.0, norm="layernorm", norm_eps=1e-5,
            activation=ACTIVATIONS[act], max_len=values["max_position_embeddings"], pad_id=pad,
            scale_embeddings=scale,
            embed_scale=math.sqrt(d_model) if scale and isinstance(d_model, int) else None,
            tie_embeddings=hf.get("tie_word_embeddings", True) is not False, logits_bias=True, **style)
    except (ConfigError, TypeError, ValueError) as e:
        raise Seq2SeqFormatError(f"{where}: {e}") from e


def bart_config(hf: dict, where: Path) -> ModelConfig:
    kind = hf.get("model_type")
    if kind not in MODEL_TYPES:
        raise Seq2SeqFormatError(f"{where}: model_type {kind!r} is not one of {list(MODEL_TYPES)}")
    mbart = kind == "mbart"
    if not mbart and (hf.get("normalize_before") or hf.get("add_final_layer_norm")):
        raise Seq2SeqFormatError(f"{where}: not supported: normalize_before / add_final_layer_norm in BART")
    return family_config(hf, where, norm_first=mbart, pos_encoding="learned", embed_norm=True)


_LAYER = {"self_attn.W_q": "self_attn.q_proj", "self_attn.W_k": "self_attn.k_proj",
          "self_attn.W_v": "self_attn.v_proj", "self_attn.W_o": "self_attn.out_proj",
          "norm1": "self_attn_layer_norm", "mlp.W_in": "fc1", "mlp.W_out": "fc2"}
_ENCODER_LAYER = ({k.replace("self_attn.", "attn.", 1): v for k, v in _LAYER.items()}
                  | {"norm2": "final_layer_norm"})
_DECODER_LAYER = _LAYER | {"cross_attn.W_q": "encoder_attn.q_proj", "cross_attn.W_k": "encoder_attn.k_proj",
                           "cross_attn.W_v": "encoder_attn.v_proj", "cross_attn.W_o": "encoder_attn.out_proj",
                           "norm2": "encoder_attn_layer_norm", "norm3": "final_layer_norm"}


def family_name_map(cfg: ModelConfig, position_rows: int | None) -> Mapped:
    """Our parameter name -> (their name without "model.", the shape theirs must have; None: ours) for a
    BART-family checkpoint; ``position_rows``: the rows of their learned position tables (None: no table)."""
    names: Mapped = {"token_embed.weight": ("shared.weight", None),
                     "unembed.bias": ("final_logits_bias", (1, cfg.output_vocab_size))}
    if not cfg.tie_embeddings:
        names["unembed.weight"] = ("lm_head.weight", None)
    for stack, layer, count in (("encoder", _ENCODER_LAYER, cfg.n_enc_layers),
                                ("decoder", _DECODER_LAYER, cfg.n_dec_layers)):
        if position_rows is not None:
            names[f"{stack}.embed.positions.table"] = (f"{stack}.embed_positions.weight",
                                                       (position_rows, cfg.d_model))
        for p in ("weight", "bias"):
            names[f"{stack}.embed.norm.{p}"] = (f"{stack}.layernorm_embedding.{p}", None)
            names[f"{stack}.final_norm.{p}"] = (f"{stack}.layer_norm.{p}", None)
            for i in range(count):
                for ours, theirs in layer.items():
                    names[f"{stack}.blocks.{i}.{ours}.{p}"] = (f"{stack}.layers.{i}.{theirs}.{p}", None)
    return names


def fit_tensor(ours: str, t: torch.Tensor) -> torch.Tensor:
    """Their tensor in our shape: a position table without its unread first rows, the [1, V] logits bias
    flat."""
    if ours.endswith("embed.positions.table"):
        return t[POSITION_OFFSET:]
    if ours == "unembed.bias":
        return t.reshape(-1)
    return t


def tied_copies(cfg: ModelConfig):
    """Tensors a folder may hold beside the mapped ones: the embedding's tied copies, a tied lm_head."""
    def ignored(name: str, shape: tuple) -> bool:
        if name in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            return shape == (cfg.vocab_size, cfg.d_model)
        tied = shape == (cfg.output_vocab_size, cfg.d_model)
        return name == "lm_head.weight" and cfg.tie_embeddings and tied
    return ignored


def convert_weights(folder: Path, cfg: ModelConfig, position_rows: int | None, ignored=None) -> Transformer:
    weights = refuse_pickles(folder)
    mapping = family_name_map(cfg, position_rows)
    stored = check_mapped(weights, cfg, mapping, ignored or tied_copies(cfg), prefixes=("model.",))
    return read_mapped(weights, cfg, mapping, stored, fit_tensor)


def _code_language(code: str) -> str:
    return code.split("_")[0]


def mbart_frames(tokenizer: FramedFileTokenizer, hf: dict, tok_cfg: dict, start: int | None,
                 where: Path) -> dict[str, Frame]:
    """mBART's directions from tokenizer_config.json's src_lang and tgt_lang (and the reverse), each framed by
    its language codes: MBart50's tokenizer puts the source's code first, the older MBart's after </s>."""
    codes = [tok_cfg.get(k) for k in ("src_lang", "tgt_lang")]
    if not all(isinstance(c, str) and LANGUAGE_CODE.fullmatch(c) for c in codes) or codes[0] == codes[1]:
        raise Seq2SeqFormatError(f"{where}: src_lang and tgt_lang "
                                 "(language codes such as 'en_XX') are needed "
                                 "to know the translation's direction")
    ids = {c: tokenizer.token_to_id(c) for c in codes}
    missing = [c for c, i in ids.items() if i is None]
    if missing:
        raise Seq2SeqFormatError(f"{where}: the language code {missing[0]!r} is not in tokenizer.json")
    fifty = "50" in str(tok_cfg.get("tokenizer_class", ""))
    eos = tokenizer.eos_id
    frames = {}
    for a, b in (codes, codes[::-1]):
        direction = f"{_code_language(a)}->{_code_language(b)}"
        before, after = ((ids[a],), (eos,)) if fifty else ((), (eos, ids[a]))
        prefix = (ids[b],) if start is None or start == ids[b] else (start, ids[b])
        frames[direction] = Frame(before, after, prefix)
    return frames


def load_bart_folder(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    folder = Path(path)
    hf = read_config(folder)
    where = folder / "config.json"
    cfg = bart_config(hf, where)
    limit = budget(cfg, folder)
    tokenizer_file = json_tokenizer_file(folder)
    try:
        tokenizer = FramedFileTokenizer.load(tokenizer_file)
    except (ValueError, OSError) as e:
        raise Seq2SeqFormatError(str(e)) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise Seq2SeqFormatError(f"{tokenizer_file} has {tokenizer.vocab_size} tokens but config.json's "
                                 f"vocab_size is {cfg.vocab_size}")
    mbart = hf["model_type"] == "mbart"
    start = decoder_start(hf, where, cfg.vocab_size, None if mbart else tokenizer.eos_id)
    if mbart:
        frames = mbart_frames(tokenizer, hf, tokenizer_config(folder), start, where)
    else:
        forced = whole(hf, "forced_bos_token_id", where, None, cfg.vocab_size)
        prefix = (start,) if forced is None else (start, forced)
        frames = {"": Frame((tokenizer.bos_id,), (tokenizer.eos_id,), prefix)}
    model = convert_weights(folder, cfg, cfg.max_len + POSITION_OFFSET)
    notes = ["forced_eos_token_id is not applied: decoding ends at </s> or at the length limit"] \
        if hf.get("forced_eos_token_id") is not None else []
    return seq2seq_bundle(folder, name, hf, cfg, model, tokenizer, frames, example or EXAMPLE,
                          hf["model_type"], notes, limit=limit)


class BartFormat:
    """A Hugging Face BART or mBART folder (config.json ``model_type`` in :data:`MODEL_TYPES`)."""

    name = "bart"
    what = ("BART-family encoder–decoder", "BART 系编码器–解码器")
    task = "translation"
    example = EXAMPLE

    def claims(self, config: dict) -> bool:
        return config.get("model_type") in MODEL_TYPES

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        return bart_config(read_config(folder), folder / "config.json")

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        cfg = self.read_config(folder)
        mapping = family_name_map(cfg, cfg.max_len + POSITION_OFFSET)
        check_mapped(refuse_pickles(folder), cfg, mapping, tied_copies(cfg), prefixes=("model.",))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_bart_folder(folder, name=name, example=example)


BART = BartFormat()
