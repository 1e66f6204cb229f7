"""Hugging Face BERT-style encoders (``model_type`` "bert"), converted into our own ``Transformer``.

``load_bert_folder(path)`` reads a local BERT folder (config.json, model.safetensors,
tokenizer.json) and copies its weights into our network, the way TransformerLens converts
checkpoints: every hook point, the raw and masked scores and the shape trace then work on it
unchanged, and ``transformers`` is not needed at run time. Only safetensors are read; pickle files
(.bin, .pt, ...) are refused without being opened, with a note on how to convert them.

What BERT needs beyond the paper's network is a set of config options (model/network/config.py):
no sqrt(d_model) embedding scale, a LayerNorm on the embeddings, token-type embeddings (type 0
added everywhere: one sentence per input), Post-LN with GELU and biases, learned positions, and
no decoder at all (``encoder_only``, with ``EncodeTask``, which only encodes).
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from ...data.tasks import EncodeTask
from ...data.tokenizers import WordPieceTokenizer
from ...network.config import ConfigError, ModelConfig
from ...network.transformer import Transformer
from ..budget import check_budget, within_budget
from ..bundle import FLOAT_DTYPES, MAX_JSON_BYTES, Bundle, read_json, safetensors_header
from ..problems import CheckpointError
from .own import expected_shapes


class PretrainedError(CheckpointError):
    """A BERT-style folder we cannot convert; the message names the file and what to do."""


#: Files that hold pickled weights: loading one can run arbitrary code, so they are never opened.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")

HOW_TO_CONVERT = (
    "convert it to safetensors where you trust the file, e.g. `python -c \"from transformers import "
    "AutoModel; AutoModel.from_pretrained('FOLDER').save_pretrained('OUT', safe_serialization=True)\"`, "
    "then use OUT"
)


def bert_config(hf: dict, source: Path) -> ModelConfig:
    """Our ModelConfig for a Hugging Face BERT config.json (PretrainedError if it is not one)."""
    where = source / "config.json"
    model_type = hf.get("model_type")
    if model_type != "bert":
        raise PretrainedError(
            f"{where}: unknown architecture {model_type!r} (architectures {hf.get('architectures')}); "
            "only BERT-style encoders (model_type 'bert') can be converted"
        )
    unsupported = []
    if hf.get("hidden_act", "gelu") != "gelu":
        unsupported.append(f"hidden_act {hf.get('hidden_act')!r} (only 'gelu')")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        unsupported.append(f"position_embedding_type {hf.get('position_embedding_type')!r}")
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        unsupported.append("a decoder (is_decoder / add_cross_attention)")
    if unsupported:
        raise PretrainedError(f"{where}: not supported: {'; '.join(unsupported)}")
    try:
        return ModelConfig(
            vocab_size=hf["vocab_size"],
            d_model=hf["hidden_size"],
            n_heads=hf["num_attention_heads"],
            d_ff=hf["intermediate_size"],
            n_enc_layers=hf["num_hidden_layers"],
            n_dec_layers=0,
            dropout=float(hf.get("hidden_dropout_prob", 0.1)),
            norm_first=False,
            norm="layernorm",
            activation="gelu",
            pos_encoding="learned",
            max_len=hf.get("max_position_embeddings", 512),
            tie_embeddings=False,
            pad_id=hf.get("pad_token_id", 0) or 0,
            norm_eps=float(hf.get("layer_norm_eps", 1e-12)),
            scale_embeddings=False,
            embed_norm=True,
            token_types=hf.get("type_vocab_size", 2),
            encoder_only=True,
        )
    except KeyError as e:
        raise PretrainedError(f"{where} has no {e.args[0]!r}") from e
    except (ConfigError, TypeError, ValueError) as e:
        raise PretrainedError(f"{where}: {e}") from e


def bert_name_map(n_layers: int) -> dict[str, str]:
    """Our parameter name -> the Hugging Face BertModel name holding the same tensor."""
    names = {
        "token_embed.weight": "embeddings.word_embeddings.weight",
        "encoder.embed.positions.table": "embeddings.position_embeddings.weight",
        "encoder.embed.token_types.weight": "embeddings.token_type_embeddings.weight",
        "encoder.embed.norm.weight": "embeddings.LayerNorm.weight",
        "encoder.embed.norm.bias": "embeddings.LayerNorm.bias",
    }
    per_layer = {
        "attn.W_q": "attention.self.query",
        "attn.W_k": "attention.self.key",
        "attn.W_v": "attention.self.value",
        "attn.W_o": "attention.output.dense",
        "norm1": "attention.output.LayerNorm",
        "mlp.W_in": "intermediate.dense",
        "mlp.W_out": "output.dense",
        "norm2": "output.LayerNorm",
    }
    for i in range(n_layers):
        for ours, theirs in per_layer.items():
            for p in ("weight", "bias"):
                names[f"encoder.blocks.{i}.{ours}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
    return names


#: Tensors of a BERT checkpoint that the encoder does not use: the pooler (sentence-transformers
#: mean-pools instead), the masked-LM / NSP heads and the position-id buffer.
_IGNORED_PREFIXES = ("pooler.", "cls.", "embeddings.position_ids")


def _refuse_pickles(folder: Path) -> None:
    if (folder / "model.safetensors").is_file():
        return
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise PretrainedError(
            f"{folder / pickles[0]}: pickled weights are never loaded (unpickling can run code); "
            + HOW_TO_CONVERT
        )
    raise PretrainedError(f"{folder / 'model.safetensors'} is missing")


def _check_weights(weights: Path, cfg: ModelConfig) -> tuple[str, dict[str, str]]:
    """Compare the weights' header (names, shapes, dtypes) with ``cfg``, reading no tensor; returns
    the name prefix the file uses ("bert." or "") and our name -> theirs."""
    header = safetensors_header(weights, PretrainedError)
    prefix = "bert." if any(k.startswith("bert.") for k in header) else ""
    header = {k.removeprefix(prefix): v for k, v in header.items()}
    mapping = bert_name_map(cfg.n_enc_layers)
    expected = expected_shapes(cfg)
    assert set(expected) == set(mapping), "bert_name_map must cover every parameter of the network"
    missing = sorted(theirs for theirs in mapping.values() if theirs not in header)
    wrong = sorted(
        f"{theirs} {list(header[theirs][0])} (expected {list(expected[ours])})"
        for ours, theirs in mapping.items()
        if theirs in header and header[theirs][0] != expected[ours]
    )
    known = set(mapping.values())
    unexpected = sorted(k for k in header if k not in known and not k.startswith(_IGNORED_PREFIXES))
    if missing or wrong or unexpected:
        raise PretrainedError(
            f"{weights} does not match config.json: missing {missing[:5]}, wrong shapes {wrong[:5]}, "
            f"unexpected {unexpected[:5]}"
        )
    bad_dtypes = sorted(theirs for theirs in known if header[theirs][1] not in FLOAT_DTYPES)
    if bad_dtypes:
        raise PretrainedError(f"{weights}: tensors {bad_dtypes[:5]} are not float32/float16/bfloat16")
    return prefix, mapping


def load_bert_folder(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    """Convert the BERT-style folder at ``path`` into a Bundle of our own Transformer.

    Reads config.json, tokenizer.json and model.safetensors; the weights' names and shapes are
    checked from the safetensors header before anything is allocated. Every failure is a
    PretrainedError (a CheckpointError) naming the file at fault.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise PretrainedError(f"no model folder at {folder}")
    hf = read_json(folder / "config.json")
    if not isinstance(hf, dict):
        raise PretrainedError(f"{folder / 'config.json'} must hold a JSON object")
    cfg = bert_config(hf, folder)
    limit = check_budget(cfg, folder / "config.json")
    _refuse_pickles(folder)
    tokenizer_file = folder / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise PretrainedError(f"{tokenizer_file} is missing (a WordPiece tokenizer.json is needed)")
    if tokenizer_file.stat().st_size > MAX_JSON_BYTES:
        limit = MAX_JSON_BYTES // 2**20
        raise PretrainedError(f"{tokenizer_file} is larger than {limit} MiB; not reading it")
    try:
        tokenizer = WordPieceTokenizer.load(tokenizer_file)
    except (ValueError, OSError) as e:
        raise PretrainedError(str(e)) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise PretrainedError(
            f"{tokenizer_file} has {tokenizer.vocab_size} tokens but config.json's vocab_size is "
            f"{cfg.vocab_size}"
        )

    weights = folder / "model.safetensors"
    prefix, mapping = _check_weights(weights, cfg)

    state = {}
    try:
        with safe_open(str(weights), framework="pt") as f:
            for ours, theirs in mapping.items():
                t = f.get_tensor(prefix + theirs).to(torch.float32)
                if not torch.isfinite(t).all():
                    raise PretrainedError(f"{weights}: tensor {theirs} holds NaN or infinite values")
                state[ours] = t
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise PretrainedError(f"{weights} is not a readable safetensors file ({e})") from e
    model = Transformer(cfg)
    model.load_state_dict(state, strict=True)
    model.eval()
    pooling = read_json(folder / "1_Pooling" / "config.json", default={"pooling_mode_mean_tokens": True})
    info = {
        "source": "huggingface-bert",
        "hf_config": {k: hf[k] for k in sorted(hf) if isinstance(hf[k], str | int | float | bool)},
        "pooling": {
            "mode": "mean" if pooling.get("pooling_mode_mean_tokens", True) else "other",
            # sentence-transformers models list a Normalize module; a plain BERT folder does not.
            "normalize": _lists_normalize(folder),
        },
    }
    task = EncodeTask(tokenizer, example or "", _trained_len(folder, cfg.max_len))
    bundle = Bundle(name=name or folder.name, model=model, task=task, directory=folder, info=info)
    return within_budget(bundle, limit)


def _trained_len(folder: Path, max_len: int) -> int | None:
    """sentence-transformers' max_seq_length (the length it trained on), if below ``max_len``."""
    st_config = read_json(folder / "sentence_bert_config.json", default={})
    value = st_config.get("max_seq_length") if isinstance(st_config, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < max_len:
        return value
    return None


def _lists_normalize(folder: Path) -> bool:
    modules = read_json(folder / "modules.json", default=[])
    return isinstance(modules, list) and any(
        isinstance(m, dict) and str(m.get("type", "")).endswith(".Normalize") for m in modules
    )


class BertFormat:
    """A Hugging Face BERT-style encoder folder (config.json with ``"model_type": "bert"``)."""

    name = "bert"

    def claims(self, config: dict) -> bool:
        model_type = config.get("model_type")
        return isinstance(model_type, str) and model_type.lower() == "bert"

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        hf = read_json(folder / "config.json")
        if not isinstance(hf, dict):
            raise PretrainedError(f"{folder / 'config.json'} must hold a JSON object")
        return bert_config(hf, folder)

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        _check_weights(folder / "model.safetensors", self.read_config(folder))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_bert_folder(folder, name=name, example=example)


BERT = BertFormat()
