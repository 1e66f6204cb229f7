"""Hugging Face BERT-style encoders (``model_type`` "bert", "roberta", "xlm-roberta", "distilbert"),
converted into our own ``Transformer``.

``load_bert_folder(path)`` reads a local BERT folder (config.json, model.safetensors,
tokenizer.json) and copies its weights into our network, the way TransformerLens converts
checkpoints: every hook point, the raw and masked scores and the shape trace then work on it
unchanged, and ``transformers`` is not needed at run time. Only safetensors are read; pickle files
(.bin, .pt, ...) are refused without being opened, with a note on how to convert them.

What BERT needs beyond the paper's network is a set of config options (model/network/config.py):
no sqrt(d_model) embedding scale, a LayerNorm on the embeddings, token-type embeddings (type 0
added everywhere: one sentence per input), Post-LN with GELU and biases, learned positions, and
no decoder at all (``encoder_only``, with ``EncodeTask``, which only encodes).

RoBERTa and XLM-RoBERTa are BERT with another tokenizer (byte-level BPE; SentencePiece unigram, which
reads Chinese), one token type, and positions counted from ``padding_idx + 1``: their table's first
``padding_idx + 1`` rows are never read, so ours starts at that row (and reads that many fewer
positions). DistilBERT has its own parameter names, no token types and no pooler.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from ...data.tasks import EncodeTask
from ...data.tokenizers import FramedFileTokenizer, WordPieceTokenizer
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


#: The encoder families read here (config.json's ``model_type``).
MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "distilbert")
#: The input a user's BERT-style model starts with (their config.json holds none).
EXAMPLE = "The bank raised interest rates."


def position_offset(hf: dict) -> int:
    """Rows of the position table before position 0: RoBERTa's and XLM-R's count from
    ``padding_idx + 1`` (2 with their pad id 1); BERT's and DistilBERT's from 0."""
    if hf.get("model_type") in ("roberta", "xlm-roberta"):
        pad = hf.get("pad_token_id", 1)
        return (pad if isinstance(pad, int) and not isinstance(pad, bool) else 1) + 1
    return 0


def _unsupported(hf: dict) -> list[str]:
    distil = hf.get("model_type") == "distilbert"
    unsupported = []
    activation = hf.get("activation" if distil else "hidden_act", "gelu")
    if activation != "gelu":
        unsupported.append(f"{'activation' if distil else 'hidden_act'} {activation!r} (only 'gelu')")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        unsupported.append(f"position_embedding_type {hf.get('position_embedding_type')!r}")
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        unsupported.append("a decoder (is_decoder / add_cross_attention)")
    return unsupported


def bert_config(hf: dict, source: Path) -> ModelConfig:
    """Our ModelConfig for a Hugging Face BERT-style config.json (PretrainedError if it is not one)."""
    where = source / "config.json"
    model_type = hf.get("model_type")
    if model_type not in MODEL_TYPES:
        raise PretrainedError(
            f"{where}: unknown architecture {model_type!r} (architectures {hf.get('architectures')}); "
            f"only BERT-style encoders (model_type {', '.join(repr(t) for t in MODEL_TYPES)}) "
            "can be converted"
        )
    unsupported = _unsupported(hf)
    if unsupported:
        raise PretrainedError(f"{where}: not supported: {'; '.join(unsupported)}")
    distil = model_type == "distilbert"
    keys = (("vocab_size", "dim", "n_heads", "hidden_dim", "n_layers") if distil else
            ("vocab_size", "hidden_size", "num_attention_heads", "intermediate_size", "num_hidden_layers"))
    try:
        vocab, width, heads, d_ff, layers = (hf[k] for k in keys)
        positions = hf.get("max_position_embeddings", 512)
        offset = position_offset(hf)
        if not isinstance(positions, int) or isinstance(positions, bool) or positions <= offset:
            raise PretrainedError(f"{where}: max_position_embeddings {positions!r} leaves no position after "
                                  f"the first {offset} rows")
        return ModelConfig(
            vocab_size=vocab,
            d_model=width,
            n_heads=heads,
            d_ff=d_ff,
            n_enc_layers=layers,
            n_dec_layers=0,
            dropout=float(hf.get("dropout" if distil else "hidden_dropout_prob", 0.1)),
            norm_first=False,
            norm="layernorm",
            activation="gelu",
            pos_encoding="learned",
            max_len=positions - offset,
            tie_embeddings=False,
            pad_id=hf.get("pad_token_id", 0) or 0,
            norm_eps=1e-12 if distil else float(hf.get("layer_norm_eps", 1e-12)),
            scale_embeddings=False,
            embed_norm=True,
            token_types=0 if distil else hf.get("type_vocab_size", 2),
            encoder_only=True,
        )
    except KeyError as e:
        raise PretrainedError(f"{where} has no {e.args[0]!r}") from e
    except (ConfigError, TypeError, ValueError) as e:
        raise PretrainedError(f"{where}: {e}") from e


#: Our per-layer module -> the Hugging Face one, and where the layers live, per naming scheme: BERT's
#: (RoBERTa and XLM-R use the same names) and DistilBERT's.
BERT_LAYER = {
    "attn.W_q": "attention.self.query",
    "attn.W_k": "attention.self.key",
    "attn.W_v": "attention.self.value",
    "attn.W_o": "attention.output.dense",
    "norm1": "attention.output.LayerNorm",
    "mlp.W_in": "intermediate.dense",
    "mlp.W_out": "output.dense",
    "norm2": "output.LayerNorm",
}
DISTIL_LAYER = {
    "attn.W_q": "attention.q_lin",
    "attn.W_k": "attention.k_lin",
    "attn.W_v": "attention.v_lin",
    "attn.W_o": "attention.out_lin",
    "norm1": "sa_layer_norm",
    "mlp.W_in": "ffn.lin1",
    "mlp.W_out": "ffn.lin2",
    "norm2": "output_layer_norm",
}


def bert_name_map(n_layers: int, model_type: str = "bert") -> dict[str, str]:
    """Our parameter name -> the Hugging Face name holding the same tensor (BertModel's, which RobertaModel
    and XLMRobertaModel share, or DistilBertModel's: no token types, its own layer names)."""
    distil = model_type == "distilbert"
    names = {
        "token_embed.weight": "embeddings.word_embeddings.weight",
        "encoder.embed.positions.table": "embeddings.position_embeddings.weight",
        "encoder.embed.norm.weight": "embeddings.LayerNorm.weight",
        "encoder.embed.norm.bias": "embeddings.LayerNorm.bias",
    }
    if not distil:
        names["encoder.embed.token_types.weight"] = "embeddings.token_type_embeddings.weight"
    per_layer, layers = (DISTIL_LAYER, "transformer.layer") if distil else (BERT_LAYER, "encoder.layer")
    for i in range(n_layers):
        for ours, theirs in per_layer.items():
            for p in ("weight", "bias"):
                names[f"encoder.blocks.{i}.{ours}.{p}"] = f"{layers}.{i}.{theirs}.{p}"
    return names


#: Tensors of a BERT-style checkpoint that the encoder does not use: the pooler (sentence-transformers
#: mean-pools instead), the masked-LM / NSP heads (RoBERTa's lm_head, DistilBERT's vocab_*) and the
#: position-id and token-type-id buffers.
_IGNORED_PREFIXES = ("pooler.", "cls.", "lm_head.", "vocab_transform.", "vocab_layer_norm.",
                     "vocab_projector.", "embeddings.position_ids", "embeddings.token_type_ids")
#: Names a checkpoint may put before every tensor (a model saved with its task head).
_PREFIXES = ("bert.", "roberta.", "distilbert.")


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


def _check_weights(weights: Path, cfg: ModelConfig, model_type: str = "bert",
                   offset: int = 0) -> tuple[str, dict[str, str]]:
    """Compare the weights' header (names, shapes, dtypes) with ``cfg``, reading no tensor; returns
    the name prefix the file uses ("bert.", "roberta.", ... or "") and our name -> theirs. The position
    table holds ``offset`` rows more than ``cfg`` reads."""
    header = safetensors_header(weights, PretrainedError)
    prefix = next((p for p in _PREFIXES if any(k.startswith(p) for k in header)), "")
    header = {k.removeprefix(prefix): v for k, v in header.items()}
    mapping = bert_name_map(cfg.n_enc_layers, model_type)
    expected = expected_shapes(cfg)
    assert set(expected) == set(mapping), "the name map must cover every parameter of the network"
    table = "encoder.embed.positions.table"
    expected[table] = (expected[table][0] + offset, *expected[table][1:])
    missing = sorted(theirs for theirs in mapping.values() if theirs not in header)
    wrong = sorted(
        f"{theirs} {list(header[theirs][0])} (expected {list(expected[ours])})"
        for ours, theirs in mapping.items()
        if theirs in header and tuple(header[theirs][0]) != tuple(expected[ours])
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


def _tokenizer(path: Path, model_type: str):
    """BERT's and DistilBERT's WordPiece, RoBERTa's byte-level BPE or XLM-R's unigram, from the file."""
    try:
        if model_type in ("roberta", "xlm-roberta"):
            return FramedFileTokenizer.load(path)
        return WordPieceTokenizer.load(path)
    except (ValueError, OSError) as e:
        raise PretrainedError(str(e)) from e


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
        raise PretrainedError(f"{tokenizer_file} is missing (the model's tokenizer.json is needed)")
    if tokenizer_file.stat().st_size > MAX_JSON_BYTES:
        limit = MAX_JSON_BYTES // 2**20
        raise PretrainedError(f"{tokenizer_file} is larger than {limit} MiB; not reading it")
    model_type = hf["model_type"]
    tokenizer = _tokenizer(tokenizer_file, model_type)
    if tokenizer.vocab_size > cfg.vocab_size:
        raise PretrainedError(
            f"{tokenizer_file} has {tokenizer.vocab_size} tokens but config.json's vocab_size is "
            f"{cfg.vocab_size}"
        )

    weights = folder / "model.safetensors"
    offset = position_offset(hf)
    prefix, mapping = _check_weights(weights, cfg, model_type, offset)

    state = {}
    try:
        with safe_open(str(weights), framework="pt") as f:
            for ours, theirs in mapping.items():
                t = f.get_tensor(prefix + theirs).to(torch.float32)
                if ours == "encoder.embed.positions.table":
                    t = t[offset:].contiguous()  # rows before the first position are never read
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
        "source": "huggingface-bert" if model_type == "bert" else f"huggingface-{model_type}",
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
    """A Hugging Face BERT-style encoder folder (config.json's ``model_type`` one of MODEL_TYPES)."""

    name = "bert"
    what = ("BERT-style encoder", "BERT 式编码器")
    task = "encode"
    example = EXAMPLE

    def claims(self, config: dict) -> bool:
        model_type = config.get("model_type")
        return isinstance(model_type, str) and model_type.lower() in MODEL_TYPES

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        hf = read_json(folder / "config.json")
        if not isinstance(hf, dict):
            raise PretrainedError(f"{folder / 'config.json'} must hold a JSON object")
        return bert_config(hf, folder)

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        hf = read_json(folder / "config.json")
        cfg = self.read_config(folder)
        _check_weights(folder / "model.safetensors", cfg, hf["model_type"], position_offset(hf))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_bert_folder(folder, name=name, example=example)


BERT = BertFormat()
